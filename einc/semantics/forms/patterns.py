"""`match`: each arm's pattern becomes a condition and the values it binds; the arms become a
chain of selects, and arms whose patterns are decided at build time are picked (or dropped)
then. Patterns are Rust's: literals, `_`, bindings (`n @ p`), ranges, or-patterns, tuples and
arrays with a rest (`[first, .., last]`, `[head, ..tail]`). Exhaustiveness: match_coverage."""
from __future__ import annotations

from typing import Optional

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import Const, Generic, IndexRef, Op, fresh_index_vars
from einc.ir.types import I32, Lin
from einc.semantics.core import sequences, tensors
from einc.semantics.core.match_coverage import check_exhaustive, matches_any_length
from einc.semantics.forms.pointwise import elementwise, select
from einc.semantics.core.untaken_branches import note_reads_of_skipped
from einc.semantics.core.values import ListVal, PartialRead, StrVal, TupleVal, Weak, describe
from einc.syntax import ast

FALSE = Weak(np.asarray(False), "bool")
TRUE = Weak(np.asarray(True), "bool")


def match(el, scrutinee, node: ast.Match, env):
    check_exhaustive(node, scrutinee)
    tested = [(arm, *_pattern(el, arm.pattern, scrutinee)) for arm in node.arms]
    picked = _pick(el, tested, env)
    if picked is not None:
        return picked
    arms = []
    el.state.guard_depth += 1
    try:
        for k, (arm, cond, binds) in enumerate(tested):
            if _decided(cond) is False:
                _note_reads_of_arm(el, env, arm, binds)
                continue
            scope = _scope(el, env, binds)
            if arm.guard is not None:
                cond = _and(el, cond, el.ev(arm.guard, scope), arm.guard.span)
            arms.append((cond, el.ev(arm.body, scope), arm))
            if _decided(cond) is True:
                for later, _, later_binds in tested[k + 1:]:       # never reached
                    _note_reads_of_arm(el, env, later, later_binds)
                break
    finally:
        el.state.guard_depth -= 1
    result = arms[-1][1]
    for cond, value, arm in reversed(arms[:-1]):
        result = value if _decided(cond) is True else select(el, cond, value, result, arm.span)
    return result


def _pick(el, tested, env):
    """The body of the first arm that surely matches, when every arm before it surely does
    not (all decided at build time); None otherwise."""
    for k, (arm, cond, binds) in enumerate(tested):
        known = _decided(cond)
        if known is None:
            return None
        if not known:
            continue
        scope = _scope(el, env, binds)
        if arm.guard is not None:
            guard = _decided(el.ev(arm.guard, scope))
            if guard is None:
                return None
            if not guard:
                continue
        for other, _, other_binds in tested[:k] + tested[k + 1:]:
            _note_reads_of_arm(el, env, other, other_binds)
        return el.ev(arm.body, scope)
    return None


def _note_reads_of_arm(el, env, arm, binds: dict) -> None:
    """An arm a build-time decision skips still gives index extents, through the reads of its
    guard and of its body (LANGUAGE.md section 3; untaken_branches)."""
    scope = _scope(el, env, binds)
    note_reads_of_skipped(el, arm.guard, scope)
    note_reads_of_skipped(el, arm.body, scope)


def _scope(el, env, binds: dict):
    scope = env.child()
    for def_id, value in binds.items():
        el.bind(scope, def_id, value)
    return scope


# ------------------------------------------------------------------ conditions

def _decided(cond) -> Optional[bool]:
    """True / False when `cond` is known at build time (None: always true), else None."""
    if cond is None:
        return True
    if isinstance(cond, Weak) and cond.rank == 0:
        return bool(cond.value)
    if isinstance(cond, Const) and cond.array.ndim == 0:
        return bool(cond.array)
    return None


def _and(el, a, b, span):
    known_a, known_b = _decided(a), _decided(b)
    if known_a is False or known_b is False:
        return FALSE
    if known_a is True:
        return b
    if known_b is True:
        return a
    return elementwise(el, "and", [a, b], span)


