"""Rebuild a scalar expression with some index variables replaced by other values.

Used when an adjoint sums over a variable that a subscript pins down: `v := u - c`. Nested
reductions keep their own variables but get fresh copies, so the same reduction substituted
two ways stays two independent loops.
"""
from __future__ import annotations

from einc.ir import affine
from einc.ir.nodes import (Const, Generic, IndexRef, IndexVar, Input, Op, Read, Reduce, Size, Stack,
                           StateRead, Value, free_vars)


def substitute(expr: Value, mapping: dict) -> Value:
    """`expr` with IndexRef(var) replaced by mapping[var] (a scalar i32 Value)."""
    return Substitution(mapping).value(expr)


class Substitution:
    def __init__(self, mapping: dict):
        self.mapping = dict(mapping)
        self.memo: dict[int, Value] = {}

    def value(self, v: Value) -> Value:
        if id(v) in self.memo:
            return self.memo[id(v)]
        out = self._rebuild(v)
        self.memo[id(v)] = out
        return out

    def _rebuild(self, v: Value) -> Value:
        if isinstance(v, IndexRef):
            new = self.mapping.get(v.var, v)
            # a variable mapped to itself (a batch axis of a step tensor read at the point it is
            # batched over) keeps the nodes that read it: a derivative's x is known by identity
            return v if isinstance(new, IndexRef) and new.var is v.var else new
        if isinstance(v, Stack) and free_vars(v):      # an array literal built at each point
            elems = tuple(self.value(e) for e in v.elems)
            return v if elems == v.elems else Stack(elems, span=v.span)
        if isinstance(v, (Const, Input, Size)) or v.rank > 0 or (isinstance(v, Generic) and not free_vars(v)):
            # program-level: closed over its own vars (a definition of rank 0 as well, such as
            # softmax's `s[..lead]` of a vector)
            return v
        if isinstance(v, Op):
            args = tuple(self.value(a) for a in v.args)
            return v if args == v.args else Op(v.op, args, v.dtype, span=v.span)
        if isinstance(v, Read):
            source = self.value(v.tensor) if isinstance(v.tensor, Stack) else v.tensor
            subs = tuple(self.value(s) for s in v.subs)
            if subs == v.subs and source is v.tensor:
                return v
            # the new subscripts need their own proof: an affine map is only safe in bounds
            in_bounds = all(affine.subscript_in_bounds(s, n) for s, n in zip(subs, v.tensor.shape))
            return Read(source, subs, span=v.span, in_bounds=in_bounds)
        if isinstance(v, StateRead):     # kept where unchanged: a derivative's x is known by identity
            subs = tuple(self.value(s) for s in v.subs)
            return v if subs == v.subs else StateRead(v.member, subs, span=v.span)
        if isinstance(v, Reduce):
            return self._reduce(v)
        raise TypeError(f"cannot substitute into {type(v).__name__}")

    def _reduce(self, r: Reduce) -> Reduce:
        fresh = tuple(IndexVar(x.name, x.lo, x.extent, span=x.span) for x in r.vars)
        inner = Substitution({**self.mapping, **{old: IndexRef(new) for old, new in zip(r.vars, fresh)}})
        body = inner.value(r.body)
        guard = inner.value(r.guard) if r.guard is not None else None
        return Reduce(r.kind, fresh, body, guard, span=r.span)
