"""Elements become one value: an array literal `[a, b, c]` and the elements a comprehension
produces are stacked the same way.

- numbers of one shape become an array with a new leading axis: untyped literals stay untyped
  (`Weak`), typed constants fold into a `Const`, anything computed at run time is a `Stack`;
- tuples whose fields are numbers of one type become rows: `[(r, c) | ..]` is an (N, 2) array;
- strings, units `()`, tuples of mixed types and (from a comprehension) rows of different
  lengths stay a build-time `ListVal`;
- no elements at all is an empty untyped float array, which takes its type from its context.
"""
from __future__ import annotations

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import Clause, Const, Piecewise, Stack, Value, is_folding_constant
from einc.ir.types import Lin
from einc.semantics.core import scalar_ops, tensors
from einc.semantics.core.values import LazyJacobian, ListVal, PartialRead, Traced, TupleVal, Weak, describe

NUMERIC = (Weak, Value, PartialRead, LazyJacobian)


def stack(elems: list, span, jagged_ok: bool = False):
    """The value of the elements `elems` side by side (see the module docstring)."""
    if not elems:
        return Weak(np.zeros(0), "float", span)
    if all(isinstance(x, TupleVal) and x.items for x in elems):
        rows = tuple_rows(elems, span)
        if rows is not None:
            return stack_numbers(rows, span)
    if not all(isinstance(x, NUMERIC) for x in elems):
        return ListVal(tuple(elems), span)
    shapes = {_shape_key(x) for x in elems}
    if len(shapes) != 1:
        if jagged_ok:
            return ListVal(tuple(elems), span)
        raise d.error(d.SHAPE, "array literal is not rectangular: its elements have shapes "
                      + ", ".join(sorted(map(str, shapes))), span)
    return stack_numbers(elems, span)


def stack_numbers(elems: list, span):
    """Numbers (scalars or arrays) of one shape along a new leading axis."""
    if all(isinstance(x, Weak) for x in elems):
        return _literal_array(elems, span)
    # Literal rows stay untyped until unify gives them the typed rows' dtype.
    typed = scalar_ops.unify([x if isinstance(x, Weak) else tensors.whole(x, span) for x in elems], span)
    if any(isinstance(x, Weak) for x in typed):
        typed = [scalar_ops.materialize(x, None, span) for x in typed]
    if all(is_folding_constant(x) for x in typed):
        return Const(np.stack([x.array for x in typed]), span=span)
    return Stack(tuple(typed), span=span)


def _literal_array(elems: list, span) -> Weak:
    """An array of untyped literals; int and float elements make a float array."""
    kinds = {x.kind for x in elems if x.value.size} or {elems[0].kind}
    if kinds == {"float", "int"}:
        kinds = {"float"}
    if len(kinds) > 1:
        raise d.error(d.TYPE, "array literal mixes " + " and ".join(sorted(kinds)), span)
    kind = kinds.pop()
    trace = None
    if any(x.trace is not None for x in elems):     # elements a derivative differentiates
        trace = Traced(lambda dtype: Stack(tuple(scalar_ops.materialize(x, dtype, span) for x in elems),
                                           span=span))
    value = np.stack([x.value for x in elems])
    return Weak(value.astype(np.float64) if kind == "float" else value, kind, span, trace)


def append(el, arr, x, span):
    """`arr` with `x` after its last element along the first axis (a row of a table)."""
    rest = _shape_key(arr)[1:] if isinstance(arr, Weak) else tuple(repr(n) for n in tensors.shape_only(arr).shape[1:])
    if _shape_key(x) != rest and not (isinstance(arr, Weak) and arr.value.size == 0):
        raise d.error(d.SHAPE, f"`array_append` of {describe(x)} to {describe(arr)}: the new element "
                      "must have the shape of the others", span)
    if isinstance(arr, Weak) and isinstance(x, Weak) and arr.trace is None and x.trace is None:
        kind = x.kind if arr.value.size == 0 else arr.kind
        if x.kind != kind:
            raise d.error(d.TYPE, f"`array_append` of a {x.kind} literal to {kind} literals", span)
        return Weak(np.concatenate([arr.value.reshape((-1,) + x.value.shape), x.value[None]]), kind, span)
    arr, x = scalar_ops.unify([arr if isinstance(arr, Weak) else tensors.whole(arr, span), x], span)
    arr, x = (scalar_ops.materialize(v, None, span) for v in (arr, tensors.whole(x, span)))
    if is_folding_constant(arr) and is_folding_constant(x):
        return Const(np.concatenate([arr.array, x.array[None]]), span=span)
    n = arr.shape[0]
    zeros = (Lin(0),) * x.rank
    clauses = (Clause((Lin(0),) + zeros, arr), Clause((n,) + zeros, Stack((x,), span=span)))
    return Piecewise(arr.dtype, (n + 1,) + tuple(arr.shape[1:]), clauses, span=span)


def tuple_rows(elems: list, span):
    """Tuples of number scalars sharing one type, each as a row; None when they do not."""
    widths = {len(x.items) for x in elems}
    fields = [f for x in elems for f in x.items]
    if len(widths) != 1 or not all(isinstance(f, (Weak, Value)) and f.rank == 0 for f in fields):
        return None
    kinds = {f.kind if isinstance(f, Weak) else scalar_ops.kind_of(f.dtype) for f in fields}
    dtypes = {f.dtype for f in fields if isinstance(f, Value)}
    if len(dtypes) > 1 or len(kinds) > 1:
        return None
    return [stack_numbers(list(x.items), span) for x in elems]


def _shape_key(x):
    """Shapes as strings, so a literal row `[0.0, 1.0]` matches a typed row `[1.0, dt]`."""
    if isinstance(x, Weak):
        return tuple(repr(s) for s in x.value.shape)
    return tuple(repr(s) for s in x.shape)

