"""A gradient asked for per point of an enclosing definition or reduction (LANGUAGE.md section 5),
`jax.vmap(jax.grad(..))`: per-example gradients, their norms and clipping, a sum of microbatch
gradients, one gradient per sequence through a recurrence. Each checked against a NumPy
gradient written out by hand (or central differences in f64), and the IR checked to hold no
tensor quadratic in the number of points (each point's adjoint stays on its own row)."""
import re

import numpy as np
import pytest

import einc
from einc.driver import emit_program

TOL = dict(rtol=2e-5, atol=2e-6)        # f32 against NumPy in f64

MLP = """use std::math::{tanh, sqrt};
let X: [f32; N, D];
let y: [f32; N];
let W: [f32; H, D];
let v: [f32; H];
fn loss(x, t, W, v) {
    let h[j] = tanh(sum[i](W[j, i] * x[i]));
    let p = sum[j](v[j] * h[j]);
    (p - t) * (p - t)
}
let gW[n in 0..N, j, i] = { let l = loss(X[n], y[n], W, v); (@l / @W)[j, i] };
let gv[n in 0..N, j] = { let l = loss(X[n], y[n], W, v); (@l / @v)[j] };
let norm[n in 0..N] = sqrt(sum[j, i](gW[n, j, i] * gW[n, j, i]) + sum[j](gv[n, j] * gv[n, j]));
let clipped[j, i] = sum[n](gW[n, j, i] / max(1.0, norm[n])) / (N as f32);
"""


def mlp_reference(X, y, W, v):
    h = np.tanh(X @ W.T)
    r = 2 * (h @ v - y)
    gW = (r[:, None] * v[None, :] * (1 - h ** 2))[:, :, None] * X[:, None, :]
    gv = r[:, None] * h
    norm = np.sqrt((gW ** 2).sum((1, 2)) + (gv ** 2).sum(1))
    return dict(gW=gW, gv=gv, norm=norm, clipped=(gW / np.maximum(1, norm)[:, None, None]).mean(0))


def test_per_example_gradients_their_norms_and_clipping():
    rng = np.random.default_rng(1)
    N, D, H = 24, 5, 7
    inputs = dict(X=rng.standard_normal((N, D)), y=rng.standard_normal(N),
                  W=rng.standard_normal((H, D)) * 0.5, v=rng.standard_normal(H))
    inputs = {k: a.astype(np.float32) for k, a in inputs.items()}
    out = einc.load(einc.compile(MLP))(**inputs)
    ref = mlp_reference(*(inputs[k].astype(np.float64) for k in ("X", "y", "W", "v")))
    for name, want in ref.items():
        np.testing.assert_allclose(out[name], want, **TOL, err_msg=name)


def test_per_example_adjoints_stay_on_their_own_row(tmp_path):
    """Every tensor of the gradients has at most one axis of N: a point's adjoint written over
    the whole batch (a one-hot along N, as the first compiled form had) would be N x N."""
    path = tmp_path / "mlp.ein"
    path.write_text(MLP.replace("[f32; N, D]", "[f32; 24, 5]").replace("[f32; N]", "[f32; 24]")
                    .replace("[f32; H, D]", "[f32; 7, 5]").replace("[f32; H]", "[f32; 7]")
                    .replace("0..N", "0..24").replace("(N as f32)", "24.0"))
    ir = emit_program(str(path), "ir", None)
    shapes = re.findall(r"f32\[([0-9, ]+)\]", ir)
    assert shapes and all(s.split(", ").count("24") <= 1 for s in shapes), ir


def test_a_sum_of_microbatch_gradients_with_the_range_written():
    """`sum[mb in 0..M](grad(X[mb], w)[d])`: a wrong value before (each microbatch's gradient
    summed over every microbatch's rows, M times too large)."""
    rng = np.random.default_rng(0)
    M, B, D = 4, 5, 3
    X = rng.standard_normal((M, B, D)).astype(np.float32)
    w = rng.standard_normal(D).astype(np.float32)
    out = einc.load(einc.compile("""
        let X: [f32; M, B, D];
        let w: [f32; D];
        fn grad(X, w) { let r[n] = sum[d](X[n, d] * w[d]); let L = sum[n](r[n] * r[n]); @L / @w }
        let g[d] = sum[mb in 0..M](grad(X[mb], w)[d]);
        let each[m in 0..M, d] = grad(X[m], w)[d];
    """))(X=X, w=w)
    Xd, wd = X.astype(np.float64), w.astype(np.float64)
    each = np.stack([2 * Xd[m].T @ (Xd[m] @ wd) for m in range(M)])
    np.testing.assert_allclose(out["each"], each, **TOL)
    np.testing.assert_allclose(out["g"], each.sum(0), **TOL)


