"""Recurrences against NumPy loops: scalar, vector and matrix states, groups, 2-D grids."""
import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from tests.programs import source
from tests.tiers import GENERIC_FULL, VULKAN_FULL

rng = np.random.default_rng(5)


def test_logistic_map_read_only_at_its_end(run):
    out = run("""
        let x0: f32;
        let x[0] = x0;
        let x[t in 1..5000] = 3.7 * x[t - 1] * (1.0 - x[t - 1]);
        let last = x[4999];
    """, outputs=["last"], x0=np.float32(0.3))
    x = np.float32(0.3)
    for _ in range(4999):
        x = np.float32(3.7) * x * (np.float32(1) - x)
    assert out["last"] == x                      # bit-exact: same f32 operations in order


def test_fibonacci_with_two_lookbacks_and_a_symbolic_extent(run):
    out = run("""
        let n: [i32; N];
        let fib[0] = 0;
        let fib[1] = 1;
        let fib[k in 2..N] = fib[k - 1] + fib[k - 2];
    """, n=np.zeros(20, np.int32))
    ref = [0, 1]
    for _ in range(18):
        ref.append(ref[-1] + ref[-2])
    np.testing.assert_array_equal(out["fib"], ref)


def test_kalman_filter_members_recur_in_one_loop(run):
    y = np.cumsum(rng.standard_normal(50)) + rng.standard_normal(50)
    out = run(source("kalman_1d"), outputs=["x", "P"], y=y, q=0.5, r=2.0)
    x, P = np.zeros(50), np.zeros(50)
    x[0], P[0] = y[0], 1.0
    for t in range(1, 50):
        pp = P[t - 1] + 0.5
        k = pp / (pp + 2.0)
        x[t] = x[t - 1] + k * (y[t] - x[t - 1])
        P[t] = (1 - k) * pp
    np.testing.assert_allclose(out["x"], x, rtol=1e-12)
    np.testing.assert_allclose(out["P"], P, rtol=1e-12)


def test_rnn_vector_state(run):
    H, T = 8, 30
    W = (rng.standard_normal((H, H)) * 0.3).astype(np.float32)
    x = rng.standard_normal((T, H)).astype(np.float32)
    out = run("""
        use std::math::tanh;
        let W: [f32; H, H];
        let x: [f32; T, H];
        let h[0, i in 0..H] = 0.0;
        let h[t in 1..T, i in 0..H] = tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i]);
        let final[i] = h[T - 1, i];
    """, outputs=["final"], W=W, x=x)
    h = np.zeros(H, np.float64)
    for t in range(1, T):
        h = np.tanh(W.astype(np.float64) @ h + x[t])
    np.testing.assert_allclose(out["final"], h, rtol=1e-4, atol=1e-5)


def test_matrix_state_power(run):
    A = (rng.standard_normal((4, 4)) * 0.5).astype(np.float32)
    out = run("""
        let A: [f32; 4, 4];
        let M[0, i in 0..4, j in 0..4] = if i == j { 1.0 } else { 0.0 };
        let M[t in 1..6, i in 0..4, j in 0..4] = sum[k](A[i, k] * M[t - 1, k, j]);
    """, A=A)
    ref = [np.eye(4)]
    for _ in range(5):
        ref.append(A.astype(np.float64) @ ref[-1])
    np.testing.assert_allclose(out["M"], np.array(ref), rtol=1e-4, atol=1e-5)


def test_same_step_reads_follow_dependencies(run):
    out = run("""
        let a[0] = 1.0;
        let v[0] = 0.0;
        let s[0, 0] = 0.0;
        let s[0, 1] = 0.0;
        let v[t in 1..6] = v[t - 1] + a[t];
        let a[t in 1..6] = a[t - 1] * 0.5;
        let s[t in 1..6, 0] = s[t - 1, 1] + 1.0;
        let s[t in 1..6, 1] = s[t, 0] * 2.0;
    """)
    a, v, s = [1.0], [0.0], [[0.0, 0.0]]
    for _ in range(5):
        a.append(a[-1] * 0.5)
        v.append(v[-1] + a[-1])
        first = s[-1][1] + 1
        s.append([first, first * 2])
    np.testing.assert_allclose(out["v"], v)
    np.testing.assert_allclose(out["s"], s)


EDIT_DISTANCE = source("edit_distance")


def test_edit_distance_two_dimensional_grid(run):
    a = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)
    b = np.array([3, 1, 5, 9, 2, 7], np.int32)
    out = run(EDIT_DISTANCE, outputs=["distance"], a=a, b=b)
    assert out["distance"] == edit_distance_grid(a, b)[8, 6]


def edit_distance_grid(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    D = np.zeros((len(a) + 1, len(b) + 1), int)
    D[0, :], D[:, 0] = np.arange(len(b) + 1), np.arange(len(a) + 1)
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + (a[i - 1] != b[j - 1]))
    return D


def test_cholesky_reads_a_prefix_of_earlier_rows(run):
    B = rng.standard_normal((5, 5))
    A = B @ B.T + 5 * np.eye(5)
    out = run("""
        use std::math::sqrt;
        let A: [f64; n, n];
        let L[i in 0..n, j in 0..n] =
            if j == i { sqrt(A[i, i] - sum[k in 0..j](L[i, k] * L[i, k])) }
            else if j < i { (A[i, j] - sum[k in 0..j](L[i, k] * L[j, k])) / L[j, j] }
            else { 0.0 };
    """, A=A)
    np.testing.assert_allclose(out["L"], np.linalg.cholesky(A), rtol=1e-10)


def test_literal_base_clauses_share_one_type_and_an_empty_step_range_adds_no_step(run):
    out = run("""
        let r[0] = 0;
        let r[1] = 0.5;
        let r[t in 2..6] = r[t - 1] * 0.5 + r[t - 2];
        let y[0] = 1.0;
        let y[t in 7..3] = y[t - 1] * 2.0;
        let z[t in 5..2] = z[t - 1] + 1.0;
    """)
    ref = np.zeros(6, np.float32)
    ref[1] = 0.5
    for t in range(2, 6):
        ref[t] = ref[t - 1] * np.float32(0.5) + ref[t - 2]
    assert out["r"].dtype == np.float32       # `0` beside `0.5` is a float, not an i32
    np.testing.assert_array_equal(out["r"], ref)
    np.testing.assert_array_equal(out["y"], [1.0])      # `7..3` is empty: no step, no row
    assert out["z"].shape == (0,)


def test_a_start_written_as_an_if_types_the_member_as_a_base_clause_would(run):
    """Int literals are the only values the one clause can give: i32, as `let r[0] = 6;` beside
    the step clause is; a float read or literal among them makes it a float."""
    x = rng.standard_normal(5)
    out = run("""
        let x: [f64; 5];
        let r[t in 0..5] = if t == 0 { 6 } else { (r[t - 1] * 3 + 2) % 7 };
        let a[t in 0..5] = if t == 0 { 0 } else { a[t - 1] * 2 + x[t] };
        let c[t in 0..5] = if t == 0 { 3 } else { c[t - 1] * 0.5 };
    """, x=x)
    r, a, c = [6], [0.0], [np.float32(3)]
    for t in range(1, 5):
        r.append((r[-1] * 3 + 2) % 7)
        a.append(a[-1] * 2 + x[t])
        c.append(c[-1] * np.float32(0.5))
    assert (out["r"].dtype, out["a"].dtype, out["c"].dtype) == (np.int32, np.float64, np.float32)
    np.testing.assert_array_equal(out["r"], r)
    np.testing.assert_allclose(out["a"], a, rtol=1e-12)
    np.testing.assert_array_equal(out["c"], c)


def test_a_guess_under_which_a_literal_does_not_fit_is_tried_no_further(run):
    """A selection-sort style loop (Dijkstra's pick): `m` starts at a huge untyped constant and
    `p`, an index with no base clause, is guessed with `m`; the guess of f16 for both made
    `1.0e30` E006 and ended the search. It is a wrong guess like a type mismatch: `m` is f32
    as its data, and `p` is i32 (before i64) as an index."""
    x = rng.standard_normal(6).astype(np.float32)
    out = run("""
        let x: [f32; N];
        let big = 1.0e30;
        let m[0] = big;
        let p[t in 1..6] = min[j](if min(m[t - 1], big) > x[j] { j } else { N });
        let m[t in 1..6] = if p[t] < N { min(m[t - 1], x[p[t]]) } else { m[t - 1] };
    """, x=x)
    m, p = [np.float32(1e30)], [0]
    for _ in range(1, 6):
        below = np.flatnonzero(x < m[-1])
        p.append(int(below[0]) if below.size else 6)
        m.append(min(m[-1], x[p[-1]]) if below.size else m[-1])
    assert (out["m"].dtype, out["p"].dtype) == (np.float32, np.int32)
    np.testing.assert_array_equal(out["p"], p)      # point 0 of p is no clause's: 0
    np.testing.assert_array_equal(out["m"], np.array(m, np.float32))


