"""NumPy meanings of the standard library's functions, written from the ONNX operator
definitions and the math library (docs/STDLIB.md's conventions), in float64, never from einc's
stdlib source. The linear ones (conv, pooling, matmul) also give their magnitude: the same
computation on |inputs|, the sum of |terms| an element's rounding error is relative to.
"""
from __future__ import annotations

import itertools
import math

import numpy as np


def pad_spatial(x: np.ndarray, pads: list, value: float = 0.0) -> np.ndarray:
    """`x` [N, C, spatial..] padded by ONNX pads [begin.., end..]."""
    s = x.ndim - 2
    return np.pad(x, [(0, 0), (0, 0)] + [(pads[a], pads[s + a]) for a in range(s)], constant_values=value)


def out_size(size: int, kernel: int, stride: int, dilation: int, begin: int, end: int) -> int:
    return (size + begin + end - dilation * (kernel - 1) - 1) // stride + 1


def conv(x, w, b, strides, pads, dilations, group) -> np.ndarray:
    """ONNX Conv: x [N, C, spatial..], w [M, C / group, kernel..], b [M]."""
    s = x.ndim - 2
    xp = pad_spatial(x, pads)
    outs = [out_size(x.shape[2 + a], w.shape[2 + a], strides[a], dilations[a], pads[a], pads[s + a]) for a in range(s)]
    m, cg = w.shape[0], w.shape[1]
    mg = m // group
    y = np.zeros((x.shape[0], m) + tuple(outs))
    for g in range(group):
        for offs in itertools.product(*(range(k) for k in w.shape[2:])):
            view = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + tuple(
                slice(offs[a] * dilations[a], offs[a] * dilations[a] + strides[a] * (outs[a] - 1) + 1, strides[a])
                for a in range(s))]
            wk = w[(slice(g * mg, (g + 1) * mg), slice(None)) + offs]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", view, wk)
    return y + b.reshape((1, m) + (1,) * s)


def conv_transpose(x, w, b, strides, pads, output_padding) -> np.ndarray:
    """ONNX ConvTranspose (group 1, dilation 1): x [N, C, spatial..], w [C, M, kernel..]; every
    input element adds x * w at stride * position, the result is cut by the pads and grows by
    output_padding at the end."""
    s = x.ndim - 2
    kernel = w.shape[2:]
    full = [strides[a] * (x.shape[2 + a] - 1) + kernel[a] + output_padding[a] for a in range(s)]
    y = np.zeros((x.shape[0], w.shape[1]) + tuple(full))
    for pos in itertools.product(*(range(n) for n in x.shape[2:])):
        at = tuple(slice(pos[a] * strides[a], pos[a] * strides[a] + kernel[a]) for a in range(s))
        y[(slice(None), slice(None)) + at] += np.einsum("nc,cm...->nm...", x[(slice(None), slice(None)) + pos], w)
    cut = tuple(slice(pads[a], full[a] - pads[s + a]) for a in range(s))
    return y[(slice(None), slice(None)) + cut] + b.reshape((1, -1) + (1,) * s)


def lp_pool(x, kernel, strides, p) -> np.ndarray:
    """ONNX LpPool without pads: (sum over the window of |x|^p)^(1/p)."""
    views, _ = windows(np.abs(x) ** p, kernel, strides, [0] * (2 * len(kernel)), 0.0)
    return np.sum(views, axis=0) ** (1.0 / p)


def instance_normalization(x, scale, b, epsilon) -> np.ndarray:
    axes = tuple(range(2, x.ndim))
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean) / np.sqrt(var + epsilon) * scale.reshape(shape) + b.reshape(shape)


def windows(x, kernel, strides, pads, fill: float):
    """Every window offset's strided view of `x` padded with `fill`, and the output sizes."""
    s = x.ndim - 2
    xp = pad_spatial(x, pads, fill)
    outs = [out_size(x.shape[2 + a], kernel[a], strides[a], 1, pads[a], pads[s + a]) for a in range(s)]
    views = [xp[(slice(None), slice(None)) + tuple(
        slice(offs[a], offs[a] + strides[a] * (outs[a] - 1) + 1, strides[a]) for a in range(s))]
        for offs in itertools.product(*(range(k) for k in kernel))]
    return views, outs


