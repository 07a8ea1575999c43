"""A reduction whose range has an end computed from data (docs/LANGUAGE.md section 3): a CSR
row's `sum[k in row_ptr[i]..row_ptr[i + 1]](..)`, the first n elements `sum[i in 0..n](x[i])`.
The index runs over the range its reads give it, guarded by the written one, and a range that
runs past that is a run-time error, not a silently shorter sum. Values against NumPy loops."""
import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError

CSR = """let row_ptr: [i32; R];
let col: [i32; NNZ];
let val: [f32; NNZ];
let x: [f32; C];
let y[i in 0..R - 1] = sum[k in row_ptr[i]..row_ptr[i + 1]](val[k] * x[col[k]]);
let peak[i in 0..R - 1] = max[k in row_ptr[i]..=row_ptr[i + 1] - 1](val[k]);
"""


def csr(seed: int, rows: int = 6, cols: int = 5):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, rows)
    counts[1] = 0                                       # an empty row
    row_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(row_ptr[-1])
    return dict(row_ptr=row_ptr, col=rng.integers(0, cols, nnz).astype(np.int32),
                val=rng.standard_normal(nnz).astype(np.float32), x=rng.standard_normal(cols).astype(np.float32))


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
def test_a_csr_matrix_vector_product(target):
    """E004 before ("a range bound must be an integer built from sizes ..")."""
    m = csr(3)
    out = einc.load(einc.compile(CSR, target=target), device="vulkan" if target == "vulkan-spirv" else None)(**m)
    rp, col, val, x = m["row_ptr"], m["col"], m["val"], m["x"]
    rows = [range(rp[i], rp[i + 1]) for i in range(len(rp) - 1)]
    np.testing.assert_allclose(out["y"], [sum(float(val[k]) * x[col[k]] for k in r) for r in rows], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["peak"], [max(val[k] for k in r) if len(r) else -np.inf for r in rows])


def test_a_range_past_the_entries_is_a_run_time_error():
    m = csr(4)
    m["row_ptr"][-1] += 2
    with pytest.raises(einc.RunError, match="the range of `k` runs past the axes its reads index at i = 5"):
        einc.load(einc.compile(CSR))(**m)


def test_the_first_n_elements_of_an_array():
    run = einc.load(einc.compile("let x: [f32; 10];\nlet n: i32;\nlet s = sum[i in 0..n](x[i]);\n"))
    x = np.arange(10, dtype=np.float32)
    assert run(x=x, n=np.int32(4))["s"] == 6.0
    assert run(x=x, n=np.int32(0))["s"] == 0.0
    with pytest.raises(einc.RunError, match="the range of `i` runs past"):
        run(x=x, n=np.int32(11))


def test_a_data_range_whose_body_reads_no_axis_along_it_is_E004():
    with pytest.raises(CompileError) as info:
        einc.compile("let a: [i32; 3];\nlet b: [i32; 3];\nlet y[i in 0..3] = sum[k in a[i]..b[i]](k as f32);\n")
    diag = info.value.diagnostics[0]
    assert diag.code == "E004" and "computed from data" in diag.message and "where k >= lo" in diag.hint
