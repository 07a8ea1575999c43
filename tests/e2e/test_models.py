"""Small real models written in Einlang, each against an independent NumPy reference: a Kalman
filter's likelihood gradient (a recurrence whose members have different lengths), a classifier
trained in the language and read out with argmax per sample, gradient descent whose step asks
for a derivative with respect to its own local bindings, and argmax rows as scalars."""
import numpy as np
import pytest

import einc
from einc.driver import emit_program

H = 1e-6                               # central-difference step (f64)
FD_TOL = dict(rtol=1e-6, atol=1e-7)    # f64 central differences are good to ~1e-9 relative

# The local level model: the one-step prediction a[t] of the level, the innovation v[t] and the
# sum of squared innovations (the log-likelihood's data term for a fixed variance).
KALMAN = """let y: [{t}; T];
let s: {t};
let a[0] = 0.0;
let v[t in 0..T] = y[t] - a[t];
let a[t in 1..T + 1] = a[t - 1] + s * v[t - 1];
let L = sum[t in 0..T](v[t] * v[t]);
let d = @L / @s;
let dy = @L / @y;
"""


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


@pytest.mark.parametrize("dims", [None, {"T": 40}], ids=["run-time T", "fixed T"])
def test_kalman_likelihood_gradient_in_f64(dims):
    y, s = nile_like(), 0.35
    out = einc.load(einc.compile(KALMAN.format(t="f64"), dims=dims).vmfb)(y=y, s=s)
    np.testing.assert_allclose(out["L"], kalman_loss(y, s), rtol=1e-12)
    np.testing.assert_allclose(out["d"], central(lambda x: kalman_loss(y, x), s), **FD_TOL)
    np.testing.assert_allclose(out["dy"], central(lambda x: kalman_loss(x, s), y), **FD_TOL)


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
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
