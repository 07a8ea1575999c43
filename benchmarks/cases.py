"""The recurrence benchmark cases (issue 3): an Einlang program, its inputs, a NumPy/Python loop
and a JAX `lax.scan` version of the same computation, and how to compare results.

Each case is a function of its size, so the runner can check einc against the NumPy loop at a
size where the loop is affordable and time both at the sizes the issue names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from tests.programs import source
from tests.programs.neural_ode import neural_ode_gradient


@dataclass
class Case:
    """Sizes are the case's own parameter n (steps, or a string length); `steps(n)` converts."""
    name: str
    unit: str                                    # what one step is ("step", "cell")
    n: int                                       # the timed size
    source: Callable[[int], str]                 # n -> the Einlang program
    inputs: Callable[[int], dict]                # n -> named NumPy inputs
    output: str                                  # the einc output compared with the references
    numpy: Callable[[int, dict], object]         # (n, inputs) -> the output, by a Python loop
    jax: Callable[[], Callable[[int, dict], object]]   # () -> (n, inputs) -> the output (imports jax)
    tolerance: dict                              # assert_allclose keywords; {} means bit-exact
    steps: Callable[[int], int] = lambda n: n
    check_n: Optional[int] = None                # check einc against NumPy at this size (default n)
    numpy_n: Optional[int] = None                # time the NumPy loop at this size and scale per step
    group: str = "recurrence"                    # which table the case's row goes in
    vulkan_n: Optional[int] = None               # a smaller timed size on Vulkan, where lavapipe
                                                 # runs a vector step's workgroup on the CPU slowly
    unchecked_indices: bool = False              # built with --unchecked-indices (no index checks)
    fixed_dims: Optional[dict] = None            # named dims: also timed built with these --dim sizes


# ------------------------------------------------------------------------------ logistic map

def logistic_source(steps: int) -> str:
    return f"""
        let x0: f32;
        let x[0] = x0;
        let x[t in 1..{steps}] = 3.7 * x[t - 1] * (1.0 - x[t - 1]);
        let last = x[{steps - 1}];
    """


def logistic_numpy(n: int, inputs: dict) -> np.float32:
    x, r, one = inputs["x0"], np.float32(3.7), np.float32(1.0)
    for _ in range(n - 1):
        x = r * x * (one - x)
    return x


def logistic_jax():
    import jax
    import jax.numpy as jnp

    def run(x0, n):
        def step(x, _):
            return jnp.float32(3.7) * x * (jnp.float32(1.0) - x), None
        return jax.lax.scan(step, x0, None, length=n - 1)[0]
    compiled = jax.jit(run, static_argnums=1)
    return lambda n, inputs: compiled(inputs["x0"], n)


# ------------------------------------------------------------------------------ Kalman filter

# A constant-velocity model: state (position, velocity), one noisy position measurement a step.
# (`as f64` because a literal inside `if` does not yet take its type from the sibling clauses.)
KALMAN = """
    let y: [f64; T];
    let F: [f64; 2, 2];
    let Q: [f64; 2, 2];
    let r: f64;
    let x[0, i in 0..2] = if i == 0 { y[0] } else { 0.0 as f64 };
    let P[0, i in 0..2, j in 0..2] = if i == j { 1.0 as f64 } else { 0.0 as f64 };
    let x_pred[t in 1..T, i in 0..2] = sum[k](F[i, k] * x[t - 1, k]);
    let FP[t in 1..T, i in 0..2, l in 0..2] = sum[k](F[i, k] * P[t - 1, k, l]);
    let P_pred[t in 1..T, i in 0..2, j in 0..2] = sum[l](FP[t, i, l] * F[j, l]) + Q[i, j];
    let S[t in 1..T] = P_pred[t, 0, 0] + r;
    let K[t in 1..T, i in 0..2] = P_pred[t, i, 0] / S[t];
    let x[t in 1..T, i in 0..2] = x_pred[t, i] + K[t, i] * (y[t] - x_pred[t, 0]);
    let P[t in 1..T, i in 0..2, j in 0..2] = P_pred[t, i, j] - K[t, i] * P_pred[t, 0, j];
"""


def kalman_inputs(n: int) -> dict:
    rng = np.random.default_rng(1)
    truth = np.cumsum(np.full(n, 0.01)) + np.cumsum(rng.standard_normal(n) * 0.001)
    return {"y": truth + rng.standard_normal(n) * 0.5,
            "F": np.array([[1.0, 1.0], [0.0, 1.0]]),
            "Q": np.array([[1e-4, 0.0], [0.0, 1e-5]]),
            "r": np.float64(0.25)}


