"""Derivatives through recurrences against central finite differences of NumPy loops, in f64:
an RNN loss with respect to its weight matrix, a Kalman filter's log-likelihood with respect
to its noise variances, and a column of the Jacobian of the RNN's states."""
import numpy as np
import pytest

import einc
from einc import driver
from einc.driver import emit_program
from einc.ir.nodes import Op, walk
from tests.programs import source
from tests.programs.neural_ode import neural_ode_gradient

H = 1e-6                               # central-difference step
FD_TOL = dict(rtol=1e-6, atol=1e-8)    # f64: the differences themselves are good to ~1e-9

# N is fixed: a windowed member with a run-time-sized axis that nothing outside its loop reads
# (h, when only its tangent is observed) does not compile yet (recurrence lowering).
RNN = """use std::math::tanh;
let W: [f64; 4, 4];
let x: [f64; T, 4];
let h[0, i in 0..4] = 0.0;
let h[t in 1..T, i in 0..4] = tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i]);
let loss = sum[t, i](h[t, i] * h[t, i]) / 2.0;
let grad_W = @loss / @W;
let column = (@h / @W)[:, :, 1, 2];
let row = (@h / @W)[7, 3];
let dense = @h / @W;
"""


def rnn_states(W, x):
    h = np.zeros((len(x), len(W)))
    for t in range(1, len(x)):
        h[t] = np.tanh(W @ h[t - 1] + x[t])
    return h


@pytest.fixture(scope="module")
def rnn_inputs():
    rng = np.random.default_rng(8)
    return dict(W=rng.standard_normal((4, 4)) * 0.5, x=rng.standard_normal((12, 4)))


def test_rnn_loss_gradient_with_respect_to_the_weight_matrix(rnn_inputs, fd_jacobian):
    W, x = rnn_inputs["W"], rnn_inputs["x"]
    out = einc.load(einc.compile(RNN, outputs=["loss", "grad_W"]).vmfb)(**rnn_inputs)
    loss = lambda w: (rnn_states(w, x) ** 2).sum() / 2
    np.testing.assert_allclose(out["loss"], loss(W), rtol=1e-12)
    np.testing.assert_allclose(out["grad_W"], fd_jacobian(loss, W), **FD_TOL)


def test_the_gradient_runs_an_adjoint_loop_backward_over_the_kept_states(tmp_path):
    path = tmp_path / "rnn.ein"
    path.write_text(RNN)
    explained = emit_program(str(path), "explain", ["grad_W"])
    assert "h_bar" in explained and "order inside a step: h -> h'" not in explained
    assert "h: lookback 1, tail unbounded, storage whole tensor" in explained


def test_jacobian_row_and_column_of_the_states_are_slices_of_the_dense_one(rnn_inputs, tmp_path):
    out = einc.load(einc.compile(RNN, outputs=["row", "column", "dense"]).vmfb)(**rnn_inputs)
    np.testing.assert_allclose(out["row"], out["dense"][7, 3], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["column"], out["dense"][:, :, 1, 2], rtol=1e-12, atol=1e-14)
    path = tmp_path / "rnn.ein"
    path.write_text(RNN)
    for name in ("row", "column"):
        assert "x4x4x4xf64" not in emit_program(str(path), "mlir", [name])
    assert "x4x4x4xf64" in emit_program(str(path), "mlir", ["dense"])


def test_jacobian_column_of_the_states_runs_one_tangent_loop(rnn_inputs, tmp_path):
    W, x = rnn_inputs["W"], rnn_inputs["x"]
    out = einc.load(einc.compile(RNN, outputs=["column"]).vmfb)(**rnn_inputs)
    e12 = np.zeros_like(W)
    e12[1, 2] = H
    expected = (rnn_states(W + e12, x) - rnn_states(W - e12, x)) / (2 * H)
    np.testing.assert_allclose(out["column"], expected, **FD_TOL)
    path = tmp_path / "rnn.ein"
    path.write_text(RNN)
    mlir = emit_program(str(path), "mlir", ["column"])
    assert "h'" in mlir and "?x4x4x4xf64" not in mlir      # a tangent member, not the dense Jacobian


