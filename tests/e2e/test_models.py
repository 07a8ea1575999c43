"""Small real models written in Einlang, each against an independent NumPy reference: a Kalman
filter's likelihood gradient (a recurrence whose members have different lengths), a classifier
trained in the language and read out with argmax per sample, gradient descent whose step asks
for a derivative with respect to its own local bindings, and argmax rows as scalars."""
import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from einc.driver import emit_program
from tests.programs import source
from tests.tiers import VULKAN_FULL

H = 1e-6                               # central-difference step (f64)
FD_TOL = dict(rtol=1e-6, atol=1e-7)    # f64 central differences are good to ~1e-9 relative

# The local level model: the one-step prediction a[t] of the level, the innovation v[t] and the
# sum of squared innovations (the log-likelihood's data term for a fixed variance).
KALMAN = source("kalman_local_level").replace("f64", "{t}") + "let dy = @L / @y;\n"


def kalman_loss(y, s):
    a, total = 0.0, 0.0
    for obs in y:
        v = obs - a
        total += v * v
        a = a + s * v
    return total


def nile_like(n=40, seed=21):
    """A level that wanders (a random walk) seen through noise, around 1000 like the Nile's flow,
    scaled to keep the squared innovations moderate."""
    rng = np.random.default_rng(seed)
    level = 10.0 + np.cumsum(rng.standard_normal(n) * 0.4)
    return level + rng.standard_normal(n) * 1.2


def central(f, x):
    x = np.asarray(x, np.float64)
    out = np.zeros(x.shape)
    for p in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[p] = H
        out[p] = (f(x + step) - f(x - step)) / (2 * H)
    return out


@pytest.mark.parametrize("dims", [None, pytest.param({"T": 40}, marks=pytest.mark.full)],   # fixed T: full
                         ids=["run-time T", "fixed T"])
def test_kalman_likelihood_gradient_in_f64(dims):
    y, s = nile_like(), 0.35
    out = einc.load(einc.compile(KALMAN.format(t="f64"), dims=dims).vmfb)(y=y, s=s)
    np.testing.assert_allclose(out["L"], kalman_loss(y, s), rtol=1e-12)
    np.testing.assert_allclose(out["d"], central(lambda x: kalman_loss(y, x), s), **FD_TOL)
    np.testing.assert_allclose(out["dy"], central(lambda x: kalman_loss(x, s), y), **FD_TOL)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_kalman_likelihood_gradient_in_f32(target):
    # vulkan-spirv has no f64: the same model in f32 against the f64 reference of the same data
    y, s = nile_like().astype(np.float32), np.float32(0.35)
    out = einc.load(einc.compile(KALMAN.format(t="f32"), target=target).vmfb)(y=y, s=s)
    y64, s64 = y.astype(np.float64), float(s)
    np.testing.assert_allclose(out["L"], kalman_loss(y64, s64), rtol=1e-4)
    np.testing.assert_allclose(out["d"], central(lambda x: kalman_loss(y64, x), s64), rtol=2e-3)
    np.testing.assert_allclose(out["dy"], central(lambda x: kalman_loss(x, s64), y64), rtol=2e-3, atol=1e-2)


def test_the_adjoint_of_the_shorter_member_covers_only_its_own_steps(tmp_path):
    path = tmp_path / "kalman.ein"
    path.write_text(KALMAN.format(t="f64"))
    ir = emit_program(str(path), "ir", ["d"])
    assert "v_bar[τ in 1..T + 1]" in ir and "a_bar[τ in 0..T + 1]" in ir


