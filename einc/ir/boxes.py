"""Boxes of points whose bounds are linear forms in sizes: the points a read reaches, cut by
the comparisons that hold where it runs, and the part of them no clause of a definition holds
(LANGUAGE.md section 10: a point no clause covers is a diagnostic when decidable).

A box is a list of (first, last) per axis, or a dict keyed by index variables. Every function
here decides only what holds for every admissible size (or every large enough one, see
`_compare`); where the order of two bounds depends on the sizes it gives up (None, or
`Undecided` from `uncovered_slice`).
"""
from __future__ import annotations

import functools
import itertools
from typing import Optional

from einc.ir import affine
from einc.ir.nodes import IndexVar, Op
from einc.ir.types import Lin, Sym

_NEGATED = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}
MAX_CELLS = 4096                 # boxes of more pieces are not judged


class Undecided(Exception):
    """Two bounds whose order depends on the sizes."""


def full_range(var: IndexVar) -> tuple:
    return var.lo, var.lo + var.extent - 1


def narrowed(box: dict, guards: tuple) -> Optional[dict]:
    """`box` cut by the bounds the guards state on index variables (`t > 0`, `j <= N - 2`), a
    variable not yet in it entering with its whole range; None when a guard is not such a
    conjunction, a bound cannot be placed, or the box is empty (the read never runs)."""
    box = dict(box)
    for guard in guards:
        comparisons = _comparisons(guard, True)
        if comparisons is None:
            return None
        for op, a, b in comparisons:
            bound = _bound(op, a, b, box)
            if bound is None:
                return None
            if bound is True:
                continue
            var, side, value = bound
            lo, hi = box[var]
            box[var] = (_extreme(lo, value, max), hi) if side == "lower" else (lo, _extreme(hi, value, min))
            if box[var][0] is None or box[var][1] is None:
                return None
            if affine.surely_negative(box[var][1] - box[var][0]):
                return None
    return box


def _comparisons(cond, holds: bool) -> Optional[list]:
    """The comparisons (op, a, b) whose conjunction is `cond` being `holds`, or None when it is
    not a conjunction of comparisons (an `or`, a `!=`, a test of data)."""
    if not isinstance(cond, Op):
        return None
    if cond.op == "not":
        return _comparisons(cond.args[0], not holds)
    if cond.op == ("and" if holds else "or"):
        parts = [_comparisons(a, holds) for a in cond.args]
        return None if None in parts else [c for p in parts for c in p]
    if cond.op in _NEGATED:
        return [(cond.op if holds else _NEGATED[cond.op], cond.args[0], cond.args[1])]
    if cond.op == ("eq" if holds else "ne"):
        return [("le",) + tuple(cond.args), ("ge",) + tuple(cond.args)]
    return None


def _bound(op: str, a, b, box: dict):
    """(var, "lower" | "upper", value) that `a op b` states on one index variable (entered into
    `box` when missing), True when it holds whatever the point, or None when it says anything else."""
    la, lb = affine.affine_of(a), affine.affine_of(b)
    if la is None or lb is None:
        return None
    diff = la - lb                              # diff op 0
    if op in ("lt", "gt"):
        diff = diff + 1 if op == "lt" else diff - 1
    upper = op in ("lt", "le")                  # diff <= 0, else diff >= 0
    index_vars = [k for k in diff.keys() if isinstance(k, IndexVar)]
    if not index_vars:
        holds = affine.surely_nonnegative(-diff if upper else diff)
        return True if holds else None
    var = index_vars[0]
    if len(index_vars) != 1 or abs(diff.terms[var]) != 1:
        return None
    if var not in box:
        if var.extent is None:
            return None
        box[var] = full_range(var)
    coeff = diff.terms[var]
    rest = diff - Lin.of(var, coeff)            # coeff * var + rest (<= | >=) 0
    value = -rest if coeff == 1 else rest
    return var, "upper" if upper == (coeff == 1) else "lower", value


def _extreme(a: Lin, b: Lin, pick) -> Optional[Lin]:
    """max or min of two bounds when their order is known (for every large size, `_compare`),
    else None."""
    try:
        larger = a if _compare(a, b) >= 0 else b
    except Undecided:
        return None
    return larger if pick is max else (b if larger is a else a)


