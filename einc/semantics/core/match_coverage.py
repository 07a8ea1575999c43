"""Exhaustiveness of `match`, as Rust checks it: the arms without a guard must cover every
value of the scrutinee's type, or the error names a value no arm matches.

The check asks whether a row of wildcards is still useful below the arms' patterns (Maranget's
usefulness), splitting the value space by constructor: `true`/`false`; one constructor per
tuple or fixed-length array; integer intervals cut at the ends of the arms' literals and
ranges. Floats, strings and other values are covered only by a pattern that matches anything.
"""
from __future__ import annotations

import re
from typing import Optional

import numpy as np

from einc import diagnostics as d
from einc.semantics.core.values import ListVal, StrVal, TupleVal, Weak
from einc.syntax import ast

WILD = ast.WildPat(span=None)


def check_exhaustive(node: ast.Match, scrutinee) -> None:
    destructures = any(_has_array_pattern(arm.pattern) for arm in node.arms)
    rows = [[arm.pattern] for arm in node.arms if arm.guard is None]
    witness = _uncovered(rows, [_space(scrutinee, destructures)])
    if witness is not None:
        raise d.error(d.TYPE, f"non-exhaustive match: `{witness[0]}` is not covered", node.span,
                      hint=f"add an arm for `{_writable(witness[0])}`, or `_ => ..` as the last arm")


def _writable(witness: str) -> str:
    """The witness as a pattern einc parses: an interval from the type's end is open there
    (`i32::MIN..=-1` is `..=-1`, `1..=i32::MAX` is `1..`), as einc has no `i32::MIN`."""
    return re.sub(r"\.\.=[iu]\d+::MAX", "..", re.sub(r"[iu]\d+::MIN\.\.=", "..=", witness))


def _has_array_pattern(pat) -> bool:
    if isinstance(pat, ast.ArrayPat):
        return True
    if isinstance(pat, ast.OrPat):
        return any(_has_array_pattern(p) for p in pat.alts)
    return isinstance(pat, ast.BindPat) and pat.sub is not None and _has_array_pattern(pat.sub)


# ------------------------------------------------------------------ value spaces

def _space(value, destructures: bool) -> tuple:
    """("bool",) | ("int", lo, hi, dtype name) | ("tuple", [spaces]) | ("array", n, element
    space) | ("other",) for floats, strings and anything only a wildcard covers."""
    if isinstance(value, TupleVal):
        return ("tuple", [_space(v, False) for v in value.items])
    if isinstance(value, StrVal):
        return ("other",)
    if isinstance(value, ListVal):
        element = _space(value.items[0], False) if value.items else ("other",)
        return ("array", len(value.items), element)
    rank = getattr(value, "rank", 0)
    if destructures and rank:
        length = _length(value)
        if length is None:
            return ("other",)
        return ("array", length, _element_space(value, rank - 1))
    return _element_space(value, 0)


def _length(value) -> Optional[int]:
    if isinstance(value, Weak):
        return value.value.shape[0]
    first = value.shape[0]
    return first.const if first.is_const else None


def _element_space(value, rank_left: int) -> tuple:
    if rank_left:
        if isinstance(value, Weak):
            return ("array", value.value.shape[-rank_left], _element_space(value, rank_left - 1))
        size = value.shape[-rank_left]
        return ("array", size.const, _element_space(value, rank_left - 1)) if size.is_const else ("other",)
    if isinstance(value, Weak):
        return {"bool": ("bool",), "int": ("int", None, None, None)}.get(value.kind, ("other",))
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return ("other",)
    name = getattr(dtype, "name", str(dtype))
    if name == "bool":
        return ("bool",)
    if getattr(dtype, "is_int", False):
        info = np.iinfo(dtype.numpy)
        return ("int", int(info.min), int(info.max), name)
    return ("other",)


# ------------------------------------------------------------------ usefulness