# Gradient descent on (2 x0 - 1)^2 + (2 x1 - 1)^2 where each step differentiates with respect to
# its own local bindings x0, x1: they are leaves of the request, not paths through the loop.
LOCAL_DESCENT = """let x[0, i in 0..2] = 0.0;
let x[k in 1..20, i in 0..2] = {
  let x0 = x[k - 1, 0];
  let x1 = x[k - 1, 1];
  let loss = (2.0 * x0 - 1.0) * (2.0 * x0 - 1.0) + (2.0 * x1 - 1.0) * (2.0 * x1 - 1.0);
  let g0 = @loss / @x0;
  let g1 = @loss / @x1;
  if i == 0 { x0 - 0.2 * g0 } else { x1 - 0.2 * g1 }
};
let r[k in 0..6, j in 0..3] = X[j] * 0.5;
let r[k in 6..12, j in 0..3] = {
  let w = r[k - 1, j] * X[j];
  let total = sum[i in 0..3](r[k - 1, i] * r[k - 1, i]) + w * w * w;
  r[k - 1, j] - 0.05 * (@total / @w)
};
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_derivative_with_respect_to_a_local_binding_of_a_recurrence_step(target):
    X = np.array([0.7, -1.1, 0.4], np.float32)
    out = einc.load(einc.compile("let X: [f32; 3];\n" + LOCAL_DESCENT, target=target).vmfb)(X=X)
    x = np.zeros((20, 2))
    for k in range(1, 20):
        x[k] = x[k - 1] - 0.2 * 4 * (2 * x[k - 1] - 1)
    np.testing.assert_allclose(out["x"], x, rtol=1e-5, atol=1e-6)
    r = np.zeros((12, 3))
    r[:6] = X.astype(np.float64) * 0.5
    for k in range(6, 12):
        w = r[k - 1] * X
        r[k] = r[k - 1] - 0.05 * 3 * w * w
    np.testing.assert_allclose(out["r"], r, rtol=1e-5, atol=1e-6)


def test_a_derivative_with_respect_to_a_parameter_the_recurrence_reads_is_still_refused():
    # h's earlier steps depend on W: that would be a derivative through the recurrence
    source = """let W: [f32; 2];
let h[0] = 1.0;
let h[t in 1..5] = { let loss = h[t - 1] * W[0]; h[t - 1] - 0.1 * (@loss / @W)[0] };
"""
    with pytest.raises(CompileError) as info:
        einc.compile(source)
    assert "E011" in str(info.value) and "derivatives through recurrences" in str(info.value)


# The program: argmax of each row of a tensor computed from a recurrence's last step.
ROW_ARGMAX = """use std::array::argmax;
let X: [f32; 4, 8];
let W[0, i in 0..8, j in 0..3] = 0.0;
let W[s in 1..5, i in 0..8, j in 0..3] = W[s - 1, i, j] + X[s - 1, i] * (j + 1) as f32 - X[s - 1, 7 - i];
let F[n in 0..4, j in 0..3] = sum[i in 0..8](X[n, i] * W[4, i, j]);
let p = [argmax(F[n]) | n in 0..4];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_argmax_of_the_rows_of_a_tensor_from_a_recurrence(target):
    X = np.random.default_rng(4).standard_normal((4, 8)).astype(np.float32)
    out = einc.load(einc.compile(ROW_ARGMAX, target=target).vmfb)(X=X)
    W = np.zeros((8, 3))
    for s in range(1, 5):
        W = W + X[s - 1][:, None] * np.arange(1, 4) - X[s - 1, ::-1][:, None]
    F = X.astype(np.float64) @ W
    np.testing.assert_allclose(out["F"], F, rtol=1e-5, atol=1e-5)
    assert (np.sort(F, 1)[:, -1] - np.sort(F, 1)[:, -2] > 1e-3).all()     # no near ties
    np.testing.assert_array_equal(out["p"], F.argmax(1))


# Minibatch SGD of a linear softmax classifier: step k trains on rows (k - 1) B .. k B - 1 (mod
# N) through batch tensors that read the step index, then every sample is classified by argmax.
SGD = """use std::math::{exp, log};
use std::array::argmax;
let X: [f32; N, D];
let labels: [i32; N];
let B = 12;
let K = 40;
let lr = 0.5;
fn batch_loss(Xb, lb, W) {
    let z[n, c] = sum[i](Xb[n, i] * W[i, c]);
    let top[n] = max[c](z[n, c]);
    let lse[n] = top[n] + log(sum[c](exp(z[n, c] - top[n])));
    sum[n](lse[n] - z[n, lb[n]]) / (len(lb) as f32)
}
let W[0, i in 0..D, c in 0..3] = 0.0;
let W[k in 1..K, i in 0..D, c in 0..3] = W[k - 1, i, c] - lr * {
    let Xb[b in 0..B, j in 0..D] = X[((k - 1) * B + b) % N, j];
    let lb[b in 0..B] = labels[((k - 1) * B + b) % N];
    let L = batch_loss(Xb, lb, W[k - 1]);
    (@L / @W[k - 1])[i, c]
};
let F[n, c] = sum[i](X[n, i] * W[K - 1, i, c]);
let predicted = [argmax(F[n]) | n in 0..N];
let predicted_per_point[n] = argmax(F[n]);
"""


