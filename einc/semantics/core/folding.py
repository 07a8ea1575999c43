"""Values known at build time, as NumPy arrays, and the run-time inputs a value depends on.

Untyped literals and constants are known as they are; other program-level values that read no
run-time input are evaluated (einc.ir.evaluate). A construct that needs a number at build time
and finds a run-time value names the inputs that value depends on (`depends_on`).
"""
from __future__ import annotations

import weakref
from typing import Optional

import numpy as np

from einc import diagnostics as d
from einc.ir.evaluate import try_evaluate
from einc.ir.nodes import Const, Input, RecValue, Value, free_vars, walk
from einc.ir.types import dtype_of_numpy
from einc.semantics.core.values import PartialRead, Weak


def known(v) -> Optional[np.ndarray]:
    """The array of `v` if it is known at build time (a number or an array of them), else None."""
    if isinstance(v, Weak):
        return v.value
    if isinstance(v, Const):
        return v.array
    if isinstance(v, PartialRead):
        base, subs = known(v.base), [known(s) for s in v.subs]
        if base is None or any(s is None or s.ndim for s in subs):
            return None
        return base[tuple(int(s) for s in subs)]
    if isinstance(v, Value) and not free_vars(v):
        if v not in _evaluated:        # a filter may ask about the same table for every element
            _evaluated[v] = try_evaluate(v)
        return _evaluated[v]
    return None


_evaluated: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def differentiated(v) -> bool:
    """Whether `v` is, or is computed from, a binding some derivative differentiates (see
    einc.semantics.forms.variables): its number may decide things at build time, but a value made
    from that number would cut it out of the derivative's graph."""
    if isinstance(v, Weak):
        return v.trace is not None
    if isinstance(v, PartialRead):
        return differentiated(v.base)
    return isinstance(v, Value) and any(isinstance(n, Const) and n.differentiable for n in walk([v]))


def constant(array: np.ndarray, what: str, span) -> Const:
    """An array read during the build (`load_npy`, a Python result) as a constant: big-endian
    data is read as the machine's; element types without an Einlang type are an error."""
    if array.dtype.kind not in "fiub":
        raise d.error(d.IO, f"{what} holds {array.dtype}, not numbers", span)
    array = array.astype(array.dtype.newbyteorder("="), copy=False)
    if dtype_of_numpy(array.dtype) is None:
        raise d.error(d.IO, f"{what} holds {array.dtype}, which has no Einlang type", span,
                      hint="save it as float16, float32 or float64")
    return Const(np.ascontiguousarray(array), span=span)


def depends_on(v) -> str:
    """The run-time values `v` is computed from, for a diagnostic: "the input `x`", ..."""
    base = v.base if isinstance(v, PartialRead) else v
    if not isinstance(base, Value):
        return "run-time data"
    names = sorted({n.name for n in walk([base]) if isinstance(n, Input)})
    if names:
        return "the run-time input" + ("s " if len(names) > 1 else " ") + ", ".join(f"`{n}`" for n in names)
    if any(isinstance(n, RecValue) for n in walk([base])):
        return "a recurrence computed at run time"
    return "values computed at run time"
