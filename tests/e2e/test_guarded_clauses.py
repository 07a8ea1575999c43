"""Several guarded clauses of one definition (LANGUAGE.md section 10): every point takes the value
of the clause whose `where` guard holds there; a point no clause covers, or two cover, stops the
run when only the run's data decide it (the build-time cases: tests/semantics/test_guarded_clause_coverage.py)."""
import numpy as np
import pytest

import einc
from einc.runtime.errors import RunError
from tests.tiers import VULKAN_FULL

TARGETS = ["llvm-cpu", VULKAN_FULL]

TRIANGLES = """
let u[i in 0..4, j in 0..4] = i * 10 + j where i < j;
let u[i in 0..4, j in 0..4] = -1 where i >= j;
"""

ON_DATA = """
let x: [f32; N];
let y[i in 0..N] = x[i] * 2.0 where x[i] > 0.0;
let y[i in 0..N] = 0.5 - x[i] where x[i] < 0.0;
let y[i in 0..N] = 7.0 where x[i] == 0.0;
"""

ON_SIZES = """
let x: [f32; N, M];
let b[i in 0..N, j in 0..M] = x[i, j] + 1.0 where i + j < N - 1;
let b[i in 0..N, j in 0..M] = x[i, j] * 3.0 where i + j >= N - 1 && j > 0;
let b[i in 0..N, 0] = -2.0 where i >= N - 1;
"""

STEPS = """
let x: [f32; N];
let a[0, j in 0..N] = x[j];
let a[t in 1..5, j in 0..N] = a[t - 1, j] * 0.5 + x[j] where x[j] > 0.0;
let a[t in 1..5, j in 0..N] = a[t - 1, j] - 1.0 where x[j] <= 0.0 && j % 2 == 0;
let a[t in 1..5, j in 0..N] = a[t - 1, j] + t as f32 where x[j] <= 0.0 && j % 2 == 1;
"""


def _compile_and_run(source, target, **inputs):
    return einc.load(einc.compile(source, target=target).vmfb)(**inputs)


@pytest.mark.parametrize("target", TARGETS)
def test_complementary_guards_over_two_indices_define_every_point(target):
    i, j = np.indices((4, 4))
    out = _compile_and_run(TRIANGLES, target)
    np.testing.assert_array_equal(out["u"], np.where(i < j, i * 10 + j, -1))


@pytest.mark.parametrize("target", TARGETS)
def test_guards_on_run_time_data_pick_a_clause_per_point_and_a_gap_stops_the_run(target):
    x = np.array([1.5, -2.0, 0.0, 3.25, -0.5], np.float32)
    expected = np.where(x > 0, x * 2, np.where(x < 0, 0.5 - x, 7.0))
    with einc.load(einc.compile(ON_DATA, target=target).vmfb) as program:     # closed before the next build
        np.testing.assert_allclose(program(x=x)["y"], expected, rtol=1e-6)
    gap = einc.load(einc.compile(ON_DATA.replace("x[i] == 0.0", "x[i] == 9.0"), target=target).vmfb)
    with pytest.raises(RunError, match=r":3:1: error\[E006\]: assertion failed: a point of `y` is defined by no clause or by two"):
        gap(x=x)


@pytest.mark.parametrize("target", TARGETS)
def test_guards_on_run_time_sizes_are_checked_when_the_program_runs(target):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i, j = np.indices(x.shape)
    out = _compile_and_run(ON_SIZES, target, x=x)
    n = x.shape[0]
    expected = np.where(i + j < n - 1, x + 1, np.where(j > 0, x * 3, -2.0))
    np.testing.assert_allclose(out["b"], expected, rtol=1e-6)


def test_a_gap_that_run_time_sizes_decide_stops_the_run():
    program = einc.load(einc.compile(ON_SIZES.replace("&& j > 0", "&& j > 1")).vmfb)
    with pytest.raises(RunError, match="a point of `b` is defined by no clause or by two"):
        program(x=np.ones((3, 4), np.float32))