def blobs(n=60, d=5, seed=5):
    """Three Gaussian clusters in d - 1 dimensions, plus a constant 1 feature (the bias)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n).astype(np.int32)
    centers = rng.standard_normal((3, d - 1)) * 2.5
    X = np.hstack([centers[labels] + rng.standard_normal((n, d - 1)), np.ones((n, 1))])
    return X.astype(np.float32), labels


def numpy_sgd(X, labels, steps=40, batch=12, lr=0.5):
    W = np.zeros((X.shape[1], 3))
    trajectory = [W]
    for k in range(1, steps):
        rows = ((k - 1) * batch + np.arange(batch)) % len(X)
        z = X[rows] @ W
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        p[np.arange(batch), labels[rows]] -= 1
        W = W - lr * X[rows].T @ p / batch
        trajectory.append(W)
    return np.array(trajectory)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_minibatch_sgd_of_a_softmax_classifier_then_argmax_per_sample(target):
    X, labels = blobs()
    out = einc.load(einc.compile(SGD, target=target).vmfb)(X=X, labels=labels)
    trajectory = numpy_sgd(X.astype(np.float64), labels)
    np.testing.assert_allclose(out["W"], trajectory, rtol=0, atol=1e-5)
    F = X.astype(np.float64) @ trajectory[-1]
    assert (np.sort(F, 1)[:, -1] - np.sort(F, 1)[:, -2] > 1e-3).all()     # no near ties
    np.testing.assert_array_equal(out["predicted"], F.argmax(1))
    np.testing.assert_array_equal(out["predicted_per_point"], F.argmax(1))
    assert (F.argmax(1) == labels).mean() > 0.9                          # it did learn


# A step-work tensor reading the step index directly (X[k, j] beside the slice w = W[k - 1]).
STEP_INDEX = """let X: [f32; 10, 3];
let W[0, i in 0..3] = 0.5;
let W[k in 1..10, i in 0..3] = W[k - 1, i] - 0.1 * {
    let w = W[k - 1];
    let L = sum[j in 0..3](X[k, j] * w[j]) * sum[j in 0..3](X[k, j] * w[j]);
    (@L / @w)[i]
};
"""


def test_a_gradient_in_a_step_that_reads_the_input_at_the_step():
    X = np.random.default_rng(3).standard_normal((10, 3)).astype(np.float32)
    out = einc.load(einc.compile(STEP_INDEX).vmfb)(X=X)
    W = [np.full(3, 0.5)]
    for k in range(1, 10):
        x = X[k].astype(np.float64)
        W.append(W[-1] - 0.1 * 2 * (x @ W[-1]) * x)
    np.testing.assert_allclose(out["W"], np.array(W), rtol=1e-5, atol=1e-6)


ARGMAX_ROWS = """use std::array::{argmax, argmin};
let L: [f32; N, 5];
let p[n in 0..N] = argmax(L[n]);
let q[n] = argmin(L[n]) * 2 + argmax(L[n]);
let c[n] = if argmax(L[n]) == 2 { L[n, 2] } else { 0.0 };
let x[0, i in 0..3] = L[0, i];
let x[t in 1..6, i in 0..3] = x[t - 1, i] * 0.5 + L[t, i] + argmax(x[t - 1]) as f32;
let w[t in 0..6] = argmax(x[t]);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_argmax_of_a_row_is_a_scalar_in_a_definition(target):
    L = np.random.default_rng(6).standard_normal((10, 5)).astype(np.float32)
    out = einc.load(einc.compile(ARGMAX_ROWS, target=target).vmfb)(L=L)
    np.testing.assert_array_equal(out["p"], L.argmax(1))
    np.testing.assert_array_equal(out["q"], L.argmin(1) * 2 + L.argmax(1))
    np.testing.assert_array_equal(out["c"], np.where(L.argmax(1) == 2, L[:, 2], 0))
    x = np.zeros((6, 3), np.float32)
    x[0] = L[0, :3]
    for t in range(1, 6):
        x[t] = x[t - 1] * np.float32(0.5) + L[t, :3] + np.float32(x[t - 1].argmax())
    np.testing.assert_allclose(out["x"], x, rtol=1e-6)
    np.testing.assert_array_equal(out["w"], x.argmax(1))
