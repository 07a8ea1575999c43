"""Indexed definitions, reductions, where clauses, piecewise definitions and rest indices."""
import numpy as np
import pytest

import einc
from tests.programs import built
from tests.tiers import VULKAN_FULL

rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("m, k, n", [(3, 5, 2), (64, 33, 17)])
def test_matmul_with_named_dims_serves_every_size(m, k, n):
    a, b = f32(m, k), f32(k, n)
    out = einc.load(built("""
        let A: [f32; M, K];
        let B: [f32; K, N];
        let C[i, j] = sum[k](A[i, k] * B[k, j]);
    """).vmfb)(A=a, B=b)          # one build serves both sizes
    np.testing.assert_allclose(out["C"], a @ b, rtol=1e-4, atol=1e-5)


def test_affine_and_data_dependent_subscripts(run):
    x, table = f32(9), f32(6)
    idx = np.array([5, 0, 3, 3], np.int32)
    out = run("""
        let x: [f32; 9];
        let table: [f32; 6];
        let idx: [i32; 4];
        let odd[i in 0..4] = x[2 * i + 1];
        let rev[i in 0..9] = x[8 - i];
        let g[i] = table[idx[i]];
    """, x=x, table=table, idx=idx)
    np.testing.assert_array_equal(out["odd"], x[1::2][:4])
    np.testing.assert_array_equal(out["rev"], x[::-1])
    np.testing.assert_array_equal(out["g"], table[idx])


def test_the_six_reductions(run):
    x = f32(4, 5)
    out = run("""
        let x: [f32; 4, 5];
        let s[i] = sum[j](x[i, j]);
        let p[i] = prod[j](x[i, j]);
        let hi[j] = max[i](x[i, j]);
        let lo = min[i, j](x[i, j]);
        let pos[i] = all[j](x[i, j] > -3.0);
        let neg[i] = any[j](x[i, j] < 0.0);
    """, x=x)
    np.testing.assert_allclose(out["s"], x.sum(1), rtol=1e-5)
    np.testing.assert_allclose(out["p"], x.prod(1), rtol=1e-5)
    np.testing.assert_array_equal(out["hi"], x.max(0))
    assert out["lo"] == x.min()
    np.testing.assert_array_equal(out["pos"], (x > -3).all(1))
    np.testing.assert_array_equal(out["neg"], (x < 0).any(1))


