"""Derivatives through a `Compact` (a comprehension filtered at run time): the filter picks rows,
so a tangent is picked the same way, and an adjoint goes back to the rows it came from."""
from __future__ import annotations

from einc.ir.nodes import Compact, Generic, IndexRef, Op, Read, Value, fresh_index_vars
from einc.autodiff.local_rules import const


def compact_tangent(t: Compact, source_tangent: Value) -> Compact:
    """The tangent rows at the kept positions (direction axes, if any, trail each row)."""
    return Compact(source_tangent, t.mask, t.kept, t.count, t.length, span=t.span)


def compact_adjoint(t: Compact, adjoint: Value) -> Value:
    """Row p of the source gets adjoint row kept[p] (its output position) where the mask keeps
    it, else 0."""
    vars_ = fresh_index_vars(t.source.shape, "q")
    row = IndexRef(vars_[0])
    value = Read(adjoint, (Read(t.kept, (row,)),) + tuple(IndexRef(v) for v in vars_[1:]))
    return Generic(vars_, Op("select", (Read(t.mask, (row,)), value, const(0.0, value)), value.dtype))
