"""A bool table that is an output and that a reduction also reads, on every target, against
NumPy. IREE-261: IREE cloned the table's elementwise kernel into the reduction's dispatch and
gave its bool tile over the run-time axis an unbounded stack (llvm-cpu) or shared-memory
(vulkan-spirv) buffer: the build failed ("internal error"). einc/mlir/returned_bools.py puts a
barrier between them. Found by a hold-out program (palindromic substrings, counted per length)."""
import numpy as np
import pytest

import einc
from tests.tiers import VULKAN_FULL

SOURCE = """
let s: [i32; N];
let p[l in 0..N, i in 0..N] = i + l < N && all[k in 0..l + 1](s[i + k] == s[i + l - k]);
let c[l in 0..N] = sum[i](if p[l, i] { 1 } else { 0 });
let any_of[l in 0..N] = any[i](p[l, i]);
"""


def reference(s):
    n = len(s)
    p = np.array([[i + l < n and all(s[i + k] == s[i + l - k] for k in range(l + 1)) for i in range(n)]
                  for l in range(n)])
    return {"p": p, "c": p.sum(axis=1).astype(np.int32), "any_of": p.any(axis=1)}


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic", VULKAN_FULL])
def test_a_returned_bool_table_a_reduction_reads_builds_and_agrees(target):
    program = einc.load(einc.compile(SOURCE, target=target).vmfb)
    for s in ([1, 2, 1, 1, 2, 1, 3], [5], [2, 2, 2, 2]):
        s = np.array(s, np.int32)
        outputs = program(s=s)
        for name, expected in reference(s).items():
            np.testing.assert_array_equal(outputs[name], expected, err_msg=f"{name} of {s}")


def test_a_returned_bool_table_written_by_save_npy_and_counted(tmp_path, monkeypatch):
    # the barrier goes before kernels only: one before save_npy's host transfer failed IREE's
    # stream lowering ("stream.async.transfer ... expected to be in an execution region"; the
    # program fuzzer, seed 7 program 41, a bool recurrence saved)
    monkeypatch.chdir(tmp_path)
    program = einc.load(einc.compile(SOURCE + 'save_npy("p.npy", p);\n').vmfb)
    s = np.array([3, 1, 3, 3, 1], np.int32)
    outputs = program(s=s)
    expected = reference(s)
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), expected["p"])
    np.testing.assert_array_equal(outputs["c"], expected["c"])


BYTES = """
let f: [f32; H, W];
let c[i in 0..H - 1, j in 0..W - 1] = (if f[i, j] > 0.5 { 1u8 } else { 0u8 }) + (if f[i + 1, j] > 0.5 { 2u8 } else { 0u8 });
let s[i, j] = match c[i, j] { 0u8 => 0, 3u8 => 2, _ => 1 };
let total = sum[i, j](s[i, j]);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_returned_table_computed_from_u8_codes_and_summed_builds_and_agrees(target):
    # IREE-270: `s`, computed from the u8 table `c` and returned, was cloned into the sum's
    # dispatch with c's i8 tile unbounded ("unexpected allocation without upper bound shapes" on
    # vulkan-spirv); found by a hold-out program (marching-squares case codes)
    f = np.random.default_rng(3).random((5, 7)).astype(np.float32)
    b = (f > 0.5).astype(np.uint8)
    c = b[:-1, :-1] + 2 * b[1:, :-1]
    s = np.where(c == 0, 0, np.where(c == 3, 2, 1)).astype(np.int32)
    outputs = einc.load(einc.compile(BYTES, target=target).vmfb)(f=f)
    np.testing.assert_array_equal(outputs["c"], c)
    np.testing.assert_array_equal(outputs["s"], s)
    assert outputs["total"] == s.sum()


def test_readers_of_a_returned_table_computed_from_bytes_take_it_through_a_barrier(emitted):
    text = emitted(BYTES, "vulkan-spirv")
    assert text.count("util.optimization_barrier") >= 1
