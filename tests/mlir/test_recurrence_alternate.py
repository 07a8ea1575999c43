"""A step whose members each sum a weight matrix of the program times the last state (a GRU's
three gates) computes those sums first, the last member's first, on every odd step
(recurrence_alternate), so the matrices the step before read last are read first, from L2.
Against NumPy every step, at odd sizes (whole vectors and a scalar rest) on both sides of
STREAMED_BYTES (the run-time test that turns the odd steps' order on) and step counts that end
on an odd and an even step, f32 and f64; a gate whose sum reads another member at the
current step (the original GRU's Un (r * h)) keeps its place."""
import re

import numpy as np
import pytest

import einc
from einc.mlir.recurrences.alternate import STREAMED_BYTES
from tests.programs import built, source

rng = np.random.default_rng(91)

GRU = source("gru").replace("let final[i] = h[T - 1, i];", "")

# f64 math runs point by point, so a cell of rational gates keeps the f64 gates in lanes
RATIONAL_F64 = """
    let Uz: [f64; H, H];
    let Ur: [f64; H, H];
    let Un: [f64; H, H];
    let xz: [f64; T, H];
    let xr: [f64; T, H];
    let xn: [f64; T, H];
    let h[0, i in 0..H] = 0.0 as f64;
    let z[t in 1..T, i in 0..H] = { let s = sum[j](Uz[i, j] * h[t - 1, j]) + xz[t, i]; 1.0 / (2.0 + s * s) };
    let g[t in 1..T, i in 0..H] = { let s = sum[j](Ur[i, j] * h[t - 1, j]) + xr[t, i]; 1.0 / (2.0 + s * s) };
    let n[t in 1..T, i in 0..H] = { let s = g[t, i] * sum[j](Un[i, j] * h[t - 1, j]) + xn[t, i]; s / (1.0 + s * s) };
    let h[t in 1..T, i in 0..H] = (1.0 - z[t, i]) * n[t, i] + z[t, i] * h[t - 1, i];
"""

# Cho et al.'s GRU: the candidate's sum reads the reset gate g at the current step
RESET_INSIDE = """
    use std::math::{exp, tanh};
    fn sigmoid(v) { 1.0 / (1.0 + exp(-v)) }
    let Uz: [f32; H, H];
    let Ur: [f32; H, H];
    let Un: [f32; H, H];
    let xz: [f32; T, H];
    let xr: [f32; T, H];
    let xn: [f32; T, H];
    let h[0, i in 0..H] = 0.0;
    let z[t in 1..T, i in 0..H] = sigmoid(sum[j](Uz[i, j] * h[t - 1, j]) + xz[t, i]);
    let g[t in 1..T, i in 0..H] = sigmoid(sum[j](Ur[i, j] * h[t - 1, j]) + xr[t, i]);
    let n[t in 1..T, i in 0..H] = tanh(sum[j](Un[i, j] * (g[t, j] * h[t - 1, j])) + xn[t, i]);
    let h[t in 1..T, i in 0..H] = (1.0 - z[t, i]) * n[t, i] + z[t, i] * h[t - 1, i];
"""


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def gru_reference(x: dict, reset_inside: bool) -> np.ndarray:
    """Every step of h, in float64."""
    Uz, Ur, Un, xz, xr, xn = (x[k].astype(np.float64) for k in ("Uz", "Ur", "Un", "xz", "xr", "xn"))
    h = np.zeros((len(xz), len(Uz)))
    for t in range(1, len(xz)):
        z = sigmoid(Uz @ h[t - 1] + xz[t])
        g = sigmoid(Ur @ h[t - 1] + xr[t])
        n = np.tanh(Un @ (g * h[t - 1]) + xn[t]) if reset_inside else np.tanh(g * (Un @ h[t - 1]) + xn[t])
        h[t] = (1 - z) * n + z * h[t - 1]
    return h


def gru_inputs(steps: int, size: int, dtype) -> dict:
    weights = {k: rng.standard_normal((size, size)) / np.sqrt(size) for k in ("Uz", "Ur", "Un")}
    inputs = {k: rng.standard_normal((steps, size)) for k in ("xz", "xr", "xn")}
    return {k: v.astype(dtype) for k, v in {**weights, **inputs}.items()}


@pytest.mark.parametrize("steps", [2, 3, 10, 11])
@pytest.mark.parametrize("size", [37, 149])
def test_a_gru_whose_odd_steps_run_their_sums_first_matches_numpy(steps, size):
    assert (3 * size * size * 4 > STREAMED_BYTES) == (size == 149)       # one size on each side
    x = gru_inputs(steps, size, np.float32)
    with einc.load(built(GRU, outputs=["h"]).vmfb) as program:
        got = program(**x)["h"]
    np.testing.assert_allclose(got, gru_reference(x, False), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("steps", [6, 9])
@pytest.mark.parametrize("size", [29, 107])
def test_in_f64_too(steps, size):
    assert (3 * size * size * 8 > STREAMED_BYTES) == (size == 107)
    x = gru_inputs(steps, size, np.float64)
    with einc.load(built(RATIONAL_F64, outputs=["h"]).vmfb) as program:
        got = program(**x)["h"]
    Uz, Ur, Un, xz, xr, xn = (x[k] for k in ("Uz", "Ur", "Un", "xz", "xr", "xn"))
    h = np.zeros((steps, size))
    for t in range(1, steps):
        z, g = 1 / (2 + (Uz @ h[t - 1] + xz[t]) ** 2), 1 / (2 + (Ur @ h[t - 1] + xr[t]) ** 2)
        s = g * (Un @ h[t - 1]) + xn[t]
        h[t] = (1 - z) * s / (1 + s * s) + z * h[t - 1]
    np.testing.assert_allclose(got, h, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("steps", [3, 8])
def test_a_sum_reading_another_member_at_the_current_step_keeps_its_place(steps):
    assert 2 * 185 * 185 * 4 > STREAMED_BYTES       # z's and g's matrices
    x = gru_inputs(steps, 185, np.float32)
    with einc.load(built(RESET_INSIDE, outputs=["h"]).vmfb) as program:
        got = program(**x)["h"]
    np.testing.assert_allclose(got, gru_reference(x, True), rtol=1e-5, atol=1e-5)


def test_only_steps_that_stream_two_or_more_weight_matrices_alternate(emitted):
    def alternates(text: str) -> bool:      # the odd steps' branch tests the step's last bit
        return re.search(r"arith\.andi %\w+, %c1\w* : index", emitted(text)) is not None
    assert alternates(GRU) and alternates(RATIONAL_F64)
    assert alternates(RESET_INSIDE)         # z and g still alternate
    assert not alternates(source("rnn_steps")) and not alternates(source("lstm"))
