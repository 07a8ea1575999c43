"""The dense benchmark cases (issue 10): matmuls, the MNIST CNN, one convolution layer, an MLP and
a gather (with its index check and without), each an Einlang program beside a NumPy and a JAX
`jit` version of the same computation.

Rates are FLOP/s for the matmuls and the convolution layer (2 * multiply-adds), images/s for the
networks, rows/s for the gather. The NumPy versions are the references every einc result is
checked against first.
"""
from __future__ import annotations

import os

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from benchmarks.cases import Case

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MNIST = os.path.join(REPO, "..", "shared", "data", "mnist")
CNN_SOURCE = os.path.join(REPO, "examples", "mnist", "cnn.ein")
F32_TOLERANCE = {"rtol": 2e-4, "atol": 2e-4}


# ------------------------------------------------------------------------------ matmul

MATMUL_NAMED = """
    let A: [f32; M, K];
    let B: [f32; K, N];
    let C[i, j] = sum[k](A[i, k] * B[k, j]);
"""


def matmul_fixed(n: int) -> str:
    return f"""
        let A: [f32; {n}, {n}];
        let B: [f32; {n}, {n}];
        let C[i, j] = sum[k](A[i, k] * B[k, j]);
    """


def matmul_inputs(n: int) -> dict:
    rng = np.random.default_rng(4)
    return {"A": rng.standard_normal((n, n), dtype=np.float32),
            "B": rng.standard_normal((n, n), dtype=np.float32)}


def matmul_jax():
    import jax
    compiled = jax.jit(lambda a, b: a @ b)
    return lambda n, inputs: compiled(inputs["A"], inputs["B"])


def matmul_case(n: int, fixed: bool) -> Case:
    name = f"matmul {'fixed' if fixed else 'named'} dims, n = {n}"
    return Case(name, "FLOP", n, matmul_fixed if fixed else (lambda n: MATMUL_NAMED), matmul_inputs,
                "C", lambda n, x: x["A"] @ x["B"], matmul_jax,
                tolerance={"rtol": 1e-3, "atol": 1e-3 * np.sqrt(n)}, steps=lambda n: 2 * n ** 3, group="dense",
                fixed_dims=None if fixed else {"M": n, "K": n, "N": n})


# ------------------------------------------------------------------------------ MNIST CNN

