"""Rebuilding a graph of values with some of its nodes changed, through the bodies of the tensors
it reads.

A rewrite that reaches into program-level tensors (batching a derivative's tensors over an
enclosing index, reading a row through a tensor of its own) rebuilds every value above a changed
one and keeps the others as they are, the same objects, in one pass over the graph, operands
first and without recursion (graphs run thousands of definitions deep).
"""
from __future__ import annotations

from typing import Callable, Optional

from einc.ir.nodes import Generic, Op, Read, Reduce, Stack, StateRead, Value, walk


def rebuild(roots: list, change: Callable[[Value, tuple], Optional[Value]], opaque: tuple = ()) -> dict:
    """{id(value): its new value} for the values under `roots`. `change(v, operands)` gets v's
    operands already rebuilt (in `v.operands()` order) and returns what stands for v, or None for
    v rebuilt plainly from them (v itself where none changed). A value of a kind this module does
    not rebuild (a recurrence, a piecewise definition) is kept only if its operands are; values of
    the types in `opaque` are given to `change` but not entered."""
    new: dict[int, Value] = {}
    for v in walk(roots, opaque):
        operands = () if isinstance(v, opaque) else tuple(new.get(id(o), o) for o in v.operands())
        out = change(v, operands)
        if out is None and isinstance(v, opaque):
            out = v
        elif out is None:
            out = v if all(a is b for a, b in zip(operands, v.operands())) else _plain(v, operands)
        new[id(v)] = out
    return new


def _plain(v: Value, operands: tuple) -> Value:
    if isinstance(v, Op):
        return Op(v.op, operands, v.dtype, span=v.span)
    if isinstance(v, Read):
        return Read(operands[0], operands[1:], span=v.span, in_bounds=v.in_bounds)
    if isinstance(v, StateRead):
        return StateRead(v.member, operands, span=v.span)
    if isinstance(v, Stack):
        return Stack(operands, span=v.span)
    if isinstance(v, (Reduce, Generic)):
        guard = operands[1] if v.guard is not None else None
        if isinstance(v, Reduce):
            return Reduce(v.kind, v.vars, operands[0], guard, span=v.span)
        return Generic(v.vars, operands[0], guard, span=v.span)
    raise NotImplementedError(f"rebuilding a {type(v).__name__} whose operands changed")
