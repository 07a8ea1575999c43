"""`x in coll`: membership in a range, in an array, or of a row in a table.

`v in lo..hi` is `lo <= v && v < hi`. `x in arr` is true when some element of `arr` equals `x`,
and for `x` of rank r it compares the rows of `arr` (its sub-arrays of rank r) with `x` whole:
`[5, 6] in tbl` is true when some row of tbl is [5, 6]. Known operands give the answer at build
time; otherwise it is an `any` reduction over the rows (of `all` over a row's elements).
"""
from __future__ import annotations

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import IndexRef, IndexVar, Reduce, Value
from einc.ir.types import Lin, shape_str
from einc.semantics.forms import definitions
from einc.semantics.core import scalar_ops, tensors
from einc.semantics.core.folding import known
from einc.semantics.forms.pointwise import check_number, elementwise
from einc.semantics.core.values import Weak, describe


def in_range(el, item, rng, env, span):
    lo, hi = definitions.range_bounds(el, rng, env)
    above = elementwise(el, "ge", [item, lo.value], span)
    return elementwise(el, "and", [above, elementwise(el, "lt", [item, hi.value], span)], span)


def membership(el, item, coll, span):
    check_number(item, "`in`", span)
    coll = tensors.whole(coll, span)
    if not isinstance(coll, (Value, Weak)) or coll.rank == 0:
        raise d.error(d.TYPE, f"`in` needs an array on the right, found {describe(coll)}", span)
    row_rank = coll.rank - 1
    item_shape = _shape(item)
    if len(item_shape) != row_rank or (row_rank and _shape(coll)[1:] != item_shape):
        raise d.error(d.SHAPE, f"`in` compares {describe(item)} with the rows of {describe(coll)}, "
                      f"which are {shape_str(_shape(coll)[1:])}", span)
    folded = _fold(item, coll, span)
    if folded is not None:
        return folded
    coll = scalar_ops.materialize(coll, None, span) if isinstance(coll, Weak) else coll
    if isinstance(item, Weak) and item.rank:
        item = scalar_ops.materialize(item, coll.dtype, span)
    rows = IndexVar("m", Lin(0), coll.shape[0])
    within = tuple(IndexVar(f"m{k}", Lin(0), n) for k, n in enumerate(coll.shape[1:], start=1))
    element = tensors.read(coll, [IndexRef(rows)] + [IndexRef(v) for v in within], span, el.state, "")
    if within:
        part = tensors.read(item, [IndexRef(v) for v in within], span, el.state, "")
        same = Reduce("all", within, scalar_ops.apply("eq", [element, part], span), span=span)
    else:
        same = scalar_ops.apply("eq", [element, item], span)
    return Reduce("any", (rows,), same, span=span)


def _shape(v) -> tuple:
    if isinstance(v, Weak):
        return tuple(Lin(n) for n in v.value.shape)
    return tuple(getattr(v, "shape", ()))


def _fold(item, coll, span):
    a, table = known(item), known(coll)
    if a is None or table is None:
        return None
    # the typing rules of `==` decide whether the two may be compared at all
    scalar_ops.apply("eq", [_scalar_like(item), _scalar_like(coll)], span)
    rows = table.reshape(table.shape[0], -1) if table.ndim > 1 else table[:, None]
    return Weak(np.asarray(bool(np.any(np.all(rows == a.reshape(1, -1), axis=1)))), "bool", span)


def _scalar_like(v):
    """A scalar of `v`'s type, for type checks (a literal stays a literal)."""
    if isinstance(v, Weak):
        return Weak(np.zeros((), v.value.dtype), v.kind)
    return scalar_ops.materialize(Weak(np.zeros((), v.dtype.numpy), scalar_ops.kind_of(v.dtype)), v.dtype)