KALMAN = "use std::math::*;\n" + source("kalman_1d") + """
let loglik = -0.5 * sum[t in 1..T](log(S[t]) + (y[t] - x_pred[t]) ** 2 / S[t]);
let d_q = @loglik / @q;
let d_r = @loglik / @r;
"""


def kalman_loglik(y, q, r):
    """The same filter in NumPy (the constant -T/2 log(2 pi) left out on both sides)."""
    x, P, total = y[0], 1.0, 0.0
    for t in range(1, len(y)):
        x_pred, P_pred = x, P + q
        S = P_pred + r
        K = P_pred / S
        total += -0.5 * (np.log(S) + (y[t] - x_pred) ** 2 / S)
        x, P = x_pred + K * (y[t] - x_pred), (1 - K) * P_pred
    return total


def test_kalman_log_likelihood_derivatives_with_respect_to_the_noise_variances(tmp_path):
    """Both derivatives read one adjoint loop (each built its own before equal recurrence
    groups were merged, einc.passes.shared_values)."""
    path = tmp_path / "kalman.ein"
    path.write_text(KALMAN)
    groups = driver.front_end(str(path), ["d_q", "d_r"])[1].recurrences
    adjoint_loops = [g for g in groups if any(m.adjoint_of is not None for m in g.members)]
    assert len(groups) == 2 and len(adjoint_loops) == 1, [[m.name for m in g.members] for g in groups]
    rng = np.random.default_rng(2)
    y = np.cumsum(rng.standard_normal(40)) + rng.standard_normal(40)
    q, r = 0.5, 2.0
    out = einc.load(einc.compile(KALMAN).vmfb)(y=y, q=q, r=r)
    np.testing.assert_allclose(out["loglik"], kalman_loglik(y, q, r), rtol=1e-12)
    d_q = (kalman_loglik(y, q + H, r) - kalman_loglik(y, q - H, r)) / (2 * H)
    d_r = (kalman_loglik(y, q, r + H) - kalman_loglik(y, q, r - H)) / (2 * H)
    np.testing.assert_allclose(out["d_q"], d_q, **FD_TOL)
    np.testing.assert_allclose(out["d_r"], d_r, **FD_TOL)


def test_a_tangent_asked_twice_through_two_coupled_members_matches_finite_differences():
    """Both requests read the one pair of tangent members left (einc.passes.shared_values)."""
    from tests.passes.test_shared_values import TANGENTS_ASKED_TWICE

    def states(a, x):
        u, v = [1.0], [0.5]
        for t in range(1, len(x)):
            u.append(np.tanh(v[-1] * a) + x[t])
            v.append(0.5 * u[-1] - a * v[-1])
        return np.array(v)

    x = np.random.default_rng(4).standard_normal(9)
    out = einc.load(einc.compile(TANGENTS_ASKED_TWICE, outputs=["f1", "f2"]).vmfb)(a=0.7, x=x)
    dv = (states(0.7 + H, x) - states(0.7 - H, x)) / (2 * H)
    np.testing.assert_allclose(out["f1"], dv, **FD_TOL)
    np.testing.assert_allclose(out["f2"], 2 * dv, **FD_TOL)


def test_a_user_rule_inside_a_recurrence_is_used_by_both_modes():
    out = einc.load(einc.compile("""use std::math::*;
        fn act(z) { z * z }
        @fn act(z) { 3.0 * z * @z }
        let a: f64;
        let x: [f64; T];
        let s[0] = 1.0;
        let s[t in 1..T] = act(s[t - 1] * a) + x[t];
        let loss = sum[t](s[t]);
        let reverse = @loss / @a;
        let forward = (@s / @a)[:];
    """).vmfb)(a=0.5, x=np.array([0.0, 0.1, -0.2, 0.3]))
    # the rule (3 z dz, deliberately not the true 2 z dz) applied by hand
    s, ds = 1.0, [0.0]
    for xt in [0.1, -0.2, 0.3]:
        z = s * 0.5
        ds.append(3 * z * (0.5 * ds[-1] + s))
        s = z * z + xt
    np.testing.assert_allclose(out["forward"], ds, rtol=1e-14)
    np.testing.assert_allclose(out["reverse"], sum(ds), rtol=1e-14)