@pytest.mark.parametrize("target", TARGETS)
def test_guarded_clauses_of_a_recurrence_step_choose_per_point(target):
    x = np.array([0.5, -1.0, -2.0, 2.0, 0.0, -3.0], np.float32)
    out = _compile_and_run(STEPS, target, x=x)
    a = [x.copy()]
    odd = np.arange(len(x)) % 2 == 1
    for t in range(1, 5):
        a.append(np.where(x > 0, a[-1] * 0.5 + x, np.where(odd, a[-1] + t, a[-1] - 1)))
    np.testing.assert_allclose(out["a"], np.array(a), rtol=1e-6)
    program = einc.load(einc.compile(STEPS.replace("x[j] <= 0.0 && j % 2 == 0", "x[j] < 0.0 && j % 2 == 0"),
                                     target=target).vmfb)
    with pytest.raises(RunError, match="a point of `a` is defined by no clause or by two"):
        program(x=x)       # x[4] == 0 at an even j: no clause


@pytest.mark.parametrize("target", TARGETS)
def test_a_guarded_clause_ending_in_a_reduction_keeps_its_guard(target):
    # A Leslie matrix: the births clause `sum[b](..) where a == 0` gave its guard to the sum, so it
    # covered every age and overlapped the survival clause (E004).
    fert, surv = np.float32([0, 0.8, 1.5, 0.6]), np.float32([0.7, 0.8, 0.5, 0])
    n0 = np.float32([10, 8, 6, 4])
    out = _compile_and_run("""
        let fert: [f32; A];
        let surv: [f32; A];
        let n0: [f32; A];
        let n[0, a] = n0[a];
        let n[t in 1..6, a in 0..A] = sum[b](fert[b] * n[t - 1, b]) where a == 0;
        let n[t in 1..6, a in 0..A] = surv[a - 1] * n[t - 1, a - 1] where a > 0;
        let top[i in 0..A] = max[b](n0[b]) where i < 2;
    """, target, fert=fert, surv=surv, n0=n0)
    n = [n0]
    for _ in range(5):
        n.append(np.concatenate([[fert @ n[-1]], surv[:-1] * n[-1][:-1]]).astype(np.float32))
    np.testing.assert_allclose(out["n"], np.array(n), rtol=1e-5)
    np.testing.assert_array_equal(out["top"], np.where(np.arange(4) < 2, n0.max(), 0))


def test_a_clause_guard_bounds_the_steps_its_reads_reach():
    # Cholesky by hand (a hold-out program): `L[j, j]` read under `where j < i` is an earlier
    # step; the clause's own guard was not used to bound it (E007, "may reach steps after").
    x = np.float32([1.5, -2.0, 0.5, 3.0])
    out = _compile_and_run("""
        let x: [f32; N];
        let S[i in 0..N, j in 0..N] = x[i] where j >= i;
        let S[i in 0..N, j in 0..N] = (x[i] + sum[k in 0..j](S[i, k])) * S[j, j] where j < i;
    """, "llvm-cpu", x=x)
    S = np.zeros((4, 4), np.float32)
    for i in range(4):
        for j in range(4):
            S[i, j] = x[i] if j >= i else (x[i] + S[i, :j].sum()) * S[j, j]
    np.testing.assert_allclose(out["S"], S, rtol=1e-6)


def test_a_guard_bounding_the_step_through_another_index_starts_the_clause_later():
    # Pascal's triangle (a hold-out program): `C[n - 1, k - 1]` under `where k > 0, k < n` was
    # E005 "reads `C` at step -1": n > k >= 1 was not seen to start the clause at n = 2.
    out = _compile_and_run("""
        let C[n in 0..8, k in 0..8] = 1 where k == 0 || k == n;
        let C[n in 0..8, k in 0..8] = C[n - 1, k - 1] + C[n - 1, k] where k > 0, k < n;
        let C[n in 0..8, k in 0..8] = 0 where k > n;
    """, "llvm-cpu")
    from math import comb
    np.testing.assert_array_equal(out["C"], [[comb(n, k) for k in range(8)] for n in range(8)])