def _or(el, a, b, span):
    known_a, known_b = _decided(a), _decided(b)
    if known_a is True or known_b is True:
        return None
    if known_a is False:
        return b
    if known_b is False:
        return a
    return elementwise(el, "or", [a, b], span)


# ------------------------------------------------------------------ patterns

def _pattern(el, pat, value) -> tuple:
    """(condition, {DefId: value}) of `value` matching `pat`; a condition of None always holds."""
    if isinstance(pat, ast.WildPat):
        return None, {}
    if isinstance(pat, ast.BindPat):
        cond, binds = _pattern(el, pat.sub, value) if pat.sub is not None else (None, {})
        return cond, {**binds, pat.def_id: value}
    if isinstance(pat, ast.LitPat):
        return _literal(el, pat, value), {}
    if isinstance(pat, ast.RangePat):
        return _range(el, pat, value), {}
    if isinstance(pat, ast.OrPat):
        return _alternatives(el, pat, value)
    if isinstance(pat, ast.TuplePat):
        return _tuple(el, pat, value)
    if isinstance(pat, ast.ArrayPat):
        return _array(el, pat, value)
    raise d.error(d.UNSUPPORTED, "this pattern in a `match`", pat.span)


def _literal(el, pat: ast.LitPat, value):
    if isinstance(pat.value, str) and sequences.is_picked(value):
        # a string item picked per point (`match text[k] { " " => .. }`): compared as `==` is
        return sequences.noted(sequences.binary("==", value, StrVal(pat.value, pat.span), pat.span), el.state)
    if isinstance(pat.value, str) or isinstance(value, StrVal):
        if not (isinstance(pat.value, str) and isinstance(value, StrVal)):
            raise d.error(d.TYPE, f"mismatched types: a {'string' if isinstance(pat.value, str) else 'number'} "
                          f"pattern for a value of type {describe(value)}", pat.span)
        return Weak(np.asarray(value.text == pat.value), "bool", pat.span)
    _check_number(value, pat)
    return elementwise(el, "eq", [value, _weak(pat.value, pat.span)], pat.span)


def _range(el, pat: ast.RangePat, value):
    _check_number(value, pat)
    cond = None
    if pat.lo is not None:
        cond = elementwise(el, "ge", [value, _weak(pat.lo, pat.span)], pat.span)
    if pat.hi is not None:
        upper = elementwise(el, "le" if pat.inclusive else "lt", [value, _weak(pat.hi, pat.span)], pat.span)
        cond = _and(el, cond, upper, pat.span)
    return cond


def _weak(number, span) -> Weak:
    kind = "bool" if isinstance(number, (bool, np.bool_)) else "float" if isinstance(number, float) else "int"
    return Weak(np.asarray(number), kind, span)


def _check_number(value, pat) -> None:
    # a scalar pattern on an array compares point by point (a scalar function applied to an
    # array), on a row of an enclosing definition too; a tuple or a list is not a number
    if isinstance(value, (TupleVal, ListVal)):
        raise d.error(d.TYPE, f"mismatched types: this pattern matches a number, the value is {describe(value)}",
                      pat.span)


def _alternatives(el, pat: ast.OrPat, value) -> tuple:
    results = [_pattern(el, alt, value) for alt in pat.alts]
    cond = FALSE
    for c, _ in results:
        cond = _or(el, cond, c, pat.span)
    binds = {}
    for def_id in results[0][1]:
        chosen = results[-1][1][def_id]
        for c, b in reversed(results[:-1]):
            known = _decided(c)
            if known is True:
                chosen = b[def_id]
            elif known is None:
                chosen = select(el, c, b[def_id], chosen, pat.span)
        binds[def_id] = chosen
    return cond, binds


