"""Reverse mode through a piecewise definition: each clause gets the adjoint of the points it
writes and no later clause overwrites (later clauses win where they overlap)."""
from __future__ import annotations

from einc.ir.nodes import Generic, IndexRef, Op, Piecewise, Value, fresh_index_vars
from einc.ir.types import BOOL
from einc.autodiff.delta import lin_value
from einc.autodiff.local_rules import const
from einc.autodiff.seeds import read_adjoint
from einc.autodiff.simplify import build


def clause_adjoints(p: Piecewise, adjoint: Value) -> list:
    """[(clause value, its adjoint: a tensor of the clause value's shape)]."""
    out = []
    for k, clause in enumerate(p.clauses):
        vars_ = fresh_index_vars(clause.value.shape, "c")
        at = tuple(build("add", (IndexRef(v), lin_value(off)), IndexRef(v).dtype)
                   for v, off in zip(vars_, clause.offsets))
        body = read_adjoint(adjoint, at)
        for later in p.clauses[k + 1:]:
            covered = _covers(later, at)
            body = Op("select", (covered, const(0.0, body), body), body.dtype)
        out.append((clause.value, Generic(vars_, body)))
    return out


def _covers(clause, at: tuple) -> Value:
    """Whether `clause` writes the point `at`."""
    cond = None
    for sub, off, extent in zip(at, clause.offsets, clause.value.shape):
        for c in (Op("ge", (sub, lin_value(off)), BOOL), Op("lt", (sub, lin_value(off + extent)), BOOL)):
            cond = c if cond is None else build("and", (cond, c), BOOL)
    return cond
