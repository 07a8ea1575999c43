"""einc's outputs against the NumPy meaning, with a tolerance per type.

Integers and booleans must be equal. A float element `got` agrees with the meaning `ex` (the
program's own precision) and `wd` (wider) when

    |got - ex| <= RTOL * |ex| + ATOL * scale + AMPLIFY * |ex - wd|

with `scale` = max(1, largest |wd| of the output). RTOL allows a few hundred ulps for other
implementations of exp, tanh, ... and another order of a sum; |ex - wd| is how much this very
computation amplifies rounding (a cancellation, a long recurrence), so a result may move by a
multiple of it. Derivatives are compared with central finite differences of the wide
evaluation, whose own error is far below their tolerance; but the program differentiates at
its own values, so a derivative's relative tolerance grows by AMPLIFY times the drift of the
value it is of (Pair.drift): a long bf16 chain can leave a primal 10% off, and the derivative
at it moves with it.
"""
from __future__ import annotations

import numpy as np

from fuzz.programs.meaning import OUTPUT_TYPES, Pair
from fuzz.programs.structure import COARSEST_FIRST

# f16 and bf16: 4 and 3 ulps (2^-11, 2^-8) for a reduction in another order or a math function
# rounded the other way; what a chain of roundings amplifies is in |ex - wd| as for f32
RTOL = {"f32": 3e-5, "f64": 1e-11, "f16": 2e-3, "bf16": 1.2e-2}
ATOL = {"f32": 1e-6, "f64": 1e-13, "f16": 1e-4, "bf16": 1e-3}
DERIVATIVE_RTOL = {"f32": 2e-3, "f64": 1e-6, "f16": 3e-2, "bf16": 1e-1}
DERIVATIVE_ATOL = {"f32": 1e-4, "f64": 1e-8, "f16": 3e-3, "bf16": 1e-2}
AMPLIFY = 16


def disagreement(got, want: Pair, derivative: bool = False, approximated_in: str | None = None) -> str | None:
    """None when `got` agrees with the meaning; otherwise a short description of the worst element.
    `approximated_in`: the value may pass through an exp, cos, ... of that (coarser) type widened,
    so a wider result is held to that type's relative tolerance."""
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
    allowed = tolerance(want, derivative, approximated_in)
    error = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    bad = ~(error <= allowed)                      # NaN in got is bad too
    if np.any(bad):
        k = tuple(int(i) for i in np.argwhere(bad)[0])
        return f"at {k}: {got[k]!r}, expected {expected[k]!r} (allowed error {allowed[k]:.3g})"
    return None


def tolerance(want: Pair, derivative: bool = False, precision: str | None = None) -> np.ndarray:
    ex = np.asarray(want.ex, np.float64)
    precision = min((want.dtype, precision or want.dtype), key=COARSEST_FIRST.index)
    wd = np.asarray(want.wd).astype(np.float64)
    scale = max(1.0, float(np.max(np.abs(wd), initial=0.0)))
    if derivative:
        rtol = DERIVATIVE_RTOL[want.dtype] + AMPLIFY * want.drift
        return rtol * np.abs(wd) + DERIVATIVE_ATOL[want.dtype] * scale
    return RTOL[precision] * np.abs(ex) + ATOL[precision] * scale + AMPLIFY * np.abs(ex - wd)

