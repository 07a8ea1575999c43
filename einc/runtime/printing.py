"""Formatting `print(...)` traces with the signature's print templates."""
from __future__ import annotations

import numpy as np

from einc import formatting
from einc.diagnostics import file_problem
from einc.runtime.errors import RunError

PRINT_LABEL_PREFIX = "einc.print."


def perform(parts: list[dict], args: list[np.ndarray], stdout) -> None:
    """One recorded effect: a `save_npy` writes its file, a `print` its text."""
    if parts and "save" in parts[0]:
        save(parts[0], args[0])
    else:
        stdout.write(format_print(parts, args))


def save(part: dict, value: np.ndarray) -> None:
    if "dtype" in part:
        value = value.view(part["dtype"])
    try:
        with open(part["save"], "wb") as f:
            np.save(f, value)
    except OSError as err:
        raise RunError(f"save_npy could not write {part['save']}: {file_problem(err)}") from None


def format_print(parts: list[dict], args: list[np.ndarray]) -> str:
    """Join a template's parts: {"text": s} verbatim, {"arg": k, "spec": s} formats args[k]."""
    pieces = []
    for part in parts:
        if "text" in part:
            pieces.append(part["text"])
        else:
            value = args[part["arg"]]
            if "dtype" in part:      # an unsigned value, traced as the signed integer of its bits
                value = value.view(part["dtype"])
            pieces.append(format_value(value, part.get("spec", "")))
    return "".join(pieces)


def format_value(value: np.ndarray, spec: str) -> str:
    """`einc.formatting.format_value`, with a spec that does not fit the value as a RunError."""
    try:
        return formatting.format_value(value, spec)
    except (ValueError, TypeError) as err:
        raise RunError(f"cannot format a {value.dtype} value with format spec {spec!r}: {err}") from None