def test_a_member_with_no_base_clause_that_is_a_comparison_is_guessed_bool(run):
    """An accept flag of an adaptive loop (`ok[s] = err <= tol`) has no base clause, and its
    partner starts from a literal that must become f64: guessed f32 with the rest, then f64 with
    the others, `ok` was never a bool beside an f64 partner (E002). A comparison is a bool."""
    x = rng.standard_normal(8)
    out = run("""
        let x: [f64; N];
        let tol: f64;
        let v[0] = 0.0;
        let ok[s in 1..N] = x[s] * v[s - 1] <= tol;
        let v[s in 1..N] = if ok[s] { v[s - 1] + x[s] } else { v[s - 1] };
    """, x=x, tol=0.1)
    v, ok = [0.0], [False]                       # point 0 of ok is no clause's: false
    for s in range(1, 8):
        ok.append(x[s] * v[-1] <= 0.1)
        v.append(v[-1] + x[s] if ok[-1] else v[-1])
    assert (out["v"].dtype, out["ok"].dtype) == (np.float64, np.bool_)
    np.testing.assert_array_equal(out["ok"], ok)
    np.testing.assert_allclose(out["v"], v, rtol=1e-12)


MUTUAL = """
let p[0] = 1.0;
let q[0] = 0.5;
let a[s in 1..4, 0] = p[s - 1];
let b[s in 1..4, 0] = q[s - 1];
let a[s in 1..4, k in 1..3] = a[s, k - 1] + 0.5 * b[s, READ];
let b[s in 1..4, k in 1..3] = b[s, k - 1] - 0.5 * a[s, BACK];
let p[s in 1..4] = a[s, 2];
let q[s in 1..4] = b[s, 2];
"""


@pytest.mark.parametrize("read, back, code", [("k - 1", "k - 1", "E011"), ("k", "k - 1", "E011"), ("k", "k", "E007")])
def test_definitions_reading_each_others_earlier_points_at_one_step_are_e011_not_e007(read, back, code):
    """Two definitions of a Newton loop inside each step (the hold-out program stiff_newton, written
    as `zx[s, k]` and `zv[s, k]` reading each other at `k - 1`) were E007, as if they read a future
    point: they read only earlier ones, which einc does not run interleaved yet (E011, with the one
    definition it does run as the hint). So is one reading the other's point itself while that one
    reads its earlier point (Gotoh's tables, the hold-out program sw_affine_tables: `H[i, j]` reads
    `E[i, j]`, which reads `H[i, j - 1]`), which was E007; both reading the point itself stays E007."""
    with pytest.raises(CompileError) as info:
        einc.compile(MUTUAL.replace("READ", read).replace("BACK", back))
    diag = info.value.diagnostics[0]
    assert diag.code == code and "a -> b -> a" in diag.message and diag.span.line == 4
    assert ("z[s, k, c]" in diag.hint) == (code == "E011")


def test_a_where_binding_in_a_clause_over_a_step_dependent_range_is_guarded_by_that_range(run):
    """`where c = can[i, i + l]` in a clause for `i in 0..N - l` (span-indexed interval dynamic
    programming, the hold-out program nussinov_fold) was bounds-checked over i's hull across the
    steps, outside the range that guards the body: every run with N >= 4 failed its size check
    ("needs indices 2 to 2*N - 4"). The same read written in the body ran."""
    seq = np.int32([0, 1, 0, 1, 1, 0, 2, 0])
    out = run("""
        let seq: [i32; N];
        let can[i in 0..N, j in 0..N] = j > i + 1 && seq[i] == seq[j];
        let P[l in 0..2, i in 0..N] = 0;
        let P[l in 2..N, i in 0..N - l] = max(P[l - 1, i + 1], P[l - 1, i]) + c
            where c = if can[i, i + l] { 1 } else { 0 };
    """, seq=seq)
    N = len(seq); P = np.zeros((N, N), np.int32)
    for l in range(2, N):
        for i in range(N - l):
            P[l, i] = max(P[l - 1, i + 1], P[l - 1, i]) + (seq[i] == seq[i + l])
    np.testing.assert_array_equal(out["P"], P)


def test_a_first_index_without_a_range_takes_its_extent_from_a_plain_read(run):
    """`h[r, 0] = ..; h[r, t in 1..L + 1] = h[r, t - 1] .. s[r, t - 1]` (a hash per row of a table,
    the hold-out program hash_mix) asked for an explicit range on r, which s's rows give."""
    s = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = run("""
        let s: [i32; K, L];
        let h[r, 0] = 1;
        let h[r, t in 1..L + 1] = h[r, t - 1] * 3 + s[r, t - 1];
    """, s=s)
    h = np.ones((3, 5), np.int64)
    for t in range(1, 5):
        h[:, t] = h[:, t - 1] * 3 + s[:, t - 1]
    np.testing.assert_array_equal(out["h"], h)


def test_a_member_without_a_range_takes_its_steps_from_another_members_read(run):
    """A quantity per step inside the loop it feeds (`rho[t] = sum(f[t])`, read by the next `f`,
    as a lattice Boltzmann step has its density) asked for an explicit range on t, which the
    read of f, ranged by its own clauses, gives."""
    f0 = np.float32([1.0, 2.0, 4.0])
    out = run("""
        let f0: [f32; K];
        let f[0, k] = f0[k];
        let rho[t, k] = f[t, k] / sum[j](f[t, j]);
        let f[t in 1..5, k in 0..K] = f[t - 1, k] + rho[t - 1, k];
    """, f0=f0)
    f = [f0]; rho = []
    for t in range(5):
        rho.append(f[-1] / f[-1].sum())
        f.append(f[-1] + rho[-1])
    np.testing.assert_allclose(out["f"], np.array(f[:5]), rtol=1e-6)
    np.testing.assert_allclose(out["rho"], np.array(rho), rtol=1e-6)


def test_a_member_without_a_range_whose_value_is_a_row_takes_its_steps_from_a_read(run):
    """`a[t] = forces(x[t])`, velocity Verlet's acceleration, a row of the state per step."""
    x0 = np.float32([1.0, -2.0, 0.5])
    out = run("""
        let x0: [f32; K];
        fn force(x) { let f[i] = -x[i] * x[i] * x[i]; f }
        let a[t] = force(x[t]);
        let x[0] = x0;
        let x[t in 1..6] = x[t - 1] + 0.1 * a[t - 1];
    """, x0=x0)
    x = [x0]
    for _ in range(5):
        x.append(x[-1] - 0.1 * x[-1] ** 3)
    np.testing.assert_allclose(out["x"], np.array(x), rtol=1e-6)
    np.testing.assert_allclose(out["a"], -np.array(x) ** 3, rtol=1e-6)


def test_a_first_index_read_along_two_extents_is_e004():
    with pytest.raises(CompileError) as info:
        einc.compile("""
            let s: [i32; 3, 4];
            let u: [i32; 5, 4];
            let h[r, 0] = 1;
            let h[r, t in 1..5] = h[r, t - 1] + s[r, t - 1] + u[r, t - 1];
        """)
    diag = info.value.diagnostics[0]
    # r is a batch axis (the step is t, step_axis): its extents are told apart as any index's
    assert diag.code == "E004" and "index `r` gets extent 3 from `s[r, t - 1]`" in diag.message and diag.span.line == 5


def test_reading_a_future_step_is_an_error():
    with pytest.raises(CompileError) as info:
        einc.compile("""
            let x[0] = 1.0;
            let x[t in 1..10] = x[t + 1] * 0.5;
        """)
    diag = info.value.diagnostics[0]
    assert diag.code == "E007" and "ahead" in diag.message and diag.span.line == 3
    assert "number its steps from the end" in diag.hint     # how to write a backward recurrence


@pytest.mark.parametrize("read, words", [
    ("sum[k in i + 1..6](L[k, i] * x[k])", "only at steps ahead"),          # back substitution
    ("sum[k in 0..6](L[k, i] * x[k] where k > i)", "only at steps ahead"),
    ("sum[k in 0..6](L[k, i] * x[k])", "may reach steps after"),            # a system, not a recurrence
    ("sum[k in 0..i + 1](L[k, i] * x[k])", "includes the point being computed"),
])
def test_a_read_over_a_range_reaching_points_not_computed_yet_is_e007(read, words):
    # These built and ran, reading the zeros of steps not computed yet (a back substitution
    # written as `x[i] = (b[i] - sum[k in i + 1..N](L[k, i] * x[k])) / L[i, i]` gave wrong x).
    with pytest.raises(CompileError) as info:
        einc.compile(f"""
            let L: [f32; 6, 6];
            let b: [f32; 6];
            let x[i in 0..6] = (b[i] - {read}) / L[i, i];
        """)
    diag = info.value.diagnostics[0]
    assert diag.code == "E007" and words in diag.message and diag.span.line == 4


def test_an_interval_dp_over_a_range_starting_at_another_index_runs(run):
    # C[l, i] over the spans of l items from i reads C[r - i, i] and C[i + l - 1 - r, r + 1] for r
    # in i..i + l: both behind the step l at every i. The bounds of r (through i) and of i were
    # taken independently, so `r - i - l` looked reachable up to i's extent: E007 (optimal BST).
    w = rng.uniform(0.1, 1.0, 6)
    out = run("""
        let w: [f64; K];
        let C[0, i in 0..K + 1] = 0.0;
        let C[l in 1..K + 1, i in 0..K + 1 - l] = min[r in i..i + l](C[r - i, i] + C[i + l - 1 - r, r + 1])
            + sum[k in i..i + l](w[k]);
    """, w=w)
    want = np.zeros((7, 7))
    for l in range(1, 7):
        for i in range(7 - l):
            want[l, i] = min(want[r - i, i] + want[i + l - 1 - r, r + 1] for r in range(i, i + l)) + w[i:i + l].sum()
    np.testing.assert_allclose(out["C"], want, rtol=1e-12)


