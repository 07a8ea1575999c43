"""One-line summaries of output arrays for `einc run`."""
from __future__ import annotations

import numpy as np

from einc.formatting import format_value

_SHOW_ALL_UP_TO = 8  # elements
_HEAD = 4


def summarize(name: str, value: np.ndarray) -> str:
    """`name: dtype[shape] values...`, with min/max/mean for arrays too big to show whole."""
    if value.ndim == 0:
        # print's text: NumPy's shortest round trip for the dtype, `true`/`false` for a bool
        return f"{name}: {value.dtype} = {format_value(value, '')}"
    head = f"{name}: {value.dtype}[{', '.join(map(str, value.shape))}]"
    flat = value.ravel()
    if flat.size <= _SHOW_ALL_UP_TO:
        return f"{head} {_values(flat)}"
    return f"{head} {_values(flat[:_HEAD])[:-1]} ...] {_statistics(flat)}"


def _values(flat: np.ndarray) -> str:
    if flat.dtype == np.bool_:
        return format_value(flat, "")
    return np.array2string(flat, separator=" ", max_line_width=10_000)


def _statistics(flat: np.ndarray) -> str:
    if flat.dtype == np.bool_:
        return f"true={int(flat.sum())}/{flat.size}"
    with np.errstate(all="ignore"):     # inf - inf in the mean is nan, not a warning on stderr
        mean = flat.mean(dtype=np.float64)
    return f"min={flat.min()!s} max={flat.max()!s} mean={mean:.6g}"