def max_pool(x, kernel, strides, pads) -> np.ndarray:
    views, _ = windows(x, kernel, strides, pads, -np.inf)
    return np.max(views, axis=0)


def average_pool(x, kernel, strides, pads) -> np.ndarray:
    """count_include_pad = 0: the mean of the window's elements inside `x`."""
    views, _ = windows(x, kernel, strides, pads, 0.0)
    counts, _ = windows(np.ones((1, 1) + x.shape[2:]), kernel, strides, pads, 0.0)
    return np.sum(views, axis=0) / np.sum(counts, axis=0)


def gemm(a, b, c, alpha, beta, trans_a, trans_b) -> np.ndarray:
    a = a.T if trans_a else a
    b = b.T if trans_b else b
    return alpha * (a @ b) + beta * c


def softmax(x) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def log_softmax(x) -> np.ndarray:
    z = x - np.max(x, axis=-1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def layer_normalization(x, scale, b, epsilon, axis) -> np.ndarray:
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + epsilon) * scale + b


def batch_normalization(x, scale, b, mean, var, epsilon) -> np.ndarray:
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon) * scale.reshape(shape) + b.reshape(shape)


def erf(x) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


SELU_ALPHA, SELU_GAMMA = 1.6732632423543772, 1.0507009873554805


def softplus(x):
    return np.logaddexp(0.0, x)


# The elementwise activations: name -> (NumPy meaning, parameters as drawn, their text).
ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0.0),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "gelu": lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))),
    "gelu_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
    "swish": lambda x: x / (1.0 + np.exp(-x)),
    "selu": lambda x: SELU_GAMMA * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
    "softplus": softplus,
    "relu6": lambda x: np.clip(x, 0.0, 6.0),
    "softsign": lambda x: x / (1.0 + np.abs(x)),
    "tanhshrink": lambda x: x - np.tanh(x),
    "hardswish": lambda x: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "hardsigmoid": lambda x: np.clip(0.2 * x + 0.5, 0.0, 1.0),
    "mish": lambda x: x * np.tanh(softplus(x)),
}

# Activations with one parameter a: name -> meaning(x, a).
ACTIVATIONS_1 = {
    "leaky_relu": lambda x, a: np.where(x >= 0, x, a * x),
    "elu": lambda x, a: np.where(x > 0, x, a * np.expm1(x)),
    "celu": lambda x, a: np.maximum(x, 0.0) + np.minimum(0.0, a * np.expm1(x / a)),
    "prelu": lambda x, a: np.where(x < 0, a * x, x),
    "softshrink": lambda x, a: np.where(x > a, x - a, np.where(x < -a, x + a, 0.0)),
    "hardshrink": lambda x, a: np.where((x > a) | (x < -a), x, 0.0),
    "thresholded_relu": lambda x, a: np.where(x > a, x, 0.0),
    "elu_alpha": lambda x, a: np.where(x > 0, x, a * np.expm1(x)),
}

# Activations with two parameters: name -> meaning(x, a, b), the parameters drawn a < b.
ACTIVATIONS_2 = {
    "hardtanh": lambda x, a, b: np.clip(x, a, b),
    "threshold": lambda x, a, b: np.where(x > a, x, b),
}

# std::math's functions of one float: name -> (meaning, the domain inputs are drawn from).
MATH_1 = {
    "sin": (np.sin, (-6.0, 6.0)), "cos": (np.cos, (-6.0, 6.0)), "tan": (np.tan, (-1.2, 1.2)),
    "asin": (np.arcsin, (-0.99, 0.99)), "acos": (np.arccos, (-0.99, 0.99)), "atan": (np.arctan, (-5.0, 5.0)),
    "sinh": (np.sinh, (-4.0, 4.0)), "cosh": (np.cosh, (-4.0, 4.0)), "tanh": (np.tanh, (-4.0, 4.0)),
    "asinh": (np.arcsinh, (-5.0, 5.0)), "acosh": (np.arccosh, (1.01, 5.0)), "atanh": (np.arctanh, (-0.95, 0.95)),
    "exp": (np.exp, (-5.0, 5.0)), "expm1": (np.expm1, (-2.0, 2.0)), "log": (np.log, (0.05, 5.0)),
    "ln": (np.log, (0.05, 5.0)), "log1p": (np.log1p, (-0.9, 3.0)), "log10": (np.log10, (0.05, 5.0)),
    "log2": (np.log2, (0.05, 5.0)), "sqrt": (np.sqrt, (0.0, 5.0)), "rsqrt": (lambda x: 1.0 / np.sqrt(x), (0.05, 5.0)),
    "erf": (erf, (-3.0, 3.0)), "abs": (np.abs, (-3.0, 3.0)), "square": (np.square, (-3.0, 3.0)),
    "neg": (np.negative, (-3.0, 3.0)), "reciprocal": (np.reciprocal, (0.2, 3.0)),
    "floor": (np.floor, (-4.0, 4.0)), "ceil": (np.ceil, (-4.0, 4.0)), "trunc": (np.trunc, (-4.0, 4.0)),
    "round": (np.round, (-4.0, 4.0)), "sign": (np.sign, (-3.0, 3.0)),
}

