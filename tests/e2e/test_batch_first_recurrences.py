"""Recurrences written with a batch axis before the step axis (`let a[b, t in 1..T] = .. a[b, t - 1]
..`): every read of a member is at the clause's own point along the leading axes and steps back
along a later one, so that axis is the step and the leading ones are batch axes (step_axis).
Checked against NumPy loops: two members reading each other, a row fold on llvm-cpu and
vulkan-spirv, a fold in a function called per point, and a gradient and a Jacobian through a
batch-first recurrence against finite differences, and members of different ranks (a state
`x[s, t, i]` and a control `u[s, t]` reading each other)."""
import numpy as np
import pytest

import einc
from einc.driver import emit_program

TWO_MEMBERS = """let y: [f64; B, T];
let a[b in 0..B, 0] = 0.0;
let c[b in 0..B, t in 0..T] = a[b, t] + y[b, t];
let a[b in 0..B, t in 1..T] = 0.5 * c[b, t - 1];
let last[b in 0..B] = c[b, T - 1];
"""

ROW_FOLD = """let x2: [f32; 2, 4];
fn row_sq(row: [f32; 4]) { row * row }
fn row_fold(m: [f32; 2, 4]) -> [f32; 2] { let a[i, 0] = m[i, 0]; let a[i, k in 1..4] = min(a[i, k - 1], m[i, k]); [a[i, 4 - 1] | i in 0..2] }
let r = row_fold([v | i in 0..2, v = row_sq(x2[i])]);
"""

PER_POINT = """let m: [f32; 2, 3, 5];
fn rows(x: [f32; 3, 5]) -> [f32; 3, 5] { let a[i in 0..3, 0] = x[i, 0]; let a[i in 0..3, k in 1..5] = a[i, k - 1] * 0.5 + x[i, k]; a }
let r[b in 0..2] = rows(m[b])[1, 4];
"""

GRADIENT = """use std::math::tanh;
let w: [f64; B];
let x: [f64; B, T];
let h[b in 0..B, 0] = x[b, 0];
let g[b in 0..B, t in 0..T] = w[b] * h[b, t];
let h[b in 0..B, t in 1..T] = tanh(g[b, t - 1] + x[b, t]);
let loss = sum[b, t](h[b, t] * h[b, t]) / 2.0;
let grad_w = @loss / @w;
let dh = @h / @w;
"""

MIXED_RANKS = """let x0: [f64; S, 2];
let x[s in 0..S, 0, i in 0..2] = x0[s, i];
let u[s in 0..S, t in 0..5] = -sum[i](x[s, t, i]);
let x[s in 0..S, t in 1..6, i in 0..2] = 0.9 * x[s, t - 1, i] + u[s, t - 1];
"""


def two_members(y):
    a, c = np.zeros_like(y), np.zeros_like(y)
    for t in range(y.shape[1]):
        if t:
            a[:, t] = 0.5 * c[:, t - 1]
        c[:, t] = a[:, t] + y[:, t]
    return {"a": a, "c": c, "last": c[:, -1]}


def states(w, x):
    h = np.empty_like(x)
    h[:, 0] = x[:, 0]
    for t in range(1, x.shape[1]):
        h[:, t] = np.tanh(w * h[:, t - 1] + x[:, t])
    return h


def test_two_members_read_each_other_along_the_later_axis(tmp_path):
    y = np.random.default_rng(3).standard_normal((3, 7))
    out = einc.load(einc.compile(TWO_MEMBERS).vmfb)(y=y)
    for name, expected in two_members(y).items():
        np.testing.assert_allclose(out[name], expected, rtol=1e-12, err_msg=name)
    path = tmp_path / "p.ein"
    path.write_text(TWO_MEMBERS)
    assert "axis: t (axis 1 as written, after batch axes" in emit_program(str(path), "explain")


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
def test_a_row_fold_steps_along_the_row(target):
    x2 = np.random.default_rng(4).standard_normal((2, 4)).astype(np.float32)
    out = einc.load(einc.compile(ROW_FOLD, target=target).vmfb)(x2=x2)
    np.testing.assert_allclose(out["r"], (x2 * x2).min(axis=1), rtol=1e-6)


def test_a_batch_first_recurrence_in_a_function_called_per_point():
    m = np.random.default_rng(6).standard_normal((2, 3, 5)).astype(np.float32)
    a = m.copy()
    for k in range(1, 5):
        a[..., k] = a[..., k - 1] * 0.5 + m[..., k]
    out = einc.load(einc.compile(PER_POINT).vmfb)(m=m)
    np.testing.assert_allclose(out["r"], a[:, 1, 4], rtol=1e-6)


def test_gradient_and_jacobian_through_a_batch_first_recurrence(fd_jacobian):
    rng = np.random.default_rng(5)
    w, x = rng.standard_normal(3) * 0.7, rng.standard_normal((3, 6))
    out = einc.load(einc.compile(GRADIENT).vmfb)(w=w, x=x)
    loss = lambda w: (states(w, x) ** 2).sum() / 2
    np.testing.assert_allclose(out["loss"], loss(w), rtol=1e-12)
    np.testing.assert_allclose(out["grad_w"], fd_jacobian(loss, w), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(out["dh"], fd_jacobian(lambda w: states(w, x), w), rtol=1e-6, atol=1e-8)


def test_members_of_different_ranks_step_along_the_same_later_axis():
    x0 = np.random.default_rng(7).standard_normal((3, 2))
    x, u = [x0], []
    for _ in range(5):
        u.append(-x[-1].sum(1))
        x.append(0.9 * x[-1] + u[-1][:, None])
    out = einc.load(einc.compile(MIXED_RANKS).vmfb)(x0=x0)
    np.testing.assert_allclose(out["x"], np.stack(x, 1), rtol=1e-12)
    np.testing.assert_allclose(out["u"], np.stack(u, 1), rtol=1e-12)
