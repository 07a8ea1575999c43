"""A recurrence inside a step of another (a loop inside a loop) against NumPy loops: the inner
loop runs whole in each outer step, reading the outer state at an earlier step, and the outer
step reads its last value, a sum over it, or a gradient through it (BPTT inside training)."""
import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from einc.driver import emit_program
from tests.tiers import GENERIC_FULL, VULKAN_FULL

TARGETS = ["llvm-cpu", VULKAN_FULL]


@pytest.mark.parametrize("target", TARGETS)
def test_newton_iterations_inside_each_step(run, target):
    """Each outer step takes a square root by 5 Newton iterations of an inner recurrence."""
    out = run("""
        let c: [f32; 6];
        let x[0] = 1.0;
        let x[e in 1..6] = {
            let y[0] = x[e - 1] + c[e];
            let y[i in 1..6] = 0.5 * (y[i - 1] + (x[e - 1] + c[e]) / y[i - 1]);
            y[5]
        };
    """, target=target, c=np.array([0.0, 1.0, 2.5, 0.5, 3.0, 1.5], np.float32))
    c, x = [0.0, 1.0, 2.5, 0.5, 3.0, 1.5], [1.0]
    for e in range(1, 6):
        a = y = x[-1] + c[e]
        for _ in range(5):
            y = 0.5 * (y + a / y)
        x.append(y)
    np.testing.assert_allclose(out["x"], x, rtol=2e-6)      # f32; Newton converges to a few ulps


@pytest.mark.parametrize("target", TARGETS)
def test_a_vector_rnn_inside_each_step_of_a_vector_recurrence(run, target):
    """The inner state is a vector over its own steps; the outer step reads its last row."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 4)).astype(np.float32)
    out = run("""
        use std::math::tanh;
        let x: [f32; T, H];
        let W[0, i in 0..H] = 0.1 * (i as f32);
        let W[e in 1..5, i in 0..H] = {
            let h[0, j in 0..H] = 0.0;
            let h[t in 1..T, j in 0..H] = tanh(W[e - 1, j] * h[t - 1, j] + x[t, j]);
            W[e - 1, i] - 0.1 * h[T - 1, i]
        };
    """, target=target, x=x)
    W = [0.1 * np.arange(4)]
    for _ in range(1, 5):
        h = np.zeros(4)
        for t in range(1, 7):
            h = np.tanh(W[-1] * h + x[t])
        W.append(W[-1] - 0.1 * h)
    np.testing.assert_allclose(out["W"], W, rtol=1e-5, atol=1e-6)     # f32 tanh over 24 steps


@pytest.mark.parametrize("target", TARGETS)
def test_the_outer_step_reads_a_sum_over_the_inner_loop_and_its_own_step(run, target):
    out = run("""
        let x[0] = 1.0;
        let x[e in 1..5] = {
            let y[0] = x[e - 1];
            let y[i in 1..4] = y[i - 1] * 0.5 + (e as f32);
            sum[i](y[i]) / 4.0
        };
    """, target=target)
    x = [1.0]
    for e in range(1, 5):
        y = [x[-1]]
        for _ in range(3):
            y.append(y[-1] * 0.5 + e)
        x.append(sum(y) / 4)
    np.testing.assert_allclose(out["x"], x, rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_value_iteration_whose_step_runs_a_dynamic_program(run, target):
    """V[e] from V[e - 1] through a 3-stage DP over actions (a max over a table each stage)."""
    r = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 1.0], [0.0, 2.0, 1.0, -1.5], [1.0, 0.5, 0.0, 0.75]],
                 np.float32)
    out = run("""
        let r: [f32; S, S];
        let V[0, s in 0..S] = (s as f32) * 0.5;
        let V[e in 1..6, s in 0..S] = {
            let q[0, a in 0..S] = V[e - 1, a];
            let q[k in 1..4, a in 0..S] = max[b](r[a, b] + 0.9 * q[k - 1, b]);
            q[3, s]
        };
    """, target=target, r=r)
    V = [np.arange(4) * 0.5]
    for _ in range(1, 6):
        q = V[-1]
        for _ in range(3):
            q = np.max(r + 0.9 * q[None, :], axis=1)
        V.append(q)
    np.testing.assert_allclose(out["V"], V, rtol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_an_ode_integrator_inside_an_optimizer_called_through_a_function(run, target):
    """`decay(p[e - 1])` runs 20 Euler steps of dz/ds = -p z for each iterate of p."""
    out = run("""
        fn decay(p) {
            let z[0] = 1.0;
            let z[s in 1..21] = z[s - 1] - 0.05 * p * z[s - 1];
            z[20]
        }
        let p[0] = 0.2;
        let p[e in 1..10] = p[e - 1] + 0.8 * (decay(p[e - 1]) - 0.3);
    """, target=target)
    p = [0.2]
    for _ in range(1, 10):
        z = 1.0
        for _ in range(20):
            z = z - 0.05 * p[-1] * z
        p.append(p[-1] + 0.8 * (z - 0.3))
    np.testing.assert_allclose(out["p"], p, rtol=1e-5)


def test_a_cholesky_inside_each_step_of_a_hyperparameter_iteration(run):
    """std's cholesky is a recurrence over rows: it runs in each step on K + s[e - 1] I."""
    A = np.array([[4.0, 1.0, 0.5, 0.2], [1.0, 3.0, 0.2, 0.1], [0.5, 0.2, 2.0, 0.3], [0.2, 0.1, 0.3, 1.5]])
    out = run("""
        use std::ml::linalg_ops::cholesky;
        let A: [f64; 4, 4];
        let s[0] = 1.0;
        let s[e in 1..5] = {
            let M[i in 0..4, j in 0..4] = A[i, j] + s[e - 1] * (if i == j { 1.0 } else { 0.0 });
            let L = cholesky(M);
            0.5 * s[e - 1] + 0.1 * sum[i](L[i, i])
        };
    """, A=A)
    s = [1.0]
    for _ in range(1, 5):
        L = np.linalg.cholesky(A + s[-1] * np.eye(4))
        s.append(0.5 * s[-1] + 0.1 * np.trace(L))
    np.testing.assert_allclose(out["s"], s, rtol=1e-12)


NEWTON_SYSTEM = """
use std::ml::linalg_ops::solve;
let x0: [f32; 3];
let x[0] = x0;
let x[k in 1..21] = {
    let v = x[k - 1];
    let F = [v[0] * v[0] + v[1] * v[1] + v[2] * v[2] - 6.0, v[0] * v[1] - 2.0 * v[2], v[0] + v[1] - 3.0 * v[2]];
    let J[i in 0..3, j in 0..3] = if i == 0 { 2.0 * v[j] }
        else if i == 1 { if j == 0 { v[1] } else if j == 1 { v[0] } else { -2.0 } }
        else { if j == 2 { -3.0 } else { 1.0 } };
    v - solve(J, F)
};
"""


def _newton_system(x0, steps):
    """Newton's iterates for |v|^2 = 6, v0 v1 = 2 v2, v0 + v1 = 3 v2 (a root at (1, 2, 1))."""
    xs = [np.array(x0, np.float64)]
    for _ in range(steps):
        v = xs[-1]
        F = np.array([v @ v - 6, v[0] * v[1] - 2 * v[2], v[0] + v[1] - 3 * v[2]])
        J = np.array([2 * v, [v[1], v[0], -2], [1, 1, -3]])
        xs.append(v - np.linalg.solve(J, F))
    return np.array(xs)


@pytest.mark.full      # the gradient test below builds these iterates
@pytest.mark.parametrize("target", TARGETS)
def test_newtons_method_solves_with_std_solve_in_each_step(run, target):
    """std's `solve` is two loops, an elimination and a back substitution that reads only the
    elimination's storage: both run inside each Newton step (the second was left outside the
    step, an internal error in the lowering)."""
    x0 = np.float32([0.5, 1.5, 0.8])
    out = run(NEWTON_SYSTEM, target=target, x0=x0)
    np.testing.assert_allclose(out["x"], _newton_system(x0, 20), rtol=1e-5, atol=1e-6)   # f32, 3 x 3 solves


