"""How a value is written into text: by `print` at run time (einc.runtime.printing) and by the
interpolation of a build-time value into a string (`"data_{k}.npy"`), which must agree."""
from __future__ import annotations

import numpy as np


def format_value(value: np.ndarray, spec: str) -> str:
    """Scalars (0-d) print like NumPy scalars, arrays like str(array); a spec applies per element.
    Raises ValueError or TypeError when the spec does not fit the value."""
    if value.ndim == 0:
        scalar = value[()]
        return format(scalar.item(), spec) if spec else str(scalar)
    if not spec:
        return str(value)
    return np.array2string(value, separator=" ", formatter={"all": lambda x: format(x.item(), spec)})