def test_derivative_through_guarded_clauses_follows_the_clause_of_each_point():
    x = np.array([1.0, -2.0, 3.0, -4.0, 0.5], np.float32)
    out = _compile_and_run("""
        let x: [f32; 5];
        let y[i in 0..5] = x[i] * x[i] where i % 2 == 0;
        let y[i in 0..5] = 3.0 * x[i] where i % 2 == 1;
        let s = sum[i](y[i]);
        let g = @s / @x;
        let J = @y / @x;
    """, "llvm-cpu", x=x)
    even = np.arange(5) % 2 == 0
    np.testing.assert_allclose(out["y"], np.where(even, x * x, 3 * x), rtol=1e-6)
    np.testing.assert_allclose(out["g"], np.where(even, 2 * x, 3.0), rtol=1e-6)
    np.testing.assert_allclose(out["J"], np.diag(np.where(even, 2 * x, 3.0)), rtol=1e-6)


def test_derivative_through_guarded_clauses_of_a_recurrence():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    out = _compile_and_run("""
        let x: [f32; 3];
        let a[0, j in 0..3] = x[j];
        let a[t in 1..4, j in 0..3] = a[t - 1, j] * x[j] where j < 2;
        let a[t in 1..4, j in 0..3] = a[t - 1, j] + x[j] where j >= 2;
        let s = sum[j](a[3, j]);
        let g = @s / @x;
    """, "llvm-cpu", x=x)
    np.testing.assert_allclose(out["g"], [4 * x[0] ** 3, 4 * x[1] ** 3, 4.0], rtol=1e-6)


RIM = """
let u0: [f64; H, W];
let k: f64;
let u[0, i, j] = u0[i, j];
let u[t in 1..5, i in 0..H, j in 0..W] = -1.0 where i == 0 || j == 0 || i == H - 1 || j == W - 1;
let u[1, i in 1..H - 1, j in 1..W - 1] = u0[i, j] * k;
let u[t in 2..5, i in 1..H - 1, j in 1..W - 1] = u[t - 1, i, j] + k * (u[t - 1, i - 1, j] + u[t - 2, i, j + 1]);
let s = sum[i, j](u[4, i, j]);
let ds = @s / @k;
"""


def _rim_np(u0, k):
    us = [u0]
    for t in range(1, 5):
        n = np.full_like(u0, -1.0)
        if t == 1:
            n[1:-1, 1:-1] = u0[1:-1, 1:-1] * k
        else:
            n[1:-1, 1:-1] = us[-1][1:-1, 1:-1] + k * (us[-1][:-2, 1:-1] + us[-2][1:-1, 2:])
        us.append(n)
    return np.array(us)


def test_a_guarded_rim_clause_over_the_whole_grid_beside_interior_clauses():
    """A recurrence's rim clause guarded over the whole grid, beside interior clauses of other step
    ranges, was E011 until the hold-out program wave_membrane (tests/e2e/test_holdout_programs_4a.py):
    the rim now runs first in each step and the interior clauses write after it; the derivative
    follows the clause of each point, and a rim guard leaving a gap stops the run."""
    u0 = np.random.default_rng(0).standard_normal((4, 5))
    out = _compile_and_run(RIM, "llvm-cpu", u0=u0, k=np.float64(0.3))
    want = _rim_np(u0, 0.3)
    np.testing.assert_allclose(out["u"], want, rtol=1e-12)
    ds = (_rim_np(u0, 0.3 + 1e-6)[4].sum() - _rim_np(u0, 0.3 - 1e-6)[4].sum()) / 2e-6
    np.testing.assert_allclose(out["ds"], ds, rtol=1e-7)
    program = einc.load(einc.compile(RIM.replace("j == W - 1;", "j == W - 2;")).vmfb)
    with pytest.raises(RunError, match="a point of `u` is defined by no clause or by two"):
        program(u0=u0, k=np.float64(0.3))