# std::ml's reductions over all axes: name -> (meaning, its magnitude, the input domain).
REDUCTIONS = {
    "reduce_sum": (np.sum, lambda x: np.sum(np.abs(x)), (-1.0, 1.0)),
    "reduce_mean": (np.mean, lambda x: np.mean(np.abs(x)), (-1.0, 1.0)),
    "reduce_max": (np.max, lambda x: 0.0, (-1.0, 1.0)),
    "reduce_min": (np.min, lambda x: 0.0, (-1.0, 1.0)),
    "reduce_prod": (np.prod, lambda x: x.size * np.abs(np.prod(x)), (0.7, 1.3)),
    "reduce_l1": (lambda x: np.sum(np.abs(x)), lambda x: np.sum(np.abs(x)), (-1.0, 1.0)),
    "reduce_l2": (lambda x: np.sqrt(np.sum(x * x)), lambda x: np.sqrt(np.sum(x * x)), (-1.0, 1.0)),
    "reduce_sum_square": (lambda x: np.sum(x * x), lambda x: np.sum(x * x), (-1.0, 1.0)),
    "reduce_log_sum": (lambda x: np.log(np.sum(x)), lambda x: 1.0, (0.1, 1.0)),
    "reduce_log_sum_exp": (lambda x: np.log(np.sum(np.exp(x))), lambda x: 1.0 + np.max(np.abs(x)), (-3.0, 3.0)),
}


def topk(x, k: int, axis: int):
    """Largest first, ties in index order: values and i64 indices."""
    order = np.argsort(-x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx


def slice_onnx(x, starts, ends, axes, steps) -> np.ndarray:
    """ONNX Slice: negative axes, starts and ends from the end, clamped (Python slices clamp
    the same way, for steps of either sign)."""
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        index[axis % x.ndim] = slice(start, end, step)
    return x[tuple(index)]


def scatter_elements(data, indices, updates, axis: int) -> np.ndarray:
    """ONNX ScatterElements (reduction none): a copy of data where, for every position p of
    indices in row-major order, the element at p with its `axis` coordinate replaced by
    indices[p] (negative: counted from the end) takes updates[p]; a later write wins."""
    out = data.copy()
    axis %= data.ndim
    for p in itertools.product(*(range(n) for n in indices.shape)):
        at = list(p)
        at[axis] = int(indices[p]) % data.shape[axis]
        out[tuple(at)] = updates[p]
    return out


def gather_nd(data, indices) -> np.ndarray:
    """ONNX GatherND (batch_dims 0): indices [.., k] address data's first k axes (negative ones
    from the end); the result is [indices' leading axes.., data's axes after k..]."""
    k = indices.shape[-1]
    out = np.empty(indices.shape[:-1] + data.shape[k:], data.dtype)
    for p in itertools.product(*(range(n) for n in indices.shape[:-1])):
        out[p] = data[tuple(int(indices[p + (j,)]) % data.shape[j] for j in range(k))]
    return out


def scatter_nd(data, indices, updates) -> np.ndarray:
    """ONNX ScatterND (reduction none): a copy of data where the entry or slice at each index row
    indices[p] (negative coordinates from the end) takes updates[p], p in row-major order (a
    later write wins)."""
    out = data.copy()
    k = indices.shape[-1]
    for p in itertools.product(*(range(n) for n in indices.shape[:-1])):
        out[tuple(int(indices[p + (j,)]) % data.shape[j] for j in range(k))] = updates[p]
    return out
