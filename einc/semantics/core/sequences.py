"""Strings and the other sequences that exist only at build time (LANGUAGE.md section 9).

A string is a `StrVal`; an array of strings, or of values that are not numbers of one shape, is
a `ListVal`. Everything here is evaluated during the build: length, indexing at a build-time
position, `+` (concatenation), comparisons, `in` (a substring, or an element equal to the
left side) and iteration (the characters of a string, the items of a list).
"""
from __future__ import annotations

import operator
from typing import Optional

import numpy as np

from einc import diagnostics as d
from einc.ir import affine
from einc.ir.nodes import Const, Read, Value
from einc.semantics.core.values import ListVal, PointItems, StrVal, TupleVal, Weak, describe

ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def is_sequence(v) -> bool:
    return isinstance(v, (StrVal, ListVal))


def is_picked(v) -> bool:
    """Whether `v` is a sequence's item picked per point (`names[j]`)."""
    return isinstance(v, PointItems)


def constant_int(v) -> Optional[int]:
    """The value of a build-time integer scalar, else None."""
    array = v.value if isinstance(v, Weak) else v.array if isinstance(v, Const) else None
    if array is None or array.ndim or array.dtype.kind not in "iu":
        return None
    return int(array)


def items(seq) -> list:
    """What iterating over `seq` gives: characters of a string, items of a list."""
    if isinstance(seq, StrVal):
        return [StrVal(c, seq.span) for c in seq.text]
    return list(seq.items)


def length(seq) -> int:
    return len(seq.text) if isinstance(seq, StrVal) else len(seq.items)


_WALK_HINT = ("strings exist only during the build: walk them with a comprehension, `[len(w) | w in words]`, "
              "or a reduction over a range known at build time")


def index(seq, subs: list, span):
    """`seq[k]` (and `seq[k, j]` into a list of sequences) at build-time positions; at one
    position known only per point (an index, a run-time integer), the item picked there."""
    for sub in subs:
        if isinstance(seq, PointItems):
            seq = _picked_index(seq, sub, span)
            continue
        if not is_sequence(seq):
            raise d.error(d.SHAPE, f"too many subscripts: {describe(seq)} cannot be indexed", span)
        k = constant_int(sub)
        if k is None and _per_point_position(sub):
            seq = PointItems(tuple(items(seq)), (length(seq),), (sub,), span)
            continue
        if k is None:
            raise d.error(d.UNSUPPORTED, f"a position in {describe(seq)} must be known at build time "
                          f"or be an integer, found {describe(sub)}", span, hint=_WALK_HINT)
        n = length(seq)
        if not 0 <= k < n:
            raise d.error(d.BOUNDS, f"index {k} is out of bounds for {describe(seq)} of length {n}", span)
        seq = items(seq)[k]
    return seq


def _join_hint(left, right) -> str:
    if isinstance(left, ListVal) or isinstance(right, ListVal):
        return "a list whose elements have different shapes is not an array: give them one shape"
    return "put a number into a string with interpolation: \"n = {n}\""


def _per_point_position(sub) -> bool:
    return isinstance(sub, Value) and sub.rank == 0 and sub.dtype.is_int


def _picked_index(seq: PointItems, sub, span) -> PointItems:
    """An item picked per point, indexed further: at a build-time position each candidate is;
    at another position known per point (`grid[i, j]`) the candidates' items are, when they
    are sequences of one length."""
    if constant_int(sub) is not None:
        return PointItems(tuple(index(item, [sub], span) for item in seq.items), seq.shape, seq.positions, span)
    sizes = {length(item) if is_sequence(item) else None for item in seq.items}
    if not _per_point_position(sub) or len(sizes) != 1 or None in sizes:
        raise d.error(d.UNSUPPORTED, f"a position known only per point in {describe(seq)}, whose "
                      "candidates are not sequences of one length", span,
                      hint="give the rows one length, or pick at a build-time position")
    return PointItems(tuple(x for item in seq.items for x in items(item)), seq.shape + (sizes.pop(),),
                      seq.positions + (sub,), span)


