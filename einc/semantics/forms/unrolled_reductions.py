"""A reduction over the characters or items of build-time sequences, point by point at build time.

`sum[k in 0..len(w)](if w[k] in vowels { 1 } else { 0 })` reads a string at its index: strings
exist only during the build, so no kernel can index one. When every range of such a reduction
is known at build time, its body is elaborated once per point with the indices bound to
constants and the terms are combined as the reduction would (thesis: everything that depends on
no run-time input is evaluated during the build; LANGUAGE.md section 9)."""
from __future__ import annotations

import itertools

import numpy as np

from einc.ir.nodes import Const
from einc.semantics.core import folding, scalar_ops
from einc.semantics.forms import definitions
from einc.syntax import ast

TERMS_LIMIT = 4096     # points elaborated one by one, as many as a comprehension unrolls


def unrolled(el, node: ast.Reduction, env):
    """The reduction combined from its terms; None when a range is not known at build time, is
    empty, has too many points, or a guard needs run-time data."""
    ranges = _build_time_ranges(el, node, env)
    if not ranges or not all(ranges) or np.prod([len(r) for r in ranges]) > TERMS_LIMIT:
        return None
    op = definitions.REDUCTION_OPS[node.op]
    result = None
    for point in itertools.product(*ranges):
        term = _term(el, node, env, point)
        if term is False:
            return None
        if term is not None:
            result = term if result is None else scalar_ops.apply(op, [result, term], node.span)
    return result


def _build_time_ranges(el, node: ast.Reduction, env) -> list | None:
    ranges = []
    for iv in node.indices:
        if iv.range is None:
            return None
        lo, hi = definitions.range_bounds(el, iv.range, env)
        if not (lo.lin.is_const and hi.lin.is_const):
            return None
        ranges.append(range(lo.lin.const, hi.lin.const))
    return ranges


def _term(el, node: ast.Reduction, env, point: tuple):
    """The body at `point`; None where a guard leaves the point out, False where a guard is
    not known at build time."""
    scope = env.child()
    for iv, k in zip(node.indices, point):
        scope.bind(iv.def_id, Const(np.asarray(k, np.int32), span=iv.span))
    guard = definitions.where_clauses(el, node.wheres, scope)
    if guard is not None:
        known = folding.known(guard)
        if known is None:
            return False
        if not bool(known):
            return None
    return el.ev(node.body, scope)
