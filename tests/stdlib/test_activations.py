"""std::ml::activations and reduction_ops against NumPy, on f32 rank 3 and f64 rank 1."""
import math

import numpy as np
import pytest

from stdlib_harness import close, rand, run_program

SOURCE = """
use std::ml::*;
let x: [f32; 2, 3, 4];
let d: [f64; 5];
""" + "".join(f"let {name}_x = {call.format(v='x')};\nlet {name}_d = {call.format(v='d')};\n"
              for name, call in [
    ("relu", "relu({v})"), ("sigmoid", "sigmoid({v})"), ("softmax", "softmax({v})"),
    ("log_softmax", "log_softmax({v})"), ("leaky_relu", "leaky_relu({v}, 0.1)"),
    ("elu", "elu({v}, 1.5)"), ("elu_alpha", "elu_alpha({v}, 0.5)"), ("gelu", "gelu({v})"),
    ("gelu_tanh", "gelu_tanh({v})"), ("swish", "swish({v})"), ("selu", "selu({v})"),
    ("softplus", "softplus({v})"), ("hardtanh", "hardtanh({v}, -0.5, 0.75)"),
    ("relu6", "relu6({v} * 4.0)"), ("prelu", "prelu({v}, 0.2)"), ("celu", "celu({v}, 1.5)"),
    ("mish", "mish({v})"), ("softsign", "softsign({v})"), ("tanhshrink", "tanhshrink({v})"),
    ("softshrink", "softshrink({v}, 0.5)"), ("hardshrink", "hardshrink({v}, 0.5)"),
    ("threshold", "threshold({v}, 0.1, 20.0)"), ("hardswish", "hardswish({v} * 3.0)"),
    ("thresholded_relu", "thresholded_relu({v}, 0.3)"), ("hardsigmoid", "hardsigmoid({v} * 3.0)"),
    ("reduce_mean", "reduce_mean({v})"), ("reduce_sum", "reduce_sum({v})"),
    ("reduce_max", "reduce_max({v})"), ("reduce_min", "reduce_min({v})"),
    ("reduce_l1", "reduce_l1({v})"), ("reduce_l2", "reduce_l2({v})"),
    ("reduce_sum_square", "reduce_sum_square({v})"), ("reduce_log_sum", "reduce_log_sum(abs({v}))"),
    ("reduce_log_sum_exp", "reduce_log_sum_exp({v})"), ("reduce_prod", "reduce_prod({v})"),
])

X = rand(2, 3, 4)
D = rand(5, dtype=np.float64, seed=1)
erf = np.vectorize(math.erf)


def softplus(v):
    return np.log1p(np.exp(v))


def softmax(v):
    e = np.exp(v - v.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


SELU_A, SELU_G = 1.6732632423543772, 1.0507009873554805
REFERENCE = {
    "relu": lambda v: np.maximum(v, 0),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "softmax": softmax,
    "log_softmax": lambda v: np.log(softmax(v)),
    "leaky_relu": lambda v: np.where(v >= 0, v, 0.1 * v),
    "elu": lambda v: np.where(v > 0, v, 1.5 * np.expm1(v)),
    "elu_alpha": lambda v: np.where(v > 0, v, 0.5 * np.expm1(v)),
    "gelu": lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))),
    "gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3))),
    "swish": lambda v: v / (1 + np.exp(-v)),
    "selu": lambda v: SELU_G * np.where(v > 0, v, SELU_A * np.expm1(v)),
    "softplus": softplus,
    "hardtanh": lambda v: np.clip(v, -0.5, 0.75),
    "relu6": lambda v: np.clip(4 * v, 0, 6),
    "prelu": lambda v: np.where(v < 0, 0.2 * v, v),
    "celu": lambda v: np.maximum(v, 0) + np.minimum(0, 1.5 * np.expm1(v / 1.5)),
    "mish": lambda v: v * np.tanh(softplus(v)),
    "softsign": lambda v: v / (1 + np.abs(v)),
    "tanhshrink": lambda v: v - np.tanh(v),
    "softshrink": lambda v: np.where(v > 0.5, v - 0.5, np.where(v < -0.5, v + 0.5, 0)),
    "hardshrink": lambda v: np.where(np.abs(v) > 0.5, v, 0),
    "threshold": lambda v: np.where(v > 0.1, v, 20.0),
    "hardswish": lambda v: 3 * v * np.clip(3 * v / 6 + 0.5, 0, 1),
    "thresholded_relu": lambda v: np.where(v > 0.3, v, 0),
    "hardsigmoid": lambda v: np.clip(0.2 * 3 * v + 0.5, 0, 1),
    "reduce_mean": np.mean, "reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min,
    "reduce_l1": lambda v: np.abs(v).sum(), "reduce_l2": lambda v: np.sqrt((v * v).sum()),
    "reduce_sum_square": lambda v: (v * v).sum(), "reduce_log_sum": lambda v: np.log(np.abs(v).sum()),
    "reduce_log_sum_exp": lambda v: np.log(np.exp(v).sum()), "reduce_prod": np.prod,
}


@pytest.fixture(scope="module")
def out():
    return run_program(SOURCE, x=X, d=D)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_against_numpy_f32_rank3_and_f64_rank1(out, name):
    ref = REFERENCE[name]
    close(out[f"{name}_x"], ref(X.astype(np.float64)), np.float32, rtol=1e-5, atol=1e-5)
    close(out[f"{name}_d"], ref(D), np.float64, rtol=1e-12, atol=1e-13)