def binary(op: str, left, right, span):
    """`left op right` where one side is a string or a list (or an item of one picked per point)."""
    if is_picked(left) or is_picked(right):
        return _per_item(op, left, right, span)
    if op == "in":
        return _contains(right, left, span)
    if op == "+":
        if isinstance(left, StrVal) and isinstance(right, StrVal):
            return StrVal(left.text + right.text, span)
        if isinstance(left, ListVal) and isinstance(right, ListVal):
            return ListVal(left.items + right.items, span)
        raise d.error(d.TYPE, f"`+` cannot join {describe(left)} and {describe(right)}", span,
                      hint=_join_hint(left, right))
    if op in ("==", "!="):
        a, b = key(left), key(right)
        if a is None or b is None:
            raise d.error(d.TYPE, f"`{op}` cannot compare {describe(left)} and {describe(right)}", span)
        return Weak(np.asarray((a == b) == (op == "==")), "bool", span)
    if op in ORDER and isinstance(left, StrVal) and isinstance(right, StrVal):
        return Weak(np.asarray(ORDER[op](left.text, right.text)), "bool", span)
    raise d.error(d.TYPE, f"`{op}` is not defined for {describe(left)} and {describe(right)}", span)


def _per_item(op: str, left, right, span):
    """`left op right` for each item a side picked per point may be, read at the position. Two
    sides picked at different positions (`word[i] == word[i + 1]`) give a table over both
    positions: one result per pair of candidates."""
    if is_picked(left) and is_picked(right) and not _same_positions(left, right):
        results = [binary(op, a, b, span) for a in left.items for b in right.items]
        pairs = PointItems((), left.shape + right.shape, left.positions + right.positions, span)
        return picked_at(results, pairs, span)
    picked = left if is_picked(left) else right
    at = lambda v, k: v.items[k] if is_picked(v) else v
    results = [binary(op, at(left, k), at(right, k), span) for k in range(len(picked.items))]
    return picked_at(results, picked, span)


def _same_positions(a: PointItems, b: PointItems) -> bool:
    forms = [(affine.affine_of(p), affine.affine_of(q)) for p, q in zip(a.positions, b.positions)]
    return a.shape == b.shape and all(f is not None and f == g for f, g in forms)


def picked_at(results: list, like: PointItems, span):
    """`results`, one per candidate of `like`, picked at its positions: numbers become a table
    read there, anything else stays an item picked per point."""
    if all(isinstance(r, Weak) and r.rank == 0 for r in results) and len({r.kind for r in results}) == 1:
        kind = results[0].kind
        dtype = np.bool_ if kind == "bool" else np.int32 if kind == "int" else np.float64
        table = Const(np.asarray([r.value for r in results], dtype).reshape(like.shape), span=span)
        return Read(table, like.positions, span=span)
    return PointItems(tuple(results), like.shape, like.positions, span)


def noted(value, state):
    """`value`, a table of picked items' results read at their positions, noted under the guards
    around the expression that made it, as any read there is: `word[i + l]` under an `if` or in a
    range that depends on the step is clamped, not checked over the whole hull (bounds)."""
    if isinstance(value, Read):
        state.note_guards(value)
    return value


def lengths(v: PointItems, span):
    """`len` of each item picked per point, read at the positions."""
    return picked_at([Weak(np.asarray(length(i), np.int64), "int", span) for i in v.items], v, span)


def _contains(seq, item, span):
    if isinstance(seq, StrVal):
        if not isinstance(item, StrVal):
            raise d.error(d.TYPE, f"`in` a string needs a string on the left, found {describe(item)}", span)
        return Weak(np.asarray(item.text in seq.text), "bool", span)
    if not isinstance(seq, ListVal):
        raise d.error(d.TYPE, f"`in` needs an array on the right, found {describe(seq)}", span)
    wanted = key(item)
    if wanted is None:
        raise d.error(d.UNSUPPORTED, f"`in` on {describe(seq)} needs a value known at build time, "
                      f"found {describe(item)}", span)
    return Weak(np.asarray(any(key(x) == wanted for x in seq.items)), "bool", span)


def key(v):
    """A comparable form of a build-time value (strings, lists, tuples, number scalars), or None."""
    if isinstance(v, StrVal):
        return v.text
    if isinstance(v, (ListVal, TupleVal)):
        parts = tuple(key(x) for x in v.items)
        return None if any(p is None for p in parts) else (type(v).__name__, parts)
    array = v.value if isinstance(v, Weak) else v.array if isinstance(v, Const) else None
    if array is None:
        return None
    return ("number", array.shape, tuple(array.ravel().tolist()))


def text_array(seq) -> Optional[np.ndarray]:
    """A list of strings (at any depth, rectangular) as a NumPy array of str, for printing."""
    def plain(v):
        if isinstance(v, StrVal):
            return v.text
        if isinstance(v, ListVal):
            return [plain(x) for x in v.items]
        raise ValueError("not a string")
    try:
        return np.array(plain(seq), dtype=str)
    except ValueError:       # an item that is not a string, or rows of different lengths
        return None
