"""A gradient asked for per point of an enclosing definition, as jax's vmap of grad:
`let g[n, d] = { let l = loss(X[n], w); (@l / @w)[d] };`.

The tensors such a loss computes were batched over the enclosing index n (semantics'
batch_over_outer_indices): n, the same variable, is among their own, and the loss reads them at
n. The loss at n depends on their row n alone, so each adjoint is written over that row only,
over n itself (its diagonal), not over a fresh variable pinned to n: that would hold a whole
adjoint per point, quadratic in n's extent. A tensor read along n anywhere else keeps its full
adjoint; its variables are then renamed, as that adjoint sums over its points while the seed
is read at the enclosing point n.
"""
from __future__ import annotations

from einc.ir.nodes import (Compact, Generic, IndexRef, IndexVar, Piecewise, Read, RecValue, Stack, Value,
                           body_vars, free_vars, walk)
from einc.autodiff.substitute import Substitution


class Enclosing:
    """The enclosing indices a derivative's graph reads, and its tensors read on their diagonal."""

    def __init__(self, roots: list):
        self.outer = _enclosing_indices(roots)
        self.diagonal = _read_on_the_diagonal(roots, self.outer) if self.outer else frozenset()

    def diagonal_axes(self, tensor: Value) -> dict:
        """{axis: enclosing index} along which `tensor`'s adjoint is written over the index itself."""
        return _batch_axes(tensor, self.outer) if _unit(tensor) in self.diagonal else {}

    def reversed_over(self, t: Generic) -> tuple:
        """(vars, body, guard, summed) to propagate t's adjoint through its body: `summed` are
        the variables the adjoint sums over (all but the diagonal's)."""
        kept = set(self.diagonal_axes(t).values())
        if kept or not self.outer & set(t.vars):
            return tuple(t.vars), t.body, t.guard, tuple(v for v in t.vars if v not in kept)
        fresh = tuple(IndexVar(v.name, v.lo, v.extent, span=v.span) for v in t.vars)
        renaming = Substitution({old: IndexRef(new) for old, new in zip(t.vars, fresh)})
        guard = None if t.guard is None else renaming.value(t.guard)
        return fresh, renaming.value(t.body), guard, fresh

    def off_diagonal(self, group) -> bool:
        """Whether a recurrence batched over an enclosing index has an adjoint off its diagonal:
        its clauses run over that index itself, so that adjoint is not compiled."""
        return any(set(m.batch) & self.outer for m in group.members) and id(group) not in self.diagonal


def _enclosing_indices(roots: list) -> frozenset:
    """Indices the roots, or tensors they reach, read besides their own variables."""
    found = set().union(*(free_vars(r) for r in roots))
    for n in walk(roots):
        if isinstance(n, Generic):
            found |= body_vars(n) - set(n.vars)
    return frozenset(found)


def _read_on_the_diagonal(roots: list, outer: frozenset) -> frozenset:
    """The tensors (a recurrence: its group) batched over an enclosing index whose every read is
    at that index along its axis, from tensors so read themselves (never used whole, never a
    root): one read on other rows has an adjoint there, and so do the tensors it reads."""
    batched = {_unit(n): n for n in walk(roots) if _batch_axes(n, outer)}
    off = {_unit(r) for r in roots if _unit(r) in batched}
    for n in walk(roots):
        for k, operand in enumerate(n.operands()):
            if _unit(operand) in batched and not (isinstance(n, Read) and k == 0 and _on_diagonal(n, outer)):
                off.add(_unit(operand))
    pending = list(off)
    while pending:
        for n in walk(_code(batched[pending.pop()]), opaque=_TENSORS):
            if isinstance(n, Read) and _unit(n.tensor) in batched and _unit(n.tensor) not in off:
                off.add(_unit(n.tensor))
                pending.append(_unit(n.tensor))
    return frozenset(batched) - off


_TENSORS = (Generic, Piecewise, RecValue, Stack, Compact)


def _unit(v: Value) -> int:
    """A recurrence's members are one: reads of any of them carry adjoints into all."""
    return id(v.group) if isinstance(v, RecValue) else id(v)


def _batch_axes(v: Value, outer: frozenset) -> dict:
    if isinstance(v, Generic):
        return {k: x for k, x in enumerate(v.vars) if x in outer}
    if isinstance(v, RecValue):       # batch axes follow the step (RecMember.batch)
        return {1 + k: x for k, x in enumerate(v.member.batch) if x in outer}
    return {}


def _code(v: Value) -> list:
    if isinstance(v, RecValue):
        return v.group.code()
    return [x for x in (v.body, v.guard) if x is not None]


def _on_diagonal(r: Read, outer: frozenset) -> bool:
    return all(isinstance(r.subs[k], IndexRef) and r.subs[k].var is x for k, x in _batch_axes(r.tensor, outer).items())