@pytest.mark.parametrize("block", [
    "{ let h[i in 0..3] = r[i]; sum[j in 0..3](h[j]) }",
    "{ let h[i in 0..3] = r[i] * 2.0; h[t % 3] }",
    "{ let h[i in 0..3] = if i > 0 { r[i + 1] } else { 0.0 }; h[1] }",
])
def test_a_definition_inside_a_step_reading_the_step_being_computed_is_e007(block):
    # At t = 2 each of these reads r[2] (or r[3]) while it is computed: they built and ran,
    # reading 0 there (r = 1, 2, 5, 13, .. for x = 1, 2, ..: a fuzzed program, reduced).
    step = f"let r[t in 2..T] = r[t - 1] + {block};"
    with pytest.raises(CompileError) as info:
        einc.compile(f"let x: [f32; T];\nlet r[t in 0..2] = x[t];\n{step}\n")
    diag = info.value.diagnostics[0]
    assert diag.code == "E007" and (diag.span.line, diag.span.col) == (3, step.index("r[i") + 1)


def test_a_definition_inside_a_step_reading_earlier_steps_runs(run):
    x = rng.standard_normal(9).astype(np.float32)
    out = run("""
        let x: [f32; T];
        let r[t in 0..3] = x[t];
        let r[t in 3..T] = r[t - 1] + { let h[i in 0..3] = r[i] * 0.5; h[t % 3] }
            + { let g[i in 0..9] = if i < t { r[i] } else { 0.0 }; sum[j in 0..9](g[j]) * 0.01 };
    """, x=x)
    r = x.copy()
    for t in range(3, 9):
        r[t] = r[t - 1] + np.float32(0.5) * r[t % 3] + np.float32(0.01) * r[:t].sum(dtype=np.float32)
    np.testing.assert_allclose(out["r"], r, rtol=1e-5, atol=1e-6)


def test_a_read_its_guards_leave_no_point_is_not_a_read_ahead(run):
    # At n = 2 the branch `j < i` holds only at (1, 0), where `k in 0..j` is empty: the read of
    # `L[j, k]` never runs. einc derived that it is at least one step ahead and at least one
    # behind, and reported the first (E007, std::ml::cholesky of a 2 x 2 matrix).
    a = np.array([[4.0, 1.0], [3.0, 2.0]], np.float32)
    out = run("""
        let A: [f32; 2, 2];
        let L[i in 0..2, j in 0..2] = if j > i { 0.0 } else if j == i { A[i, i] + 1.0 } else {
            A[i, j] - sum[k in 0..j](L[i, k] * L[j, k])
        };
    """, A=a)
    i, j = np.indices(a.shape)
    np.testing.assert_array_equal(out["L"], np.where(j > i, 0.0, np.where(j == i, a + 1.0, a)))


def test_a_read_on_the_right_of_a_short_circuit_is_guarded_by_its_left_side(run):
    """`k > 0 && ok[k - 1]` and `k == 0 || s[k - 1] < ..` read the step before only where the
    left side lets the right one run, as `if k > 0 { ok[k - 1] } else { false }` does; they were
    E005 "at its first step 0 this clause reads `ok` at step -1, before the start"."""
    v = np.array([0.1, 0.7, 0.2, 0.3, 0.9])
    out = run("""
        let v: [f64; 5];
        let ok[k in 0..5] = v[k] > 0.5 || (k > 0 && ok[k - 1]);
        let s[k in 0..5] = v[k] + (if k == 0 || s[k - 1] < 1.0 { 1.0 } else { 0.0 });
    """, v=v)
    s = [v[0] + 1.0]
    for k in range(1, 5):
        s.append(v[k] + (1.0 if s[-1] < 1.0 else 0.0))
    np.testing.assert_array_equal(out["ok"], np.logical_or.accumulate(v > 0.5))
    np.testing.assert_allclose(out["s"], s, rtol=1e-15)


