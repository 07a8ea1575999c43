"""einc's outputs against the NumPy meaning, with a tolerance per type.

Integers and booleans must be equal. A float element `got` agrees with the meaning `ex` (the
program's own precision) and `wd` (wider) when

    |got - ex| <= RTOL * |ex| + ATOL * scale + AMPLIFY * |ex - wd|

with `scale` = max(1, largest |wd| of the output). RTOL allows a few hundred ulps for other
implementations of exp, tanh, ... and another order of a sum; |ex - wd| is how much this very
computation amplifies rounding (a cancellation, a long recurrence), so a result may move by a
multiple of it. Derivatives are compared with central finite differences of the wide
evaluation, whose own error is far below their tolerance.
"""
from __future__ import annotations

import numpy as np

from fuzz.programs.meaning import Pair

RTOL = {"f32": 3e-5, "f64": 1e-11}
ATOL = {"f32": 1e-6, "f64": 1e-13}
DERIVATIVE_RTOL = {"f32": 2e-3, "f64": 1e-6}
DERIVATIVE_ATOL = {"f32": 1e-4, "f64": 1e-8}
AMPLIFY = 16
OUTPUT_TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
                "bool": np.bool_}


def disagreement(got, want: Pair, derivative: bool = False, f32_inside: bool = False) -> str | None:
    """None when `got` agrees with the meaning; otherwise a short description of the worst element.
    `f32_inside`: the value may pass through an f32 exp, cos, ... widened to f64, so an f64
    result is held to f32's relative tolerance."""
    got = np.asarray(got)
    expected = np.asarray(want.ex)
    if got.shape != expected.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    if got.dtype != OUTPUT_TYPES[want.dtype]:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if want.dtype not in RTOL:
        wrong = got != expected
        if np.any(wrong):
            k = tuple(int(i) for i in np.argwhere(wrong)[0])
            return f"at {k}: {got[k]!r}, expected {expected[k]!r}"
        return None
    allowed = tolerance(want, derivative, "f32" if f32_inside else want.dtype)
    error = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    bad = ~(error <= allowed)                      # NaN in got is bad too
    if np.any(bad):
        k = tuple(int(i) for i in np.argwhere(bad)[0])
        return f"at {k}: {got[k]!r}, expected {expected[k]!r} (allowed error {allowed[k]:.3g})"
    return None


def tolerance(want: Pair, derivative: bool = False, precision: str | None = None) -> np.ndarray:
    ex = np.asarray(want.ex, np.float64)
    precision = want.dtype if precision is None or want.dtype == "f32" else precision
    wd = np.asarray(want.wd).astype(np.float64)
    scale = max(1.0, float(np.max(np.abs(wd), initial=0.0)))
    if derivative:
        return DERIVATIVE_RTOL[want.dtype] * np.abs(wd) + DERIVATIVE_ATOL[want.dtype] * scale
    return RTOL[precision] * np.abs(ex) + ATOL[precision] * scale + AMPLIFY * np.abs(ex - wd)

