"""Formatting `print(...)` traces with the signature's print templates."""
from __future__ import annotations

import numpy as np

from einc.runtime.errors import RunError

PRINT_LABEL_PREFIX = "einc.print."


def format_print(parts: list[dict], args: list[np.ndarray]) -> str:
    """Join a template's parts: {"text": s} verbatim, {"arg": k, "spec": s} formats args[k]."""
    pieces = []
    for part in parts:
        if "text" in part:
            pieces.append(part["text"])
        else:
            pieces.append(format_value(args[part["arg"]], part.get("spec", "")))
    return "".join(pieces)


def format_value(value: np.ndarray, spec: str) -> str:
    """Scalars (0-d) print like NumPy scalars, arrays like str(array); a spec applies per element."""
    try:
        if value.ndim == 0:
            scalar = value[()]
            return format(scalar.item(), spec) if spec else str(scalar)
        if not spec:
            return str(value)
        return np.array2string(value, separator=" ", formatter={"all": lambda x: format(x.item(), spec)})
    except (ValueError, TypeError) as err:
        raise RunError(f"cannot format a {value.dtype} value with format spec {spec!r}: {err}") from None