def test_a_gradient_per_sequence_through_a_recurrence():
    """The loss of each row runs a recurrence over time (batched over the rows); its adjoint loop
    runs batched too, each row's on its own (a lowering failure before: "not iterated by the
    enclosing kernel")."""
    rng = np.random.default_rng(2)
    N, T = 6, 9
    X = rng.standard_normal((N, T))
    a = 0.7
    out = einc.load(einc.compile("""use std::math::tanh;
        let X: [f64; N, T];
        let a: f64;
        fn loss(x, a) {
            let h[0] = 0.0;
            let h[t in 1..T] = tanh(a * h[t - 1] + x[t]);
            sum[t](h[t] * h[t])
        }
        let g[n in 0..N] = { let l = loss(X[n], a); @l / @a };
    """))(X=X, a=np.float64(a))

    def loss(x, a):
        h, s = 0.0, 0.0
        for t in range(1, T):
            h = np.tanh(a * h + x[t])
            s += h * h
        return s
    step = 1e-6
    want = [(loss(X[n], a + step) - loss(X[n], a - step)) / (2 * step) for n in range(N)]
    np.testing.assert_allclose(out["g"], want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
def test_per_example_gradients_on_every_target(target):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8, 3)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    out = einc.load(einc.compile("""
        let X: [f32; 8, 3];
        let w: [f32; 3];
        fn loss(x, w) { let p = sum[d](x[d] * w[d]); (p - 1.0) * (p - 1.0) }
        let g[n in 0..8, d] = { let l = loss(X[n], w); (@l / @w)[d] };
    """, target=target), device="vulkan" if target == "vulkan-spirv" else None)(X=X, w=w)
    p = X.astype(np.float64) @ w
    np.testing.assert_allclose(out["g"], 2 * (p - 1.0)[:, None] * X, **TOL)


ROWS = """use std::math::tanh;
let m: [f64; 5, 3];
let X: [f64; 4, 6];
fn f(x) { [x[0] * x[1], x[1] + x[0] * x[0]] }
fn det_j(m, t) { let r = m[t]; let y = f(r); let J = @y / @r; J[0, 0] * J[1, 1] - J[0, 1] * J[1, 0] }
let det[t in 0..5] = det_j(m, t);
fn mixed(m, t) { let r = m[t]; let h[j] = tanh(r[j]) * r[0]; let J = @h / @r; J[1, 0] + J[2, 2] }
let jac[t in 0..5] = mixed(m, t);
fn grad_row(m, t) { let r = m[t]; let l = sum[j](r[j] * r[j] * m[t, 0]); @l / @r }
let g[t in 0..5, j] = grad_row(m, t)[j];
fn loss(x) {
    let h[0] = 0.0;
    let h[t in 1..6] = h[t - 1] * 0.5 + x[t] * x[t];
    sum[t](h[t])
}
let saliency[n in 0..4, t] = { let r = X[n]; let l = loss(r); (@l / @r)[t] };
"""