def test_reads_over_ranges_that_end_before_the_step_are_recurrences(run):
    b = rng.standard_normal(8).astype(np.float32)
    out = run("""
        let b: [f32; 8];
        let x[i in 0..8] = b[i] + 0.5 * sum[k in max(0, i - 2)..i](x[k]);
        let y[i in 0..8] = b[i] + 0.5 * sum[k in 1..i + 1](y[i - k]);
        let w[0] = b[0];
        let w[t in 1..8] = b[t] + 0.5 * sum[k in 0..8](w[k]) where k < t;
        let H[0, j in 0..4] = b[j];
        let H[i in 1..4, j in 0..4] = b[i + j] + sum[k in 0..i + 1](H[k, j - 1]) where j > 0;
    """, b=b)
    x, y, w = (np.zeros(8, np.float32) for _ in range(3))
    H = np.zeros((4, 4), np.float32)
    for i in range(8):
        x[i] = b[i] + np.float32(0.5) * x[max(0, i - 2):i].sum(dtype=np.float32)
        y[i] = b[i] + np.float32(0.5) * y[:i][::-1].sum(dtype=np.float32)
        w[i] = b[i] + (np.float32(0.5) * w[:i].sum(dtype=np.float32) if i else 0)
    H[0] = b[:4]
    for i in range(1, 4):
        for j in range(4):
            H[i, j] = b[i + j] + (H[:i + 1, j - 1].sum(dtype=np.float32) if j else 0)
    for got, want in zip((out["x"], out["y"], out["w"], out["H"]), (x, y, w, H)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_extent_from_an_input_dim_plus_one_and_three_lookbacks(run):
    a = rng.standard_normal(12)
    out = run("""
        let a: [f64; N];
        let c[0] = 0.0;
        let c[k in 1..N + 1] = c[k - 1] + a[k - 1];
        let y[0] = 1.0;
        let y[1] = 0.5;
        let y[2] = 0.25;
        let y[k in 3..N + 1] = y[k - 1] - 0.5 * y[k - 2] + 0.25 * y[k - 3] + a[k - 1];
    """, a=a)
    y = [1.0, 0.5, 0.25]
    for k in range(3, 13):
        y.append(y[k - 1] - 0.5 * y[k - 2] + 0.25 * y[k - 3] + a[k - 1])
    np.testing.assert_allclose(out["c"], np.concatenate([[0.0], np.cumsum(a)]), rtol=1e-12)
    np.testing.assert_allclose(out["y"], y, rtol=1e-12)


def test_heat_equation_with_fixed_boundary_columns(run):
    N, T = 41, 60
    out = run("""
        let u[0, i in 0..41] = 0.0;
        let u[0, 20] = 10.0;
        let u[t in 1..60, 0] = 0.0;
        let u[t in 1..60, i in 1..40] = u[t - 1, i] + 0.25 * (u[t - 1, i - 1] - 2.0 * u[t - 1, i] + u[t - 1, i + 1]);
        let u[t in 1..60, 40] = 0.0;
    """)
    u = np.zeros((T, N), np.float32)
    u[0, 20] = 10
    for t in range(1, T):
        u[t, 1:-1] = u[t - 1, 1:-1] + np.float32(0.25) * (u[t - 1, :-2] - 2 * u[t - 1, 1:-1] + u[t - 1, 2:])
    np.testing.assert_allclose(out["u"], u, rtol=1e-5, atol=1e-6)


def test_guarded_vector_state_takes_the_clause_whose_guard_holds(run):
    """Each guarded clause defines the points where its guard holds (LANGUAGE.md section 10);
    without the second clause the points i % 3 == 0 are E004 (tests/semantics/test_guarded_clause_coverage.py)."""
    out = run("""
        let a: [f32; N];
        let h[0, i in 0..N] = a[i];
        let h[t in 1..5, i in 0..N] = h[t - 1, i] * 2.0 + 1.0 where i % 3 != 0;
        let h[t in 1..5, i in 0..N] = 0.0 where i % 3 == 0;
    """, a=np.arange(20, dtype=np.float32))
    h = [np.arange(20, dtype=np.float32)]
    for _ in range(4):
        h.append(np.where(np.arange(20) % 3 != 0, h[-1] * 2 + 1, 0))
    np.testing.assert_array_equal(out["h"], np.array(h))


def test_reduction_in_a_step_guarded_by_a_boolean_array(run):
    """The sum runs in vector lanes (llvm-cpu), and its guard `m[i]` is read as a vector of
    booleans; IREE 3.13 rejected that read as one vector.transfer_read (fuzz finding)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(37).astype(np.float32)
    m = rng.random(37) < 0.5
    out = run("""
        let x: [f32; N];
        let m: [bool; N];
        let r[0] = 1.0;
        let r[t in 1..4] = 0.5 * r[t - 1] + sum[i](x[i] * r[t - 1] where m[i]);
    """, x=x, m=m)
    r = [1.0]
    for _ in range(3):
        r.append(0.5 * r[-1] + r[-1] * x[m].astype(np.float64).sum())
    np.testing.assert_allclose(out["r"], r, rtol=1e-5)


BOOLEAN_STATES = """
    let x: [f32; T];
    let seen[0] = x[0] > 0.5;
    let seen[t in 1..T] = seen[t - 1] || x[t] > 0.5;
    let c[0, i in 0..15] = i == 7;
    let c[t in 1..8, i in 0..15] = l != (c[t - 1, i] || r)
        where l = if i == 0 { false } else { c[t - 1, i - 1] },
              r = if i == 14 { false } else { c[t - 1, i + 1] };
    let s[0, j in 0..3] = x[j] > 0.5;
    let s[t in 1..T, j in 0..3] = if j == 0 { !s[t - 1, 2] } else { s[t - 1, j - 1] != (x[t] > 0.3) };
    let ever = seen[T - 1];
"""


def boolean_states(x: np.ndarray) -> dict:
    c = np.zeros((8, 15), bool)
    c[0, 7] = True
    for t in range(1, 8):
        c[t] = np.r_[False, c[t - 1, :-1]] != (c[t - 1] | np.r_[c[t - 1, 1:], False])
    s = np.zeros((len(x), 3), bool)
    s[0] = x[:3] > 0.5
    for t in range(1, len(x)):
        s[t] = [not s[t - 1, 2], s[t - 1, 0] != (x[t] > 0.3), s[t - 1, 1] != (x[t] > 0.3)]
    seen = np.logical_or.accumulate(x > 0.5)
    return {"seen": seen, "c": c, "s": s, "ever": seen[-1]}


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, "vulkan-spirv"])
def test_boolean_recurrences_whole_windowed_and_small_tensor_states(run, target):
    """Bool states (rule 30, a running `any`, a small tensor state): IREE stores i1 tensors as
    i8 and rejected the step's tensor.insert of an i1 into one (IREE-80); the members are kept
    as i8 inside the dispatch and converted back after it."""
    x = np.array([0.1, 0.4, 0.2, 0.45, 0.7, 0.35, 0.05, 0.9, 0.31, 0.2], np.float32)
    out = run(BOOLEAN_STATES, target=target, x=x)
    for name, expected in boolean_states(x).items():
        np.testing.assert_array_equal(out[name], expected, err_msg=name)
    last = run(BOOLEAN_STATES, target=target, outputs=["ever"], x=x[:4])      # `seen` in a window
    assert last["ever"] == boolean_states(x[:4])["ever"]


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_bool_member_of_a_group_run_from_the_host(run, target):
    """`y[t / 2]` puts the group in vulkan-spirv's host loop, which keeps bools as they are (no
    i8 storage: the conversion back after the loop must see that; the fuzzer's program 77 of
    seed 5 failed to verify, a compare of an i1 with an i8)."""
    x = np.array([0.7, 0.2, 0.9, 0.1, 0.8, 0.3, 0.6, 0.5, 0.95], np.float32)
    out = run("""
        let x: [f32; 9];
        let y[0] = x[0];
        let seen[0] = x[0] > 0.5;
        let y[t in 1..9] = y[t - 1] * 0.5 + (if seen[t - 1] { x[t] } else { 0.0 });
        let seen[t in 1..9] = seen[t - 1] != (y[t / 2] > 0.4);
    """, target=target, x=x)
    y, seen = [x[0]], [x[0] > 0.5]
    for t in range(1, 9):
        y.append(np.float32(y[-1] * np.float32(0.5) + (x[t] if seen[-1] else np.float32(0))))
        seen.append(seen[-1] != (y[t // 2] > 0.4))
    np.testing.assert_allclose(out["y"], y, rtol=1e-6)
    np.testing.assert_array_equal(out["seen"], seen)


def test_indices_bounded_only_by_reads_of_the_group_take_the_extents_of_earlier_clauses(run):
    """An n-body step: `b`, `d`, `o` and `e` are read only through members of the group (and
    `m`), whose extents the starts above give (`P[0, b, d] = p0[b, d]`). They were E004, "cannot
    infer the range"; now a read of a member counts for an index no other read bounds."""
    rng = np.random.default_rng(11)
    p0, v0, m = rng.random((4, 2)), rng.random((4, 2)) * 0.1, rng.random(4) + 0.5
    out = run("""
        use std::math::sqrt;
        let p0: [f64; B, 2];
        let v0: [f64; B, 2];
        let m: [f64; B];
        let P[0, b, d] = p0[b, d];
        let V[0, b, d] = v0[b, d];
        let V[t in 1..30, b, d] = V[t - 1, b, d] + 0.01 * sum[o](
            m[o] * (P[t - 1, o, d] - P[t - 1, b, d]) / (r * r * r)
            where r = sqrt(sum[e]((P[t - 1, o, e] - P[t - 1, b, e]) ** 2) + 0.01), o != b);
        let P[t in 1..30, b, d] = P[t - 1, b, d] + 0.01 * V[t, b, d];
    """, outputs=["P"], p0=p0, v0=v0, m=m)
    p, v, path = p0.copy(), v0.copy(), [p0.copy()]
    for _ in range(29):
        gap = p[None, :, :] - p[:, None, :]                 # [b, o, d]
        r = np.sqrt((gap ** 2).sum(-1) + 0.01)
        np.fill_diagonal(r, np.inf)
        v = v + 0.01 * (m[None, :, None] * gap / r[:, :, None] ** 3).sum(1)
        p = p + 0.01 * v
        path.append(p.copy())
    np.testing.assert_allclose(out["P"], np.array(path), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("target", ["llvm-cpu", "vulkan-spirv"])
@pytest.mark.parametrize("outputs", [None, ["last"]])
def test_a_step_tensor_reads_every_earlier_step_under_a_guard(run, target, outputs):
    """`let h[s in 0..T] = if s < t { y[s] * z[s] + 1.0 } else { 0.0 };` inside y's step: a
    tensor the step computes, reading the members at the steps its own index names, which the
    guard keeps before t. It was E011 ("may read the state only at an earlier step"); the
    members are now stored whole and the tensor reads that storage. With only `last` an output
    too (nothing else keeps y whole)."""
    x = np.random.default_rng(1).standard_normal(12).astype(np.float32)
    out = run("""
        let x: [f32; T];
        let y[0] = x[0];
        let z[0] = 0.0;
        let y[t in 1..T] = { let h[s in 0..T] = if s < t { y[s] * z[s] + 1.0 } else { 0.0 };
                             x[t] + 0.25 * max[s](h[s]) };
        let z[t in 1..T] = 0.5 * z[t - 1] + y[t];
        let last = y[T - 1] + z[T - 1];
    """, target=target, outputs=outputs, x=x)
    y, z = [x[0]], [np.float32(0.0)]
    for t in range(1, 12):
        h = max(max(y[s] * z[s] + np.float32(1.0) for s in range(t)), np.float32(0.0))
        y.append(x[t] + np.float32(0.25) * h)
        z.append(np.float32(0.5) * z[-1] + y[-1])
    np.testing.assert_allclose(out["last"], y[-1] + z[-1], rtol=1e-6)
    if outputs is None:
        np.testing.assert_allclose(out["y"], np.array(y, np.float32), rtol=1e-6)


def test_a_start_clause_above_the_steps_takes_the_range_they_infer(run):
    """`lo[0, b] = 0.0` (a bisection's start, constant over a batch) above `lo[t in 1..T, b] = ..
    c[b] ..`, whose b only the read of c bounds: the start takes that extent, found after it in
    the source (it was E004 "cannot infer the range of index `b`"; written as a user would,
    bisection for cos(x) = c x and a Horner sweep)."""
    c = np.array([0.5, 1.0, 2.0, 5.0], np.float32)
    out = run("""
        use std::math::cos;
        let c: [f32; B];
        let lo[0, b] = 0.0;
        let hi[0, b] = 2.0;
        let lo[t in 1..30, b] = if cos(mid) - c[b] * mid > 0.0 { mid } else { lo[t - 1, b] }
            where mid = 0.5 * (lo[t - 1, b] + hi[t - 1, b]);
        let hi[t in 1..30, b] = if cos(mid) - c[b] * mid > 0.0 { hi[t - 1, b] } else { mid }
            where mid = 0.5 * (lo[t - 1, b] + hi[t - 1, b]);
        let p[0, j] = 1.0;
        let p[k in 1..4, j] = p[k - 1, j] * c[j] + 0.5;
    """, c=c)
    lo, hi, p = np.zeros(4), np.full(4, 2.0), [np.ones(4)]
    for _ in range(29):
        mid = 0.5 * (lo + hi)
        pos = np.cos(mid) - c * mid > 0
        lo, hi = np.where(pos, mid, lo), np.where(pos, hi, mid)
    for _ in range(3):
        p.append(p[-1] * c + 0.5)
    np.testing.assert_allclose(out["lo"][-1], lo, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["hi"][-1], hi, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["p"], np.array(p), rtol=1e-6)


def test_a_start_clause_that_reads_nothing_takes_the_ranges_of_the_steps(run):
    """`P[0, i, j] = if i == j { 1.0 } else { 0.0 }` (an identity start) reads no array: its i
    and j take the member's extents, from the step clause's explicit ranges (it was E004)."""
    M = np.random.default_rng(12).random((3, 3))
    out = run("""
        let M: [f64; 3, 3];
        let P[0, i, j] = if i == j { 1.0 } else { 0.0 };
        let P[k in 1..6, i in 0..3, j in 0..3] = sum[m](P[k - 1, i, m] * M[m, j]);
    """, M=M)
    np.testing.assert_allclose(out["P"], [np.linalg.matrix_power(M, k) for k in range(6)], rtol=1e-12)


def test_a_zero_start_above_a_step_whose_reads_bound_its_index(run):
    """`h[0, j] = 0.0` before `h[t in 1..T, j] = tanh(h[t - 1, j] + x[t, j])`: j is bounded by
    x in the step clause below the start, so the start is taken after it (it was E004, "cannot
    infer the range of index `j`"); the start's points stay 0."""
    x = np.random.default_rng(13).standard_normal((5, 3))
    out = run("""
        use std::math::tanh;
        let x: [f64; T, H];
        let h[0, j] = 0.0;
        let c[0, j] = 1.0;
        let h[t in 1..T, j] = tanh(h[t - 1, j] + x[t, j]);
        let c[t in 1..T, j] = c[t - 1, j] * 0.5 + h[t, j];
    """, x=x)
    h, c = [np.zeros(3)], [np.ones(3)]
    for t in range(1, 5):
        h.append(np.tanh(h[-1] + x[t]))
        c.append(c[-1] * 0.5 + h[-1])
    np.testing.assert_allclose(out["h"], np.array(h), rtol=1e-12)
    np.testing.assert_allclose(out["c"], np.array(c), rtol=1e-12)


STACKED_LSTM = """
    use std::ml::sigmoid;
    use std::math::tanh;
    let x: [f64; T, D];
    let W1: [f64; 4, D, H];
    let U1: [f64; 4, H, H];
    let W2: [f64; 4, H, H];
    let U2: [f64; 4, H, H];
    fn gates(xin, h, W, U) {
        let z[g, j] = sum[d](xin[d] * W[g, d, j]) + sum[k](h[k] * U[g, k, j]);
        z
    }
    let h1[0, j in 0..H] = 0.0;
    let c1[0, j in 0..H] = 0.0;
    let h2[0, j in 0..H] = 0.0;
    let c2[0, j in 0..H] = 0.0;
    let c1[t in 1..T, j in 0..H] = { let z = gates(x[t], h1[t - 1], W1, U1);
        sigmoid(z[1, j]) * c1[t - 1, j] + sigmoid(z[0, j]) * tanh(z[2, j]) };
    let h1[t in 1..T, j in 0..H] = { let z = gates(x[t], h1[t - 1], W1, U1); sigmoid(z[3, j]) * tanh(c1[t, j]) };
    let c2[t in 1..T, j in 0..H] = { let z = gates(h1[t], h2[t - 1], W2, U2);
        sigmoid(z[1, j]) * c2[t - 1, j] + sigmoid(z[0, j]) * tanh(z[2, j]) };
    let h2[t in 1..T, j in 0..H] = { let z = gates(h1[t], h2[t - 1], W2, U2); sigmoid(z[3, j]) * tanh(c2[t, j]) };
    let loss = sum[j](h2[T - 1, j] * h2[T - 1, j]);
    let gW1 = @loss / @W1;
"""


def stacked_lstm(x, W1, U1, W2, U2):
    def cell(xin, h, c, W, U):
        z = np.einsum("d,gdj->gj", xin, W) + np.einsum("k,gkj->gj", h, U)
        sig = 1 / (1 + np.exp(-z))
        c = sig[1] * c + sig[0] * np.tanh(z[2])
        return sig[3] * np.tanh(c), c
    states = [np.zeros(W1.shape[2])] * 4
    trajectory = [states]
    for t in range(1, len(x)):
        h1, c1 = cell(x[t], states[0], states[1], W1, U1)
        h2, c2 = cell(h1, states[2], states[3], W2, U2)
        states = [h1, c1, h2, c2]
        trajectory.append(states)
    return [np.array(member) for member in zip(*trajectory)]


@pytest.mark.full
@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_a_stacked_lstm_whose_layers_keep_rows_of_one_size(run, target, fd_jacobian):
    """Two LSTM layers in one host loop (their gates are step tensors): h1 and h2, rows of one
    size that each chunk starts fresh, were carried as one buffer (IREE-120), so h1 came back
    holding h2 and c1 went wrong from step 2."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 3))
    W1, U1, W2, U2 = (rng.standard_normal(s) * 0.5 for s in ((4, 3, 4), (4, 4, 4), (4, 4, 4), (4, 4, 4)))
    out = run(STACKED_LSTM, target=target, x=x, W1=W1, U1=U1, W2=W2, U2=U2)
    for name, expected in zip(("h1", "c1", "h2", "c2"), stacked_lstm(x, W1, U1, W2, U2)):
        np.testing.assert_allclose(out[name], expected, rtol=1e-12, atol=1e-14, err_msg=name)
    loss = lambda W: (stacked_lstm(x, W, U1, W2, U2)[2][-1] ** 2).sum()      # noqa: E731
    np.testing.assert_allclose(out["gW1"], fd_jacobian(loss, W1), rtol=1e-6, atol=1e-8)


def test_a_plain_read_elsewhere_still_decides_an_index_a_member_read_also_bounds(run):
    """The reads of a member are only a last resort: `x[i]` decides i's 5 here, as before (u's
    first row past a's 3 has a clause of its own: a step's read of a point no clause defines is
    E005)."""
    x = np.arange(1, 6, dtype=np.float32)
    out = run("""
        let a: [f32; 3];
        let x: [f32; 5];
        let u[0, i] = a[i];
        let u[0, i in 3..5] = 0.0;
        let u[t in 1..3, i] = u[t - 1, i] + x[i];
    """, a=np.ones(3, np.float32), x=x)
    expected = np.zeros((3, 5), np.float32)
    expected[0, :3] = 1
    expected[1] = expected[0] + x
    expected[2] = expected[1] + x
    np.testing.assert_array_equal(out["u"], expected)


def test_a_row_of_another_members_state_bounds_an_index_as_its_element_reads_do(run):
    """`v[t - 1, k][0]` and `let prev = v[t - 1]; prev[k, 0]` read the state of a member of the
    group as `v[t - 1, k, 0]` does: a last resort for k, so `x[k]` decides k's 2 (fuzz seed
    10102 program 69: E004 with v's 4 from a read named ``)."""
    x = np.array([1.0, 2.0], np.float32)
    out = run("""
        let x: [f32; 2];
        let u[0, k in 0..2] = 1.0;
        let v[0, j in 0..4, k in 0..4] = (j + k) as f32;
        let u[t in 1..4, k] = u[t - 1, k] + x[k] * v[t - 1, k][0] + { let prev = v[t - 1]; prev[k, 1] };
        let v[t in 1..4, j in 0..4, k in 0..4] = v[t - 1, j, k] * 0.5;
    """, x=x)
    v = np.add.outer(np.arange(4), np.arange(4)).astype(np.float32)
    u = np.ones(2, np.float32)
    for _ in range(3):
        u, v = u + x * v[:2, 0] + v[:2, 1], v * 0.5
    np.testing.assert_allclose(out["u"][-1], u, rtol=1e-6)