def test_where_guards_bindings_and_outer_dependent_ranges(run):
    x = f32(8)
    out = run("""
        let x: [f32; 8];
        let positive_sum = sum[i](x[i]) where x[i] > 0.0;
        let even[i in 0..8] = x[i] * 2.0 where i % 2 == 0;
        let prefix[i in 0..8] = sum[k in 0..i + 1](x[k]);
        let before[i in 0..8] = sum[k in 0..i](x[i - 1 - k]);
        let scaled[i] = a * a where a = x[i] + 1.0;
    """, x=x)
    np.testing.assert_allclose(out["positive_sum"], x[x > 0].sum(), rtol=1e-5)
    np.testing.assert_array_equal(out["even"], np.where(np.arange(8) % 2 == 0, x * 2, 0))
    np.testing.assert_allclose(out["prefix"], np.cumsum(x), rtol=1e-5, atol=1e-6)
    # over the hull k < 7 of `0..i` the subscript reaches -7, but never where the range has a point
    np.testing.assert_allclose(out["before"], np.cumsum(np.r_[0, x[:-1]]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["scaled"], (x + 1) ** 2, rtol=1e-6)


def test_a_where_binding_read_beside_the_trailing_reduction_binds_for_the_whole_value(run):
    # The softmax below was E003 "cannot find name `m`": the where went to the sum it follows.
    x = f32(8)
    out = run("""
        use std::math::exp;
        let x: [f32; 8];
        let sm[i] = exp(x[i] - m) / sum[j](exp(x[j] - m)) where m = max[j](x[j]);
        let off = c - sum[j](x[j] - c) where c = x[0];
    """, x=x)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(out["sm"], e / e.sum(), rtol=1e-5)
    np.testing.assert_allclose(out["off"], x[0] - (x - x[0]).sum(), rtol=1e-5, atol=1e-5)


def test_a_where_after_a_reduction_inside_parentheses_filters_that_reduction(run):
    # the Jacobi step below was E001 at `where`; the guard is the sum's, as `sum[j](.. where j != i)`
    A = f32(6, 6) + 8.0 * np.eye(6, dtype=np.float32)
    b, x = f32(6), f32(6)
    out = run("""
        let A: [f32; 6, 6];
        let b: [f32; 6];
        let x: [f32; 6];
        let x1[i] = (b[i] - sum[j](A[i, j] * x[j]) where j != i) / A[i, i];
        let scaled = (1.0 - sum[j](x[j] * m) where m = 2.0) * 3.0;
    """, A=A, b=b, x=x)
    off = A - np.diag(np.diag(A))
    np.testing.assert_allclose(out["x1"], (b - off @ x) / np.diag(A), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["scaled"], (1.0 - 2.0 * x.sum()) * 3.0, rtol=1e-5, atol=1e-5)


def test_a_reduction_index_whose_range_reads_an_earlier_one_of_the_same_reduction(run):
    # `sum[i, j in 0..i + 1]` (a triangle) was E003 "cannot find name `i`"
    A = f32(5 * 5).reshape(5, 5)
    out = run("""
        let A: [f32; 5, 5];
        let lower = sum[i, j in 0..i + 1](A[i, j]);
        let pairs = sum[i in 1..4, j in 0..i](i * j);
        let peak = max[i in 0..5, j in i..5](A[i, j] - A[j, i]);
        let even = sum[i in 0..5, j in 0..i](i + j) where j % 2 == 0;
        let chains = sum[i in 0..4, j in i..4, k in j..4](1);
    """, A=A)
    np.testing.assert_allclose(out["lower"], np.tril(A).sum(), rtol=1e-5)
    assert out["pairs"] == sum(i * j for i in range(1, 4) for j in range(i))
    np.testing.assert_allclose(out["peak"], np.triu(A - A.T).max(), rtol=1e-6)
    assert out["even"] == sum(i + j for i in range(5) for j in range(i) if j % 2 == 0)
    assert out["chains"] == 20


def test_conv2d_with_index_algebra(run):
    x, w = f32(2, 3, 9, 8), f32(4, 3, 3, 2)
    out = run("""
        let X: [f32; N, C, H, W];
        let K: [f32; O, C, KH, KW];
        let Y[n, o, oh in 0..H - KH + 1, ow in 0..W - KW + 1] =
            sum[c, kh, kw](X[n, c, ih, iw] * K[o, c, kh, kw]) where ih = oh + kh, iw = ow + kw;
    """, X=x, K=w)
    ref = np.zeros((2, 4, 7, 7), np.float64)
    for kh in range(3):
        for kw in range(2):
            ref += np.einsum("nchw,oc->nohw", x[:, :, kh:kh + 7, kw:kw + 7], w[:, :, kh, kw])
    np.testing.assert_allclose(out["Y"], ref, rtol=1e-4, atol=1e-4)


def test_zero_padding_written_with_a_guarded_read(run):
    x = f32(6)
    out = run("""
        let x: [f32; 6];
        let padded[i in 0..8] = if i >= 1 && i <= 6 { x[i - 1] } else { 0.0 };
    """, x=x)
    np.testing.assert_array_equal(out["padded"], np.pad(x, 1))


def test_piecewise_definition_with_points_and_overlap(run):
    out = run("""
        let u[0, i in 0..5] = 1.0;
        let u[t in 1..4, i in 0..5] = (t * 10 + i) as f32;
        let u[0, 2] = 9.0;
        let y[0] = 1.0e6;
        let y[t in 1..3] = 2.0f64;
    """)
    ref = np.array([[t * 10 + i for i in range(5)] for t in range(4)], np.float32)
    ref[0] = 1.0
    ref[0, 2] = 9.0
    np.testing.assert_array_equal(out["u"], ref)
    assert out["y"].dtype == np.float64
    np.testing.assert_array_equal(out["y"], [1e6, 2.0, 2.0])


def test_literal_clauses_share_one_type_and_an_empty_range_defines_nothing(run):
    out = run("""
        let r[0] = 0.0;
        let r[1] = -1;
        let u[0, i in 0..5] = 1.0;
        let u[t in 11..4, i in 0..5] = (t * 10 + i) as f32;
        let u[0, 2] = 9.0;
        let e[t in 5..3] = 1.0;
    """)
    assert out["r"].dtype == np.float32       # an int literal beside a float one is a float
    np.testing.assert_array_equal(out["r"], [0.0, -1.0])
    np.testing.assert_array_equal(out["u"], [[1, 1, 9, 1, 1]])     # `11..4` reaches no row
    assert out["e"].shape == (0,)


def test_a_read_over_an_empty_range_never_runs_so_it_cannot_leave_its_array(run):
    x = np.array([1.0, 2.0, 3.0], np.float32)
    out = run("""
        let x: [f32; 3];
        let s = sum[k in 9..2](x[k]);
        let p[i in 0..3] = prod[k in 5..5](x[k] * x[i]);
    """, x=x)
    assert out["s"] == 0.0
    np.testing.assert_array_equal(out["p"], [1.0, 1.0, 1.0])


def test_constant_clauses_of_one_value_at_adjacent_ranges_in_any_order(run):
    """IREE 3.13 merged two constant writes of one value wrongly when the second ended where the
    first started (a compile error); einc writes clauses that do not overlap in ascending order."""
    out = run("""
        let a[i in 3..6] = 6;
        let a[i in 1..3] = 6;
        let b[i in 0..6, j in 0..2] = 3;
        let b[i in 3..6, j in 0..2] = 6;
        let b[i in 1..3, j in 0..2] = 6;
        let b[2, 1] = 5;
        let c[i in 0..2] = 6.0;
        let c[i in 4..6] = 6.0;
        let c[i in 3..4] = 6.0;
        let c[i in 1..5] = 7.0;
    """)
    np.testing.assert_array_equal(out["a"], [0, 6, 6, 6, 6, 6])
    b = np.full((6, 2), 3, np.int32)
    b[1:] = 6
    b[2, 1] = 5
    np.testing.assert_array_equal(out["b"], b)
    np.testing.assert_array_equal(out["c"], [6, 7, 7, 7, 7, 6])


def test_range_starting_above_zero_reads_one_step_back(run):
    f = np.array([1.0, 2.0, 4.0, 7.0], np.float32)
    out = run("""
        let f: [f32; 4];
        let ratio[n in 1..4] = f[n] / f[n - 1];
        let late[n in 1..4] = f[n - 1] where n > 1;
    """, f=f)
    np.testing.assert_array_equal(out["ratio"], [0, 2, 2, 7 / 4])
    np.testing.assert_array_equal(out["late"], [0, 0, 2, 4])


def test_named_rest_indices(run):
    x, w = f32(2, 3, 4), f32(4, 5)
    out = run("""
        let x: [f32; 2, 3, 4];
        let w: [f32; 4, 5];
        let y[..b, c] = sum[i](x[..b, i] * w[i, c]);
    """, x=x, w=w)
    np.testing.assert_allclose(out["y"], x @ w, rtol=1e-5, atol=1e-6)


def test_a_rest_index_in_a_reduction_runs_over_the_axes_its_read_leaves(run):
    """`sum[..b](x[..b])` reduces over as many axes as the read leaves after its other
    subscripts (thesis: reduction rests expand as a definition's do); a read whose other rest
    is already known (`x[..a, ..b]` beside `w[..a]`) determines it too."""
    x = np.arange(24.0).reshape(2, 3, 4) / 7.0
    w = np.array([0.5, -2.0])
    out = run("""
        let x: [f64; 2, 3, 4];
        let w: [f64; 2];
        let s = sum[..b](x[..b]);
        let t[i] = sum[..b](x[i, ..b]);
        let u[..a] = max[..b](x[..a, ..b] * w[..a]);
        let v[..a] = sum[..b, k](x[..b, k] * x[..b, k]) + w[..a];
    """, x=x, w=w)
    np.testing.assert_allclose(out["s"], x.sum(), rtol=1e-12)
    np.testing.assert_allclose(out["t"], x.sum(axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(out["u"], (x * w[:, None, None]).max(axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(out["v"], (x * x).sum() + w, rtol=1e-12)


def test_a_rest_index_no_read_determines_is_E004(diagnose):
    # two rests in one read, neither known from another: the split of x's axes is not told
    diag, _ = diagnose("let x: [f64; 2, 3, 4];\nlet u[..a] = max[..b](x[..a, ..b]);\n")
    assert diag.code == "E004" and "cannot tell how many axes `..a` stands for" in diag.message


def test_named_dim_is_a_value_and_comprehensions_build_arrays(run):
    y = f32(6)
    out = run("""
        let y: [f32; T];
        let diff[t in 1..T] = y[t] - y[t - 1];
        let n = T;
        let squares = [(i * i) as f32 | i in 0..5];
        let lit = [[1.0, 2.0], [3.0, 4.0]];
        let mixed = [y[0], y[1] * 2.0];
        let m = y.shape[0] + len(y);
    """, y=y)
    # the extent is the clause's end, T: points no clause covers (t = 0) are 0
    np.testing.assert_allclose(out["diff"], np.r_[0, y[1:] - y[:-1]], rtol=1e-6)
    assert out["n"] == 6 and out["m"] == 12
    np.testing.assert_array_equal(out["squares"], np.arange(5) ** 2)
    np.testing.assert_array_equal(out["lit"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(out["mixed"], [y[0], y[1] * 2])


def test_whole_array_arithmetic_broadcasts_scalars(run):
    a, b = f32(3, 4), f32(3, 4)
    out = run("""
        let a: [f32; 3, 4];
        let b: [f32; 3, 4];
        let c = a * b - 2.0 * a + 1.0;
        let big = a > b;
        let i = (a * 10.0) as i32;
    """, a=a, b=b)
    np.testing.assert_allclose(out["c"], a * b - 2 * a + 1, rtol=1e-6)
    np.testing.assert_array_equal(out["big"], a > b)
    np.testing.assert_array_equal(out["i"], (a * 10).astype(np.int32))


def test_a_reduction_from_one_reading_the_previous_row_runs_its_own_trip_count(run):
    # `a[t - 1, v]` for t in 1..T is the bare loop dimension over an axis of T, not T - 1
    a = np.arange(15.0).reshape(5, 3)
    out = run("""
        let a: [f64; T, 3];
        let g[v] = sum[t in 1..T](a[t - 1, v]);
    """, a=a)
    np.testing.assert_array_equal(out["g"], a[:-1].sum(0))


AFFINE_RANGES = """
let v = [3, 1, 4, 1, 5];
let next[i] = v[i + 1];
let running[j] = sum[k in 0..j + 1](v[j - k]);
let same[i] = v[i + 0];
let reversed[i] = v[4 - i];
let pairs[i] = v[i + 1] + v[i + 2];
let img: [f32; H, W];
let pooled[i, j] = max[di in 0..2, dj in 0..2](img[2 * i + di, 2 * j + dj]);
let X: [f32; ?, ?];
let K: [f32; 3, 3];
let Y[oh, ow] = sum[kh, kw](X[ih, iw] * K[kh, kw]) where ih = oh + kh, iw = ow + kw;
let x: [f32; N];
let every_third[i] = x[3 * i];
let backwards[i] = x[N - 1 - i];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_ranges_come_from_affine_reads_when_no_plain_read_gives_them(run, target):
    # the largest range from 0 keeping every read in bounds (issue 9 item 6)
    img = f32(7, 9)
    X, K, x = f32(5, 6), f32(3, 3), f32(10)
    out = run(AFFINE_RANGES, target=target, img=img, X=X, K=K, x=x)
    v = np.array([3, 1, 4, 1, 5])
    assert out["next"].tolist() == [1, 4, 1, 5] and out["running"].tolist() == [3, 4, 8, 9, 14]
    assert out["same"].tolist() == v.tolist() and out["reversed"].tolist() == v[::-1].tolist()
    assert out["pairs"].tolist() == (v[1:-1] + v[2:]).tolist()
    np.testing.assert_array_equal(out["pooled"], img[:6, :8].reshape(3, 2, 4, 2).max((1, 3)))
    conv = sum(X[kh:kh + 3, kw:kw + 4] * K[kh, kw] for kh in range(3) for kw in range(3))
    np.testing.assert_allclose(out["Y"], conv, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out["every_third"], x[::3])
    np.testing.assert_array_equal(out["backwards"], x[::-1])


def test_an_index_takes_its_range_from_a_read_in_a_branch_a_constant_condition_skips(run):
    # the skipped branches are only read for ranges: the out-of-bounds x[j + 9], the i32 one
    # and the print in them are never the program's
    x = f32(5)
    out = run("""
        let x: [f32; N];
        let DEBUG = false;
        let mode = 2;
        let a[j] = if DEBUG { print("never"); x[j] + x[j + 9] } else { 0.5 };
        let b[j] = match mode { 1 => x[j] > 0.0, _ => j % 2 == 0 };
        let c[t in 0..2, j] = if !DEBUG { x[j] * 2.0 } else { j };
    """, x=x)
    np.testing.assert_array_equal(out["a"], np.full(5, 0.5, np.float32))
    np.testing.assert_array_equal(out["b"], np.arange(5) % 2 == 0)
    np.testing.assert_array_equal(out["c"], np.stack([x * 2] * 2))


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_read_on_the_right_of_and_or_counts_only_where_the_left_lets_it_run(run, target):
    """`i > 0 && x[i - 1] < x[i]` reads x[-1] at no point that matters, as under an `if`: it
    was E005 ("subscript 0 ranges over [-1, 4]"), also in a recurrence's step."""
    x = np.array([0.3, 0.1, 0.7, 0.9, 0.2, 0.6], np.float32)
    m = np.array([[1, 1, 0, 1, 1], [0, 1, 1, 1, 0], [1, 0, 1, 1, 1]], bool)
    out = run("""
        let x: [f32; 6];
        let m: [bool; 3, 5];
        let rising[i in 0..6] = i > 0 && x[i - 1] < x[i];
        let last_or_big[i in 0..6] = i == 5 || x[i + 1] > 0.5;
        let count = sum[i in 0..6](if i + 2 < 6 && x[i + 2] > x[i] { 1 } else { 0 });
        let reach[0, j in 0..5] = m[0, j];
        let reach[i in 1..3, j in 0..5] = m[i, j] && (reach[i - 1, j] || j > 0 && reach[i - 1, j - 1]);
    """, target=target, x=x, m=m)
    np.testing.assert_array_equal(out["rising"], [False] + [x[i - 1] < x[i] for i in range(1, 6)])
    np.testing.assert_array_equal(out["last_or_big"], [x[i + 1] > 0.5 for i in range(5)] + [True])
    assert out["count"] == sum(x[i + 2] > x[i] for i in range(4))
    reach = m.copy()
    for i in range(1, 3):
        reach[i] = m[i] & (reach[i - 1] | np.r_[False, reach[i - 1, :-1]])
    np.testing.assert_array_equal(out["reach"], reach)

