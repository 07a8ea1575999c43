"""Rows read at data-dependent positions (einc/mlir/dense/row_gathers.py): an embedding lookup and
its variants become one `iree_linalg_ext.gather` on the CPU targets, whose rows are copied by
whole vectors (the generic read them one element at a time: 2.1 M rows/s of 64 floats against
JAX's 3.4 M, docs/BENCHMARKS.md); other reads stay generics. Every program matches NumPy
exactly (a gather copies), out-of-range indices are still reported, and clamped with
--unchecked-indices."""
import re

import numpy as np
import pytest

import einc
from einc.runtime import RunError
from tests.tiers import GENERIC_FULL

SOURCE = """
let E: [f32; V, D];
let T: [f16; V, 3, 5];
let tokens: [i32; N];
let grid: [i32; B, S];
let row[i, d] = E[tokens[i], d];
let shifted[i, d] = E[tokens[i] + 1, d];
let scaled[i, d] = E[tokens[i], d] * 2.0;
let batched[b, s, d] = E[grid[b, s], d];
let planes[i, a, c] = T[tokens[i], a, c];
let later[i in 2..N, d] = E[tokens[i], d];          // rows 0 and 1 are 0
let constant[i, c] = [[1.5, 2.5], [3.5, 4.5], [5.5, 6.5]][tokens[i] % 3, c];
let reversed[i, d] = E[tokens[i], D - 1 - d];
let column[i, r] = E[r, tokens[i] % D];
let guarded[i, d] = if tokens[i] < V { E[tokens[i], d] } else { 0.0 };
"""
GATHERED = ["row", "shifted", "batched", "planes", "later", "constant"]
NOT_GATHERED = ["scaled", "reversed", "column", "guarded"]


def _inputs(seed: int, n: int = 40) -> dict:
    rng = np.random.default_rng(seed)
    return {"E": rng.standard_normal((9, 6)).astype(np.float32),
            "T": rng.standard_normal((9, 3, 5)).astype(np.float16),
            "tokens": rng.integers(0, 8, n, dtype=np.int32),
            "grid": rng.integers(0, 9, (3, 4), dtype=np.int32)}


def _references(x: dict) -> dict:
    e, t = x["E"], x["tokens"]
    table = np.array([[1.5, 2.5], [3.5, 4.5], [5.5, 6.5]], np.float32)
    return {"row": e[t], "shifted": e[t + 1], "scaled": e[t] * 2, "batched": e[x["grid"]], "planes": x["T"][t], "later": np.concatenate([np.zeros((2, e.shape[1]), e.dtype), e[t[2:]]]),
            "constant": table[t % 3], "reversed": e[t, ::-1],
            "column": e[:, t % e.shape[1]].T,
            "guarded": e[t]}


def _gathers(mlir: str) -> int:
    return len(re.findall(r"iree_linalg_ext\.gather\b", mlir))


@pytest.mark.parametrize("name", GATHERED + NOT_GATHERED)
def test_rows_at_data_dependent_positions_are_one_gather(name, emitted):
    assert _gathers(emitted(SOURCE, "llvm-cpu", [name])) == (name in GATHERED)


def test_vulkan_keeps_the_generic(emitted):
    assert _gathers(emitted(SOURCE.replace("f16", "f32"), "vulkan-spirv", GATHERED)) == 0


@pytest.mark.parametrize("target, dims", [("llvm-cpu", None),
                                          pytest.param("llvm-cpu-generic", None, marks=pytest.mark.full),
                                          ("llvm-cpu", {"D": 6, "V": 9})])
def test_gathers_match_numpy(target, dims, program_file):
    run = einc.load(einc.compile(program_file(SOURCE), target=target, dims=dims).vmfb)
    for seed, n in ((1, 40), (2, 3)):
        x = _inputs(seed, n)
        got, want = run(**x), _references(x)
        for name in GATHERED + NOT_GATHERED:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def test_an_index_outside_the_table_is_reported_or_clamped(program_file):
    path = program_file(SOURCE)
    x = _inputs(4)
    x["tokens"][[5, 7]] = [9, -3]
    with pytest.raises(RunError, match=r"E\[tokens\[i\], d\]: index 9 out of range 0..9 along axis 0 at i = 5"):
        einc.load(einc.compile(path, outputs=["row"]).vmfb)(**x)
    clamped = einc.load(einc.compile(path, outputs=["row"], unchecked_indices=True).vmfb)
    np.testing.assert_array_equal(clamped(**x)["row"], x["E"][np.clip(x["tokens"], 0, 8)])


def test_explain_names_the_gather(program_file):
    from einc.driver import emit_program
    text = emit_program(program_file(SOURCE), "explain", target="llvm-cpu", outputs=["row"])
    assert "row gather (rows at data-dependent positions, copied whole)" in text


READERS = """
let E: [f32; V, D];
let tokens: [i32; N];
let row[i, d] = E[tokens[i], d];
let first[i, j in 0..4] = row[i, 0] + j as f32;
let picked[i, j in 0..4] = row[i, (j * 5) % D];
let wrapped[i in 0..N, j in 0..4] = match E[(i * 2) % V] { [..r] => r[1] + j as f32 };
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_gathered_rows_read_at_a_fixed_column_or_computed_positions(target, program_file):
    # IREE-150: such a reader fused with the gather failed IREE's CPU tiling (a `match` on a row,
    # `[..r] => r[1]`, reads that way); the rows pass a barrier before it
    x = _inputs(5, 7)
    e, t, j = x["E"], x["tokens"], np.arange(4, dtype=np.float32)
    out = einc.load(einc.compile(program_file(READERS), target=target).vmfb)(E=e, tokens=t)
    np.testing.assert_array_equal(out["first"], e[t][:, :1] + j)
    np.testing.assert_array_equal(out["picked"], e[t][:, (np.arange(4) * 5) % e.shape[1]])
    np.testing.assert_array_equal(out["wrapped"], e[(np.arange(len(t)) * 2) % len(e)][:, 1:2] + j)
