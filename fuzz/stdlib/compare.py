"""einc's output against a drawn call's meaning.

A float output agrees when |got - exact| <= TOLERANCE[type] * scale element by element, where
the drawer gives `scale`: 1 + |exact| for elementwise functions (a few ulps of the
math library, absolute near zero), the sum of |terms| for sums (conv, pooling, matmul, gemm:
the reference run on |inputs|; a sum of n terms is within about n u of that, and n stays
under 100 here). A wrong pad, stride, axis or layout moves an element by about its scale,
orders past this. Outputs that only move data (and integers, argmax, floor, ..) are exact.
"""
from __future__ import annotations

import numpy as np

from fuzz.stdlib.draw import NUMPY_TYPES
from fuzz.stdlib.spec import Want

TOLERANCE = {"f32": 3e-5, "f64": 1e-12}


def disagreement(got, want: Want) -> str | None:
    got = np.asarray(got)
    if got.shape != want.value.shape:
        return f"shape {got.shape}, expected {want.value.shape}"
    if got.dtype != NUMPY_TYPES[want.dtype]:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if want.scale is None:
        bad = got != want.value
        allowed = np.zeros(got.shape)
    else:
        allowed = TOLERANCE[want.dtype] * want.scale
        bad = ~(np.abs(got.astype(np.float64) - want.value) <= allowed)        # NaN is bad too
    if not np.any(bad):
        return None
    k = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"at {k}: {got[k]!r}, expected {want.value[k]!r} (allowed error {allowed[k]:.3g}; "
            f"{int(np.sum(bad))} of {bad.size} elements wrong)")