def test_edit_distance_grid_with_its_boundary_rows_and_columns(run):
    a = rng.integers(0, 3, 11).astype(np.int32)
    b = rng.integers(0, 3, 17).astype(np.int32)
    out = run(EDIT_DISTANCE, outputs=["D"], a=a, b=b)
    np.testing.assert_array_equal(out["D"], edit_distance_grid(a, b))


def test_a_tensor_computed_in_a_step_runs_over_the_clauses_steps(run):
    """`l` in the clause for t in 2..6 reads x at rows t - 1 = 1..4 (it was E005 with t taken
    over the whole 0..6, and a clause not starting at 0 read the wrong row)."""
    x = rng.standard_normal((6, 3)).astype(np.float32)
    out = run("""
        let x: [f32; 6, 3];
        let a[t in 0..2] = 0.0;
        let a[t in 2..6] = { let l[v in 0..3] = x[t - 1, v] * 2.0; l[0] + a[t - 1] };
        let b[t in 0..2] = 0.0;
        let b[t in 2..6] = { let l[v in 0..3] = x[t, v] * x[t, v]; l[2] + b[t - 1] };
    """, x=x)
    want_a, want_b = np.zeros(6), np.zeros(6)
    for t in range(2, 6):
        want_a[t] = 2.0 * x[t - 1, 0] + want_a[t - 1]
        want_b[t] = float(x[t, 2]) ** 2 + want_b[t - 1]
    np.testing.assert_allclose(out["a"], want_a, rtol=1e-6)
    np.testing.assert_allclose(out["b"], want_b, rtol=1e-6)


GREEDY_DECODER = """
    use std::array::argmax;
    use std::math::tanh;
    let E: [f32; V, 8];
    let W: [f32; 8, 16];
    let U: [f32; 16, V];
    let pos: [f32; T, 16];
    let start: i32;
    let tok[t in 0..1] = start;
    let tok[t in 1..T] = {
        let h[j in 0..16] = tanh(sum[d in 0..8](E[tok[t - 1], d] * W[d, j]) + pos[t, j]);
        let logits[v in 0..V] = sum[j in 0..16](h[j] * U[j, v]);
        argmax(logits) as i32
    };
    let r[t in 0..1, v in 0..8] = E[start, v];
    let r[t in 1..T, v in 0..8] = { let z[u in 0..8] = sum[j in 0..8](r[t - 1, j] * E[tok[t - 1], j] * W[j, u]);
                                     tanh(z[v] + r[t - 1, v]) };
    let s[t in 0..1] = 0.0;
    let s[t in 1..T] = { let l[v in 0..V] = sum[d in 0..8](E[v, d] * 0.5) + s[t - 1]; l[tok[t]] * 0.1 };
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_greedy_decoder_reads_the_previous_token_inside_its_tensors(run, target):
    """Tensors computed in a step read earlier steps' state at points (`tok[t - 1]`, a gather of
    its embedding; `r[t - 1, j]`; `s[t - 1]`) and the step itself (`pos[t, j]`); the tokens
    match a NumPy greedy loop in f64 (an argmax tie is unlikely with these random weights), the
    states to 1e-5."""
    vocab, steps = 11, 9
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    x = {"E": f(vocab, 8), "W": f(8, 16) * 0.5, "U": f(16, vocab), "pos": f(steps, 16), "start": np.int32(4)}
    out = run(GREEDY_DECODER, target=target, **x)
    E, W, U, pos = (x[k].astype(np.float64) for k in ("E", "W", "U", "pos"))
    tok, r, s = [4], [E[4]], [0.0]
    for t in range(1, steps):
        tok.append(int(np.argmax(np.tanh(E[tok[-1]] @ W + pos[t]) @ U)))
        r.append(np.tanh((r[-1] * E[tok[-2]]) @ W[:, :8] + r[-1]))
        s.append(((E * 0.5).sum(1) + s[-1])[tok[t]] * 0.1)
    np.testing.assert_array_equal(out["tok"], tok)
    assert len(set(tok)) > 2                     # the decoder moves between tokens
    np.testing.assert_allclose(out["r"], np.array(r), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["s"], s, rtol=1e-5, atol=1e-6)


THESIS_STEP = """
    let A: [f64; 3, 3];
    let u: [f64; T, 3];
    let x0: [f64; 3];
    fn step(x, u) { let y[i] = sum[j](A[i, j] * x[j]) + u[i]; y }
    let x[0] = x0;
    let x[t in 1..T] = step(x[t - 1], u[t]);
    let dx0 = @x[T - 1] / @x0;
