"""Gradients `@L / @p` through a recurrence whose step runs a recurrence (Newton with std's
solve, an RK4 integrator inside a time loop, training by BPTT inside an epoch loop), against
NumPy loops differentiated by central differences in f64. They are taken in forward mode, one
direction per element of p (einc.autodiff.forward_pullback)."""
import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError

NEWTON = """
use std::ml::linalg_ops::solve;
let x0: [f64; 3];
let c: [f64; 2];
let x[0] = x0;
let x[k in 1..5] = {
    let v = x[k - 1];
    let F = [v[0] * v[0] + v[1] * v[1] + v[2] * v[2] - c[0], v[0] * v[1] - c[1] * v[2], v[0] + v[1] - 3.0 * v[2]];
    let J = [[2.0 * v[0], 2.0 * v[1], 2.0 * v[2]], [v[1], v[0], -c[1]], [1.0, 1.0, -3.0]];
    v - solve(J, F)
};
let L = sum[i](x[4, i] * x[4, i] * x[4, i]);
let dc = @L / @c;
let dx0 = @L / @x0;
"""


def _newton_loss(x0, c):
    v = x0
    for _ in range(4):
        F = np.array([v @ v - c[0], v[0] * v[1] - c[1] * v[2], v[0] + v[1] - 3 * v[2]])
        J = np.array([2 * v, [v[1], v[0], -c[1]], [1, 1, -3]])
        v = v - np.linalg.solve(J, F)
    return np.float64(np.sum(v ** 3))


