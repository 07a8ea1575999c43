"""einc's output against a dense definition's float64 meaning.

A sum of n products in precision u is within about n * u * sum(|terms|) of the exact value,
whatever the order of the sum (the classic forward error bound; blocked, pairwise and FMA sums
do better), and max, min and ReLU add no error of their own. fuzz.dense.reference carries,
for each element, `magnitude` (the sum of |terms|, through a chain of definitions) and `length`
(the most roundings on the way), so an element agrees when

    |got - exact| <= SAFETY * u * (length + 1) * magnitude

with u = 2**-24 in f32 and 2**-53 in f64 (whose float64 reference has an error of the same
order; SAFETY covers it). A wrong padding, stride, window or layout moves a value by about its
magnitude, orders past this bound.
"""
from __future__ import annotations

import numpy as np

from fuzz.dense.reference import Meaning

UNIT_ROUNDOFF = {"f32": 2.0 ** -24, "f64": 2.0 ** -53}
SAFETY = 4
OUTPUT_TYPES = {"f32": np.float32, "f64": np.float64}


def allowed_error(want: Meaning, dtype: str) -> np.ndarray:
    return SAFETY * UNIT_ROUNDOFF[dtype] * (want.length + 1) * want.magnitude


def disagreement(got, want: Meaning, dtype: str) -> str | None:
    """None when `got` agrees with the meaning; otherwise the worst element, described."""
    got = np.asarray(got)
    if got.shape != want.value.shape:
        return f"shape {got.shape}, expected {want.value.shape}"
    if got.dtype != OUTPUT_TYPES[dtype]:
        return f"dtype {got.dtype}, expected {dtype}"
    allowed = allowed_error(want, dtype)
    error = np.abs(got.astype(np.float64) - want.value)
    bad = ~(error <= allowed)                      # NaN is bad too
    if not np.any(bad):
        return None
    k = tuple(int(i) for i in np.unravel_index(np.argmax(np.where(bad, error - allowed, -np.inf)), bad.shape))
    return (f"at {k}: {got[k]!r}, expected {want.value[k]!r} (allowed error {allowed[k]:.3g}; "
            f"{int(np.sum(bad))} of {bad.size} elements wrong)")