@pytest.mark.vulkan
def test_rnn_gradient_and_tangent_loops_on_vulkan(rnn_inputs, fd_jacobian):
    W, x = rnn_inputs["W"], rnn_inputs["x"]
    f32 = {k: v.astype(np.float32) for k, v in rnn_inputs.items()}
    source = RNN.replace("f64", "f32")
    art = einc.compile(source, target="vulkan-spirv", outputs=["grad_W", "column"])
    out = einc.load(art.vmfb, device="vulkan")(**f32)
    loss = lambda w: (rnn_states(w, x) ** 2).sum() / 2
    np.testing.assert_allclose(out["grad_W"], fd_jacobian(loss, W), rtol=1e-4, atol=1e-5)   # f32
    e12 = np.zeros_like(W)
    e12[1, 2] = 1e-6
    column = (rnn_states(W + e12, x) - rnn_states(W - e12, x)) / 2e-6
    np.testing.assert_allclose(out["column"], column, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("wrt, x", [("let x: [f32; 2];\nlet a = x[1];", np.array([0.2, 0.7], np.float32)),
                                    ("let x: f32;\nlet a = x;", np.float32(0.7))])
def test_a_derivative_through_a_tensor_a_step_computes(wrt, x):
    """Both modes follow a tensor the step computes from the state through its points: h's
    share of the derivative (1 - tanh(r)^2) was once dropped, 0.5 for 1.5 - tanh(r)^2 (found by
    the differential fuzzer), then E011."""
    source = (f"use std::math::*;\n{wrt}\nlet r[0] = a;\n"
              "let r[t in 1..2] = 0.5 * r[t - 1] + { let h[i in 0..3] = tanh(r[t - 1]); h[1] };\n"
              "let g = @r / @x;\nlet s = sum[t in 0..2](r[t]);\nlet gs = @s / @x;\n")
    out = einc.load(einc.compile(source, outputs=["g", "gs"]).vmfb)(x=x)
    a, e = float(np.ravel(x)[-1]), 1e-6
    states = lambda a: np.array([a, 0.5 * a + np.tanh(a)])
    column = (states(a + e) - states(a - e)) / (2 * e)             # central differences, float64
    g = column if np.ndim(x) == 0 else np.stack([np.zeros(2), column], -1)
    np.testing.assert_allclose(out["g"], g, rtol=0, atol=1e-5)
    np.testing.assert_allclose(out["gs"], g.sum(axis=0), rtol=0, atol=1e-5)


HENON = """
fn henon(z: [f64; 2], a: f64) -> [f64; 2] {
    [1.0 - a * z[0] * z[0] + z[1], 0.3 * z[0]]
}
let z0: [f64; 2];
let a: f64;
let z[0] = z0;
let z[t in 1..6] = henon(z[t - 1], a);
let L = sum[t, i](z[t, i] * z[t, i]);
let J = @z[5] / @z0;
let Ja = @z / @a;
let gz = @L / @z0;
let ga = @L / @a;
"""


def henon_states(z0, a):
    z = [np.asarray(z0, np.float64)]
    for _ in range(5):
        p = z[-1]
        z.append(np.array([1.0 - a * p[0] * p[0] + p[1], 0.3 * p[0]]))
    return np.array(z)


def test_derivatives_through_a_step_that_returns_an_array_literal(run, fd_jacobian):
    """A step calling a function that returns an array literal (the Henon map) reads the
    literal's elements at the step's index: both modes follow each element to the state it
    reads (it was E011, a tensor the step computes from its state)."""
    z0, a = np.array([0.1, 0.2]), 1.4
    out = run(HENON, z0=z0, a=a)
    np.testing.assert_allclose(out["z"], henon_states(z0, a), rtol=1e-12)
    np.testing.assert_allclose(out["J"], fd_jacobian(lambda v: henon_states(v, a)[5], z0), **FD_TOL)
    np.testing.assert_allclose(out["Ja"], fd_jacobian(lambda v: henon_states(z0, v), np.float64(a)), **FD_TOL)
    loss = lambda z0, a: float((henon_states(z0, a) ** 2).sum())
    np.testing.assert_allclose(out["gz"], fd_jacobian(lambda v: loss(v, a), z0), **FD_TOL)
    np.testing.assert_allclose(out["ga"], fd_jacobian(lambda v: loss(z0, v), np.float64(a)), **FD_TOL)


def test_derivatives_through_a_step_that_returns_a_nested_array_literal(run, fd_jacobian):
    """A literal of rows: the first subscript picks a row, the next an element of it."""
    source = """use std::math::tanh;
fn step(m: [f64; 2, 2], c: f64) -> [f64; 2, 2] {
    [[tanh(c * m[0, 0] + m[1, 1]), m[0, 1] * m[1, 0]], [m[0, 0] - c * m[1, 1], 0.5 * m[1, 0]]]
}
let m0: [f64; 2, 2];
let c: f64;
let m[0] = m0;
let m[t in 1..4] = step(m[t - 1], c);
let L = sum[t, i, j](m[t, i, j] * m[t, i, j]);
let J = @m[3] / @m0;
let gc = @L / @c;
"""

    def states(m0, c):
        m = [m0]
        for _ in range(3):
            p = m[-1]
            m.append(np.array([[np.tanh(c * p[0, 0] + p[1, 1]), p[0, 1] * p[1, 0]],
                               [p[0, 0] - c * p[1, 1], 0.5 * p[1, 0]]]))
        return np.array(m)

    m0, c = np.array([[0.1, 0.2], [0.3, -0.4]]), 0.7
    out = run(source, m0=m0, c=c)
    np.testing.assert_allclose(out["J"], fd_jacobian(lambda v: states(v, c)[3], m0), **FD_TOL)
    loss = lambda v: float((states(m0, v) ** 2).sum())
    np.testing.assert_allclose(out["gc"], fd_jacobian(loss, np.float64(c)), **FD_TOL)


def test_derivatives_through_a_base_case_written_as_an_if_on_the_step():
    program = einc.load(einc.compile("""
        let u: [f64; 10];
        let a: f64;
        let s[t in 0..10] = if t > 0 { a * s[t - 1] + u[t] } else { u[t] };
        let loss = sum[t](s[t] * s[t]);
        let da = @loss / @a;
        let du = @loss / @u;
    """).vmfb)
    u = np.random.default_rng(3).standard_normal(10)

    def loss(a, u):
        s = [u[0]]
        for t in range(1, 10):
            s.append(a * s[-1] + u[t])
        return float(np.sum(np.square(s)))

    out = program(u=u, a=0.7)
    np.testing.assert_allclose(out["da"], (loss(0.7 + H, u) - loss(0.7 - H, u)) / (2 * H), **FD_TOL)
    du = [(loss(0.7, u + H * e) - loss(0.7, u - H * e)) / (2 * H) for e in np.eye(10)]
    np.testing.assert_allclose(out["du"], du, **FD_TOL)


SOFT_DTW = """use std::math::{exp, log, min};
let x: [f64; N];
let y: [f64; M];
let gamma: f64 = 0.5;
let C[i, j] = (x[i] - y[j]) * (x[i] - y[j]);
fn softmin(a, b, c, g) {
    let m = min(min(a, b), c);
    m - g * log(exp(-(a - m) / g) + exp(-(b - m) / g) + exp(-(c - m) / g))
}
let R[0, 0] = C[0, 0];
let R[0, j in 1..M] = C[0, j] + R[0, j - 1];
let R[i in 1..N, 0] = C[i, 0] + R[i - 1, 0];
let R[i in 1..N, j in 1..M] = C[i, j] + softmin(R[i - 1, j], R[i, j - 1], R[i - 1, j - 1], gamma);
let loss = R[N - 1, M - 1];
let gx = @loss / @x;
let gy = @loss / @y;
let column = (@R / @x)[:, :, 2];
"""


def soft_dtw_grid(x, y, gamma=0.5):
    def softmin(*v):
        m = min(v)
        return m - gamma * np.log(sum(np.exp(-(a - m) / gamma) for a in v))
    C, R = (x[:, None] - y[None, :]) ** 2, np.zeros((len(x), len(y)))
    for i, j in np.ndindex(R.shape):
        before = [R[a, b] for a, b in ((i - 1, j), (i, j - 1), (i - 1, j - 1)) if a >= 0 and b >= 0]
        R[i, j] = C[i, j] + (0.0 if not before else before[0] if len(before) == 1 else softmin(*before))
    return R


def test_soft_dtw_whose_grid_reads_its_own_row_has_a_gradient(fd_jacobian):
    """A DP grid reading R[i, j - 1] (its own points of the step i) was E011 in reverse mode: its
    adjoint runs each row backward, stored reversed along j (soft-DTW with its three clauses)."""
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(6), rng.standard_normal(5)
    out = einc.load(einc.compile(SOFT_DTW).vmfb)(x=x, y=y)
    np.testing.assert_allclose(out["loss"], soft_dtw_grid(x, y)[-1, -1], rtol=1e-12)
    np.testing.assert_allclose(out["gx"], fd_jacobian(lambda v: soft_dtw_grid(v, y)[-1, -1], x), **FD_TOL)
    np.testing.assert_allclose(out["gy"], fd_jacobian(lambda v: soft_dtw_grid(x, v)[-1, -1], y), **FD_TOL)
    np.testing.assert_allclose(out["column"], fd_jacobian(lambda v: soft_dtw_grid(v, y), x)[:, :, 2], **FD_TOL)


TRIANGULAR = """
let L: [f64; N, N];
let b: [f64; N];
let a: f64;
let x[i in 0..N] = (b[i] - sum[k in 0..i](L[i, k] * x[k])) / L[i, i];
let J = sum[i](x[i] * x[i] * (i + 1) as f64);
let gb = @J / @b;
let gL = @J / @L;
let y[0] = b[0];
let y[t in 1..N] = b[t] + 0.3 * sum[k in 1..t + 1](a ** k * y[t - k] / k as f64);
let Y = sum[t](y[t] * y[t]);
let ga = @Y / @a;
"""


def long_memory(b, a):
    y = np.zeros(len(b))
    y[0] = b[0]
    for t in range(1, len(b)):
        y[t] = b[t] + 0.3 * sum(a ** k * y[t - k] / k for k in range(1, t + 1))
    return y


def test_reverse_mode_through_a_step_reading_every_earlier_step(fd_jacobian):
    """A step reading all earlier steps (`x[k]`, k in 0..i, a forward substitution; `y[t - k]`,
    a lag over the whole past) was E011 "at a step that is not t - constant" in reverse mode:
    its adjoint loop now sums what every later step sends back."""
    rng = np.random.default_rng(12)
    L = np.tril(rng.standard_normal((5, 5))) + 3 * np.eye(5)
    b, w = rng.standard_normal(5), np.arange(1, 6)
    out = einc.load(einc.compile(TRIANGULAR).vmfb)(L=L, b=b, a=0.6)
    J = lambda L, b: (np.linalg.solve(L, b) ** 2 * w).sum()     # noqa: E731
    np.testing.assert_allclose(out["gb"], fd_jacobian(lambda v: J(L, v), b), **FD_TOL)
    # only the lower triangle is read: the strict upper one has derivative 0
    np.testing.assert_allclose(out["gL"], np.tril(fd_jacobian(lambda m: J(m, b), L)), **FD_TOL)
    Y = lambda a: (long_memory(b, a) ** 2).sum()     # noqa: E731
    np.testing.assert_allclose(out["ga"], (Y(0.6 + H) - Y(0.6 - H)) / (2 * H), **FD_TOL)


GP_MARGINAL_LIKELIHOOD = """use std::math::{exp, log};
use std::ml::{cholesky, solve_triangular_lower};
let x: [f64; N];
let y: [f64; N];
let ell: f64;
let sf: f64;
let sn: f64;
let K[i in 0..N, j in 0..N] = sf * exp(-0.5 * (x[i] - x[j]) * (x[i] - x[j]) / (ell * ell))
    + if i == j { sn } else { 0.0 };
let Lc = cholesky(K);
let alpha = solve_triangular_lower(Lc, y);
let nll = 0.5 * sum[i](alpha[i] * alpha[i]) + sum[i](log(Lc[i, i]));
let g_ell = @nll / @ell;
let g_sf = @nll / @sf;
let g_sn = @nll / @sn;
"""


def gp_nll(x, y, ell, sf, sn):
    K = sf * np.exp(-0.5 * np.subtract.outer(x, x) ** 2 / ell ** 2) + sn * np.eye(len(x))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L, y)
    return 0.5 * alpha @ alpha + np.log(np.diag(L)).sum()


