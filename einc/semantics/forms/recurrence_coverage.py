"""The points a recurrence's clauses read must be points some clause defines (LANGUAGE.md
section 10: a point no clause covers is a diagnostic; thesis 2.2.1: grouping the base clauses
with the recurrent one lets the compiler check that `fib[n - 1]` and `fib[n - 2]` exist).

A read `s[t - 1, j + 1]` in a clause covers a box: the clause's box (its step and index
ranges, narrowed by the comparisons of the guards and `if`s around the read) shifted by the
read's offsets. Where part of that box, inside the member's array, lies in no clause's box the
read is E005, as a read before an array's start is (section 9). Every bound is a linear form
in sizes; the check runs only where the build can order them all. A read it cannot judge (a
data-dependent subscript or guard, two subscripts of one index, bounds of unknown order) runs,
and a point no clause defines reads 0 there.
"""
from __future__ import annotations

import functools
import itertools
from typing import Optional

from einc import diagnostics as d
from einc.ir import affine
from einc.ir.nodes import Generic, IndexVar, Op, RecClause, RecValue, Reduce, StateRead
from einc.ir.types import Lin, Sym

_NEGATED = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}
MAX_CELLS = 4096                 # boxes of more pieces are not judged


class _Undecided(Exception):
    """Two bounds whose order depends on the sizes."""


def check_clause(clause: RecClause, members: list, step: IndexVar) -> None:
    """E005 when a read in `clause` (whose step index is `step`) of a member of `members`
    reads a point of it that no clause of that member defines."""
    box = _clause_box(clause, step)
    if box is None:
        return
    for read, guards, inner in _reads([clause.body] + ([clause.guard] if clause.guard is not None else [])):
        if read.member in members and all(v.extent is not None for v in inner):
            ranges = {**box, **{v: (v.lo, v.lo + v.extent - 1) for v in inner}}
            _check_read(read, _narrowed(ranges, guards + _guard(clause)))


def _guard(clause: RecClause) -> tuple:
    return () if clause.guard is None else (clause.guard,)


def _reads(roots: list) -> list:
    """(read, guards, indices) for each StateRead under `roots`: the conditions that hold where
    it runs (the guards of the reductions and tensors around it, the tests of the `if`
    branches it is in) and the indices of the tensors a step computes around it."""
    out, seen = [], set()
    stack = [(r, (), ()) for r in roots]
    while stack:
        v, guards, inner = stack.pop()
        key = (id(v), tuple(map(id, guards)), tuple(map(id, inner)))
        if key in seen or isinstance(v, RecValue):
            continue
        seen.add(key)
        if isinstance(v, StateRead):
            out.append((v, guards, inner))
        if isinstance(v, (Reduce, Generic)) and v.guard is not None:
            guards = guards + (v.guard,)
        if isinstance(v, Generic):
            inner = inner + tuple(v.vars)
        if isinstance(v, Op) and v.op == "select":
            cond = v.args[0]
            stack += [(cond, guards, inner), (v.args[1], guards + (cond,), inner),
                      (v.args[2], guards + (Op("not", (cond,), cond.dtype),), inner)]
        else:
            stack.extend((o, guards, inner) for o in v.operands())
    return out


def _check_read(read: StateRead, box: Optional[dict]) -> None:
    read_box = None if box is None else _read_box(read, box)
    if read_box is None:
        return
    point = _uncovered(read, read_box)
    if point is not None:
        _report(read, point, _start_guard(read, box))


def _uncovered(read: StateRead, read_box: list) -> Optional[tuple]:
    """A point of `read_box` in the read member's array that none of its clauses defines, None
    when there is none or when the build cannot tell."""
    targets = [_clause_box(c, None) for c in read.member.clauses]
    if any(t is not None and len(t) != len(read_box) for t in targets):
        return None
    targets = [t for t in targets if t is not None]
    array = [(Lin(0), size - 1) for size in read.member.shape[:len(read_box)]]
    if len(array) != len(read_box) or any(size is None for size in read.member.shape[:len(read_box)]):
        return None
    try:
        return _uncovered_point(read_box, array, targets)
    except _Undecided:
        return None


def _clause_box(clause: RecClause, step: Optional[IndexVar]):
    """[(first, last)] per axis of the clause's points (keyed by its index variables when
    `step` names the step's), or None while a range is unknown or when one is empty at every
    size (it defines nothing)."""
    if any(v.extent is None for v in clause.vars):
        return None
    ranges = [(clause.t_lo, clause.t_hi - 1)] + [(v.lo, v.lo + v.extent - 1) for v in clause.vars]
    if any(affine.surely_negative(hi - lo) for lo, hi in ranges):
        return None
    if step is None:
        return ranges
    return dict(zip((step,) + tuple(clause.vars), ranges))