def kalman_numpy(n: int, inputs: dict) -> np.ndarray:
    y, F, Q, r = (inputs[k][:n] if k == "y" else inputs[k] for k in ("y", "F", "Q", "r"))
    x = np.zeros((n, 2))
    x[0] = [y[0], 0.0]
    P = np.eye(2)
    for t in range(1, n):
        xp = F @ x[t - 1]
        Pp = F @ P @ F.T + Q
        K = Pp[:, 0] / (Pp[0, 0] + r)
        x[t] = xp + K * (y[t] - xp[0])
        P = Pp - np.outer(K, Pp[0])
    return x


def kalman_scan(y, F, Q, r):
    """The filter of `kalman_numpy` on one series as a JAX `lax.scan` (jit it, or vmap it)."""
    import jax
    import jax.numpy as jnp

    def step(carry, yt):
        x, P = carry
        xp = F @ x
        Pp = F @ P @ F.T + Q
        K = Pp[:, 0] / (Pp[0, 0] + r)
        xn = xp + K * (yt - xp[0])
        return (xn, Pp - jnp.outer(K, Pp[0])), xn
    x0 = jnp.stack([y[0], jnp.zeros((), y.dtype)])
    rest = jax.lax.scan(step, (x0, jnp.eye(2, dtype=y.dtype)), y[1:])[1]
    return jnp.concatenate([x0[None], rest])


def kalman_jax():
    import jax
    compiled = jax.jit(kalman_scan)
    return lambda n, inputs: compiled(**inputs)


# ------------------------------------------------------------------------------ local linear trend

# Level and slope, five scalar members (issue 24): written as people write a filter, member by
# member, not as a 2-vector state.
KALMAN_TREND = source("kalman_local_trend")


def trend_inputs(n: int) -> dict:
    rng = np.random.default_rng(4)
    slope = 0.02 + np.cumsum(rng.standard_normal(n) * 1e-3)
    return {"y": np.cumsum(slope) + rng.standard_normal(n) * 0.5,
            "q_level": np.float64(1e-3), "q_slope": np.float64(1e-5), "r": np.float64(0.25)}


def trend_numpy(n: int, inputs: dict) -> np.ndarray:
    y, q_level, q_slope, r = (inputs[k] for k in ("y", "q_level", "q_slope", "r"))
    out = np.empty(n)
    m, b, p00, p01, p11 = y[0], 0.0, 1.0, 0.0, 1.0
    out[0] = m
    for t in range(1, n):
        pp00, pp01, pp11 = p00 + 2.0 * p01 + p11 + q_level, p01 + p11, p11 + q_slope
        k0, k1 = pp00 / (pp00 + r), pp01 / (pp00 + r)
        e = y[t] - (m + b)
        m, b = m + b + k0 * e, b + k1 * e
        p00, p01, p11 = pp00 - k0 * pp00, pp01 - k0 * pp01, pp11 - k1 * pp01
        out[t] = m
    return out


def trend_jax():
    import jax

    def run(y, q_level, q_slope, r):
        def step(carry, yt):
            m, b, p00, p01, p11 = carry
            pp00, pp01, pp11 = p00 + 2.0 * p01 + p11 + q_level, p01 + p11, p11 + q_slope
            k0, k1 = pp00 / (pp00 + r), pp01 / (pp00 + r)
            e = yt - (m + b)
            m = m + b + k0 * e
            return (m, b + k1 * e, pp00 - k0 * pp00, pp01 - k0 * pp01, pp11 - k1 * pp01), m
        zero, one = jax.numpy.zeros((), y.dtype), jax.numpy.ones((), y.dtype)
        rest = jax.lax.scan(step, (y[0], zero, one, zero, one), y[1:])[1]
        return jax.numpy.concatenate([y[:1], rest])
    compiled = jax.jit(run)
    return lambda n, inputs: compiled(**inputs)


# ------------------------------------------------------------------------------ RNN

RNN = source("rnn")


def rnn_inputs(n: int, hidden: int = 64) -> dict:
    rng = np.random.default_rng(2)
    return {"W": (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32),
            "x": rng.standard_normal((n, hidden)).astype(np.float32)}