def _uncovered(rows: list, spaces: list) -> Optional[list]:
    """A list of texts, one value per space that no row matches; None if the rows cover all."""
    if not spaces:
        return None if rows else []
    rows = [r for row in rows for r in _expand(row)]
    space, rest = spaces[0], spaces[1:]
    kind = space[0]
    if kind == "bool":
        return _split(rows, rest, [(True, "true"), (False, "false")],
                      lambda p, v: isinstance(p, ast.LitPat) and p.value is v)
    if kind == "int":
        return _split(rows, rest, _pieces(rows, space), _covers_piece)
    if kind == "tuple":
        n = len(space[1])
        sub = [list(r[0].elems) + r[1:] if isinstance(r[0], ast.TuplePat) else [WILD] * n + r[1:]
               for r in rows if isinstance(r[0], (ast.TuplePat, ast.WildPat))]
        w = _uncovered(sub, space[1] + rest)
        return None if w is None else ["(" + ", ".join(w[:n]) + ")"] + w[n:]
    if kind == "array":
        n = space[1]
        sub = [elems + r[1:] for r in rows for elems in [_array_elems(r[0], n)] if elems is not None]
        w = _uncovered(sub, [space[2]] * n + rest)
        return None if w is None else ["[" + ", ".join(w[:n]) + "]"] + w[n:]
    w = _uncovered([r[1:] for r in rows if isinstance(r[0], ast.WildPat) or matches_any_length(r[0])], rest)
    return None if w is None else ["_"] + w


def matches_any_length(pat) -> bool:
    """`[..rest]` (or `[..]`): every array, whatever its length, even one known only at run time."""
    return isinstance(pat, ast.ArrayPat) and len(pat.elems) == 1 and isinstance(pat.elems[0], ast.RestPat)


def _expand(row: list) -> list:
    """The row with its first pattern plain: or-patterns become several rows, bindings what they bind."""
    head = row[0]
    if isinstance(head, ast.OrPat):
        return [r for alt in head.alts for r in _expand([alt] + row[1:])]
    if isinstance(head, ast.BindPat):
        return _expand([head.sub if head.sub is not None else WILD] + row[1:])
    return [row]


def _split(rows, rest, constructors, matches) -> Optional[list]:
    for value, text in constructors:
        sub = [r[1:] for r in rows if isinstance(r[0], ast.WildPat) or matches(r[0], value)]
        w = _uncovered(sub, rest)
        if w is not None:
            return [text] + w
    return None


def _array_elems(pat, n: int) -> Optional[list]:
    if isinstance(pat, ast.WildPat):
        return [WILD] * n
    if not isinstance(pat, ast.ArrayPat):
        return None
    rest = next((k for k, p in enumerate(pat.elems) if isinstance(p, ast.RestPat)), None)
    if rest is None:
        return list(pat.elems) if len(pat.elems) == n else None
    fixed = len(pat.elems) - 1
    if fixed > n:
        return None
    return list(pat.elems[:rest]) + [WILD] * (n - fixed) + list(pat.elems[rest + 1:])


def _interval(pat) -> Optional[tuple]:
    """The integers a literal or range pattern matches, as (lo, hi) with None for an open end."""
    if isinstance(pat, ast.LitPat) and isinstance(pat.value, (int, np.integer)) and not isinstance(pat.value, bool):
        return int(pat.value), int(pat.value)
    if isinstance(pat, ast.RangePat) and all(isinstance(e, (int, type(None))) for e in (pat.lo, pat.hi)):
        hi = pat.hi if pat.hi is None or pat.inclusive else pat.hi - 1
        return pat.lo, hi
    return None


def _pieces(rows, space) -> list:
    """The integer space cut at every end of the rows' intervals: (interval, text) pieces, each
    inside or outside every interval."""
    _, lo, hi, dtype = space
    cuts = set()
    for row in rows:
        iv = _interval(row[0])
        if iv is not None:
            if iv[0] is not None:
                cuts.add(iv[0])
            if iv[1] is not None:
                cuts.add(iv[1] + 1)
    cuts = sorted(c for c in cuts if (lo is None or c > lo) and (hi is None or c <= hi))
    starts = [lo] + cuts
    ends = [c - 1 for c in cuts] + [hi]
    return [((a, b), _piece_text(a, b, lo, hi, dtype)) for a, b in zip(starts, ends)]


def _piece_text(a, b, lo, hi, dtype) -> str:
    def end(v):
        if dtype is not None and v == lo:
            return f"{dtype}::MIN"
        if dtype is not None and v == hi:
            return f"{dtype}::MAX"
        return str(v)
    if a is None and b is None:
        return "_"
    if a is not None and a == b:
        return str(a)
    if a is None:
        return f"..={end(b)}"
    if b is None:
        return f"{end(a)}.."
    return f"{end(a)}..={end(b)}"


def _covers_piece(pat, piece) -> bool:
    iv = _interval(pat)
    if iv is None:
        return False
    (a, b), (lo, hi) = piece, iv
    return (lo is None or (a is not None and a >= lo)) and (hi is None or (b is not None and b <= hi))