def _narrowed(box: dict, guards: tuple) -> Optional[dict]:
    """`box` cut by the bounds the guards state on its variables (`t > 0`, `j <= N - 2`), or
    None when a guard is not such a conjunction, or a bound cannot be placed."""
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
                return None                      # the read never runs
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
    """(var, "lower" | "upper", value) that `a op b` states on one variable of `box`, True when
    it holds whatever the point, or None when it says anything else."""
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
    if len(index_vars) != 1 or index_vars[0] not in box or abs(diff.terms[index_vars[0]]) != 1:
        return None
    var = index_vars[0]
    coeff = diff.terms[var]
    rest = diff - Lin.of(var, coeff)            # coeff * var + rest (<= | >=) 0
    value = -rest if coeff == 1 else rest
    return var, "upper" if upper == (coeff == 1) else "lower", value


def _extreme(a: Lin, b: Lin, pick) -> Optional[Lin]:
    """max or min of two bounds when their order is known, else None."""
    if affine.surely_nonnegative(a - b):
        return a if pick is max else b
    if affine.surely_nonnegative(b - a):
        return b if pick is max else a
    return None


def _read_box(read: StateRead, box: dict) -> Optional[list]:
    """[(first, last)] per axis of the points `read` reads over `box`, or None when a subscript
    is not `index + size form`, or two subscripts share an index."""
    out, used = [], set()
    for sub in read.subs:
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


def _uncovered_point(read_box: list, array: list, targets: list) -> Optional[tuple]:
    """The first corner of a piece of `read_box` inside `array` that no box of `targets`
    holds, or None; raises _Undecided when the bounds' order depends on the sizes."""
    boxes = [read_box, array] + targets
    cuts = [_sorted_cuts([b[axis] for b in boxes]) for axis in range(len(read_box))]
    if _cell_count(cuts) > MAX_CELLS:
        raise _Undecided
    spans = [[_span(cut, b[axis]) for b in boxes] for axis, cut in enumerate(cuts)]
    for cell in itertools.product(*(range(len(cut) - 1) for cut in cuts)):
        inside = [all(s[k][0] <= c < s[k][1] for s, c in zip(spans, cell)) for k in range(len(boxes))]
        if inside[0] and inside[1] and not any(inside[2:]):
            return tuple(cut[c] for cut, c in zip(cuts, cell))
    return None


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
    misses a clause at large sizes is wrong); _Undecided when neither decides it (`N` and `M`)."""
    diff = a - b
    if affine.surely_negative(diff):
        return -1
    if affine.surely_negative(-diff):
        return 1
    coeffs = {c > 0 for k, c in diff.terms.items() if type(k) is Sym}
    if len(coeffs) == 1 and all(type(k) is Sym for k in diff.keys()):
        return 1 if coeffs.pop() else -1
    raise _Undecided


def _span(cuts: list, rng: tuple) -> tuple:
    """The pieces [start, stop) between `cuts` that the range (first, last) holds."""
    return next(i for i, c in enumerate(cuts) if c == rng[0]), next(i for i, c in enumerate(cuts) if c == rng[1] + 1)


def _cell_count(cuts: list) -> int:
    count = 1
    for cut in cuts:
        count *= max(len(cut) - 1, 0)
    return count


def _start_guard(read: StateRead, box: dict) -> Optional[str]:
    """`j > 1` when reading from the next value of an index on leaves no point undefined (a
    read `D[i, j - 1]` over j in 1..N, at its first j), else None."""
    for sub in reversed(read.subs):
        lin = affine.affine_of(sub)
        var = next((k for k in lin.keys() if isinstance(k, IndexVar)), None)
        if var is None:
            continue
        later = {**box, var: (box[var][0] + 1, box[var][1])}
        if affine.surely_negative(later[var][1] - later[var][0]):
            continue
        read_box = _read_box(read, later)
        if read_box is not None and _uncovered(read, read_box) is None:
            return f"{var.name} > {box[var][0]!r}"
    return None


def _report(read: StateRead, point: tuple, guard: Optional[str]) -> None:
    name = read.member.name
    where = ", ".join(repr(p) for p in point)
    hint = f"give that point a clause, e.g. a base case `let {name}[{where}] = ..;`"
    if guard is not None:
        hint += f", or read it under a start guard `if {guard} {{ .. }} else {{ .. }}`"
    raise d.error(d.BOUNDS, f"`{name}[{where}]` is read here, but no clause of `{name}` defines "
                  "that point", read.span, hint=hint)
