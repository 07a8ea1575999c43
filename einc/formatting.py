"""How a value is written into text: by `print` at run time (einc.runtime.printing) and by the
interpolation of a build-time value into a string (`"data_{k}.npy"`), which must agree."""
from __future__ import annotations

import numpy as np


def format_value(value: np.ndarray, spec: str) -> str:
    """Scalars (0-d) print like NumPy scalars, arrays like str(array); a spec applies per element.
    Booleans are written `true` and `false`, as the language spells them (and Rust prints them).
    Raises ValueError or TypeError when the spec does not fit the value."""
    if value.ndim == 0:
        return _scalar(value[()], spec)
    if not spec and value.dtype != np.bool_:
        return str(value)
    return np.array2string(value, separator=" ", formatter={"all": lambda x: _scalar(x, spec)})


def _scalar(scalar, spec: str) -> str:
    if isinstance(scalar, (bool, np.bool_)):
        return format(bool_text(scalar), spec)
    return format(scalar.item(), spec) if spec else str(scalar)


def bool_text(flag) -> str:
    return "true" if flag else "false"