def cnn_inputs(batch: int) -> dict:
    load = lambda name: np.load(os.path.join(MNIST, f"{name}.npy"))
    samples = load("samples")
    images = np.tile(samples, (-(-batch // len(samples)), 1, 1, 1))[:batch]
    return {"X": np.ascontiguousarray(images, dtype=np.float32),
            "W1": load("conv1_w"), "b1": load("conv1_b"), "W2": load("conv2_w"), "b2": load("conv2_b"),
            "Wf": load("fc_w"), "bf": load("fc_b")}


def conv_numpy(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """NCHW convolution with zero padding: windows (a strided view) contracted with BLAS."""
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(padded, w.shape[2:], axis=(2, 3))      # [N, C, H, W, KH, KW]
    return np.tensordot(windows, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)


def max_pool_numpy(x: np.ndarray, k: int) -> np.ndarray:
    n, c, h, w = x.shape
    h, w = h // k * k, w // k * k
    return x[:, :, :h, :w].reshape(n, c, h // k, k, w // k, k).max(axis=(3, 5))


def cnn_numpy(batch: int, x: dict) -> np.ndarray:
    relu = lambda v: np.maximum(v, np.float32(0))
    c1 = relu(conv_numpy(np.float32(1) - x["X"], x["W1"], 2) + x["b1"][:, None, None])
    c2 = relu(conv_numpy(max_pool_numpy(c1, 2), x["W2"], 2) + x["b2"][:, None, None])
    return max_pool_numpy(c2, 3).reshape(len(c2), -1) @ x["Wf"] + x["bf"]


def cnn_jax():
    import jax
    import jax.numpy as jnp
    numbers = ("NCHW", "OIHW", "NCHW")

    def conv_relu(x, w, b):
        y = jax.lax.conv_general_dilated(x, w, (1, 1), ((2, 2), (2, 2)), dimension_numbers=numbers)
        return jnp.maximum(y + b[None, :, None, None], 0.0)

    def pool(x, k):
        size = x.shape[2] // k * k
        return jax.lax.reduce_window(x[:, :, :size, :size], -jnp.inf, jax.lax.max, (1, 1, k, k), (1, 1, k, k), "VALID")

    def net(X, W1, b1, W2, b2, Wf, bf):
        p2 = pool(conv_relu(pool(conv_relu(1.0 - X, W1, b1), 2), W2, b2), 3)
        logits = p2.reshape(p2.shape[0], -1) @ Wf + bf
        return logits, jnp.argmax(logits, axis=1)       # the digits cnn.ein prints
    compiled = jax.jit(net)
    return lambda n, inputs: compiled(**inputs)[0]


def cnn_case(batch: int) -> Case:
    source = open(CNN_SOURCE, encoding="utf-8").read()
    return Case(f"MNIST CNN (examples/mnist), batch {batch}", "image", batch, lambda n: source, cnn_inputs,
                "logits", cnn_numpy, cnn_jax, tolerance=F32_TOLERANCE, steps=lambda n: n, group="dense",
                fixed_dims={"B": batch})


# The same network with every size named: image size and channels too. The dense layer's
# weights come as [channels, rows, columns, classes], the features' own axes.
CNN_NAMED = """
    let X: [f32; B, C, H, W];
    let W1: [f32; F1, C, 5, 5];
    let b1: [f32; F1];
    let W2: [f32; F2, F1, 5, 5];
    let b2: [f32; F2];
    let Wf: [f32; F2, P, Q, K];
    let bf: [f32; K];
    fn relu(v) { if v > 0.0 { v } else { 0.0 } }
    let ink = 1.0 - X;
    let c1[n, o, h in 0..H, w in 0..W] = relu(b1[o] + sum[c, kh, kw](
        if ih >= 0 && ih < H && iw >= 0 && iw < W { ink[n, c, ih, iw] * W1[o, c, kh, kw] } else { 0.0 }
        where ih = h + kh - 2, iw = w + kw - 2));
    let p1[n, o, h in 0..H / 2, w in 0..W / 2] = max[dh in 0..2, dw in 0..2](c1[n, o, 2 * h + dh, 2 * w + dw]);
    let c2[n, o, h in 0..H / 2, w in 0..W / 2] = relu(b2[o] + sum[c, kh, kw](
        if ih >= 0 && ih < H / 2 && iw >= 0 && iw < W / 2 { p1[n, c, ih, iw] * W2[o, c, kh, kw] } else { 0.0 }
        where ih = h + kh - 2, iw = w + kw - 2));
    let p2[n, o, h in 0..P, w in 0..Q] = max[dh in 0..3, dw in 0..3](c2[n, o, 3 * h + dh, 3 * w + dw]);
    let logits[n, k] = bf[k] + sum[c, h in 0..P, w in 0..Q](p2[n, c, h, w] * Wf[c, h, w, k]);
"""


def cnn_named_inputs(batch: int) -> dict:
    x = cnn_inputs(batch)
    return {**x, "Wf": x["Wf"].reshape(16, 4, 4, 10)}


def cnn_named_case(batch: int) -> Case:
    flat = lambda x: {**x, "Wf": x["Wf"].reshape(256, 10)}
    jax_net = lambda: (lambda run: lambda n, x: run(n, flat(x)))(cnn_jax())
    return Case(f"MNIST CNN, every size named, batch {batch}", "image", batch, lambda n: CNN_NAMED,
                cnn_named_inputs, "logits", lambda n, x: cnn_numpy(n, flat(x)), jax_net, tolerance=F32_TOLERANCE,
                steps=lambda n: n, group="dense",
                fixed_dims={"B": batch, "C": 1, "H": 28, "W": 28, "F1": 8, "F2": 16, "P": 4, "Q": 4, "K": 10})


# ------------------------------------------------------------------------------ one convolution layer

CONV_LAYER = """
    let X: [f32; B, 8, 64, 64];
    let W: [f32; 16, 8, 5, 5];
    let b: [f32; 16];
    fn relu(v) { if v > 0.0 { v } else { 0.0 } }
    let y[n, o in 0..16, h in 0..64, w in 0..64] = relu(b[o] + sum[c in 0..8, kh in 0..5, kw in 0..5](
        if ih >= 0 && ih < 64 && iw >= 0 && iw < 64 { X[n, c, ih, iw] * W[o, c, kh, kw] } else { 0.0 }
        where ih = h + kh - 2, iw = w + kw - 2));
"""


def conv_layer_inputs(batch: int) -> dict:
    rng = np.random.default_rng(5)
    return {"X": rng.standard_normal((batch, 8, 64, 64), dtype=np.float32),
            "W": (rng.standard_normal((16, 8, 5, 5), dtype=np.float32) / 14).astype(np.float32),
            "b": rng.standard_normal(16, dtype=np.float32)}


def conv_layer_numpy(batch: int, x: dict) -> np.ndarray:
    return np.maximum(conv_numpy(x["X"], x["W"], 2) + x["b"][:, None, None], np.float32(0))


def conv_layer_jax():
    import jax
    import jax.numpy as jnp

    def layer(X, W, b):
        y = jax.lax.conv_general_dilated(X, W, (1, 1), ((2, 2), (2, 2)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return jnp.maximum(y + b[None, :, None, None], 0.0)
    compiled = jax.jit(layer)
    return lambda n, inputs: compiled(**inputs)


CONV_FLOPS = lambda batch: 2 * batch * 16 * 64 * 64 * 8 * 5 * 5

# The layer for any batch and image size (issue 19: 38x slower than fixed sizes before the
# convolution ran on blocks of 16 columns, einc/mlir/dense/width_blocks.py).
CONV_LAYER_NAMED = """
    let X: [f32; B, 8, HI, WI];
    let W: [f32; 16, 8, 5, 5];
    let b: [f32; 16];
    fn relu(v) { if v > 0.0 { v } else { 0.0 } }
    let y[n, o in 0..16, h in 0..HI, w in 0..WI] = relu(b[o] + sum[c in 0..8, kh in 0..5, kw in 0..5](
        if ih >= 0 && ih < HI && iw >= 0 && iw < WI { X[n, c, ih, iw] * W[o, c, kh, kw] } else { 0.0 }
        where ih = h + kh - 2, iw = w + kw - 2));
"""


# ------------------------------------------------------------------------------ max pooling

POOL = """
    let X: [f32; B, C, H, W];
    let y[n, c, h in 0..H / 2, w in 0..W / 2] = max[dh in 0..2, dw in 0..2](X[n, c, 2 * h + dh, 2 * w + dw]);
"""


def pool_inputs(batch: int) -> dict:
    return {"X": np.random.default_rng(7).standard_normal((batch, 16, 64, 64), dtype=np.float32)}


def pool_jax():
    import jax
    compiled = jax.jit(lambda x: jax.lax.reduce_window(x, -jax.numpy.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                                       "VALID"))
    return lambda n, inputs: compiled(inputs["X"])


# ------------------------------------------------------------------------------ MLP with softmax

MLP = """
    use std::ml::{relu, softmax};
    let X: [f32; B, 784];
    let W1: [f32; 784, 256];
    let b1: [f32; 256];
    let W2: [f32; 256, 10];
    let b2: [f32; 10];
    let h[n, j] = relu(b1[j] + sum[i](X[n, i] * W1[i, j]));
    let z[n, k] = b2[k] + sum[j](h[n, j] * W2[j, k]);
    let p[n, k] = softmax(z[n])[k];
"""


def mlp_inputs(batch: int) -> dict:
    rng = np.random.default_rng(6)
    return {"X": rng.random((batch, 784), dtype=np.float32),
            "W1": (rng.standard_normal((784, 256), dtype=np.float32) / 28).astype(np.float32),
            "b1": rng.standard_normal(256, dtype=np.float32) * np.float32(0.1),
            "W2": (rng.standard_normal((256, 10), dtype=np.float32) / 16).astype(np.float32),
            "b2": rng.standard_normal(10, dtype=np.float32) * np.float32(0.1)}


def mlp_numpy(batch: int, x: dict) -> np.ndarray:
    h = np.maximum(x["X"] @ x["W1"] + x["b1"], np.float32(0))
    z = h @ x["W2"] + x["b2"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def mlp_jax():
    import jax
    import jax.numpy as jnp

    def mlp(X, W1, b1, W2, b2):
        return jax.nn.softmax(jnp.maximum(X @ W1 + b1, 0.0) @ W2 + b2, axis=1)
    compiled = jax.jit(mlp)
    return lambda n, inputs: compiled(**inputs)


# ------------------------------------------------------------------------------ gather

# An embedding lookup: rows of a table at data-dependent positions. Its index check (one pass
# over the tokens) is timed against the same program built with --unchecked-indices.
GATHER = """
    let E: [f32; V, D];
    let tokens: [i32; N];
    let y[i, d] = E[tokens[i], d];
"""


def gather_inputs(n: int) -> dict:
    rng = np.random.default_rng(5)
    return {"E": rng.standard_normal((4096, 64), dtype=np.float32),
            "tokens": rng.integers(0, 4096, n, dtype=np.int32)}


def gather_jax():
    import jax
    compiled = jax.jit(lambda e, t: e[t])
    return lambda n, inputs: compiled(inputs["E"], inputs["tokens"])


def gather_case(unchecked: bool) -> Case:
    name = "gather 64-float rows at 200000 tokens, " + ("--unchecked-indices" if unchecked else "indices checked")
    return Case(name, "row", 200_000, lambda n: GATHER, gather_inputs, "y", lambda n, x: x["E"][x["tokens"]],
                gather_jax, tolerance={}, group="dense", unchecked_indices=unchecked)


DENSE_CASES = [
    *(matmul_case(n, fixed=False) for n in (256, 512, 1024)),
    *(matmul_case(n, fixed=True) for n in (256, 512, 1024)),
    *(cnn_case(batch) for batch in (1, 100, 1000)),
    Case("conv layer 16 <- 8 channels, 5x5, pad 2, 64x64, batch 32", "FLOP", 32, lambda n: CONV_LAYER,
         conv_layer_inputs, "y", conv_layer_numpy, conv_layer_jax, tolerance=F32_TOLERANCE, steps=CONV_FLOPS,
         group="dense"),
    Case("conv layer as above, batch and image size named", "FLOP", 32, lambda n: CONV_LAYER_NAMED,
         conv_layer_inputs, "y", conv_layer_numpy, conv_layer_jax, tolerance=F32_TOLERANCE, steps=CONV_FLOPS,
         group="dense", fixed_dims={"B": 32, "HI": 64, "WI": 64}),
    cnn_named_case(100),
    Case("2x2 max pool, 16 channels of 64x64, B, C, H and W named, batch 32", "image", 32, lambda n: POOL,
         pool_inputs, "y", lambda n, x: max_pool_numpy(x["X"], 2), pool_jax, tolerance={}, steps=lambda n: n,
         group="dense", fixed_dims={"B": 32, "C": 16, "H": 64, "W": 64}),
    Case("MLP 784-256-10 with softmax, batch 1000", "image", 1000, lambda n: MLP, mlp_inputs, "p",
         mlp_numpy, mlp_jax, tolerance={"rtol": 1e-4, "atol": 1e-6}, steps=lambda n: n, group="dense",
         fixed_dims={"B": 1000}),
    gather_case(unchecked=False),
    gather_case(unchecked=True),
]