@pytest.mark.full      # a literal J in std::solve inside a step: NEWTON_IN_C below
@pytest.mark.parametrize("target", TARGETS)
def test_newtons_method_with_the_jacobian_a_matrix_literal(run, target):
    """The Jacobian as written by hand, `[[2.0 * v[0], ..], [v[1], v[0], -2.0], [..]]`: a literal
    of literals the elimination reads (E011 while solve's loops ran outside the step: the literal
    was then built per point of the back substitution's kernel)."""
    x0 = np.float32([0.5, 1.5, 0.8])
    source = NEWTON_SYSTEM.replace(
        "let J[i in 0..3, j in 0..3] = if i == 0 { 2.0 * v[j] }\n"
        "        else if i == 1 { if j == 0 { v[1] } else if j == 1 { v[0] } else { -2.0 } }\n"
        "        else { if j == 2 { -3.0 } else { 1.0 } };",
        "let J = [[2.0 * v[0], 2.0 * v[1], 2.0 * v[2]], [v[1], v[0], -2.0], [1.0, 1.0, -3.0]];")
    assert "let J = [" in source
    out = run(source, target=target, x0=x0)
    np.testing.assert_allclose(out["x"], _newton_system(x0, 20), rtol=1e-5, atol=1e-6)


# A Kalman filter of 3 states and 2 observations: S = H P H^T + R is a member of the step, and
# S^-1 comes from std's `solve` on S at the current step (E011 while an inner loop could read the
# outer state only at an earlier step); the gain, the state and the covariance read it.
KALMAN_WITH_SOLVE = """
use std::ml::linalg_ops::solve;
let y: [f32; T, 2];
let F: [f32; 3, 3];
let H: [f32; 2, 3];
let Q: [f32; 3, 3];
let R: [f32; 2, 2];
let x[0, i in 0..3] = 0.0;
let P[0, i in 0..3, j in 0..3] = if i == j { 1.0 } else { 0.0 };
let xp[t in 1..T, i in 0..3] = sum[k](F[i, k] * x[t - 1, k]);
let Pp[t in 1..T, i in 0..3, j in 0..3] = sum[k, l](F[i, k] * P[t - 1, k, l] * F[j, l]) + Q[i, j];
let S[t in 1..T, a in 0..2, b in 0..2] = sum[i, j](H[a, i] * Pp[t, i, j] * H[b, j]) + R[a, b];
let innov[t in 1..T, a in 0..2] = y[t, a] - sum[i](H[a, i] * xp[t, i]);
let Sinv[t in 1..T] = {
    let c0 = solve(S[t], [1.0, 0.0]);
    let c1 = solve(S[t], [0.0, 1.0]);
    [[c0[0], c1[0]], [c0[1], c1[1]]]
};
let K[t in 1..T, i in 0..3, a in 0..2] = sum[j, b](Pp[t, i, j] * H[b, j] * Sinv[t, b, a]);
let x[t in 1..T, i in 0..3] = xp[t, i] + sum[a](K[t, i, a] * innov[t, a]);
let P[t in 1..T, i in 0..3, j in 0..3] = Pp[t, i, j] - sum[a, k](K[t, i, a] * H[a, k] * Pp[t, k, j]);
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_kalman_filter_solving_with_the_step_s_own_innovation_covariance(run, target):
    rng = np.random.default_rng(11)
    F = np.array([[1, 1, 0.5], [0, 1, 1], [0, 0, 1]], np.float32)
    H = np.array([[1, 0, 0], [0, 0, 1]], np.float32)
    Q = np.diag([1e-2, 1e-3, 1e-3]).astype(np.float32)
    R = np.array([[0.5, 0.1], [0.1, 0.3]], np.float32)
    y = np.cumsum(rng.standard_normal((7, 2)), 0).astype(np.float32)
    out = run(KALMAN_WITH_SOLVE, target=target, y=y, F=F, H=H, Q=Q, R=R)
    x, P = np.zeros((7, 3)), np.zeros((7, 3, 3))
    P[0] = np.eye(3)
    for t in range(1, 7):
        xp, Pp = F @ x[t - 1], F @ P[t - 1] @ F.T + Q
        K = Pp @ H.T @ np.linalg.inv(H @ Pp @ H.T + R)
        x[t], P[t] = xp + K @ (y[t] - H @ xp), Pp - K @ H @ Pp
    np.testing.assert_allclose(out["x"], x, rtol=1e-4, atol=1e-5)     # f32
    np.testing.assert_allclose(out["P"], P, rtol=1e-4, atol=1e-5)


def test_an_inner_loop_reading_the_member_it_computes_at_the_same_step_is_a_cycle(diagnose):
    # g's solve reads S[t], and S reads g[t]: no order computes either first
    diagnostic, _ = diagnose("""use std::ml::linalg_ops::solve;
let b: [f32; T, 2];
let S[0, a in 0..2, c in 0..2] = if a == c { 1.0 } else { 0.0 };
let g[0, a in 0..2] = 0.0;
let S[t in 1..T, a in 0..2, c in 0..2] = S[t - 1, a, c] + g[t, a];
let g[t in 1..T] = solve(S[t], b[t]);
""")
    assert diagnostic.code == "E007" and "S -> g -> S" in diagnostic.message


@pytest.mark.full      # the same solve of normal equations: the Levenberg-Marquardt test
def test_gauss_newton_fit_with_a_damped_solve_in_each_step_on_f64(run):
    """Levenberg-Marquardt steps for y = a exp(b t): the normal equations (J^T J + lam I) d = J^T r
    over 12 samples, solved by std's `solve` in each of 15 steps."""
    t = np.linspace(0.0, 2.0, 12)
    y = 2.5 * np.exp(-1.3 * t) + 0.01 * np.sin(7.0 * t)
    out = run("""
        use std::ml::linalg_ops::solve;
        use std::math::exp;
        let t: [f64; N];
        let y: [f64; N];
        let lam: f64;
        let p[0] = [1.0, -0.5];
        let p[e in 1..16] = {
            let q = p[e - 1];
            let r[i] = q[0] * exp(q[1] * t[i]) - y[i];
            let Jm[i, 0] = exp(q[1] * t[i]);
            let Jm[i, 1] = q[0] * t[i] * exp(q[1] * t[i]);
            let A[a in 0..2, b in 0..2] = sum[i](Jm[i, a] * Jm[i, b]) + (if a == b { lam } else { 0.0 });
            let g[a in 0..2] = sum[i](Jm[i, a] * r[i]);
            q - solve(A, g)
        };
    """, t=t, y=y, lam=np.float64(0.01))
    p = [np.array([1.0, -0.5])]
    for _ in range(15):
        a, b = p[-1]
        J = np.stack([np.exp(b * t), a * t * np.exp(b * t)], 1)
        p.append(p[-1] - np.linalg.solve(J.T @ J + 0.01 * np.eye(2), J.T @ (a * np.exp(b * t) - y)))
    np.testing.assert_allclose(out["p"], p, rtol=1e-12, atol=1e-14)     # f64, the same elimination
    assert abs(out["p"][-1, 1] + 1.3) < 0.01


def test_levenberg_marquardt_with_its_damping_a_second_member_on_f64(run):
    """The damping is state too: a step is kept only if it lowers the cost, and lam shrinks or
    grows with it; solve's loops read both members of the step before."""
    t = np.linspace(0.0, 2.0, 12)
    y = 2.5 * np.exp(-1.3 * t) + 0.01 * np.sin(7.0 * t)
    out = run("""
        use std::ml::linalg_ops::solve;
        use std::math::exp;
        let t: [f64; N];
        let y: [f64; N];
        fn cost(q) { sum[i]((q[0] * exp(q[1] * t[i]) - y[i]) * (q[0] * exp(q[1] * t[i]) - y[i])) }
        let p[0] = [1.0, -0.5];
        let lam[0] = 1.0;
        let p[e in 1..16] = {
            let q = p[e - 1];
            let Jm[i, 0] = exp(q[1] * t[i]);
            let Jm[i, 1] = q[0] * t[i] * exp(q[1] * t[i]);
            let A[a in 0..2, b in 0..2] = sum[i](Jm[i, a] * Jm[i, b]) + (if a == b { lam[e - 1] } else { 0.0 });
            let g[a in 0..2] = sum[i](Jm[i, a] * (q[0] * exp(q[1] * t[i]) - y[i]));
            let cand = q - solve(A, g);
            if cost(cand) < cost(q) { cand } else { q }
        };
        let lam[e in 1..16] = if cost(p[e]) < cost(p[e - 1]) { 0.3 * lam[e - 1] } else { 2.0 * lam[e - 1] };
    """, t=t, y=y)
    cost = lambda q: np.sum((q[0] * np.exp(q[1] * t) - y) ** 2)     # noqa: E731
    p, lam = [np.array([1.0, -0.5])], [1.0]
    for _ in range(15):
        a, b = p[-1]
        J = np.stack([np.exp(b * t), a * t * np.exp(b * t)], 1)
        cand = p[-1] - np.linalg.solve(J.T @ J + lam[-1] * np.eye(2), J.T @ (a * np.exp(b * t) - y))
        p.append(cand if cost(cand) < cost(p[-1]) else p[-1])
        lam.append(0.3 * lam[-1] if cost(p[-1]) < cost(p[-2]) else 2.0 * lam[-1])
    np.testing.assert_allclose(out["p"], p, rtol=1e-12, atol=1e-14)     # f64, the same elimination
    np.testing.assert_allclose(out["lam"], lam, rtol=1e-12)