"""


def test_clauses_whose_values_are_vectors_define_the_state_axis(run):
    """The thesis's first example: x[0] = x0 and x[t] = step(x[t - 1], u[t]) with vector
    values define x[t, i]; @x[T - 1] / @x0 is A^(T - 1). Both were E004 ("the value at one
    point must be a scalar", "`@x[..]` needs 2 subscripts")."""
    A, u, x0 = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((5, 3)), rng.standard_normal(3)
    out = run(THESIS_STEP, A=A, u=u, x0=x0)
    x, xs = x0, [x0]
    for t in range(1, 5):
        x = A @ x + u[t]
        xs.append(x)
    np.testing.assert_allclose(out["x"], np.array(xs), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["dx0"], np.linalg.matrix_power(A, 4), rtol=1e-12, atol=1e-14)


def test_a_scalar_start_row_beside_a_vector_step(run):
    # h[0, j] names both axes, h[t] = cell(..) defines the second through its value
    X, W = rng.standard_normal((4, 2)), rng.standard_normal((3, 2))
    out = run("""
        use std::math::tanh;
        let X: [f64; T, 2];
        let W: [f64; 3, 2];
        fn cell(h, x) { let y[j] = tanh(sum[i](W[j, i] * x[i]) + 0.5 * h[j]); y }
        let h[0, j in 0..3] = 0.25;
        let h[t in 1..T + 1] = cell(h[t - 1], X[t - 1]);
        let y[i in 0..2] = X[0];
    """, X=X, W=W)
    h, hs = np.full(3, 0.25), [np.full(3, 0.25)]
    for t in range(4):
        h = np.tanh(W @ X[t] + 0.5 * h)
        hs.append(h)
    np.testing.assert_allclose(out["h"], np.array(hs), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(out["y"], np.stack([X[0], X[0]]))


KALMAN_WITH_VECTOR_STEPS = """
    let y: [f64; T];
    let q: f64;
    let r: f64;
    let Fm = [[1.0, 1.0], [0.0, 1.0]];
    fn predict(x) { let z[i in 0..2] = sum[j](Fm[i, j] * x[j]); z }
    fn predict_cov(P) {
        let Q[i in 0..2, j in 0..2] = sum[k, l](Fm[i, k] * P[k, l] * Fm[j, l]) + if i == j { q } else { 0.0 };
        Q
    }
    let x[0] = [0.0, 0.0];
    let P[0] = [[1.0, 0.0], [0.0, 1.0]];
    let xp[t in 1..T] = predict(x[t - 1]);
    let Pp[t in 1..T] = predict_cov(P[t - 1]);
    let K[t in 1..T, i in 0..2] = Pp[t, i, 0] / (Pp[t, 0, 0] + r);
    let x[t in 1..T, i in 0..2] = xp[t, i] + K[t, i] * (y[t] - xp[t, 0]);
    let P[t in 1..T, i in 0..2, j in 0..2] = Pp[t, i, j] - K[t, i] * Pp[t, 0, j];
"""


def test_a_kalman_filter_whose_predictions_are_vectors_and_matrices(run):
    """xp and Pp have no clause reading no member: their axes show in their values, which
    other members read at points (E004 before: `xp` has 1 axis)."""
    y = np.cumsum(rng.standard_normal(15) * 0.2) + rng.standard_normal(15) * 0.4
    out = run(KALMAN_WITH_VECTOR_STEPS, outputs=["x"], y=y, q=np.float64(0.05), r=np.float64(0.3))
    F, x, P, xs = np.array([[1, 1], [0, 1.0]]), np.zeros(2), np.eye(2), [np.zeros(2)]
    for t in range(1, 15):
        xp, Pp = F @ x, F @ P @ F.T + 0.05 * np.eye(2)
        K = Pp[:, 0] / (Pp[0, 0] + 0.3)
        x, P = xp + K * (y[t] - xp[0]), Pp - np.outer(K, Pp[0])
        xs.append(x)
    np.testing.assert_allclose(out["x"], np.array(xs), rtol=1e-12, atol=1e-14)


def test_a_clause_defining_too_few_axes_is_e004(diagnose):
    diag, _ = diagnose("let v: [f64; 3];\nlet x[0, j in 0..3] = v[j];\nlet x[t in 1..4] = x[t - 1, 0];\n")
    assert diag.code == "E004" and "`x` has 2 axes, but this clause defines 1" in diag.message



def test_reading_elements_of_a_recurrence_whose_rows_are_defined_whole_names_the_fix(diagnose):
    # Gram-Schmidt written row by row (a hold-out program): the message said `Qt` "has 1 axes",
    # though its rows are vectors; elements of such a member cannot be read inside its recurrence.
    diag, report = diagnose("let A: [f64; 4, 3];\nlet Qt[k in 0..3] = {\n"
                            "    let v[i in 0..4] = A[i, k] - sum[j in 0..k](Qt[j, i]);\n    v\n};\n")
    assert diag.code == "E004" and "`Qt` names 1 axis in its definition but is read with 2 subscripts" in diag.message
    assert "let Qt[k in 0..N, i in 0..M] = .." in report

GRU_CELL_READING_A_ROW_OF_THE_STEP = """
    use std::math::tanh;
    use std::ml::sigmoid;
    let X: [f32; T, 2];
    let Wz: [f32; H, 5];
    let Wh: [f32; H, 5];
    fn gate(W, x, h, j) { sum[i in 0..2](W[j, i] * x[i]) + sum[k in 0..3](W[j, 2 + k] * h[k]) }
    let h[0, j in 0..H] = 0.0;
    let z[t in 1..T + 1, j in 0..H] = sigmoid(gate(Wz, X[t - 1], h[t - 1], j));
    let r[t in 1..T + 1, j in 0..H] = z[t, j] * h[t - 1, j];
    let c[t in 1..T + 1, j in 0..H] = tanh(gate(Wh, X[t - 1], r[t], j));
    let h[t in 1..T + 1, j in 0..H] = (1.0 - z[t, j]) * h[t - 1, j] + z[t, j] * c[t, j];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_member_reads_the_whole_row_another_computed_earlier_in_the_step(run, target):
    """`c[t, j]` passes `r[t]`, the row r computed earlier in the same step, to a function: a
    slice of the current step (it was E011, "can be read whole only at an earlier step")."""
    x = {"X": rng.standard_normal((6, 2)), "Wz": rng.standard_normal((3, 5)) * 0.5,
         "Wh": rng.standard_normal((3, 5)) * 0.5}
    out = run(GRU_CELL_READING_A_ROW_OF_THE_STEP, target=target,
              **{k: v.astype(np.float32) for k, v in x.items()})
    X, Wz, Wh = (x[k].astype(np.float32).astype(np.float64) for k in ("X", "Wz", "Wh"))
    h, hs = np.zeros(3), [np.zeros(3)]
    for t in range(6):
        z = 1 / (1 + np.exp(-(Wz @ np.concatenate([X[t], h]))))
        c = np.tanh(Wh @ np.concatenate([X[t], z * h]))
        h = (1 - z) * h + z * c
        hs.append(h)
    np.testing.assert_allclose(out["h"], np.array(hs), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_recurrence_in_a_function_called_per_point_runs_for_every_point(run, target):
    # the group reads the caller's index i (through a[i]): it is computed for every i, as axes
    # after its step, and each point reads its own row (the recurrence also has an axis j)
    out = run("""
        fn relax(a, v) {
            let s[0, j in 0..3] = a * v[j];
            let s[t in 1..6, j in 0..3] = s[t - 1, j] * 0.5 + a + s[t - 1, (j + 2) % 3];
            s[5]
        }
        fn steps(a) {
            let x[0] = a;
            let x[k in 1..20] = if x[k - 1] % 2 == 0 { x[k - 1] / 2 } else { 3 * x[k - 1] + 1 };
            x[19]
        }
        let A: [f32; 4];
        let n: [i32; 5];
        let V = [1.0, 10.0, 100.0];
        let R[i, j] = relax(A[i], V)[j];
        let c[i] = steps(n[i] + 1);
    """, target=target, A=np.array([1, 2, -1, 0.5], np.float32), n=np.array([6, 0, 26, 11, 96], np.int32))
    expected = []
    for a in np.array([1, 2, -1, 0.5], np.float32):
        s = a * np.array([1, 10, 100], np.float32)
        for _ in range(5):
            s = s * np.float32(0.5) + a + s[[2, 0, 1]]
        expected.append(s)
    np.testing.assert_allclose(out["R"], expected, rtol=1e-6)      # f32, the same operations
    collatz = []
    for x in np.array([6, 0, 26, 11, 96]) + 1:
        for _ in range(19):
            x = x // 2 if x % 2 == 0 else 3 * x + 1
        collatz.append(x)
    np.testing.assert_array_equal(out["c"], collatz)


def test_a_recurrence_function_called_per_point_with_a_sum_over_a_range_of_the_point(run):
    # the argument's range `i..6` depends on the caller's index i, whose extent comes from the
    # reads after the call; the function's recurrence is elaborated first and must leave that
    # range pending (it was a TypeError: fuzz seed 41 program 320)
    out = run("""
        fn f(a: f32, c: f32) -> f32 { let s[0] = a; let s[k in 1..8] = 0.25 * s[k - 1] + c; s[7] }
        let x: [f32; 6];
        let d[i] = f(x[i], sum[j in i..6](x[j] * j as f32));
    """, x=np.array([0.5, -1.0, 2.0, 0.25, -0.75, 1.5], np.float32))
    x = np.array([0.5, -1.0, 2.0, 0.25, -0.75, 1.5])
    expected = []
    for i in range(6):
        c, s = (x[i:] * np.arange(i, 6)).sum(), x[i]
        for _ in range(7):
            s = 0.25 * s + c
        expected.append(s)
    # f32 over seven steps of a contraction by 0.25: a few ulps of values below 10
    np.testing.assert_allclose(out["d"], expected, rtol=1e-5, atol=1e-6)


def test_a_recurrence_depending_on_the_step_of_the_one_calling_it_runs_inside_that_step(run):
    """`f(x[t])` in r's clause reads r's step: f's loop runs whole inside each step of r's
    (was E011 "a loop inside a loop")."""
    out = run("""
        fn f(a) { let s[0] = a; let s[k in 1..4] = s[k - 1] * 0.5 + a; s[3] }
        let x: [f32; 3];
        let r[t in 0..2] = f(x[t]) + (t as f32);
        let r[t in 2..3] = r[t - 1] + 1.0;
    """, x=np.array([1.0, -2.0, 3.0], np.float32))
    expected = []
    for t, a in enumerate([1.0, -2.0, 3.0]):
        s = a
        for _ in range(3):
            s = s * 0.5 + a
        expected.append(s + t if t < 2 else expected[-1] + 1.0)
    np.testing.assert_allclose(out["r"], expected, rtol=1e-6)      # f32, a few exact halvings


@pytest.mark.parametrize("outer", [
    # q in p's own step: was E005 "p has no element to read", then E011
    "let p[t in 1..5] = { let q[0] = p[t - 1]; {INNER} q[2] };",
    # q in the step of r, grouped with p: was an internal KeyError in the lowering, then E011
    "let r[0] = 0;\nlet p[t in 1..5] = r[t - 1] + 1;\nlet r[t in 1..5] = { let q[0] = p[t - 1]; {INNER} q[2] };"])
def test_a_recurrence_reading_the_state_of_the_one_it_is_computed_in_runs_in_its_step(run, outer):
    """A loop inside a loop whose step computes a tensor (`h`, read through data): q runs whole
    in each step of the outer loop, its own step tensor inside its own steps."""
    inner = "let q[u in 1..3] = { let h[j in 0..2] = q[u - 1] + j; q[u - 1] + (tab[h[1]] as i32) };"
    source = "let tab: [f32; ?];\nlet p[0] = 0;\n" + outer.replace("{INNER}", inner) + "\n"
    tab = (np.arange(40) % 3).astype(np.float32)
    out = run(source, tab=tab)

    def inner_loop(q):
        for _ in range(2):
            q = q + int(tab[q + 1])
        return q
    p, r = [0], [0]
    for _ in range(1, 5):
        if "r[" in outer:
            p.append(r[-1] + 1)
            r.append(inner_loop(p[-2]))
        else:
            p.append(inner_loop(p[-1]))
    np.testing.assert_array_equal(out["p"], p)                   # integers: exact
    if "r[" in outer:
        np.testing.assert_array_equal(out["r"], r)


STEP_TENSORS_PER_POINT = """use std::array::argmax;
let W: [f32; N, 3];
let x: [f32; N];
let tab: [f32; 5];
fn walk(a, r) {
    let s[0] = a;
    let s[t in 1..4] = {
        let h[j in 0..3] = s[t - 1] * W[r, j];
        let g[j in 0..3] = h[j] + h[(j + 1) % 3];
        s[t - 1] + sum[j in 0..3](g[j]) * 0.1
    };
    s[3]
}
fn pick(a) {
    let k[0] = 0;
    let k[t in 1..4] = { let v[j in 0..5] = tab[j] * a + (k[t - 1] as f32) * (j as f32); argmax(v) as i32 };
    k[3]
}
let y[i] = walk(x[i], i);
let z[i] = pick(x[i]);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_tensors_a_step_computes_in_a_recurrence_of_a_function_called_per_point(target):
    """The step's tensors read the state (h, and g from h) or an input at the point (v): each is
    computed for every point of `i` at once, as the recurrence is (was an internal IndexError)."""
    w = rng.normal(size=(4, 3)).astype(np.float32)
    x = np.array([0.3, -0.2, -2.0, 1.0], np.float32)
    tab = np.array([0.5, -1, 2, 0.1, -3], np.float32)
    out = einc.load(einc.compile(STEP_TENSORS_PER_POINT, target=target).vmfb)(W=w, x=x, tab=tab)
    y, z = [], []
    for i in range(4):
        s, k = np.float64(x[i]), 0
        for _ in range(3):
            h = s * w[i].astype(np.float64)
            s = s + (h + np.roll(h, -1)).sum() * 0.1
            k = int(np.argmax(tab * x[i] + k * np.arange(5)))
        y.append(s)
        z.append(k)
    np.testing.assert_allclose(out["y"], y, rtol=1e-5)
    np.testing.assert_array_equal(out["z"], z)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_step_tensor_reading_the_state_at_the_clauses_point_is_computed_for_every_point(target):
    """`h` reads s[t - 1, i] at the clause's own i: one vector per i (was an internal error,
    "index variable i is not iterated by the enclosing kernel")."""
    source = """let x: [f32; ?];
let s[0, i in 0..len(x)] = x[i];
let s[t in 1..4, i in 0..len(x)] = { let h[j in 0..3] = s[t - 1, i] * (j as f32) + x[i]; s[t - 1, i] + max[j in 0..3](h[j]) * 0.1 };
"""
    x = np.array([1, 2, -3, 0.5], np.float32)
    rows = [x.astype(np.float64)]
    for _ in range(3):
        rows.append(rows[-1] + np.max([rows[-1] * j + x for j in range(3)], axis=0) * 0.1)
    out = einc.load(einc.compile(source, target=target).vmfb)(x=x)
    np.testing.assert_allclose(out["s"], rows, rtol=1e-6)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_range_that_shrinks_with_the_step_runs_over_its_hull_with_zeros_outside(run, target):
    # A binomial tree rolled back from expiry: the node axis `j in 0..N + 1 - u` depended on the
    # step u, which was E003 ("`u` is used before it is defined").
    S, K = np.float32(100.0), np.float32(105.0)
    out = run("""
        let S0: f32;
        let K: f32;
        let N = 12;
        let up = 1.05;
        let p = 0.52;
        let V[0, j in 0..N + 1] = std::math::max(S0 * up ** j / up ** (N - j) - K, 0.0);
        let V[u in 1..N + 1, j in 0..N + 1 - u] = 0.99 * (p * V[u - 1, j + 1] + (1.0 - p) * V[u - 1, j]);
        let price = V[N, 0];
    """, target=target, S0=S, K=K)
    f = np.float32
    j = np.arange(13)
    V = np.zeros((13, 13), np.float32)
    V[0] = np.maximum(S * f(1.05) ** j / f(1.05) ** (12 - j) - K, 0)
    for u in range(1, 13):
        V[u, :13 - u] = f(0.99) * (f(0.52) * V[u - 1, 1:14 - u] + f(0.48) * V[u - 1, :13 - u])
    np.testing.assert_allclose(out["V"], V, rtol=2e-5, atol=1e-4)   # zero beyond each step's nodes
    assert out["price"] == out["V"][12, 0]


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_bool_state_whose_range_grows_with_the_step_is_false_outside(run, target):
    # The points past a step's range were filled with the int literal 0: E002 ("expected bool,
    # found int literal") for a bool state (program fuzzer seed 10025, program 6).
    x = np.array([True, False, True, True, True])
    out = run("""
        let x: [bool; 5];
        let r[0, j in 0..4] = x[j];
        let r[t in 1..4, j in 0..t + 1] = r[t - 1, j] != x[t] where j < 2;
        let r[t in 1..4, j in 0..t + 1] = r[t - 1, j - 1] where j >= 2;
    """, target=target, x=x)
    r = np.zeros((4, 4), bool)
    r[0] = x[:4]
    for t in range(1, 4):
        for j in range(t + 1):
            r[t, j] = r[t - 1, j] != x[t] if j < 2 else r[t - 1, j - 1]
    np.testing.assert_array_equal(out["r"], r)       # false past each step's points


def test_a_range_depending_on_another_index_outside_a_recurrence_is_e004(diagnose):
    diag, _ = diagnose("let x: [f32; 4];\nlet T[i in 0..4, j in 0..i + 1] = x[j];\n")
    assert diag.code == "E004" and "cannot depend on another index" in diag.message and diag.span.line == 2


def test_a_recurrence_whose_first_index_has_no_range_names_that_index(diagnose):
    # A running peak per path, `peak[p, t]`, that no read gives p's extent: the hint showed
    # `x[t in 1..T]`, neither name.
    diag, report = diagnose("let S: [f32; T];\nlet peak[p, 0] = S[0];\n"
                            "let peak[p, t in 1..T] = std::math::max(peak[p, t - 1], S[t]);\n")
    # p is a batch axis (the step is t, step_axis): it is named as any index without a range
    assert diag.code == "E004" and "the range of index `p`" in diag.message
    assert "`p in 0..N`" in report


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
def test_steps_read_before_the_start_under_an_if_that_excludes_the_first_steps(run, target):
    # the everyday spelling of a base case inside the recurrent clause: `if t > 0 {..} else {..}`,
    # and a DP grid's `if i == 0 || j == 0 {..}`; the untaken branch's read is never used
    u = rng.standard_normal(10).astype(np.float32)
    out = run("""
        let u: [f32; 10];
        let s[t in 0..10] = if t > 0 { s[t - 1] * 0.5 + u[t] } else { u[t] };
    """, target=target, u=u)
    ref = [u[0]]
    for t in range(1, 10):
        ref.append(ref[-1] * np.float32(0.5) + u[t])
    np.testing.assert_allclose(out["s"], ref, rtol=1e-6)
    if target == "vulkan-spirv":
        return                       # a grid reading its own step is E011 there (docs/TARGETS.md)
    a, b = rng.standard_normal(6).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    out = run("""
        let a: [f32; 6];
        let b: [f32; 5];
        let H[i in 0..6, j in 0..5] = if i == 0 || j == 0 { 0.0 } else {
            max(H[i - 1, j - 1] + a[i] * b[j], max(H[i - 1, j], H[i, j - 1])) };
    """, target=target, a=a, b=b)
    grid = np.zeros((6, 5), np.float32)
    for i in range(1, 6):
        for j in range(1, 5):
            grid[i, j] = max(grid[i - 1, j - 1] + a[i] * b[j], grid[i - 1, j], grid[i, j - 1])
    np.testing.assert_allclose(out["H"], grid, rtol=1e-6)



@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
@pytest.mark.parametrize("outputs", [["r"], ["y"]])
def test_a_step_reading_40_scalars_computed_before_the_loop(run, target, outputs):
    """Each `x[i] * x[i + 1]` is computed before the loop, a scalar of its own; the loop's one
    dispatch (or kernel) bound each and failed to run ("binding count 41 > 32" on the CPU
    targets, "41 storage buffers" on lavapipe; IREE-220): they reach it packed into one tensor.
    With only `y` an output, `r` keeps a window (on vulkan-spirv, the one-kernel form)."""
    x = np.linspace(0.0, 1.0, 41, dtype=np.float32)
    terms = " + ".join(f"r[t - 1] * (x[{i}] * x[{i + 1}])" for i in range(40))
    out = run(f"""
        let x: [f32; 41];
        let r[0] = 0.0;
        let r[t in 1..10] = 0.01 * ({terms}) + 1.0;
        let y = r[9];
    """, target=target, outputs=outputs, x=x)
    ref = [0.0]
    for _ in range(1, 10):
        ref.append(0.01 * sum(ref[-1] * (float(x[i]) * float(x[i + 1])) for i in range(40)) + 1.0)
    got = out["r"] if outputs == ["r"] else [out["y"]]
    np.testing.assert_allclose(got, ref if outputs == ["r"] else ref[-1:], rtol=1e-5)     # f32, 40 terms a step


def test_a_start_guard_in_place_of_a_base_clause_and_a_read_through_data_of_a_point_no_clause_defines(run):
    """`if t > 1` keeps the first step from reading a step no clause defines, so it builds
    (without it, E005: tests/semantics/test_recurrence_coverage.py). A read through data is not
    judged at build time: `s[1]`, which no clause defines, reads 0 when `k` points at it."""
    x = rng.standard_normal(7).astype(np.float32)
    k = np.array([0, 0, 1, 5, 1, 2, 9], np.int32)
    out = run("""
        let x: [f32; 7];
        let k: [i32; 7];
        let g[t in 1..7] = if t > 1 { 0.5 * g[t - 1] + x[t] } else { x[t] };
        let s[0] = 1.0;
        let s[t in 2..7] = (if t > 2 { s[t - 1] } else { s[0] }) + s[k[t] % t];
    """, x=x, k=k)
    want_g = np.zeros(7, np.float32)
    want_s = np.zeros(7, np.float32)
    want_s[0] = 1.0
    for t in range(1, 7):
        want_g[t] = x[t] if t == 1 else 0.5 * want_g[t - 1] + x[t]
    for t in range(2, 7):
        want_s[t] = (want_s[t - 1] if t > 2 else want_s[0]) + want_s[k[t] % t]
    np.testing.assert_allclose(out["g"], want_g, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out["s"], want_s)


def test_whole_row_steps_read_the_previous_row_pointwise_and_a_scan_is_defined_a_point_at_a_time(run):
    """`x[t] = [.. x[t - 1, i] ..]` and `x[t - 1][i]` read the previous row point by point; a
    row that reads its own earlier points at the same step is E011 whose hint is the pointwise
    clause, which runs (the prefix sums here; tests/semantics/test_diagnostics.py). Written
    `r[t][i - 1]` and `r[t - 1][i]`, the reads were rows of the step (E011, one "that llvm-cpu
    cannot lower" with the hint to build for llvm-cpu); they are the points now."""
    x0 = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    out = run("""
        let x0: [f32; 4];
        let a[0] = x0;
        let a[t in 1..5] = [a[t - 1, i] * 0.5 + a[t - 1, (i + 1) % 4] | i in 0..4];
        let b[0] = x0;
        let b[t in 1..5] = { let r[i in 0..4] = b[t - 1][i] - b[t - 1][3 - i] * 0.25; r };
        let s[0] = x0;
        let s[t in 1..4, i in 0..4] = if i == 0 { s[t - 1, 0] } else { s[t, i - 1] + s[t - 1, i] };
        let r[0] = x0;
        let r[t in 1..4, i in 0..4] = if i == 0 { r[t - 1][0] } else { r[t][i - 1] + r[t - 1][i] };
    """, x0=x0)
    a, b, s = [x0.astype(np.float64)], [x0.astype(np.float64)], [x0.astype(np.float64)]
    for _ in range(4):
        a.append(a[-1] * 0.5 + np.roll(a[-1], -1))
        b.append(b[-1] - b[-1][::-1] * 0.25)
    for _ in range(3):
        s.append(np.cumsum(s[-1]))
    np.testing.assert_allclose(out["a"], a, rtol=1e-6)
    np.testing.assert_allclose(out["b"], b, rtol=1e-6)
    np.testing.assert_allclose(out["s"], s, rtol=1e-6)
    np.testing.assert_allclose(out["r"], s, rtol=1e-6)      # `r[t][i - 1]` is the point `r[t, i - 1]`


def test_a_row_of_earlier_points_of_the_step_is_read_point_by_point(run, diagnose):
    """A sweep over coordinates k inside step t reading the row `z[t, k - 1]` of the step being
    computed (through a binding, a further subscript and a reduction over it) reads its points, as
    `z[t, k - 1, i]` does; it was E007 "`z[t]` is read inside its own definition". A function
    building an array from such a row would compute it whole before its points: E011 naming it."""
    a = np.array([0.5, -1.0, 2.0])
    out = run("""
        let a: [f64; 3];
        let z[0, k in 0..3, i in 0..3] = a[i];
        let z[t in 1..4, 0, i in 0..3] = z[t - 1, 2, i] * 0.5 + 1.0;
        let z[t in 1..4, k in 1..3, i in 0..3] = { let prev = z[t, k - 1]; prev[i] * 0.25 + sum[j](z[t, k - 1][j]) * 0.1 };
    """, a=a)
    want = np.zeros((4, 3, 3)); want[0] = a
    for t in range(1, 4):
        want[t, 0] = want[t - 1, 2] * 0.5 + 1.0
        for k in range(1, 3):
            want[t, k] = want[t, k - 1] * 0.25 + want[t, k - 1].sum() * 0.1
    np.testing.assert_allclose(out["z"], want, rtol=1e-12)
    diag, report = diagnose("let a: [f64; 3];\nfn twice(v) { let w[i] = v[i] * 2.0; w }\n"
                            "let z[0, k in 0..3, i in 0..3] = a[i];\nlet z[t in 1..4, 0, i in 0..3] = z[t - 1, 2, i];\n"
                            "let z[t in 1..4, k in 1..3, i in 0..3] = twice(z[t, k - 1])[i];\n")
    assert diag.code == "E011" and "a row of `z[t]` used whole" in diag.message and diag.span.line == 5
    assert "`s = t * K + k`" in report


@pytest.mark.vulkan
def test_a_step_past_the_vulkan_loop_budget_is_a_run_time_error():
    """IREE-30: lavapipe stops an invocation after about 65,000 loop iterations. A chunk runs at
    least one step, and a step of 90,000 iterations (a 300 x 300 sum in each of a point's terms)
    stopped midway and returned wrong values; the host now checks that a step fits and says so."""
    src = """
        let x: [f32; N, N];
        let h[0, i in 0..64] = 1.0;
        let h[t in 1..3, i in 0..64] = 0.5 * h[t - 1, i] + sum[j, k](h[t - 1, j % 64] * x[j, k]) / 90000.0;
    """
    program = einc.load(einc.compile(src, target="vulkan-spirv", outputs=["h"]).vmfb, device="vulkan")
    with pytest.raises(einc.RunError, match="more loop iterations than one vulkan-spirv invocation"):
        program(x=np.ones((300, 300), np.float32))
