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
        return _integer_row(value) or str(value)
    return np.array2string(value, separator=" ", formatter={"all": lambda x: _scalar(x, spec)})


# NumPy's print options when einc was imported: `_integer_row` writes what `str` writes with them.
_DEFAULT_PRINT_OPTIONS = np.get_printoptions()
_INTEGER_KINDS = "iu"


def _integer_row(value: np.ndarray) -> str | None:
    """str(value) of a 1-d integer array that fits on one line, written here: NumPy's `str` took
    20-40 us for a few integers (the MNIST CNN prints its digits each call, a fifth of a call at
    batch 1). Each element right-aligned to the widest, one space apart, in brackets. None where
    NumPy would wrap or summarize the line, or prints with options of the caller's own."""
    if value.ndim != 1 or value.dtype.kind not in _INTEGER_KINDS or not 0 < value.size < 64:
        return None
    options = np.get_printoptions()
    if options != _DEFAULT_PRINT_OPTIONS:
        return None
    texts = [str(element) for element in value.tolist()]
    width = max(map(len, texts))
    line = "[" + " ".join(text.rjust(width) for text in texts) + "]"
    return line if len(line) < options["linewidth"] else None


def _scalar(scalar, spec: str) -> str:
    if isinstance(scalar, (bool, np.bool_)):
        return format(bool_text(scalar), spec)
    return format(scalar.item(), spec) if spec else str(scalar)


def bool_text(flag) -> str:
    return "true" if flag else "false"
