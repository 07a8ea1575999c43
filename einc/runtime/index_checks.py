"""The statuses of a module's index checks (einc/passes/index_checks.py), read after each call
before any output is returned: a data-dependent index outside its axis, or an integer division
by zero, fails the run."""
from __future__ import annotations

import numpy as np

NONE_BAD = np.iinfo(np.int32).max      # a status's first point when every index was in range


def bad_index(checks: list[dict], statuses: list[np.ndarray]) -> str | None:
    """The first failed check in program order, as one line (where, the read or division, what
    was wrong and the point); None when every check passed."""
    for check, status in zip(checks, statuses):
        values = [int(x) for x in np.asarray(status).reshape(-1)]
        if values[0] == NONE_BAD:
            continue
        where = f"{check['at']}: " if check.get("at") else ""
        if check.get("kind") == "divisor":
            return f"{where}{check['text']}: integer division by zero{_at(check, values[1:])}"
        _, index, size, *coords = values
        axis = f" along axis {check['axis']}" if check["rank"] > 1 else ""
        read = check["text"] or f"a read of {check['array'] or 'an array'}"
        return f"{where}{read}: index {index} out of range 0..{size}{axis}{_at(check, coords)}"
    return None


def _at(check: dict, coords: list) -> str:
    point = ", ".join(f"{name} = {c}" for name, c in zip(check["vars"], coords))
    return f" at {point}" if point else ""
