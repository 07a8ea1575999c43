"""`match`: arms become a chain of selects; constant scrutinees pick their arm at build time."""
from __future__ import annotations

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import Const
from einc.semantics.pointwise import elementwise, select
from einc.semantics.untaken_branches import note_reads_of_skipped
from einc.semantics.values import StrVal, Weak
from einc.syntax import ast


def match(el, scrutinee, node: ast.Match, env):
    _check_exhaustive(node)
    constant = _constant(scrutinee)
    if constant is not None:
        picked = _pick(el, constant, scrutinee, node, env)
        if picked is not None:
            for arm in node.arms:     # the arms not picked (the picked one adds nothing new)
                scope = env.child()
                _bind(arm.pattern, scrutinee, scope)
                note_reads_of_skipped(el, arm.body, scope)
            return picked
    arms = []
    el.state.guard_depth += 1
    try:
        for arm in node.arms:
            scope = env.child()
            _bind(arm.pattern, scrutinee, scope)
            cond = _test(el, arm, scrutinee, scope)
            arms.append((cond, el.ev(arm.body, scope), arm))
    finally:
        el.state.guard_depth -= 1
    result = arms[-1][1]
    for cond, value, arm in reversed(arms[:-1]):
        if cond is not None:
            result = select(el, cond, value, result, arm.span)
        else:
            result = value
    return result


def _check_exhaustive(node: ast.Match) -> None:
    last = node.arms[-1] if node.arms else None
    if last is None or last.guard is not None or not isinstance(last.pattern, (ast.WildPat, ast.BindPat)):
        raise d.error(d.TYPE, "non-exhaustive match: the last arm must match everything",
                      node.span, hint="add `_ => ..` as the last arm")


def _constant(v):
    if isinstance(v, StrVal):
        return v.text
    if isinstance(v, Weak) and v.rank == 0:
        return v.value[()]
    if isinstance(v, Const) and v.array.ndim == 0:
        return v.array[()]
    return None


def _pick(el, constant, scrutinee, node, env):
    """The first arm that surely matches; None if a run-time guard makes it undecidable."""
    for arm in node.arms:
        pat = arm.pattern
        if isinstance(pat, ast.LitPat) and _literal_value(pat) != constant:
            continue
        scope = env.child()
        _bind(pat, scrutinee, scope)
        if arm.guard is not None:
            g = el.ev(arm.guard, scope)
            g = _constant(g)
            if g is None:
                return None
            if not g:
                continue
        return el.ev(arm.body, scope)
    return None


def _literal_value(pat: ast.LitPat):
    return pat.value          # already signed: `-1` is stored as -1


def _bind(pat, scrutinee, scope) -> None:
    if isinstance(pat, ast.BindPat):
        scope.bind(pat.def_id, scrutinee)
    elif isinstance(pat, ast.TuplePat):
        raise d.error(d.UNSUPPORTED, "tuple patterns in `match`", pat.span)


def _test(el, arm: ast.MatchArm, scrutinee, scope):
    cond = None
    if isinstance(arm.pattern, ast.LitPat) and isinstance(scrutinee, StrVal):
        cond = Weak(np.asarray(scrutinee.text == _literal_value(arm.pattern)), "bool", arm.pattern.span)
    elif isinstance(arm.pattern, ast.LitPat):
        value = _literal_value(arm.pattern)
        kind = "bool" if isinstance(value, (bool, np.bool_)) else "float" if isinstance(value, float) else "int"
        lit = Weak(np.asarray(value), kind, arm.pattern.span)
        cond = elementwise(el, "eq", [scrutinee, lit], arm.pattern.span)
    if arm.guard is not None:
        g = el.ev(arm.guard, scope)
        cond = g if cond is None else elementwise(el, "and", [cond, g], arm.guard.span)
    return cond