def test_std_solve_inside_a_step_of_4_unknowns_on_f64(run):
    """A damped iteration x <- x - solve(M(x), M(x) x - b) / 2 with M depending on x (4 x 4; the
    largest entry of M's first column is in its last row, so the elimination swaps rows)."""
    b = np.array([1.0, -2.0, 0.5, 3.0])
    out = run("""
        use std::ml::linalg_ops::solve;
        let b: [f64; 4];
        let x[0, i in 0..4] = 0.0;
        let x[k in 1..6] = {
            let M[i in 0..4, j in 0..4] = (if j == 0 { 0.01 * ((i + 1) as f64) } else { ((i + 2 * j) % 5) as f64 + 1.0 })
                + (if i == j && i > 0 { 4.0 + x[k - 1, i] * x[k - 1, i] } else { 0.0 });
            let r[i in 0..4] = sum[j](M[i, j] * x[k - 1, j]) - b[i];
            x[k - 1] - 0.5 * solve(M, r)
        };
    """, b=b)
    x = [np.zeros(4)]
    i, j = np.meshgrid(range(4), range(4), indexing="ij")
    for _ in range(5):
        M = np.where(j == 0, 0.01 * (i + 1), (i + 2 * j) % 5 + 1.0) + np.diag((4.0 + x[-1] ** 2) * (np.arange(4) > 0))
        x.append(x[-1] - 0.5 * np.linalg.solve(M, M @ x[-1] - b))
    np.testing.assert_allclose(out["x"], x, rtol=1e-12, atol=1e-14)


ODE_FIT = """
fn f(y: [f32; 2], th: f32) -> [f32; 2] { [y[1], -th * y[0]] }
let obs: [f32; T, 2];
let th0: f32;
fn loss(th) {
    let y[0] = [1.0, 0.0];
    let y[t in 1..T] = {
        let a = y[t - 1];
        let k1 = f(a, th);
        let k2 = f(a + 0.05 * k1, th);
        let k3 = f(a + 0.05 * k2, th);
        let k4 = f(a + 0.1 * k3, th);
        a + 0.1 / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    };
    sum[t, i]((y[t, i] - obs[t, i]) * (y[t, i] - obs[t, i])) / (T as f32)
}
let th[0] = th0;
let th[e in 1..8] = { let L = loss(th[e - 1]); th[e - 1] - 0.5 * (@L / @th[e - 1]) };
"""