def test_gaussian_process_marginal_likelihood_gradient_through_a_cholesky():
    """std cholesky computes every point of its `if` (the diagonal's sqrt past a row's end is
    sqrt(0) or of a rounding error below 0): the untaken branch's partial (inf, NaN) times the
    0 the branch passes on was NaN. A branch's mask now stays outside the partials."""
    rng = np.random.default_rng(13)
    x = np.sort(rng.random(6) * 3)
    y = np.sin(x) + 0.1 * rng.standard_normal(6)
    par = dict(ell=0.8, sf=1.2, sn=0.1)
    out = einc.load(einc.compile(GP_MARGINAL_LIKELIHOOD).vmfb)(x=x, y=y, **par)
    np.testing.assert_allclose(out["nll"], gp_nll(x, y, **par), rtol=1e-10)
    for name in par:
        up, down = dict(par), dict(par)
        up[name] += H
        down[name] -= H
        fd = (gp_nll(x, y, **up) - gp_nll(x, y, **down)) / (2 * H)
        np.testing.assert_allclose(out[f"g_{name}"], fd, **FD_TOL, err_msg=name)


RK4_FIT = """
let obs: [f64; 21, 2];
let th: [f64; 4];
fn field(u, th) {
    let du[i in 0..2] = if i == 0 { th[0] * u[0] - th[1] * u[0] * u[1] } else { th[2] * u[0] * u[1] - th[3] * u[1] };
    du
}
let dt = 0.1;
let u[0] = [1.0, 0.5];
let u[t in 1..21] = {
    let p = u[t - 1];
    let k1 = field(p, th);
    let k2 = field(p + 0.5 * dt * k1, th);
    let k3 = field(p + 0.5 * dt * k2, th);
    let k4 = field(p + dt * k3, th);
    p + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
};
let loss = sum[t, i]((u[t, i] - obs[t, i]) ** 2);
let dth = @loss / @th;
"""