def test_derivatives_with_respect_to_a_points_row():
    """`@y / @r` with `r = m[t]` per point t: a Jacobian (its determinant per row), a Jacobian of
    a row-valued y, a gradient that also reads the row directly (`m[t, 0]` counts: every read of
    the row does), and a gradient by a row a recurrence reads (by the whole array per point, read
    at the row). E011 before ("a derivative whose tensors depend on `t`")."""
    rng = np.random.default_rng(4)
    m, X = rng.standard_normal((5, 3)), rng.standard_normal((4, 6))
    out = einc.load(einc.compile(ROWS))(m=m, X=X)
    x0, x1, x2 = m[:, 0], m[:, 1], m[:, 2]
    np.testing.assert_allclose(out["det"], x1 * 1.0 - x0 * 2 * x0, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(out["jac"], np.tanh(x1) + (1 - np.tanh(x2) ** 2) * x0, rtol=1e-13, atol=1e-14)
    g = 2 * m * x0[:, None]
    g[:, 0] += (m * m).sum(1)
    np.testing.assert_allclose(out["g"], g, rtol=1e-13, atol=1e-14)
    decay = np.array([0.0] + [sum(0.5 ** (s - t) for s in range(t, 6)) for t in range(1, 6)])
    np.testing.assert_allclose(out["saliency"], 2 * X * decay, rtol=1e-13, atol=1e-14)


def test_a_gradient_per_example_through_a_max_of_a_piecewise_definition():
    """The loss is the max of a definition written as two guarded clauses (batched over the
    examples with its clauses); its gradient reads it (the max's argmax), so the derivative's
    graph holds it. E011 before: a piecewise definition under the derivative was taken to read the
    enclosing index though its batched clauses run over it themselves."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((6, 4))
    p = rng.standard_normal(2)
    out = einc.load(einc.compile("""
        let X: [f64; 6, 4];
        let p: [f64; 2];
        fn loss(x, q) {
            let w[k] = x[k] * q[0] + q[1] * x[k] * x[k];
            let u[k] = w[k] where k % 2 == 0;
            let u[k] = -w[k] where k % 2 == 1;
            max[k](u[k])
        }
        let g[n in 0..6, j] = { let l = loss(X[n], p); (@l / @p)[j] };
        let total[j] = sum[n in 0..6]({ let l = loss(X[n], p); (@l / @p)[j] });
    """))(X=X, p=p)
    sign = np.where(np.arange(4) % 2 == 0, 1.0, -1.0)
    at = np.argmax(sign * (X * p[0] + p[1] * X * X), axis=1)
    x = X[np.arange(6), at]
    want = sign[at][:, None] * np.stack([x, x * x], axis=1)
    np.testing.assert_allclose(out["g"], want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(out["total"], want.sum(0), rtol=1e-13, atol=1e-14)


def test_a_gradient_per_row_through_a_recurrence_over_a_tensor_of_the_row():
    """The loss's recurrence folds a tensor computed from the row (`w = tanh(row + p[0])`, batched
    over the rows), so the gradient by p reads the recurrence's batch index: that index was taken
    for one of the recurrence's own, the gradient left unbatched, and the lowering failed ("index
    variable i .. is not iterated by the enclosing kernel"; fuzz seed 42002 program 115)."""
    rng = np.random.default_rng(0)
    x2, p = rng.standard_normal((6, 5)), rng.standard_normal(4)
    out = einc.load(einc.compile("""use std::math::tanh;
        let x2: [f64; 6, N];
        let p: [f64; 4];
        fn row_f(row: [f64; N], prm: [f64; 4]) { tanh(row + prm[0]) }
        fn loss(x, q) { let w = row_f(x, q); let a[0] = w[0]; let a[k in 1..N] = min(a[k - 1], w[k]); a[N - 1] }
        let g[i in 0..6, j] = { let l = loss(x2[i], p); (@l / @p)[j] };
    """))(x2=x2, p=p)
    w = np.tanh(x2 + p[0])
    want = np.zeros((6, 4))
    want[:, 0] = 1 - w.min(1) ** 2
    np.testing.assert_allclose(out["g"], want, rtol=1e-12, atol=1e-14)


def test_a_gradient_per_point_by_a_scalar_a_step_tensor_reads():
    """A hypergradient through an unrolled solver per point of a grid: the step's value is an
    array (`[0.5 * w[k - 1, j] + a | j in 0..2]`, a tensor the step computes), batched over the
    grid index, and reads a, the grid's point. Inlining that tensor at its point rebuilt the read
    of a, which the derivative knows by identity, so the gradient was silently 0 at every point
    (found by the hold-out program unrolled_hypergrad)."""
    out = einc.load(einc.compile("""
        fn fit(a) {
            let w[0, j in 0..2] = 0.0;
            let w[k in 1..5] = [0.5 * w[k - 1, j] + a * (j as f64 + 1.0) | j in 0..2];
            w[4]
        }
        fn hyper(a) { let w = fit(a); let v = w[0] * w[0] + w[1]; @v / @a }
        let grid[g in 0..3] = 0.5 * (g as f64) - 0.25;
        let slope[g in 0..3] = hyper(grid[g]);
    """).vmfb)()
    # w[4, j] = a (j + 1) (1 + 1/2 + 1/4 + 1/8): v = (c a)^2 + 2 c a, c = 15/8
    c, a = 15 / 8, 0.5 * np.arange(3) - 0.25
    np.testing.assert_allclose(out["slope"], 2 * c * c * a + 2 * c, rtol=1e-14)
