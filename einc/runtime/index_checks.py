"""The statuses of a module's index checks (einc/passes/index_checks.py), read after each call
before any output is returned: a data-dependent index outside its axis fails the run."""
from __future__ import annotations

import numpy as np

NONE_BAD = np.iinfo(np.int32).max      # a status's first point when every index was in range


def bad_index(checks: list[dict], statuses: list[np.ndarray]) -> str | None:
    """The first failed check in program order, as one line (where, the read, the index, the
    axis's range and the point); None when every index was in range."""
    for check, status in zip(checks, statuses):
        first, index, size, *coords = (int(x) for x in np.asarray(status).reshape(-1))
        if first == NONE_BAD:
            continue
        axis = f" along axis {check['axis']}" if check["rank"] > 1 else ""
        point = ", ".join(f"{name} = {c}" for name, c in zip(check["vars"], coords))
        where = f"{check['at']}: " if check.get("at") else ""
        read = check["text"] or f"a read of {check['array'] or 'an array'}"
        return f"{where}{read}: index {index} out of range 0..{size}{axis}" + (f" at {point}" if point else "")
    return None
