"""Summing over the points where subscripts hit a given element, without visiting the rest.

The adjoint of a read `T[s(w)]` summed over variables w is, at element u of T,
sum over w of adj(w) * [s(w) == u]. When a subscript is `v + rest` for a summed variable v,
the sum over v collapses to the single point v = u - rest (kept only if inside v's range);
`T[i, k]` in a matrix product becomes a sum over j alone. Subscripts that pin down no variable
stay as guards.
"""
from __future__ import annotations

from einc.ir import affine
from einc.ir.nodes import Const, IndexRef, IndexVar, Op, Size, Value, reduced
from einc.ir.types import BOOL, I32, Lin
from einc.autodiff.simplify import build
from einc.autodiff.substitute import substitute

import numpy as np


def gather_sum(adjoint: Value, sum_vars: tuple, subs: tuple, targets: tuple):
    """(body, guard) of sum over `sum_vars` of adjoint * [subs == targets]."""
    mapping, guards, remaining = {}, [], list(sum_vars)
    for sub, target in zip(subs, targets):
        sub = substitute(sub, mapping)
        lin = affine.affine_of(sub)
        var = _solvable(lin, remaining) if lin is not None else None
        if var is None:
            guards.append(Op("eq", (sub, target), BOOL))
            continue
        coeff = lin.terms[var]
        rest = lin - Lin.of(var, coeff)
        solved_lin = (affine.affine_of(target) - rest).scale(coeff)
        mapping[var] = lin_value(solved_lin)
        remaining.remove(var)
        guards += _range_guards(solved_lin, var)
    body = substitute(adjoint, mapping)
    guard = _all([substitute(g, mapping) for g in guards])
    if remaining:       # a half-precision cotangent is summed in f32 and rounded once
        return reduced("sum", tuple(remaining), body, guard), None
    return body, guard


def _range_guards(solved: Lin, var: IndexVar) -> list:
    """`var.lo <= solved < var.lo + var.extent`, leaving out the sides that always hold."""
    lo, hi = affine.bounds(solved)
    guards = []
    if not affine.surely_nonnegative(lo - var.lo):
        guards.append(Op("ge", (lin_value(solved), lin_value(var.lo)), BOOL))
    if not affine.surely_nonnegative(var.lo + var.extent - 1 - hi):
        guards.append(Op("lt", (lin_value(solved), lin_value(var.lo + var.extent)), BOOL))
    return guards


def _solvable(lin: Lin, remaining: list):
    for var in remaining:
        if lin.terms.get(var) in (1, -1):
            return var
    return None


def lin_value(lin: Lin) -> Value:
    """An i32 expression for a Lin over index variables and sizes."""
    total: Value = Const(np.asarray(lin.const, np.int32))
    sizes = Lin(0, {k: c for k, c in lin.terms.items() if not isinstance(k, IndexVar)})
    if sizes.terms:
        total = build("add", (total, Size(sizes)), I32)
    for key, c in lin.terms.items():
        if isinstance(key, IndexVar):
            term = IndexRef(key) if c == 1 else build("mul", (Const(np.asarray(c, np.int32)), IndexRef(key)), I32)
            total = build("add", (total, term), I32)
    return total


def _all(conds: list):
    if not conds:
        return None
    out = conds[0]
    for c in conds[1:]:
        out = Op("and", (out, c), BOOL)
    return out