def rnn_numpy(n: int, inputs: dict) -> np.ndarray:
    W, x = inputs["W"], inputs["x"]
    h = np.zeros(W.shape[0], np.float32)
    for t in range(1, n):
        h = np.tanh(W @ h + x[t])
    return h


def rnn_jax():
    import jax
    import jax.numpy as jnp

    def run(W, x):
        def step(h, xt):
            return jnp.tanh(W @ h + xt), None
        return jax.lax.scan(step, jnp.zeros(W.shape[0], W.dtype), x[1:])[0]
    compiled = jax.jit(run)
    return lambda n, inputs: compiled(**inputs)


# ------------------------------------------------------------------------------ RNN gradient

RNN_GRADIENT = source("rnn_gradient")


def rnn_gradient_numpy(n: int, inputs: dict) -> np.ndarray:
    """Backpropagation through time, by hand: the forward states kept, then one reverse loop."""
    W, x = inputs["W"], inputs["x"]
    h = np.zeros((n, W.shape[0]), np.float32)
    for t in range(1, n):
        h[t] = np.tanh(W @ h[t - 1] + x[t])
    dW, later = np.zeros_like(W), np.zeros(W.shape[0], np.float32)
    for t in range(n - 1, 0, -1):
        pre = (2 * h[t] + later) * (1 - h[t] * h[t])     # dL / d(W h[t - 1] + x[t])
        dW += np.outer(pre, h[t - 1])
        later = W.T @ pre
    return dW


def rnn_gradient_jax():
    import jax
    import jax.numpy as jnp

    def loss(W, x):
        def step(h, xt):
            h = jnp.tanh(W @ h + xt)
            return h, h
        return jnp.sum(jax.lax.scan(step, jnp.zeros(W.shape[0], W.dtype), x[1:])[1] ** 2)
    compiled = jax.jit(jax.grad(loss))
    return lambda n, inputs: compiled(inputs["W"], inputs["x"])


# ------------------------------------------------------------------------------ edit distance

EDIT_DISTANCE = source("edit_distance")