def read_box(subs: tuple, box: dict) -> Optional[list]:
    """[(first, last)] per axis of the points subscripts `subs` reach over `box`, or None when a
    subscript is not `index + size form` with its index in `box`, or two subscripts share an index."""
    out, used = [], set()
    for sub in subs:
        lin = affine.affine_of(sub)
        if lin is None:
            return None
        index_vars = [k for k in lin.keys() if isinstance(k, IndexVar)]
        if not index_vars:
            out.append((lin, lin))
            continue
        var = index_vars[0]
        if len(index_vars) > 1 or var not in box or var in used or lin.terms[var] != 1:
            return None
        used.add(var)
        rest = lin - Lin.of(var)
        out.append((box[var][0] + rest, box[var][1] + rest))
    return out


def uncovered_slice(reached: list, array: list, targets: list) -> Optional[list]:
    """A box [(first, last)] of points of `reached` inside `array` that no box of `targets`
    holds, grown from its first corner along each axis as far as such points go (a missing row
    or column whole); None when there is none. Raises Undecided when the bounds' order
    depends on the sizes."""
    boxes = [reached, array] + targets
    cuts = [_sorted_cuts([b[axis] for b in boxes]) for axis in range(len(reached))]
    if _cell_count(cuts) > MAX_CELLS:
        raise Undecided
    spans = [[_span(cut, b[axis]) for b in boxes] for axis, cut in enumerate(cuts)]

    def missing(cell) -> bool:
        inside = [all(s[k][0] <= c < s[k][1] for s, c in zip(spans, cell)) for k in range(len(boxes))]
        return inside[0] and inside[1] and not any(inside[2:])

    first = next((c for c in itertools.product(*(range(len(cut) - 1) for cut in cuts)) if missing(c)), None)
    if first is None:
        return None
    ends = [[c, c + 1] for c in first]          # cell pieces [start, stop) per axis
    for axis, cut in enumerate(cuts):
        while ends[axis][1] < len(cut) - 1 and all(
                missing(cell) for cell in itertools.product(*(
                    [ends[axis][1]] if k == axis else range(*ends[k]) for k in range(len(cuts))))):
            ends[axis][1] += 1
    return [(cut[lo], cut[hi] - 1) for cut, (lo, hi) in zip(cuts, ends)]


def _sorted_cuts(ranges: list) -> list:
    """The distinct ends of half-open ranges [first, last + 1), in increasing order."""
    cuts: list = []
    for lo, hi in ranges:
        for value in (lo, hi + 1):
            if not any(value == c for c in cuts):
                cuts.append(value)
    return sorted(cuts, key=functools.cmp_to_key(_compare))


def _compare(a: Lin, b: Lin) -> int:
    """The order of two bounds for every admissible size, else for every large enough one
    (`T - 1` and `1` when T is an input dim: a module serves every size, so a read that
    misses a clause at large sizes is wrong; a length computed from data too, which the data
    may make as large); Undecided when neither decides it (`N` and `M`)."""
    diff = a - b
    if affine.surely_negative(diff):
        return -1
    if affine.surely_negative(-diff):
        return 1
    coeffs = {c > 0 for k, c in diff.terms.items() if isinstance(k, Sym)}
    if len(coeffs) == 1 and all(isinstance(k, Sym) for k in diff.keys()):
        return 1 if coeffs.pop() else -1
    raise Undecided


def _span(cuts: list, rng: tuple) -> tuple:
    """The pieces [start, stop) between `cuts` that the range (first, last) holds."""
    return next(i for i, c in enumerate(cuts) if c == rng[0]), next(i for i, c in enumerate(cuts) if c == rng[1] + 1)


def _cell_count(cuts: list) -> int:
    count = 1
    for cut in cuts:
        count *= max(len(cut) - 1, 0)
    return count


def slice_text(name: str, piece: list, subs: tuple) -> tuple[str, str]:
    """(`u[0, 1..6]`, `u[0, j in 1..6]`): the points of `piece` as read, and as the head of a
    clause defining them, its ranges named after the indices of `subs` that reach them."""
    read, head = [], []
    for (lo, hi), sub in zip(piece, subs):
        if lo == hi:
            read.append(repr(lo))
            head.append(repr(lo))
            continue
        var = next((k for k in (affine.affine_of(sub) or Lin(0)).keys() if isinstance(k, IndexVar)), None)
        read.append(f"{lo!r}..{hi + 1!r}")
        head.append(f"{var.name if var is not None else 'k'} in {lo!r}..{hi + 1!r}")
    return f"{name}[{', '.join(read)}]", f"{name}[{', '.join(head)}]"