def lotka_volterra_rk4(th, steps=20, dt=0.1):
    field = lambda u: np.array([th[0] * u[0] - th[1] * u[0] * u[1], th[2] * u[0] * u[1] - th[3] * u[1]])  # noqa: E731
    u = [np.array([1.0, 0.5])]
    for _ in range(steps):
        k1 = field(u[-1])
        k2 = field(u[-1] + 0.5 * dt * k1)
        k3 = field(u[-1] + 0.5 * dt * k2)
        k4 = field(u[-1] + dt * k3)
        u.append(u[-1] + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return np.array(u)


def test_an_ode_parameter_fit_through_runge_kutta_stages(fd_jacobian, tmp_path):
    """Each RK4 stage reads every point of the one before several times. Reverse mode inlined
    the stage tensors once per read, code exponential in the stages (the fit did not build in
    13 minutes); it now inlines each point once and shares it."""
    obs = lotka_volterra_rk4(np.array([1.1, 0.4, 0.3, 0.9]))
    obs += 0.01 * np.random.default_rng(21).standard_normal(obs.shape)
    th = np.array([1.0, 0.5, 0.35, 0.8])
    loss = lambda th: ((lotka_volterra_rk4(th) - obs) ** 2).sum()     # noqa: E731
    path = tmp_path / "rk4.ein"
    path.write_text(RK4_FIT)
    program = driver.front_end(str(path), ["dth"])[1]
    assert len(walk(program.roots())) < 3000     # 2,169 values; a copy per read ran over 5 minutes
    out = einc.load(einc.compile(RK4_FIT, outputs=["loss", "dth"]).vmfb)(obs=obs, th=th)
    np.testing.assert_allclose(out["loss"], loss(th), rtol=1e-12)
    np.testing.assert_allclose(out["dth"], fd_jacobian(loss, th), **FD_TOL)


NEURAL_ODE = """use std::math::tanh;
let x0: [f64; 3, 2];
let target: [f64; 3, 2];
let th: [f64; 6];
let h: f64 = 0.125;
fn field(x) {
    let f[i in 0..2] = tanh(th[2 * i] * x[0] + th[2 * i + 1] * x[1] + th[4 + i]);
    f
}
let z[0] = x0;
let z[s in 1..5, b in 0..3] = {
    let k1 = field(z[s - 1, b]);
    let k2 = field(z[s - 1, b] + 0.5 * h * k1);
    let k3 = field(z[s - 1, b] + 0.5 * h * k2);
    let k4 = field(z[s - 1, b] + h * k3);
    z[s - 1, b] + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
};
let loss = sum[b, i]((z[4, b, i] - target[b, i]) ** 2);
let dth = @loss / @th;
"""


def test_a_gradient_through_runge_kutta_stages_keeps_each_stage_and_its_adjoint_once_a_step(tmp_path):
    """The reverse loop's partials recomputed each RK4 stage's tanh, and the stages' adjoints,
    at every point of every partial and in every sum of th's reads (52 tanh in the program; the
    theta gradient of a neural ODE 16-60x NumPy's). Each stage is now a member of the loop for
    the adjoint: its values a tape computed once over every step (4 tanh in the loop, 4 in the
    tapes), its adjoint a member of the adjoint loop beside z's."""
    path = tmp_path / "node.ein"
    path.write_text(NEURAL_ODE)
    program = driver.front_end(str(path), ["dth"])[1]
    nodes = walk(program.roots())
    assert sum(isinstance(n, Op) and n.op == "tanh" for n in nodes) == 8
    reverse = [g for g in program.recurrences if g.members[0].adjoint_of is not None]
    assert [len(g.members) for g in reverse] == [5]
    rng = np.random.default_rng(31)
    x0, target, th = rng.standard_normal((3, 2)), rng.standard_normal((3, 2)), 0.5 * rng.standard_normal(6)
    out = einc.load(einc.compile(NEURAL_ODE, outputs=["loss", "dth"]).vmfb)(x0=x0, target=target, th=th)
    loss, grad = neural_ode_gradient(x0, target, th)
    np.testing.assert_allclose(out["loss"], loss, rtol=1e-12)
    np.testing.assert_allclose(out["dth"], grad, rtol=1e-10, atol=1e-12)


GATED = """use std::math::tanh;
let x: [f64; 5, 2];
let U: [f64; 2, 2];
let W: [f64; 2, 2];
fn affine(M, v) { let a[i] = tanh(sum[k](M[i, k] * v[k])); a }
let h[0, i in 0..2] = 0.5;
let r[t in 1..5] = affine(U, h[t - 1]);
let h[t in 1..5] = affine(W, r[t] * h[t - 1] + x[t]);
let loss = sum[i](h[4, i] * h[4, i]);
let dW = @loss / @W;
let dU = @loss / @U;
"""


def test_a_step_tensor_reading_a_member_at_its_step_comes_after_it_in_the_adjoint(fd_jacobian):
    """h's step tensor reads the gate r[t] of the same step: as a member of the loop for the
    adjoint, it comes after r (its adjoint before r's), not before every member (a GRU's
    gradient came out wrong)."""
    rng = np.random.default_rng(17)
    x, U, W = rng.standard_normal((5, 2)), rng.standard_normal((2, 2)), rng.standard_normal((2, 2))

    def loss(U, W):
        h = np.full(2, 0.5)
        for t in range(1, 5):
            r = np.tanh(U @ h)
            h = np.tanh(W @ (r * h + x[t]))
        return (h * h).sum()
    out = einc.load(einc.compile(GATED, outputs=["dW", "dU"]).vmfb)(x=x, U=U, W=W)
    np.testing.assert_allclose(out["dW"], fd_jacobian(lambda w: loss(U, w), W), **FD_TOL)
    np.testing.assert_allclose(out["dU"], fd_jacobian(lambda u: loss(u, W), U), **FD_TOL)


CYCLIC_RK3 = """
let x0: [f64; N];
let F: f64;
fn rhs(x) {
    let d[i] = (x[(i + 1) % N] - x[(i + N - 2) % N]) * x[(i + N - 1) % N] - x[i] + F;
    d
}
let x[0] = x0;
let x[t in 1..4] = x[t - 1] + 0.01 * rhs(x[t - 1] + 0.01 * rhs(x[t - 1] + 0.01 * rhs(x[t - 1])));
let e = sum[i](x[3, i] * x[3, i]);
let g = @e / @F;
"""


def test_reads_of_a_cyclic_stencils_stages_at_one_point_share_it(fd_jacobian, tmp_path):
    """Lorenz-96 reads the stage before at `(i + 1) % N`, `(i + N - 1) % N`, ..: a wrap of a wrap
    was a new subscript each time, so each point was inlined once per path to it, exponential in
    the stages (RK4 gave 320 MB of MLIR); `((i + 1) % N + N - 1) % N` is i, one point shared."""
    path = tmp_path / "l96.ein"
    path.write_text(CYCLIC_RK3)
    assert len(walk(driver.front_end(str(path), ["g"])[1].roots())) < 2000     # 1,362; 5,559 before
    x0 = 8.0 + np.random.default_rng(5).standard_normal(6)
    def energy(F):
        rhs = lambda x: (np.roll(x, -1) - np.roll(x, 2)) * np.roll(x, 1) - x + F     # noqa: E731
        x = x0
        for _ in range(3):
            x = x + 0.01 * rhs(x + 0.01 * rhs(x + 0.01 * rhs(x)))
        return (x * x).sum()
    out = einc.load(einc.compile(CYCLIC_RK3, outputs=["e", "g"]).vmfb)(x0=x0, F=np.float64(8.0))
    np.testing.assert_allclose(out["e"], energy(8.0), rtol=1e-12)
    np.testing.assert_allclose(out["g"], fd_jacobian(lambda F: energy(F[0]), np.array([8.0]))[0], **FD_TOL)


def _euler_oscillator(y0, p, steps):
    y = [np.asarray(y0, np.float64)]
    for _ in range(steps):
        v = y[-1]
        y.append(v + 0.1 * np.array([v[1], -p * v[0] - 0.2 * v[1]]))
    return np.array(y)


def test_derivatives_through_an_array_literal_added_to_the_state_slice(run, fd_jacobian):
    """`y[t - 1] + h * [y[t - 1, 1], ..]`: the literal is read by the step's tensor, so it is
    built from the step's slice too (it was E011 'a tensor computed inside a recurrence step may
    read the state only at an earlier step'); both modes against central differences."""
    y0, p = np.array([1.0, -0.3]), 1.7
    out = run("""
        let y0: [f64; 2];
        let p: f64;
        let y[0] = y0;
        let y[t in 1..13] = y[t - 1] + 0.1 * [y[t - 1, 1], -p * y[t - 1, 0] - 0.2 * y[t - 1, 1]];
        let L = sum[t, i](y[t, i] * y[t, i]);
        let gp = @L / @p;
        let gy0 = @L / @y0;
        let Jp = @y / @p;
    """, y0=y0, p=p)
    loss = lambda y0, p: float((_euler_oscillator(y0, p, 12) ** 2).sum())     # noqa: E731
    np.testing.assert_allclose(out["y"], _euler_oscillator(y0, p, 12), rtol=1e-13)
    np.testing.assert_allclose(out["gp"], fd_jacobian(lambda v: loss(y0, v), np.float64(p)), **FD_TOL)
    np.testing.assert_allclose(out["gy0"], fd_jacobian(lambda v: loss(v, p), y0), **FD_TOL)
    np.testing.assert_allclose(out["Jp"], fd_jacobian(lambda v: _euler_oscillator(y0, v, 12), np.float64(p)),
                               **FD_TOL)