def edit_inputs(n: int) -> dict:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, n).astype(np.int32)
    b = a.copy()
    b[rng.integers(0, n, n // 10)] = rng.integers(0, 4, n // 10)   # a related string
    return {"a": a, "b": np.roll(b, 3)}


def edit_numpy(n: int, inputs: dict) -> int:
    """Row by row; a row's left-to-right dependency is a running minimum of (row - j) + j."""
    a, b = inputs["a"], inputs["b"]
    cols = np.arange(len(b) + 1)
    row = cols.copy()
    for i in range(1, len(a) + 1):
        diag = row[:-1] + (a[i - 1] != b)
        best = np.concatenate([[i], np.minimum(row[1:] + 1, diag)])
        row = np.minimum.accumulate(best - cols) + cols
    return row[-1]


def edit_jax():
    import jax
    import jax.numpy as jnp

    def run(a, b):
        cols = jnp.arange(b.shape[0] + 1, dtype=jnp.int32)

        def step(row, ai_i):
            ai, i = ai_i
            diag = row[:-1] + (ai != b).astype(jnp.int32)
            best = jnp.concatenate([i[None], jnp.minimum(row[1:] + 1, diag)])
            new = jax.lax.cummin(best - cols) + cols
            return new, None
        rows = jnp.arange(1, a.shape[0] + 1, dtype=jnp.int32)
        return jax.lax.scan(step, cols, (a, rows))[0][-1]
    compiled = jax.jit(run)
    return lambda n, inputs: compiled(**inputs)


# ------------------------------------------------------------------------------ batched recurrences

# Many independent series in the last axis (what `jax.vmap` of a scan computes): a rate is one
# lane-step. The logistic rates stay in the periodic regime (r < 3.45), so the last bits that a
# reordered product may change do not grow into different orbits.
BATCH = 1024


def logistic_batch_inputs(n: int) -> dict:
    rng = np.random.default_rng(4)
    return {"r": rng.uniform(2.8, 3.4, BATCH).astype(np.float32),
            "x0": rng.uniform(0.1, 0.9, BATCH).astype(np.float32),
            "steps": np.zeros(n, np.int32)}


def logistic_batch_numpy(n: int, inputs: dict) -> np.ndarray:
    x, r, one = inputs["x0"], inputs["r"], np.float32(1.0)
    for _ in range(n - 1):
        x = r * x * (one - x)
    return x


def logistic_batch_jax():
    import jax
    import jax.numpy as jnp

    def one_series(r, x0, n):
        return jax.lax.scan(lambda x, _: (r * x * (jnp.float32(1.0) - x), None), x0, None, length=n - 1)[0]
    compiled = jax.jit(jax.vmap(one_series, in_axes=(0, 0, None)), static_argnums=2)
    return lambda n, inputs: compiled(inputs["r"], inputs["x0"], n)


def kalman_batch_inputs(n: int) -> dict:
    rng = np.random.default_rng(5)
    truth = np.cumsum(np.full((n, BATCH), 0.01), axis=0) + np.cumsum(rng.standard_normal((n, BATCH)) * 0.001, axis=0)
    return {"y": truth + rng.standard_normal((n, BATCH)) * 0.5,
            "F": np.array([[1.0, 1.0], [0.0, 1.0]]),
            "Q": np.array([[1e-4, 0.0], [0.0, 1e-5]]),
            "r": rng.uniform(0.1, 0.5, BATCH)}


def kalman_batch_numpy(n: int, inputs: dict) -> np.ndarray:
    """The filter of `kalman_numpy` on every series at once: x[t, i, b], P[i, j, b]."""
    y, F, Q, r = (inputs[k] for k in ("y", "F", "Q", "r"))
    x = np.zeros((n, 2, y.shape[1]))
    x[0, 0] = y[0]
    P = np.repeat(np.eye(2)[:, :, None], y.shape[1], axis=2)
    for t in range(1, n):
        xp = np.einsum("ik,kb->ib", F, x[t - 1])
        Pp = np.einsum("ik,klb,jl->ijb", F, P, F) + Q[:, :, None]
        K = Pp[:, 0] / (Pp[0, 0] + r)
        x[t] = xp + K * (y[t] - xp[0])
        P = Pp - K[:, None] * Pp[0][None]
    return x


def kalman_batch_jax():
    import jax
    compiled = jax.jit(jax.vmap(kalman_scan, in_axes=(1, None, None, 0), out_axes=2))
    return lambda n, inputs: compiled(*(inputs[k] for k in ("y", "F", "Q", "r")))


# ------------------------------------------------------------------------------ recurrent layers

def rnn_batch_inputs(n: int, hidden: int = 64, batch: int = 64) -> dict:
    rng = np.random.default_rng(6)
    return {"W": (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32),
            "x": rng.standard_normal((n, batch, hidden)).astype(np.float32)}


def rnn_batch_numpy(n: int, inputs: dict) -> np.ndarray:
    W, x = inputs["W"], inputs["x"]
    h = np.zeros(x.shape[1:], np.float32)
    for t in range(1, n):
        h = np.tanh(h @ W.T + x[t])
    return h


def rnn_batch_jax():
    import jax
    import jax.numpy as jnp

    def run(W, x):
        return jax.lax.scan(lambda h, xt: (jnp.tanh(h @ W.T + xt), None), jnp.zeros(x.shape[1:], x.dtype), x[1:])[0]
    compiled = jax.jit(run)
    return lambda n, inputs: compiled(**inputs)


def gru_inputs(n: int, hidden: int = 256) -> dict:
    rng = np.random.default_rng(7)
    weights = {k: (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
               for k in ("Uz", "Ur", "Un")}
    return weights | {k: rng.standard_normal((n, hidden)).astype(np.float32) for k in ("xz", "xr", "xn")}


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def gru_numpy(n: int, inputs: dict) -> np.ndarray:
    Uz, Ur, Un, xz, xr, xn = (inputs[k] for k in ("Uz", "Ur", "Un", "xz", "xr", "xn"))
    h = np.zeros(Uz.shape[0], np.float32)
    for t in range(1, n):
        z = _sigmoid(Uz @ h + xz[t])
        g = _sigmoid(Ur @ h + xr[t])
        h = (1 - z) * np.tanh(g * (Un @ h) + xn[t]) + z * h
    return h


def gru_jax():
    import jax
    import jax.numpy as jnp

    def run(Uz, Ur, Un, xz, xr, xn):
        def step(h, xs):
            z = jax.nn.sigmoid(Uz @ h + xs[0])
            g = jax.nn.sigmoid(Ur @ h + xs[1])
            return (1 - z) * jnp.tanh(g * (Un @ h) + xs[2]) + z * h, None
        return jax.lax.scan(step, jnp.zeros(Uz.shape[0], Uz.dtype), (xz[1:], xr[1:], xn[1:]))[0]
    compiled = jax.jit(run)
    return lambda n, inputs: compiled(**inputs)


def lstm_inputs(n: int, hidden: int = 128, batch: int = 32) -> dict:
    rng = np.random.default_rng(8)
    return {"U": (rng.standard_normal((4, hidden, hidden)) / np.sqrt(hidden)).astype(np.float32),
            "xp": rng.standard_normal((n, batch, 4, hidden)).astype(np.float32)}


def lstm_numpy(n: int, inputs: dict) -> np.ndarray:
    U, xp = inputs["U"], inputs["xp"]
    h = np.zeros((xp.shape[1], U.shape[1]), np.float32)
    c = h.copy()
    for t in range(1, n):
        z = np.einsum("nj,qji->nqi", h, U) + xp[t]
        c = _sigmoid(z[:, 1]) * c + _sigmoid(z[:, 0]) * np.tanh(z[:, 2])
        h = _sigmoid(z[:, 3]) * np.tanh(c)
    return h


def lstm_jax():
    import jax
    import jax.numpy as jnp

    def run(U, xp):
        def step(hc, xt):
            h, c = hc
            z = jnp.einsum("nj,qji->nqi", h, U) + xt
            c = jax.nn.sigmoid(z[:, 1]) * c + jax.nn.sigmoid(z[:, 0]) * jnp.tanh(z[:, 2])
            return (jax.nn.sigmoid(z[:, 3]) * jnp.tanh(c), c), None
        zeros = jnp.zeros((xp.shape[1], U.shape[1]), U.dtype)
        return jax.lax.scan(step, (zeros, zeros), xp[1:])[0][0]
    compiled = jax.jit(run)
    return lambda n, inputs: compiled(**inputs)



# ------------------------------------------------------------------------------ steps computing tensors

def descent_source(steps: int) -> str:
    """Gradient descent whose step computes the gradient of a least-squares loss at the last
    iterate, clipped by its norm: tensors of the step (recurrence_dispatch_steps)."""
    return f"""
        let X: [f64; 256, 16];
        let y: [f64; 256];
        let w[0, d in 0..16] = 0.0;
        let w[k in 1..{steps}, d in 0..16] = w[k - 1, d] - 0.05 * g[d] where g = {{
            let v = w[k - 1];
            let r[n] = sum[j](X[n, j] * v[j]) - y[n];
            let L = sum[n](r[n] * r[n]) / 256.0;
            let raw = @L / @v;
            let norm = sum[j](raw[j] * raw[j]).sqrt();
            raw * (if norm > 2.0 {{ 2.0 / norm }} else {{ 1.0 }})
        }};
        let last[d in 0..16] = w[{steps - 1}, d];
    """


def descent_inputs(n: int) -> dict:
    rng = np.random.default_rng(9)
    X = rng.standard_normal((256, 16))
    return {"X": X, "y": X @ rng.standard_normal(16) + 0.1 * rng.standard_normal(256)}


def descent_numpy(n: int, inputs: dict) -> np.ndarray:
    X, y = inputs["X"], inputs["y"]
    w = np.zeros(16)
    for _ in range(n - 1):
        g = 2 * X.T @ (X @ w - y) / 256
        norm = np.sqrt(g @ g)
        w = w - 0.05 * g * (2 / norm if norm > 2 else 1)
    return w


def descent_jax():
    import jax
    import jax.numpy as jnp

    def run(n, X, y):
        def step(w, _):
            g = jax.grad(lambda v: jnp.sum((X @ v - y) ** 2) / 256)(w)
            norm = jnp.sqrt(g @ g)
            return w - 0.05 * g * jnp.where(norm > 2, 2 / norm, 1.0), None
        return jax.lax.scan(step, jnp.zeros(16), None, length=n - 1)[0]
    compiled = jax.jit(run, static_argnums=0)
    return lambda n, inputs: compiled(n, inputs["X"], inputs["y"])


def newton_source(steps: int) -> str:
    """Newton's method on 3 equations, std's `solve` (two loops nested in each step)."""
    return f"""
        use std::ml::linalg_ops::solve;
        let x0: [f64; 3];
        let x[0] = x0;
        let x[k in 1..{steps}] = {{
            let v = x[k - 1];
            let F = [v[0] * v[0] + v[1] * v[1] + v[2] * v[2] - 6.0, v[0] * v[1] - 2.0 * v[2],
                     v[0] + v[1] - 3.0 * v[2]];
            let J[i in 0..3, j in 0..3] = if i == 0 {{ 2.0 * v[j] }}
                else if i == 1 {{ if j == 0 {{ v[1] }} else if j == 1 {{ v[0] }} else {{ -2.0 }} }}
                else {{ if j == 2 {{ -3.0 }} else {{ 1.0 }} }};
            0.5 * v + 0.5 * (v - solve(J, F))
        }};
        let last[i in 0..3] = x[{steps - 1}, i];
    """


def newton_numpy(n: int, inputs: dict) -> np.ndarray:
    v = inputs["x0"]
    for _ in range(n - 1):
        F = np.array([v @ v - 6, v[0] * v[1] - 2 * v[2], v[0] + v[1] - 3 * v[2]])
        J = np.array([2 * v, [v[1], v[0], -2], [1, 1, -3]])
        v = v - 0.5 * np.linalg.solve(J, F)
    return v


def newton_jax():
    import jax
    import jax.numpy as jnp

    def run(n, x0):
        def step(v, _):
            F = jnp.array([v @ v - 6, v[0] * v[1] - 2 * v[2], v[0] + v[1] - 3 * v[2]])
            J = jnp.array([2 * v, jnp.array([v[1], v[0], -2.0]), jnp.array([1.0, 1.0, -3.0])])
            return v - 0.5 * jnp.linalg.solve(J, F), None
        return jax.lax.scan(step, x0, None, length=n - 1)[0]
    compiled = jax.jit(run, static_argnums=0)
    return lambda n, inputs: compiled(n, inputs["x0"])


NODE_BATCH = 256


def neural_ode_source(steps: int) -> str:
    """Training a neural ODE: each step differentiates the loss through 8 RK4 steps (an inner
    loop in the function under @) and takes a gradient step."""
    return f"""
        use std::math::tanh;
        let x0: [f64; {NODE_BATCH}, 2];
        let target: [f64; {NODE_BATCH}, 2];
        let theta0: [f64; 6];
        let h: f64 = 0.125;
        fn field(th, x) {{
            let f[i in 0..2] = tanh(th[2 * i] * x[0] + th[2 * i + 1] * x[1] + th[4 + i]);
            f
        }}
        fn loss(th) {{
            let z[0] = x0;
            let z[s in 1..9, b in 0..{NODE_BATCH}] = {{
                let k1 = field(th, z[s - 1, b]);
                let k2 = field(th, z[s - 1, b] + 0.5 * h * k1);
                let k3 = field(th, z[s - 1, b] + 0.5 * h * k2);
                let k4 = field(th, z[s - 1, b] + h * k3);
                z[s - 1, b] + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            }};
            sum[b, i]((z[8, b, i] - target[b, i]) ** 2) / {NODE_BATCH}.0
        }}
        let theta[0] = theta0;
        let theta[e in 1..{steps}] = {{ let L = loss(theta[e - 1]); theta[e - 1] - 0.5 * @L / @theta[e - 1] }};
        let last[i in 0..6] = theta[{steps - 1}, i];
    """


def neural_ode_inputs(n: int) -> dict:
    rng = np.random.default_rng(11)
    x0 = rng.standard_normal((NODE_BATCH, 2))
    return {"x0": x0, "target": x0 @ np.array([[0.8, -0.4], [0.4, 0.8]]) + 0.2,
            "theta0": 0.3 * rng.standard_normal(6)}


def neural_ode_numpy(n: int, inputs: dict) -> np.ndarray:
    """The training loop with a hand-written adjoint over the stored RK4 stages (the loss is the
    batch's mean, so its gradient is the sum's over the batch size)."""
    x0, target, th = inputs["x0"], inputs["target"], inputs["theta0"]
    for _ in range(n - 1):
        th = th - 0.5 * neural_ode_gradient(x0, target, th, steps=8)[1] / NODE_BATCH
    return th


def neural_ode_jax():
    import jax
    import jax.numpy as jnp

    def loss(th, x0, target, h=0.125):
        f = lambda x: jnp.tanh(x @ th[:4].reshape(2, 2).T + th[4:])     # noqa: E731

        def rk4(z, _):
            k1 = f(z); k2 = f(z + 0.5 * h * k1); k3 = f(z + 0.5 * h * k2); k4 = f(z + h * k3)   # noqa: E702
            return z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None
        return jnp.sum((jax.lax.scan(rk4, x0, None, length=8)[0] - target) ** 2) / NODE_BATCH

    def run(n, x0, target, theta0):
        def step(th, _):
            return th - 0.5 * jax.grad(loss)(th, x0, target), None
        return jax.lax.scan(step, theta0, None, length=n - 1)[0]
    compiled = jax.jit(run, static_argnums=0)
    return lambda n, inputs: compiled(n, inputs["x0"], inputs["target"], inputs["theta0"])

CASES = [
    Case("logistic map, read at the end", "step", 10**8, logistic_source, lambda n: {"x0": np.float32(0.3)},
         "last", logistic_numpy, logistic_jax, tolerance={}, check_n=10**6, numpy_n=10**6),
    Case("Kalman filter, 2 states", "step", 10**5, lambda n: KALMAN, kalman_inputs, "x",
         kalman_numpy, kalman_jax, tolerance={"rtol": 1e-9, "atol": 1e-9}),
    Case("Kalman filter, local linear trend (5 scalar members)", "step", 10**5, lambda n: KALMAN_TREND,
         trend_inputs, "m", trend_numpy, trend_jax, tolerance={"rtol": 1e-9, "atol": 1e-9}),
    Case("RNN tanh(W h + x), H = 64", "step", 10**4, lambda n: RNN, rnn_inputs, "final",
         rnn_numpy, rnn_jax, tolerance={"rtol": 1e-4, "atol": 1e-5}, vulkan_n=1000),
    Case("RNN gradient dL/dW, H = 64, L = sum of h[t, i]^2", "step", 10**4, lambda n: RNN_GRADIENT, rnn_inputs,
         "dW", rnn_gradient_numpy, rnn_gradient_jax, tolerance={"rtol": 1e-3, "atol": 1e-3}, vulkan_n=1000),
    Case("edit distance 2000 x 2000", "cell", 2000, lambda n: EDIT_DISTANCE, edit_inputs, "distance",
         edit_numpy, edit_jax, tolerance={}, steps=lambda n: n * n),
    Case("batched logistic map, 1,024 lanes (vs jax.vmap)", "lane-step", 20_000,
         lambda n: source("logistic_batch"), logistic_batch_inputs, "last", logistic_batch_numpy,
         logistic_batch_jax, tolerance={"rtol": 1e-5, "atol": 1e-6}, steps=lambda n: n * BATCH),
    Case("batched Kalman filter, 2 states, 1,024 series (vs jax.vmap)", "lane-step", 1000,
         lambda n: source("kalman_batch"), kalman_batch_inputs, "x", kalman_batch_numpy, kalman_batch_jax,
         tolerance={"rtol": 1e-9, "atol": 1e-9}, steps=lambda n: n * BATCH),
    Case("RNN tanh(W h + x), H = 64, batch 64", "step", 1000, lambda n: source("rnn_batch"), rnn_batch_inputs,
         "final", rnn_batch_numpy, rnn_batch_jax, tolerance={"rtol": 1e-4, "atol": 1e-5}),
    Case("GRU, H = 256, batch 1", "step", 1000, lambda n: source("gru"), gru_inputs, "final", gru_numpy,
         gru_jax, tolerance={"rtol": 1e-4, "atol": 1e-5}),
    Case("LSTM, H = 128, batch 32", "step", 1000, lambda n: source("lstm"), lstm_inputs, "final", lstm_numpy,
         lstm_jax, tolerance={"rtol": 1e-4, "atol": 1e-5}),
    Case("gradient descent, clipped least-squares gradient per step, 256 x 16", "step", 1000, descent_source,
         descent_inputs, "last", descent_numpy, descent_jax, tolerance={"rtol": 1e-9, "atol": 1e-12}),
    Case("damped Newton, std solve (2 nested loops) per step, 3 equations", "step", 1000, newton_source,
         lambda n: {"x0": np.array([0.5, 1.5, 0.8])}, "last", newton_numpy, newton_jax,
         tolerance={"rtol": 1e-9, "atol": 1e-12}),
    Case("neural ODE training, gradient through 8 RK4 steps per step, batch 256", "step", 100, neural_ode_source,
         neural_ode_inputs, "last", neural_ode_numpy, neural_ode_jax, tolerance={"rtol": 1e-9, "atol": 1e-12}),
]