def _tuple(el, pat: ast.TuplePat, value) -> tuple:
    if not isinstance(value, TupleVal) or len(value.items) != len(pat.elems):
        raise d.error(d.TYPE, f"mismatched types: a tuple pattern of {len(pat.elems)} for a value of type "
                      f"{describe(value)}", pat.span)
    return _all_of(el, pat, [(p, v) for p, v in zip(pat.elems, value.items)])


def _all_of(el, pat, pairs) -> tuple:
    cond, binds = None, {}
    for sub, item in pairs:
        c, b = _pattern(el, sub, item)
        cond = _and(el, cond, c, pat.span)
        binds.update(b)
    return cond, binds


def _array(el, pat: ast.ArrayPat, value) -> tuple:
    if matches_any_length(pat) and tensors.is_array(value):     # a length known only at run time too
        bind = pat.elems[0].bind
        return TRUE, {} if bind is None else {bind.def_id: value}
    items = _ArrayItems(el, value, pat.span)
    rest = next((k for k, p in enumerate(pat.elems) if isinstance(p, ast.RestPat)), None)
    fixed = len(pat.elems) - (rest is not None)
    if (items.length != fixed) if rest is None else (items.length < fixed):
        return FALSE, {}
    before = pat.elems if rest is None else pat.elems[:rest]
    after = [] if rest is None else pat.elems[rest + 1:]
    pairs = [(p, items.item(k)) for k, p in enumerate(before)]
    pairs += [(p, items.item(items.length - len(after) + k)) for k, p in enumerate(after)]
    cond, binds = _all_of(el, pat, pairs)
    if rest is not None and pat.elems[rest].bind is not None:
        binds[pat.elems[rest].bind.def_id] = items.slice(len(before), items.length - len(after))
    return cond, binds


class _ArrayItems:
    """The elements (rows) of an array value whose length is known at build time."""

    def __init__(self, el, value, span):
        self.el, self.value, self.span = el, value, span
        if isinstance(value, ListVal):
            self.length = len(value.items)
        elif isinstance(value, Weak) and value.rank:
            self.length = value.value.shape[0]
        elif tensors.is_array(value) and not isinstance(value, Weak):
            first = value.shape[0]
            if not first.is_const:
                raise d.error(d.UNSUPPORTED, "an array pattern on an array whose length is known only "
                              f"at run time ({describe(value)})", span,
                              hint="give the axis a fixed size, or build with `--dim`")
            self.length = first.const
        else:
            raise d.error(d.TYPE, f"mismatched types: an array pattern for a value of type {describe(value)}",
                          span)

    def item(self, k: int):
        v = self.value
        if isinstance(v, ListVal):
            return v.items[k]
        if isinstance(v, Weak):
            return Weak(np.asarray(v.value[k]), v.kind, self.span)
        return tensors.read(v, [Weak(np.asarray(k), "int", self.span)], self.span, self.el.state, "pattern")

    def slice(self, lo: int, hi: int):
        v = self.value
        if isinstance(v, ListVal):
            return ListVal(v.items[lo:hi], self.span)
        if isinstance(v, Weak):
            return Weak(np.asarray(v.value[lo:hi]), v.kind, self.span)
        if isinstance(v, Const):
            return Const(np.asarray(v.array[lo:hi]), span=self.span)
        # a row of an enclosing definition (`M[r]`) is read through, as a local tensor of the point
        base, lead = (v.base, list(v.subs)) if isinstance(v, PartialRead) else (tensors.whole(v, self.span), [])
        vars_ = fresh_index_vars((Lin(hi - lo),) + tuple(base.shape[len(lead) + 1:]), "r")
        at = Op("add", (IndexRef(vars_[0]), Const(np.asarray(lo, np.int32))), I32) if lo else IndexRef(vars_[0])
        subs = lead + [at] + [IndexRef(var) for var in vars_[1:]]
        rows = Generic(vars_, tensors.read(base, subs, self.span, self.el.state, "pattern"), span=self.span)
        return tensors.batch_over_outer_indices(rows, self.el.state.step_ranges)
