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


def test_a_data_range_in_a_clause_guarded_by_an_index_it_does_not_read():
    """Its run-time check runs where the clause's guard holds, over the guard's j as well (an
    internal KeyError while lowering, before: fuzz seed 42001 program 104)."""
    run = einc.load(einc.compile("let x: [f64; 6];\nlet n: [i32; 4];\n"
                                 "let y[i in 0..3, j in 0..2] = (sum[k in 0..n[i]](x[k])) where i + j < 3;\n"
                                 "let y[i in 0..3, j in 0..2] = -1.0 where i + j >= 3;\n"))
    x, n = np.arange(6.0), np.array([1, 3, 5, 9], np.int32)
    i, j = np.indices((3, 2))
    want = np.where(i + j < 3, [[x[:n[a]].sum() for _ in range(2)] for a in range(3)], -1.0)
    np.testing.assert_array_equal(run(x=x, n=n)["y"], want)
    with pytest.raises(einc.RunError, match="the range of `k` runs past the axes its reads index at i = 2, j = 0"):
        run(x=x, n=np.array([1, 3, 7, 9], np.int32))


def test_a_data_range_in_a_branch_not_taken_is_not_checked_there():
    """The range in the `else` branch runs only where x[j] <= 0: a range past the axis at a
    point whose `then` branch is taken is no error (fuzz seed 20003 program 56), one at a point
    that takes the `else` branch is."""
    run = einc.load(einc.compile("let x: [f32; 4];\nlet idx: [i32; 3];\n"
                                 "let y[j in 0..2] = if x[j] > 0.0 { x[j] } else { sum[i in idx[j + 1]..idx[0]](x[i]) };\n"))
    idx = np.array([2, 0, -3], np.int32)
    np.testing.assert_array_equal(run(x=np.array([1, 2, 3, 4], np.float32), idx=idx)["y"], [1, 2])
    np.testing.assert_array_equal(run(x=np.array([-1, 2, 3, 4], np.float32), idx=idx)["y"], [1.0, 2])
    with pytest.raises(einc.RunError, match="the range of `i` runs past the axes its reads index at j = 1"):
        run(x=np.array([1, -2, 3, 4], np.float32), idx=idx)


def test_a_data_range_on_the_right_of_or_is_checked_only_where_it_runs():
    """`a || b` runs b only where a is false (and `a && b` only where a is true): a data range
    past its axis in b is an error only at those points."""
    run = einc.load(einc.compile("let x: [f32; 4];\nlet idx: [i32; 3];\n"
                                 "let y[j in 0..2] = x[j] > 0.0 || sum[i in idx[j + 1]..idx[0]](x[i]) > 1.0;\n"
                                 "let z[j in 0..2] = x[j] <= 0.0 && sum[i in idx[j + 1]..idx[0]](x[i]) > 1.0;\n"))
    idx = np.array([2, 0, -3], np.int32)
    out = run(x=np.array([-1, 3, 3, 4], np.float32), idx=idx)
    np.testing.assert_array_equal(out["y"], [True, True])       # j = 0: x[0] + x[1] = 2 > 1
    np.testing.assert_array_equal(out["z"], [True, False])
    with pytest.raises(einc.RunError, match="the range of `i` runs past the axes its reads index at j = 1"):
        run(x=np.array([1, -2, 3, 4], np.float32), idx=idx)


def test_a_data_range_in_a_clause_whose_guard_fails_is_not_checked_there():
    """The second clause runs only where its `where` guard holds: a range past its axis is no
    error where the guard lets no point (fuzz seed 40001 program 113: a range the same at every
    point, checked once, had lost the guard), and one at a point it lets is."""
    run = einc.load(einc.compile("let m: [f32; 2, 3];\nlet n: [i32; 1];\n"
                                 "let y[j in 0..2] = -1.0 where m[j, 0] <= 0.0;\n"
                                 "let y[j in 0..2] = sum[i in 0..n[0]](m[j, i]) * 2.0 where m[j, 0] > 0.0;\n"))
    np.testing.assert_array_equal(run(m=np.array([[-1, 2, 3], [-1, 5, 6]], np.float32), n=np.array([5], np.int32))["y"],
                                  [-1.0, -1.0])
    np.testing.assert_array_equal(run(m=np.array([[1, 2, 3], [-1, 5, 6]], np.float32), n=np.array([3], np.int32))["y"],
                                  [12.0, -1.0])
    with pytest.raises(einc.RunError, match="the range of `i` runs past the axes its reads index"):
        run(m=np.array([[1, 2, 3], [-1, 5, 6]], np.float32), n=np.array([5], np.int32))