@pytest.mark.full      # forward mode through Newton's std::solve: test_nested_recurrences's NEWTON_IN_C
def test_an_implicit_layer_of_newton_iterates_each_running_std_solve(run, fd_jacobian):
    """L at the 4th Newton iterate (not converged: its derivative is not the implicit one)
    with respect to the system's constants and the start (was E011)."""
    x0, c = np.array([2.5, 0.4, 1.5]), np.array([6.0, 2.0])
    out = run(NEWTON, x0=x0, c=c)
    np.testing.assert_allclose(out["dc"], fd_jacobian(lambda q: _newton_loss(x0, q), c), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(out["dx0"], fd_jacobian(lambda q: _newton_loss(q, c), x0), rtol=1e-6, atol=1e-8)


RK4 = """
let p: [F; 2];
let obs: [F; 8];
fn field(a, b, p) { [b, -p[0] * a - p[1] * b] }
let y[0, j in 0..2] = if j == 0 { 1.0 } else { 0.0 };
let y[n in 1..8] = {
    let z[0, j in 0..2] = y[n - 1, j];
    let z[s in 1..5] = {
        let h = 0.05;
        let k1 = field(z[s - 1, 0], z[s - 1, 1], p);
        let k2 = field(z[s - 1, 0] + 0.5 * h * k1[0], z[s - 1, 1] + 0.5 * h * k1[1], p);
        let k3 = field(z[s - 1, 0] + 0.5 * h * k2[0], z[s - 1, 1] + 0.5 * h * k2[1], p);
        let k4 = field(z[s - 1, 0] + h * k3[0], z[s - 1, 1] + h * k3[1], p);
        [z[s - 1, 0] + h / 6.0 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0]),
         z[s - 1, 1] + h / 6.0 * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1])]
    };
    z[4]
};
let L = sum[n]((y[n, 0] - obs[n]) * (y[n, 0] - obs[n]));
let g = @L / @p;
"""


def _rk4_loss(p, obs):
    def field(v):
        return np.array([v[1], -p[0] * v[0] - p[1] * v[1]])
    v, loss = np.array([1.0, 0.0]), (1.0 - obs[0]) ** 2
    for n in range(1, 8):
        for _ in range(4):
            h = 0.05
            k1 = field(v)
            k2 = field(v + 0.5 * h * k1)
            k3 = field(v + 0.5 * h * k2)
            k4 = field(v + h * k3)
            v = v + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        loss += (v[0] - obs[n]) ** 2
    return np.float64(loss)


@pytest.mark.full      # an inner loop's literal step in forward mode: the tangent test below
@pytest.mark.parametrize("target, dtype, rtol", [
    ("llvm-cpu", "f64", 1e-6),                                            # f64, FD ~1e-9
    pytest.param("vulkan-spirv", "f32", 2e-3, marks=pytest.mark.vulkan),  # f32 over 28 RK4 steps
])
def test_a_loss_over_an_ode_whose_time_step_runs_rk4_substeps(run, fd_jacobian, target, dtype, rtol):
    """A fit of a damped oscillator's constants: each time step runs 4 RK4 substeps of an inner
    loop whose step is an array literal (was E011)."""
    p, obs = np.array([4.0, 0.3]), np.cos(np.arange(8) * 0.4)
    np_dtype = np.float64 if dtype == "f64" else np.float32
    out = run(RK4.replace("F;", f"{dtype};"), target=target, p=p.astype(np_dtype), obs=obs.astype(np_dtype))
    np.testing.assert_allclose(out["g"], fd_jacobian(lambda q: _rk4_loss(q, obs), p), rtol=rtol, atol=rtol * 1e-2)


def test_the_tangent_of_an_inner_loop_whose_step_is_an_array_literal(run, fd_jacobian):
    """Forward mode: the inner loop's step literal had its tangent asked for before the inner
    tangent members existed, and kept the zero (a silent wrong value: dy was only p's direct
    term)."""
    p = np.array([0.9, 0.4])
    out = run("""
        let p: [f64; 2];
        let y[0, j in 0..2] = if j == 0 { 1.0 } else { 0.0 };
        let y[n in 1..4] = {
            let z[0, j in 0..2] = y[n - 1, j];
            let z[s in 1..3] = [z[s - 1, 0] + 0.1 * z[s - 1, 1], z[s - 1, 1] - 0.1 * p[0] * z[s - 1, 0] * p[1]];
            z[2]
        };
        let dy = @y / @p;
    """, p=p)

    def iterates(p):
        ys = [np.array([1.0, 0.0])]
        for _ in range(3):
            v = ys[-1]
            for _ in range(2):
                v = np.array([v[0] + 0.1 * v[1], v[1] - 0.1 * p[0] * v[0] * p[1]])
            ys.append(v)
        return np.array(ys)
    np.testing.assert_allclose(out["dy"], fd_jacobian(iterates, p), rtol=1e-6, atol=1e-9)   # f64, FD ~1e-9


TRAINING = """
use std::math::tanh;
let x: [f64; T, H];
let goal: [f64; H];
let lr: f64;
fn loss(W) {
    let h[0, i in 0..H] = 0.0;
    let h[t in 1..T, i in 0..H] = tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i]);
    sum[i]((h[T - 1, i] - goal[i]) * (h[T - 1, i] - goal[i]))
}
let W[0, i in 0..H, j in 0..H] = (((i * 2 + j) % 5) as f64) / 10.0 - 0.2;
let W[e in 1..6, i in 0..H, j in 0..H] = W[e - 1, i, j] - lr * {
    let L = loss(W[e - 1]);
    (@L / @W[e - 1])[i, j]
};
let final = loss(W[5]);
let dlr = @final / @lr;
"""


def _trained_loss(lr, x, goal):
    """The loss after 5 epochs of gradient descent, the gradient by BPTT."""
    def loss_and_gradient(W):
        hs = [np.zeros(len(W))]
        for t in range(1, len(x)):
            hs.append(np.tanh(W @ hs[-1] + x[t]))
        dh, dW = 2 * (hs[-1] - goal), np.zeros_like(W)
        for t in range(len(x) - 1, 0, -1):
            da = dh * (1 - hs[t] ** 2)
            dW += np.outer(da, hs[t - 1])
            dh = W.T @ da
        return np.sum((hs[-1] - goal) ** 2), dW
    i, j = np.meshgrid(range(3), range(3), indexing="ij")
    W = ((i * 2 + j) % 5) / 10.0 - 0.2
    for _ in range(5):
        W = W - lr * loss_and_gradient(W)[1]
    return np.float64(loss_and_gradient(W)[0])


@pytest.mark.full
def test_the_derivative_of_a_trained_loss_by_its_learning_rate(run, fd_jacobian):
    """An epoch loop whose step runs BPTT (an inner loop and its adjoint loop), differentiated
    with respect to the learning rate (was E011)."""
    rng = np.random.default_rng(7)
    x, goal = rng.standard_normal((6, 3)) * 0.5, np.array([-0.2, 0.1, 0.4])
    out = run(TRAINING, x=x, goal=goal, lr=np.float64(0.3))
    assert out["final"] == pytest.approx(_trained_loss(0.3, x, goal), rel=1e-10)
    expected = fd_jacobian(lambda lr: _trained_loss(float(lr), x, goal), np.float64(0.3))
    np.testing.assert_allclose(out["dlr"], expected, rtol=1e-6)      # f64, FD ~1e-9


def test_a_gradient_inside_a_step_through_a_loop_running_a_loop_is_e011():
    """Inside an enclosing step the reverse pass through such a loop is not compiled: the error
    is at the request, with a note at the step that runs the inner loop."""
    with pytest.raises(CompileError) as info:
        einc.compile("let w[0] = 0.5;\nlet w[e in 1..3] = {\n    let x[0] = w[e - 1];\n"
                     "    let x[k in 1..3] = { let y[0] = x[k - 1]; let y[i in 1..3] = y[i - 1] * 0.5; y[2] };\n"
                     "    let L = x[2] * x[2];\n    w[e - 1] - 0.1 * (@L / @w[e - 1])\n};\n")
    diag = info.value.diagnostics[0]
    assert diag.code == "E011" and "inside a loop's step through the recurrence `x`, whose step runs the " \
        "recurrence `y`" in diag.message
    assert diag.span.line == 6 and diag.notes[0].span.line == 4


def test_a_gradient_by_a_steps_state_reading_a_loop_that_runs_a_loop_as_a_given(run):
    """Training by gradient steps (`@L / @w[k - 1]`) called on the last value of an outer loop
    whose step runs that training: the loss reads the outer loop (`exp(h[3])`) as a given, with
    no path to w, yet the reverse pass entered it and was E011 ("inside a loop's step through the
    recurrence `h`"; found by the hold-out program unrolled_hypergrad, whose `fit(h[5])` beside the
    loop of hypergradient steps was refused)."""
    X = np.arange(8.0).reshape(4, 2) / 8
    out = run("""use std::math::exp;
        let X: [f64; 4, 2];
        fn fit(a) {
            let lam = exp(a);
            let w[0, j in 0..2] = 0.0;
            let w[k in 1..5] = {
                let L = sum[n]((X[n, 0] * w[k - 1, 0] + X[n, 1] * w[k - 1, 1] - 1.0) ** 2) + lam * sum[j](w[k - 1, j] * w[k - 1, j]);
                w[k - 1] - 0.1 * @L / @w[k - 1] };
            w[4]
        }
        let h[0] = 0.0;
        let h[e in 1..4] = { let w = fit(h[e - 1]); let v = w[0] * w[0] + w[1]; h[e - 1] - 0.1 * @v / @h[e - 1] };
        let wf = fit(h[3]);
    """, X=X)

    def fit(a):
        w = np.zeros(2)
        for _ in range(4):
            w = w - 0.1 * (2 * X.T @ (X @ w - 1) + 2 * np.exp(a) * w)
        return w
    h, step = [0.0], 1e-6
    for _ in range(3):
        v = [fit(h[-1] + d)[0] ** 2 + fit(h[-1] + d)[1] for d in (step, -step)]
        h.append(h[-1] - 0.1 * (v[0] - v[1]) / (2 * step))
    np.testing.assert_allclose(out["h"], h, rtol=1e-8)
    np.testing.assert_allclose(out["wf"], fit(h[3]), rtol=1e-8)


KALMAN = """
let z: [f64; 10];
let q: f64;
let r: f64;
let m[0] = 0.0;
let P[0] = 1.0;
let m[k in 1..10] = {
    let g[0] = 0.5;
    let g[i in 1..6] = (P[k - 1] + q) / (P[k - 1] + q + r) * 0.5 + 0.5 * g[i - 1];
    m[k - 1] + g[5] * (z[k] - m[k - 1])
};
let P[k in 1..10] = {
    let g[0] = 0.5;
    let g[i in 1..6] = (P[k - 1] + q) / (P[k - 1] + q + r) * 0.5 + 0.5 * g[i - 1];
    (1.0 - g[5]) * (P[k - 1] + q)
};
let L = sum[k]((m[k] - z[k]) * (m[k] - z[k]));
let dq = @L / @q;
let dr = @L / @r;
"""


def test_a_kalman_filter_whose_two_members_each_iterate_the_gain(run, fd_jacobian):
    """A scalar Kalman filter whose mean and variance steps each refine the gain by 5 damped
    fixed-point iterations of an inner loop; the fit's loss by the noise variances."""
    z = np.sin(np.arange(10) * 0.7) + 0.1 * np.arange(10)

    def loss(q, r):
        m, P, total = 0.0, 1.0, z[0] ** 2
        for k in range(1, 10):
            g = 0.5
            for _ in range(5):
                g = (P + q) / (P + q + r) * 0.5 + 0.5 * g
            m, P = m + g * (z[k] - m), (1 - g) * (P + q)
            total += (m - z[k]) ** 2
        return np.float64(total)
    out = run(KALMAN, z=z, q=np.float64(0.2), r=np.float64(0.5))
    dq = fd_jacobian(lambda a: loss(float(a), 0.5), np.float64(0.2))
    dr = fd_jacobian(lambda a: loss(0.2, float(a)), np.float64(0.5))
    np.testing.assert_allclose([out["dq"], out["dr"]], [dq, dr], rtol=1e-6)      # f64, FD ~1e-9