def _oscillator_rk4(th, steps):
    """RK4 with h = 0.1 for y'' = -th y from (1, 0), in f64."""
    f = lambda a: np.array([a[1], -th * a[0]])      # noqa: E731
    y = [np.array([1.0, 0.0])]
    for _ in range(steps):
        a = y[-1]
        k1 = f(a)
        k2 = f(a + 0.05 * k1)
        k3 = f(a + 0.05 * k2)
        k4 = f(a + 0.1 * k3)
        y.append(a + 0.1 / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return np.array(y)


@pytest.mark.parametrize("target", TARGETS)
def test_an_ode_parameter_fitted_through_rk4_with_a_field_returning_a_literal(run, target, fd_jacobian):
    """Gradient descent on th, each step differentiating a loss over an RK4 trajectory whose
    field `f` returns an array literal that reads th = th[e - 1] (the outer state): the literal
    reads the outer state through the step's slice (was E011 'no derivative through StateRead':
    the adjoint copied the read of th, so it no longer was the x of `@L / @th[e - 1]`)."""
    T = 25
    obs = _oscillator_rk4(2.0, T - 1) + 0.01 * np.cos(np.arange(T))[:, None]
    loss = lambda th: float(((_oscillator_rk4(th, T - 1) - obs) ** 2).sum() / T)     # noqa: E731
    th = [1.2]
    for _ in range(7):
        th.append(th[-1] - 0.5 * float(fd_jacobian(loss, np.float64(th[-1]))))
    out = run(ODE_FIT, target=target, obs=obs.astype(np.float32), th0=np.float32(1.2))
    np.testing.assert_allclose(out["th"], th, rtol=2e-5)     # f32 over 7 gradient steps of 24 RK4 steps
    assert abs(out["th"][-1] - 2.0) < 0.05


@pytest.mark.full      # the fit above in another form
def test_a_damped_oscillator_fitted_through_euler_steps_written_inline_on_f64(run, fd_jacobian):
    """The same fit with the field written inline in an Euler step, `y[t - 1] + h * [..]`, and
    two parameters: the step's literal reads the outer state and the inner one."""
    def states(q, steps=20):
        y = [np.array([1.0, 0.0])]
        for _ in range(steps):
            v = y[-1]
            y.append(v + 0.1 * np.array([v[1], -q[0] * v[0] - q[1] * v[1]]))
        return np.array(y)

    obs = states(np.array([2.0, 0.3])) + 0.01 * np.sin(np.arange(21))[:, None]
    out = run("""
        let obs: [f64; 21, 2];
        fn loss(q) {
            let y[0] = [1.0, 0.0];
            let y[t in 1..21] = y[t - 1] + 0.1 * [y[t - 1, 1], -q[0] * y[t - 1, 0] - q[1] * y[t - 1, 1]];
            sum[t, i]((y[t, i] - obs[t, i]) * (y[t, i] - obs[t, i]))
        }
        let q[0] = [1.5, 0.1];
        let q[e in 1..6] = { let L = loss(q[e - 1]); q[e - 1] - 0.02 * (@L / @q[e - 1]) };
    """, obs=obs)
    loss = lambda q: float(((states(q) - obs) ** 2).sum())     # noqa: E731
    q = [np.array([1.5, 0.1])]
    for _ in range(5):
        q.append(q[-1] - 0.02 * fd_jacobian(loss, q[-1]))
    np.testing.assert_allclose(out["q"], q, rtol=1e-7)       # f64 vs central differences (~1e-9)


RNN_TRAINING = """
use std::math::tanh;
let x: [f64; T, H];
let goal: [f64; H];
fn loss(W) {
    let h[0, i in 0..H] = 0.0;
    let h[t in 1..T, i in 0..H] = tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i]);
    sum[i]((h[T - 1, i] - goal[i]) * (h[T - 1, i] - goal[i]))
}
let W[0, i in 0..H, j in 0..H] = (((i * 2 + j) % 5) as f64) / 10.0 - 0.2;
let W[e in 1..12, i in 0..H, j in 0..H] = W[e - 1, i, j] - 0.3 * {
    let L = loss(W[e - 1]);
    (@L / @W[e - 1])[i, j]
};
let losses[e in 0..12] = loss(W[e]);
"""


def _rnn_loss_and_gradient(W, x, target):
    """The loss of the last hidden state and its gradient by backpropagation through time."""
    hs = [np.zeros(len(W))]
    for t in range(1, len(x)):
        hs.append(np.tanh(W @ hs[-1] + x[t]))
    dh, dW = 2 * (hs[-1] - target), np.zeros_like(W)
    for t in range(len(x) - 1, 0, -1):
        da = dh * (1 - hs[t] ** 2)
        dW += np.outer(da, hs[t - 1])
        dh = W.T @ da
    return np.sum((hs[-1] - target) ** 2), dW


def test_an_rnn_trained_by_bptt_inside_an_epoch_recurrence(run):
    """`@L / @W[e - 1]` where L reads an inner recurrence over time: reverse mode through the
    inner loop (its adjoint loop runs in the same outer step)."""
    rng = np.random.default_rng(7)
    x, target = rng.standard_normal((6, 3)) * 0.5, np.array([-0.2, 0.1, 0.4])
    out = run(RNN_TRAINING, x=x, goal=target)
    i, j = np.meshgrid(range(3), range(3), indexing="ij")
    W = [((i * 2 + j) % 5) / 10.0 - 0.2]
    for _ in range(1, 12):
        W.append(W[-1] - 0.3 * _rnn_loss_and_gradient(W[-1], x, target)[1])
    np.testing.assert_allclose(out["W"], W, rtol=1e-10, atol=1e-12)     # f64, same operations
    losses = [_rnn_loss_and_gradient(w, x, target)[0] for w in W]
    np.testing.assert_allclose(out["losses"], losses, rtol=1e-10)
    assert losses[-1] < losses[0]


@pytest.mark.full      # the BPTT test above, by a matrix
@pytest.mark.parametrize("target", TARGETS)
def test_a_scalar_parameter_trained_through_an_inner_recurrence_on_f32(run, target):
    out = run("""
        use std::math::tanh;
        let xs: [f32; T];
        fn loss(w) {
            let h[0] = 0.0;
            let h[t in 1..T] = tanh(w * h[t - 1] + xs[t]);
            (h[T - 1] - 0.5) * (h[T - 1] - 0.5)
        }
        let w[0] = 0.2;
        let w[e in 1..10] = { let L = loss(w[e - 1]); w[e - 1] - 2.0 * (@L / @w[e - 1]) };
    """, target=target, xs=np.array([-0.4, -0.1, 0.2, 0.5, 0.3], np.float32))
    xs, w = np.array([-0.4, -0.1, 0.2, 0.5, 0.3]), [0.2]
    for _ in range(1, 10):
        h = [0.0]
        for t in range(1, 5):
            h.append(np.tanh(w[-1] * h[-1] + xs[t]))
        dh, dw = 2 * (h[-1] - 0.5), 0.0
        for t in range(4, 0, -1):
            da = dh * (1 - h[t] ** 2)
            dw, dh = dw + da * h[t - 1], da * w[-1]
        w.append(w[-1] - 2.0 * dw)
    np.testing.assert_allclose(out["w"], w, rtol=1e-5)       # f32 over 9 gradient steps



@pytest.mark.parametrize("target", TARGETS)
def test_newton_shooting_whose_derivative_reads_only_the_inner_states(run, target):
    """The inner loop's start is the outer state; its adjoint loop reads only the inner loop's
    storage (y * y), not the outer state, and must run inside each step too (it was a KeyError
    in the lowering: the adjoint loop was taken for a program-level one)."""
    out = run("""
        fn miss(s: f32) -> f32 {
            let y[0] = s;
            let y[k in 1..6] = y[k - 1] + 0.02 * y[k - 1] * y[k - 1];
            y[5] - 1.0
        }
        let s[0] = -10.0;
        let s[e in 1..5] = { let F = miss(s[e - 1]); s[e - 1] - F / (@F / @s[e - 1]) };
    """, target=target)
    s = [-10.0]
    for _ in range(1, 5):
        y, dy = s[-1], 1.0
        for _ in range(5):
            y, dy = y + 0.02 * y * y, dy * (1.0 + 0.04 * y)
        s.append(s[-1] - (y - 1.0) / dy)
    np.testing.assert_allclose(out["s"], s, rtol=1e-5)       # f32 over 4 Newton steps


@pytest.mark.parametrize("target", TARGETS)
def test_an_inner_loop_in_a_later_clause_reads_an_input_behind_the_step(run, target):
    """`x[t - 3]` inside the inner loop of the clause `t in 3..6` is in bounds: the bounds check
    took the outer step over every step of the member (0..6) inside the inner group's clauses
    and refused it (E005, found by the program fuzzer's nesting draw, seed 2024 program 83)."""
    x = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.75], np.float32)
    out = run("""
        let x: [f32; 6];
        let a[t in 0..3] = x[t];
        let a[t in 3..6] = 0.5 * a[t - 1] + { let s[0] = x[t - 3]; let s[k in 1..4] = 0.5 * s[k - 1] + 1.0; s[3] };
    """, target=target, x=x)
    a = list(x[:3])
    for t in range(3, 6):
        s = x[t - 3]
        for _ in range(3):
            s = 0.5 * s + 1.0
        a.append(0.5 * a[-1] + s)
    np.testing.assert_allclose(out["a"], a, rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("arg", ["y[t] + m[t - 1]", "m[t - 1] * (t as f32)"])
def test_an_inner_loop_reads_a_row_its_step_computes_from_the_steps_index(run, target, arg):
    """The inner loop's argument is a row computed from the outer step's index and the state (a
    Kalman filter's `update_mean(m[t - 1], P[t - 1], y[t])` solving in each step, found by the
    hold-out program kalman_nd): that row is a kernel of the step, but reading the step's index
    made it count as state the inner loop computes at its points (an internal KeyError on
    Generic in einc/mlir/recurrences/scalars.py)."""
    y = np.array([[0.5, -1.0], [2.0, 0.25], [1.5, -0.75], [1.0, 0.5]], np.float32)
    out = run(f"""
        let y: [f32; 4, 2];
        fn run(b) {{ let z[0] = b[0]; let z[k in 1..3] = z[k - 1] * 0.5 + b[1]; z[2] }}
        let m[0, i in 0..2] = 1.0;
        let m[t in 1..4, i in 0..2] = run({arg}) + 0.5 * m[t - 1, i];
    """, target=target, y=y)
    m = [np.ones(2, np.float32)]
    for t in range(1, 4):
        b = y[t] + m[-1] if arg.startswith("y") else m[-1] * t
        z = b[0]
        for _ in range(2):
            z = z * 0.5 + b[1]
        m.append(z + 0.5 * m[-1])
    np.testing.assert_allclose(out["m"], m, rtol=1e-6)


INNER = "fn inner(b: f32) -> f32 { let s[0] = b; let s[k in 1..8] = 0.5 * s[k - 1] + b; s[7] }\n"


def _inner(b) -> np.float32:
    s = np.float32(b)
    for _ in range(7):
        s = np.float32(0.5) * s + np.float32(b)
    return s


def _h(p):
    return p[:3] + 1


# A step that combines, outside its own loop, a reduction over an indexed `let` of the state
# with the last value of an inner loop (one, two or three 0-d values; i32 and f32): each such
# combination is a kernel with no loops. IREE-196: reading them as 0-d `ins`, llvm-cpu fused the
# reduction into it and vectorized the sum to `arith.addi (i32, vector<i32>)` (found building the
# nesting fuzzer's draw, branch nest12), so the module did not compile.
LOOPLESS_COMBINATIONS = {
    "i32_min_plus_the_inner_value": (
        "let r[0, j in 0..4] = j;\n"
        "let r[t in 1..6, j in 0..4] = (r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] + 1; "
        "min[l in 0..3](h[l]) } + inner(t as f32) as i32)) % 40;",
        lambda p, t: (p + (_h(p).min() + np.int32(_inner(t)))) % 40),
    "f32_max_plus_the_inner_value": (
        "let r[0, j in 0..4] = j as f32;\n"
        "let r[t in 1..6, j in 0..4] = 0.5 * r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] * 0.5; "
        "max[l in 0..3](h[l]) } + inner(t as f32));",
        lambda p, t: np.float32(0.5) * p + ((p[:3] * np.float32(0.5)).max() + _inner(t))),
    "f32_sum_times_the_inner_value": (
        "let r[0, j in 0..4] = j as f32;\n"
        "let r[t in 1..6, j in 0..4] = 0.5 * r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] * 0.5; "
        "sum[l in 0..3](h[l]) } * inner(t as f32));",
        lambda p, t: np.float32(0.5) * p + (p[:3] * np.float32(0.5)).sum() * _inner(t)),
    "i32_sum_inner_value_and_max": (
        "let r[0, j in 0..4] = j;\n"
        "let r[t in 1..6, j in 0..4] = (r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] + 1; "
        "sum[l in 0..3](h[l]) } + inner(t as f32) as i32 + { let h2[i in 0..3] = r[t - 1, i] * 2; "
        "max[l in 0..3](h2[l]) })) % 40;",
        lambda p, t: (p + (_h(p).sum() + np.int32(_inner(t)) + (p[:3] * 2).max())) % 40),
    "f32_max_inner_value_and_min": (
        "let r[0, j in 0..4] = j as f32;\n"
        "let r[t in 1..6, j in 0..4] = 0.5 * r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] * 0.5; "
        "max[l in 0..3](h[l]) } + inner(t as f32) + { let h2[i in 0..3] = r[t - 1, i + 1] - 1.0; "
        "min[l in 0..3](h2[l]) });",
        lambda p, t: np.float32(0.5) * p + ((p[:3] * np.float32(0.5)).max() + _inner(t)
                                            + (p[1:4] - np.float32(1)).min())),
}


@pytest.mark.sampled(every=2)      # one i32 and two f32 forms
@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
@pytest.mark.parametrize("case", list(LOOPLESS_COMBINATIONS))
def test_a_reduction_combined_with_an_inner_loops_value_outside_the_step_loop(run, case, target):
    body, step = LOOPLESS_COMBINATIONS[case]
    out = run(INNER + body, target=target)
    dtype = np.int32 if case.startswith("i32") else np.float32
    r = [np.arange(4, dtype=dtype)]
    for t in range(1, 6):
        r.append(step(r[-1], t).astype(dtype))
    if dtype == np.int32:
        np.testing.assert_array_equal(out["r"], r)
    else:
        np.testing.assert_allclose(out["r"], r, rtol=1e-6)       # f32, a few roundings a step


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_a_step_tensor_of_one_point_beside_a_reduction_of_the_step_compiles(run, target):
    """`h[i in 0..1]` has a loop of one point, which IREE folds away: the 0-d kernel of IREE-196
    again, reading the sum `ins` (fuzz seed 10049 program 20: `arith.addf (vector<f32>, f32)`);
    the sum over j with a guard reading i has h's axis, read at its point 0."""
    x = np.linspace(-1.0, 1.0, 20).astype(np.float32).reshape(5, 4)
    keep = np.array([[True, False], [False, True]])
    out = run("""
        let x: [f32; N, 4];
        let keep: [bool; 2, 2];
        let r[0] = x[0, 0];
        let r[t in 1..N] = 0.9 * r[t - 1] + { let h[i in 0..1] = r[i] + sum[j in 0..N](x[j, 0] + t as f32); h[0] };
        let s[0] = x[0, 1];
        let s[t in 1..N] = 0.5 * s[t - 1] + { let h[i in 0..1] = s[i] + sum[j in 0..N](x[j, 1] where keep[i, j % 2]); h[0] };
    """, target=target, x=x, keep=keep)
    r, s = [x[0, 0]], [x[0, 1]]
    for t in range(1, 5):
        r.append(0.9 * r[-1] + r[0] + (x[:, 0] + t).sum())
        s.append(0.5 * s[-1] + s[0] + x[keep[0, np.arange(5) % 2], 1].sum())
    np.testing.assert_allclose(out["r"], r, rtol=1e-5)
    np.testing.assert_allclose(out["s"], s, rtol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_an_outer_loop_longer_than_a_chunk_read_only_by_its_inner_loop(run, target):
    """300 outer steps (more than a host loop's chunk of 256) whose clause reads the state only
    through the inner loop's `y[n - 1, j]`: the chunk storage kept no row before the chunk, and
    step 256 read row -1 (OUT_OF_RANGE in the runtime)."""
    x = np.linspace(0.5, 1.5, 300).astype(np.float32)
    out = run("""
        let x: [f32; 300];
        let y[0, j in 0..2] = if j == 0 { 1.0 } else { 0.0 };
        let y[n in 1..300] = {
            let z[0, j in 0..2] = y[n - 1, j];
            let z[s in 1..3] = [0.9 * z[s - 1, 0] + 0.1 * z[s - 1, 1], 0.5 * z[s - 1, 1] + 0.01 * x[n]];
            z[2]
        };
    """, target=target, x=x)
    y = [np.array([1.0, 0.0])]
    for n in range(1, 300):
        v = y[-1]
        for _ in range(2):
            v = np.array([0.9 * v[0] + 0.1 * v[1], 0.5 * v[1] + 0.01 * x[n]])
        y.append(v)
    np.testing.assert_allclose(out["y"], y, rtol=1e-5, atol=1e-7)     # f32, a few roundings a step


def _diagnostic(source: str):
    with pytest.raises(CompileError) as info:
        einc.compile(source)
    return info.value.diagnostics[0]


def test_an_inner_loop_per_point_of_the_outer_clause(run):
    """An inner loop reading a point index of the outer clause (`W[e - 1, i]`) runs for every
    point at once, batched over the index (E011 before: "one inner loop per point of a step")."""
    out = run("let W[0, i in 0..3] = 0.0;\n"
              "let W[e in 1..4, i in 0..3] = { let h[0] = W[e - 1, i] + (i as f32); "
              "let h[t in 1..3] = h[t - 1] * 0.5; h[2] };\n")
    W = [np.zeros(3)]
    for _ in range(1, 4):
        W.append((W[-1] + np.arange(3)) * 0.25)
    np.testing.assert_allclose(out["W"], W, rtol=1e-6)


IMPLICIT_HEAT = """
let u0: [f32; H, W];
let k: f32;
let u[0, i, j] = u0[i, j];
let u[e in 1..8, i in 0..H, j in 0..W] = {
    let nb = if i > 0 && i < H - 1 && j > 0 && j < W - 1 {
        u[e - 1, i - 1, j] + u[e - 1, i + 1, j] + u[e - 1, i, j - 1] + u[e - 1, i, j + 1] - 4.0 * u[e - 1, i, j]
    } else { 0.0 };
    let rhs = u[e - 1, i, j] + k * nb;
    let z[0] = rhs;
    let z[q in 1..5] = z[q - 1] - (z[q - 1] + 0.1 * z[q - 1] * z[q - 1] * z[q - 1] - rhs) / (1.0 + 0.3 * z[q - 1] * z[q - 1]);
    z[4]
};
let L = sum[i, j](u[7, i, j] * u[7, i, j]);
let dk = @L / @k;
"""


def implicit_heat(u0, k):
    """Each step solves z + 0.1 z^3 = u + k lap(u) per cell by 4 Newton iterations."""
    u, us = u0.copy(), [u0.copy()]
    for _ in range(1, 8):
        lap = np.zeros_like(u)
        lap[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        rhs = u + k * lap
        z = rhs.copy()
        for _ in range(1, 5):
            z = z - (z + 0.1 * z ** 3 - rhs) / (1 + 0.3 * z * z)
        u = z
        us.append(u.copy())
    return np.array(us)


@pytest.mark.parametrize("target", TARGETS)
def test_newton_per_cell_inside_each_step_of_an_implicit_scheme(run, target):
    """A 2-d field whose every cell solves its own nonlinear equation by an inner Newton loop in
    each time step, and the gradient of the final energy by the diffusion rate through both loops
    (forward mode through the outer one), against NumPy and central differences in f64."""
    rng = np.random.default_rng(1)
    u0, k = rng.uniform(-1, 1, (5, 6)), 0.2
    out = run(IMPLICIT_HEAT, target=target, outputs=["u", "dk"] if target == "llvm-cpu" else ["u"],
              u0=u0.astype(np.float32), k=np.float32(k))
    np.testing.assert_allclose(out["u"], implicit_heat(u0, k), rtol=1e-5, atol=1e-6)
    if target == "llvm-cpu":
        energy = lambda kk: (implicit_heat(u0, kk)[-1] ** 2).sum()
        want = (energy(k + 1e-6) - energy(k - 1e-6)) / 2e-6
        np.testing.assert_allclose(out["dk"], want, rtol=1e-4)


def test_an_inner_loop_per_point_with_axes_of_its_own(run):
    """The per-point inner loop's clauses have an axis of their own (c): its batch axes come
    after its step, before c."""
    rng = np.random.default_rng(2)
    x0 = rng.uniform(-1, 1, 4)
    out = run("""
        let x0: [f64; N];
        let x[0, i] = x0[i];
        let x[e in 1..5, i] = {
            let v[0, c in 0..3] = x[e - 1, i] * (c as f64);
            let v[s in 1..4, c in 0..3] = 0.5 * v[s - 1, c] + 0.1 * v[s - 1, (c + 1) % 3];
            sum[c](v[3, c])
        };
    """, x0=x0)
    xs = [x0]
    for _ in range(1, 5):
        v = xs[-1][:, None] * np.arange(3)[None, :]
        for _ in range(1, 4):
            v = 0.5 * v + 0.1 * np.roll(v, -1, axis=1)
        xs.append(v.sum(1))
    np.testing.assert_allclose(out["x"], xs, rtol=1e-13, atol=1e-14)


SAME_STEP_INNER_LOOP = ("let a[0] = 1.0;\nlet b[0] = 1.0;\n"
                        "let a[e in 1..4] = b[e - 1] + 1.0;\n"
                        "let b[e in 1..4] = { let h[0] = a[{at}]; let h[t in 1..3] = h[t - 1] * 0.5; h[2] };\n")


def test_an_inner_loop_reads_another_member_at_the_current_step(run):
    # b's inner loop starts from a[e], computed first in the same step (E011 before)
    out = run(SAME_STEP_INNER_LOOP.replace("{at}", "e"))
    a, b = [1.0], [1.0]
    for _ in range(1, 4):
        a.append(b[-1] + 1.0)
        b.append(a[-1] * 0.25)
    np.testing.assert_allclose(out["a"], a)
    np.testing.assert_allclose(out["b"], b)


def test_an_inner_loop_reading_the_outer_state_at_a_later_step_is_e011():
    diag = _diagnostic(SAME_STEP_INNER_LOOP.replace("{at}", "e + 1"))
    assert diag.code == "E011" and "reads `a` at a step other than the current or an earlier one" in diag.message
    assert diag.span.line == 4


GRAM_SCHMIDT = """use std::math::sqrt;
let A: [f64; 7, 7];
let b: [f64; 7];
fn next(Qs, j: i32, v) {
    let w[0, i] = v[i];
    let w[k in 1..6, i in 0..7] = if k <= {last} { w[k - 1, i] - sum[c](w[k - 1, c] * Qs[k - 1, c]) * Qs[k - 1, i] } else { w[k - 1, i] };
    [w[5, i] / sqrt(sum[c](w[5, c] * w[5, c])) | i in 0..7]
}
let Q[0, i] = b[i] / sqrt(sum[c](b[c] * b[c]));
let Q[j in 1..5, i in 0..7] = next(Q, j - 1, [sum[c](A[i, c] * Q[j - 1, c]) | i in 0..7])[i];
let s = sum[j, i](Q[j, i] * Q[j, i] * (i as f64));
let gb = @s / @b;
"""


def test_an_inner_loop_reads_the_outer_state_at_its_own_earlier_steps(run, fd_jacobian):
    """Modified Gram-Schmidt in each Arnoldi step: the inner loop's step k reads the outer state
    Q at step k - 1, which its guard `k <= j + 1` (j = e - 1) puts before the outer step e; the
    state's whole history is read (E011 before; found by a GMRES hold-out program)."""
    rng = np.random.default_rng(7)
    A, b = rng.standard_normal((7, 7)), rng.standard_normal(7)

    def arnoldi(b):
        Q = [b / np.linalg.norm(b)]
        for j in range(1, 5):
            w = A @ Q[j - 1]
            for k in range(j):
                w = w - (w @ Q[k]) * Q[k]
            Q.append(w / np.linalg.norm(w))
        return np.array(Q)
    out = run(GRAM_SCHMIDT.replace("{last}", "j + 1"), A=A, b=b)
    np.testing.assert_allclose(out["Q"], arnoldi(b), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["gb"], fd_jacobian(lambda b: (arnoldi(b) ** 2 * np.arange(7)).sum(), b),
                               rtol=1e-6, atol=1e-8)


def test_an_inner_loop_reads_the_outer_state_its_step_counts_back_past_a_chunk(run):
    """`xs[e - k]` with the inner step k in 1..5 is before the outer step e (its range says so);
    the outer loop of 300 steps runs in chunks of 256, the history read across them."""
    src = """
        let a: [f64; T];
        fn inner(xs, e: i32) -> f64 {
            let h[0] = 0.0;
            let h[k in 1..5] = if k <= e { 0.5 * h[k - 1] + xs[e - k] } else { h[k - 1] };
            h[4]
        }
        let x[0] = a[0];
        let x[e in 1..T] = a[e] + 0.3 * inner(x, e);
    """
    a = np.random.default_rng(8).standard_normal(300)
    x = [a[0]]
    for e in range(1, 300):
        h = 0.0
        for k in range(1, min(e, 4) + 1):
            h = 0.5 * h + x[e - k]
        x.append(a[e] + 0.3 * h)
    np.testing.assert_allclose(run(src, a=a)["x"], x, rtol=1e-13)


def test_an_inner_loop_reading_the_outer_state_up_to_the_current_step_is_e011():
    # `k <= j + 2` lets k - 1 reach the outer step being computed
    diag = _diagnostic(GRAM_SCHMIDT.replace("{last}", "j + 2"))
    assert diag.code == "E011" and "reads `Q` at a step other than the current or an earlier one" in diag.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_gradient_through_newtons_loop_running_solve_on_an_indexed_jacobian(run, target, fd_jacobian):
    """Newton's step feeds std's solve the indexed `J[i, j]` it computes from its state: was E011
    in forward mode, and so for the gradient, which is taken in forward mode; its tangent runs
    in the step beside it (the E011 named both loops at the derivative; before that it named
    `t`, an index of std's back substitution, as 'an index of an enclosing definition')."""
    x0 = np.array([2.5, 0.4, 1.5])

    def loss(x0):
        v = x0
        for _ in range(20):
            F = np.array([v @ v - 6.0, v[0] * v[1] - 2 * v[2], v[0] + v[1] - 3 * v[2]])
            J = np.array([2 * v, [v[1], v[0], -2.0], [1.0, 1.0, -3.0]])
            v = v - np.linalg.solve(J, F)
        return np.float64(np.sum(x0 * v))
    out = run(NEWTON_SYSTEM + "let L = sum[i](x0[i] * x[20, i]);\nlet d = @L / @x0;\n", target=target,
              x0=x0.astype(np.float32))
    # f32 against f64 central differences: the converged root moves little with x0
    np.testing.assert_allclose(out["d"], fd_jacobian(loss, x0), rtol=1e-4, atol=1e-5)


def test_a_gradient_through_a_called_loop_reading_the_step_and_x(run, fd_jacobian):
    """The inner loop (a function's body) reads x at the outer step, not the outer state (was
    E011; before that an internal KeyError in the lowering): the gradient is taken in forward
    mode, one direction per element of c."""
    c = np.array([0.3, 1.1, 0.8, -0.4, 0.6, 0.9])
    out = run("fn decay(s: f64) -> f64 {\n    let y[0] = 1.0;\n"
              "    let y[i in 1..4] = y[i - 1] * 0.5 + s;\n    y[3]\n}\nlet c: [f64; 6];\n"
              "let x[0] = 1.0;\nlet x[e in 1..6] = x[e - 1] * c[e] + decay(c[e]);\n"
              "let L = x[5];\nlet g = @L / @c;\n", c=c)

    def loss(c):
        x = 1.0
        for e in range(1, 6):
            y = 1.0
            for _ in range(3):
                y = y * 0.5 + c[e]
            x = x * c[e] + y
        return np.float64(x)
    np.testing.assert_allclose(out["g"], fd_jacobian(loss, c), rtol=1e-6, atol=1e-8)    # f64, FD ~1e-9


def test_reverse_mode_past_a_loop_of_the_step_not_reading_x(run, fd_jacobian):
    """The inner loop reads the outer step's index only: the adjoint does not pass through it."""
    c = np.array([0.0, 1.0, 2.5, 0.5, 3.0, 1.5])
    out = run("fn decay(s: f64) -> f64 { let y[0] = 1.0; let y[i in 1..4] = y[i - 1] * 0.5 + s; y[3] }\n"
              "let c: [f64; 6];\nlet x[0] = 1.0;\nlet x[e in 1..6] = x[e - 1] * c[e] + decay(e as f64);\n"
              "let L = x[5];\nlet g = @L / @c;\n", c=c)

    def loss(c):
        x = 1.0
        for e in range(1, 6):
            y = 1.0
            for _ in range(3):
                y = y * 0.5 + e
            x = x * c[e] + y
        return np.float64(x)
    np.testing.assert_allclose(out["g"], fd_jacobian(loss, c), rtol=1e-6, atol=1e-8)    # f64, FD ~1e-9


@pytest.mark.parametrize("target, dtype, rtol", [("llvm-cpu", "f64", 1e-6),          # f64, FD ~1e-9
                                                 pytest.param("vulkan-spirv", "f32", 2e-5, marks=pytest.mark.vulkan)])
def test_forward_mode_through_a_loop_reading_a_tensor_its_step_computes(run, fd_jacobian, target, dtype, rtol):
    """An inner loop fed a tensor the step computes from its state (not a slice or a literal):
    was E011 (before that an internal KeyError in the lowering); its tangent runs in the step
    beside it. On vulkan-spirv (in f32) the call once failed with OUT_OF_RANGE in a copy_buffer,
    IREE-251's symptom; it runs there now, with or without that workaround."""
    out = run(f"fn settle(a: [{dtype}; 2]) -> [{dtype}; 2] {{\n"
              "    let y[0, j in 0..2] = a[j];\n"
              "    let y[i in 1..4, j in 0..2] = 0.5 * (y[i - 1, j] + a[j] / y[i - 1, j]);\n"
              f"    y[3]\n}}\nlet c: {dtype};\nlet x[0, j in 0..2] = 1.0 + (j as {dtype});\n"
              "let x[e in 1..4] = settle(x[e - 1] + c);\nlet g = @x / @c;\n", target=target,
              c=np.float64(0.7).astype(np.dtype(dtype.replace("f", "float"))))

    def iterates(c):
        xs = [np.array([1.0, 2.0])]
        for _ in range(3):
            a = xs[-1] + c
            y = a
            for _ in range(3):
                y = 0.5 * (y + a / y)
            xs.append(y)
        return np.array(xs)
    expected = fd_jacobian(lambda c: iterates(float(c)), np.float64(0.7))
    np.testing.assert_allclose(out["g"].reshape(expected.shape), expected, rtol=rtol, atol=rtol * 1e-3)


NEWTON_IN_C = """
use std::ml::linalg_ops::solve;
let x0: [f64; 3];
let c: f64;
let x[0] = x0;
let x[k in 1..13] = {
    let v = x[k - 1];
    let F = [v[0] * v[0] + v[1] * v[1] + v[2] * v[2] - c, v[0] * v[1] - 2.0 * v[2], v[0] + v[1] - 3.0 * v[2]];
    let J = [[2.0 * v[0], 2.0 * v[1], 2.0 * v[2]], [v[1], v[0], -2.0], [1.0, 1.0, -3.0]];
    v - solve(J, F)
};
let dx = @x / @c;
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_forward_mode_through_newtons_iterates_whose_step_runs_std_solve(run, target, fd_jacobian):
    """d x[k] / d c for Newton's iterates on |v|^2 = c, ..: the tangent of solve's two loops
    runs inside each Newton step (was E011; with the check lifted alone, the inner tangent
    was built before the outer tangent member it reads and dropped it: a wrong value)."""
    x0, c = np.array([1.2, 1.8, 0.9]), 6.0

    def iterates(c):
        xs = [x0]
        for _ in range(12):
            v = xs[-1]
            F = np.array([v @ v - c, v[0] * v[1] - 2 * v[2], v[0] + v[1] - 3 * v[2]])
            J = np.array([2 * v, [v[1], v[0], -2], [1, 1, -3]])
            xs.append(v - np.linalg.solve(J, F))
        return np.array(xs)
    out = run(NEWTON_IN_C, target=target, x0=x0, c=np.float64(c))
    expected = fd_jacobian(lambda cc: iterates(float(cc)), np.float64(c))
    np.testing.assert_allclose(out["dx"].reshape(expected.shape), expected, rtol=1e-6, atol=1e-8)   # f64, FD ~1e-9


@pytest.mark.parametrize("sizes, wrt", [("6", "@x[5] / @a"), ("N", "@x / @b")])
def test_forward_mode_by_an_array_read_by_a_literal_solve_runs_in_the_step_is_e011(sizes, wrt):
    """The literal's elements' tangents are vectors (a direction per element of `a`), which the
    step's literal cannot hold: an internal KeyError in the lowering at fixed sizes, and an E011
    without a place ("an array literal with a row of a run-time size") at run-time ones."""
    diag = _diagnostic(f"use std::ml::linalg_ops::solve;\nlet a: [f64; {sizes}];\nlet b: [f64; {sizes}];\n"
                       f"let c: f64;\nlet x[0, j in 0..2] = 1.0;\nlet x[k in 1..{sizes}] = {{\n"
                       "    let F = [x[k - 1, 0] * x[k - 1, 0] - c, x[k - 1, 1] - c];\n"
                       "    let J = [[a[k - 1], 1.0], [0.5, b[k - 1]]];\n    x[k - 1] - solve(J, F)\n};\n"
                       f"let dx = {wrt};\n")
    assert diag.code == "E011" and diag.message.startswith("forward-mode derivatives by an array through the "
                                                           "recurrence `x`, whose step runs the recurrence")
    assert "on an array literal reading `" in diag.message and diag.span.line == 11
    assert diag.notes[0].span.line == 6


def test_forward_mode_through_solve_of_a_literal_whose_rows_read_the_parameter_and_the_state(run, fd_jacobian):
    """J's rows are literals, one reading the state, one the parameter c: the tangent of solve's
    guarded read `A[i, j]` (j < n of j in 0..n + 1) picked J's row by i and read it at j as
    proven in bounds, which size_facts refused (a false E005 at the row `[0.5, c]`)."""
    out = run("use std::ml::linalg_ops::solve;\nlet c: f64;\nlet x[0, j in 0..2] = 1.0;\n"
              "let x[k in 1..6] = {\n    let F = [c, c];\n"
              "    let J = [[2.0 * x[k - 1, 0], 1.0], [0.5, c]];\n    x[k - 1] - solve(J, F)\n};\n"
              "let dx = @x[5] / @c;\n", c=np.float64(1.5))

    def last(c):
        x = np.ones(2)
        for _ in range(5):
            x = x - np.linalg.solve(np.array([[2 * x[0], 1.0], [0.5, c]]), np.array([c, c]))
        return x
    np.testing.assert_allclose(out["dx"], fd_jacobian(lambda c: last(float(c)), np.float64(1.5)),
                               rtol=1e-6, atol=1e-8)      # f64, FD ~1e-9


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_forward_mode_through_a_scalar_loop_in_each_step_for_a_vector_parameter(run, target, fd_jacobian):
    """The inner Newton square root reads the outer state and c[e]; the tangent has one
    direction per entry of c."""
    c = np.array([0.0, 1.0, 2.5, 0.5, 3.0, 1.5])
    out = run("""
        let c: [f64; 6];
        let x[0] = 1.0;
        let x[e in 1..6] = {
            let y[0] = x[e - 1] + c[e];
            let y[i in 1..6] = 0.5 * (y[i - 1] + (x[e - 1] + c[e]) / y[i - 1]);
            y[5]
        };
        let dx = @x / @c;
    """, target=target, c=c)

    def iterates(c):
        x = [1.0]
        for e in range(1, 6):
            a = y = x[-1] + c[e]
            for _ in range(5):
                y = 0.5 * (y + a / y)
            x.append(y)
        return np.array(x)
    np.testing.assert_allclose(out["dx"], fd_jacobian(iterates, c), rtol=1e-6, atol=1e-8)    # f64, FD ~1e-9


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_forward_mode_through_symplectic_substeps_of_two_members(run, target, fd_jacobian):
    """Each of p and q runs 4 symplectic Euler substeps (an inner loop of two members) from
    both: p reads q only inside its inner loop, so q's tangent member was not made (the
    members a clause reads were looked for in its scalar code only: a wrong value)."""
    th = 2.0
    block = ("{ let u[0] = p[t - 1]; let w[0] = q[t - 1];\n"
             "  let u[s in 1..5] = u[s - 1] + h * w[s - 1];\n"
             "  let w[s in 1..5] = w[s - 1] - h * th * u[s];\n  %s[4] }")
    out = run("let th: f64;\nlet h = 0.05;\nlet p[0] = 1.0;\nlet q[0] = 0.0;\n"
              f"let p[t in 1..20] = {block % 'u'};\nlet q[t in 1..20] = {block % 'w'};\n"
              "let dp = @p / @th;\n", target=target, th=np.float64(th))

    def positions(th):
        p, q, ps = 1.0, 0.0, [1.0]
        for _ in range(1, 20):
            u, w = p, q
            for _ in range(4):
                u = u + 0.05 * w
                w = w - 0.05 * th * u
            p, q = u, w
            ps.append(p)
        return np.array(ps)
    np.testing.assert_allclose(out["dp"], fd_jacobian(positions, np.float64(th)).ravel(), rtol=1e-6, atol=1e-8)



@pytest.mark.parametrize("inner", ["f(r[t - 1], -1.25)",
                                   "{ let s[0] = r[t - 1]; let s[k in 1..8] = tanh(0.75 * s[k - 1]); s[7] }"])
def test_a_gradient_through_a_step_calling_a_function_holding_a_loop(run, fd_jacobian, inner):
    """The inner loop is a function's body (or a block), as the program fuzzer draws it (seed
    19603 program 13): reverse mode through the outer loop was an internal error (KeyError in
    the adjoint's state reads), then E011 at `@`; it is taken in forward mode."""
    source = ("use std::math::*;\nlet x: [f64; 3];\n"
              "fn f(a: f64, b: f64) -> f64 { { let s[0] = a * b; let s[k in 1..8] = tanh(0.75 * s[k - 1] + 0.1 * b); "
              "s[7] } }\nlet r[0] = x[0];\n"
              f"let r[t in 1..3] = 0.25 * r[t - 1] + {inner};\n"
              "let L = sum[i in 0..3](r[i]);\nlet g = @sin(L) / @x;\n")
    x = np.array([0.7, -0.3, 1.2])

    def loss(x):
        r = [x[0]]
        for _ in range(1, 3):
            s = r[-1] * -1.25 if inner.startswith("f") else r[-1]
            for _ in range(7):
                s = np.tanh(0.75 * s + (0.1 * -1.25 if inner.startswith("f") else 0.0))
            r.append(0.25 * r[-1] + s)
        return np.sin(np.sum(r))
    out = run(source, x=x)
    np.testing.assert_allclose(out["g"], fd_jacobian(loss, x), rtol=1e-6, atol=1e-9)     # f64, FD ~1e-9


def test_explain_says_which_loop_runs_inside_which(tmp_path):
    path = tmp_path / "nested.ein"
    path.write_text(RNN_TRAINING)
    text = emit_program(str(path), "explain")
    assert "nested: runs whole inside each step of group 1 (W)" in text
    assert "inside each step: the loops of group 0 (h), group 3 (h_bar)" in text
    assert "runs 2 nested recurrence loop(s)" in text


def test_explain_puts_both_loops_of_std_solve_inside_the_newton_step(tmp_path):
    path = tmp_path / "newton.ein"
    path.write_text(NEWTON_SYSTEM)
    text = emit_program(str(path), "explain")
    assert "inside each step: the loops of group 0 (piv, G), group 1 (r)" in text
    assert "runs 2 nested recurrence loop(s)" in text



@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
def test_an_inner_loop_reading_40_points_of_the_outer_state(run, target):
    """The inner loop's step reads 40 points of the outer state one step back, each term with
    the step `t`, so each point is a scalar of its own computed outside the loop's dispatch:
    bound one binding each, the dispatch failed to run on the CPU targets ("binding count 41 >
    32", IREE-220; found by the program fuzzer's nesting draw, seed 10023 program 33). They
    reach it packed into one tensor."""
    terms = " + ".join(f"(r[t - 1, {c}] - t as f32)" for c in range(40))
    out = run(f"""
        let x: [f32; 40];
        let r[0, j in 0..40] = x[j];
        let r[t in 1..5, j in 0..40] = 0.5 * r[t - 1, j]
            + {{ let s[0] = 0.0; let s[i in 1..4] = 0.5 * s[i - 1] + 0.01 * ({terms}); s[3] }};
    """, target=target, x=np.linspace(-1.0, 1.0, 40, dtype=np.float32))
    r = [np.linspace(-1.0, 1.0, 40, dtype=np.float64)]
    for t in range(1, 5):
        s = 0.0
        for _ in range(3):
            s = 0.5 * s + 0.01 * (r[-1].sum() - 40 * t)
        r.append(0.5 * r[-1] + s)
    np.testing.assert_allclose(out["r"], r, rtol=1e-5, atol=1e-6)      # f32, a sum of 40 a step


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
def test_a_member_with_fewer_steps_than_its_host_loop_keeps_its_last_row(run, target):
    """r11 (6 steps) recurs with r9 (7 steps) in a host loop, both stored whole: at step 6 the
    kernel of r11's clause still runs (inactive) and wrote its row at 36 .. 41, past r11's 36
    elements, over r9's storage on the CPU targets (r9 came back holding r11's first row;
    found by the program fuzzer's nesting draw, seed 19601 program 20). A whole storage's
    slot past the member's last step is now its last row."""
    x2 = np.array([[-1.119, 1.215, -1.119, -1.906], [-0.149, 0.989, -1.729, -0.402],
                   [-1.761, -1.131, 0.706, 0.285]], np.float32)
    idx3 = np.array([0, 3], np.int32)
    out = run("""
        use std::math::*;
        let x2: [f32; T, 4];
        let idx3: [i32; 2];
        let r9[0] = sqrt(x2[0, 0] * x2[0, 0] + 0.25);
        let r9[1] = x2[0, 3];
        let r11[0, j in 0..6] = max(x2) * j as f32;
        let r11[1, j in 0..6] = x2[j / 3, j / 3];
        let r11[2, j in 0..6] = if max(idx3) <= 2 { 3.0 } else { 1.0 };
        let r9[2] = max(sum(x2), x2[0, idx3[0]]);
        let r9[t in 3..7] = tanh(r9[t - 1] + (if r11[t - 1, 5] <= r11[t - 3, idx3[t % 2]] { r9[t - 3] }
                                             else { sum[i in t..7](r9[t - 3]) } + 0.25 * min[i in 0..t](r9[i])));
        let r11[t in 3..6, j in 0..t + 1] = 0.25 * r11[t - 1, j]
            + ({ let h17[i in 0..2] = tanh(r11[i, i + 2] + r9[t - 3]); h17[0] }
               + { let ns1[0] = r11[t - 3, 4] + r9[t - 1]; let ns1[i in 1..9] = 0.75 * ns1[i - 1] + x2[t % 3, t - 2]; ns1[8] });
    """, target=target, x2=x2, idx3=idx3)
    r9, r11 = np.zeros(7, np.float64), np.zeros((6, 6), np.float64)
    r9[:3] = np.hypot(x2[0, 0], 0.5), x2[0, 3], max(x2.sum(), x2[0, idx3[0]])
    r11[0], r11[1], r11[2] = x2.max() * np.arange(6), x2[np.arange(6) // 3, np.arange(6) // 3], 1.0
    for t in range(3, 7):
        early = r9[t - 3] if r11[t - 1, 5] <= r11[t - 3, idx3[t % 2]] else (7 - t) * r9[t - 3]
        r9[t] = np.tanh(r9[t - 1] + early + 0.25 * r9[:t].min())
        if t < 6:
            inner = r11[t - 3, 4] + r9[t - 1]
            for _ in range(8):
                inner = 0.75 * inner + x2[t % 3, t - 2]
            r11[t, :t + 1] = 0.25 * r11[t - 1, :t + 1] + np.tanh(r11[0, 2] + r9[t - 3]) + inner
    np.testing.assert_allclose(out["r9"], r9, rtol=1e-5, atol=1e-6)       # f32, a few roundings a step
    np.testing.assert_allclose(out["r11"], r11, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
def test_an_inner_loop_reading_rows_of_two_members_one_step_back(run, target):
    """The inner loop reads a[t - 1, 0] (a row of `a` cut from its storage, then a point of it)
    and b[t - 1, 0, d] (a row of the 3-d `b`, reshaped): on the CPU targets the point of `a`
    came back 0 at every step, as if `a` had never been written (IREE-260; found by the program
    fuzzer's uneven-lengths test, seed 2026 program 31, as a wrong forward-mode Jacobian whose
    tangent members are such rows)."""
    x = np.array([0.5, -1.0, 2.0, 0.25, 1.5], np.float32)
    out = run("""
        let x: [f32; T];
        let a[t in 0..1, j in 0..T] = 1.0;
        let a[t in 1..T, j in 0..T] = a[t - 1, j] + y[t - 1];
        let y[t in 0..1] = x[0];
        let y[t in 1..T] = x[t] + { let v[0, d in 0..T] = a[t - 1, 0];
                                    let v[i in 1..2, d in 0..T] = v[i - 1, d] + b[t - 1, 0, d]; v[1, 0] };
        let b[t in 0..1, j in 0..T, d in 0..T] = 0.0;
        let b[t in 1..T, j in 0..T, d in 0..T] = b[t - 1, j, d] + y[t - 1];
    """, target=target, x=x)
    n = len(x)
    a, b, y = np.ones((n, n)), np.zeros((n, n, n)), np.zeros(n)
    y[0] = x[0]
    for t in range(1, n):
        y[t] = x[t] + a[t - 1, 0] + b[t - 1, 0, 0]
        a[t] = a[t - 1] + y[t - 1]
        b[t] = b[t - 1] + y[t - 1]
    np.testing.assert_allclose(out["y"], y, rtol=1e-6)



def test_a_tangent_through_an_inner_loop_reading_another_member_at_the_step(run):
    """`@r8 / @x2` in forward mode: r8's inner loop reads r7 at the current step, so the loop's
    tangent reads r7's tangent there, which must be computed before r8 (E011 "a tensor computed
    inside a step of `r8` reads .. a member computed after it" while tangent members ran after
    every primal one; fuzz seed 19701 program 7)."""
    out = run("""use std::math::tanh;
        let x2: f64;
        let r7[0] = 0.0;
        let r7[t in 1..5] = r7[t - 1] + r8[t - 1] * x2;
        let r8[0] = 1.0;
        let r8[t in 1..5] = r8[t - 1] + { let ns[0] = r8[t - 1]; let ns[i in 1..3] = tanh(-0.5 * ns[i - 1] + r7[t]); ns[2] };
        let g = @r8 / @x2;
    """, x2=np.float64(0.3))

    def r8(x2):
        r7, r8 = [0.0], [1.0]
        for t in range(1, 5):
            r7.append(r7[-1] + r8[-1] * x2)
            ns = r8[-1]
            for _ in range(1, 3):
                ns = np.tanh(-0.5 * ns + r7[t])
            r8.append(r8[-1] + ns)
        return np.array(r8)
    np.testing.assert_allclose(out["r8"], r8(0.3), rtol=1e-14)
    np.testing.assert_allclose(out["g"], (r8(0.3 + 1e-6) - r8(0.3 - 1e-6)) / 2e-6, rtol=1e-7, atol=1e-9)
