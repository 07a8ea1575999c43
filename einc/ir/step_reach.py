"""How far a recurrence step's read reaches along an axis, when the read runs over a reduction's
range (`sum[k in i + 1..N](x[k])`, `sum[k in 0..N](w[k]) where k < t`): the bounds of
`subscript - index` over the reduction variables, each bounded by its range and by the affine
comparisons of the guards around the read (the IR iterates a range that depends on an outer
index over its hull, narrowed by such a guard). The recurrence checks ask it whether such a
read stays at earlier points (einc.semantics.forms.recurrences).
"""
from __future__ import annotations

from typing import Optional

from einc.ir import affine
from einc.ir.nodes import Generic, IndexVar, Op, RecValue, Reduce, Stack, StateRead, Value
from einc.ir.types import Lin

_FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_NEGATED = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}


def guarded_state_reads(roots, definitions: bool = False) -> list[tuple[StateRead, tuple]]:
    """Each StateRead of a step's scalar code under `roots`, with the conditions that hold
    where it is read: the guards of the reductions around it and those of the branches it is
    in (`branches`; the walk of einc.ir.nodes.step_code, keeping them on the way down). With
    `definitions`, also those in the tensors the step defines and reads (`let h[i in 0..3] =
    x[i];` in a block), each under its definition's guard, its points' indices ranging over
    their extents; not in another recurrence group's storage."""
    out, seen = [], set()
    stack = [(r, ()) for r in roots if r is not None]
    while stack:
        v, guards = stack.pop()
        key = (id(v),) + tuple(id(g) for g in guards)
        if key in seen:
            continue
        seen.add(key)
        if isinstance(v, StateRead):
            out.append((v, guards))
        if isinstance(v, Reduce) and v.guard is not None:
            guards = guards + (v.guard,)
        if (branched := branches(v)) is not None:
            stack += [(o, guards + held) for o, held in branched]
        elif v.rank == 0 or isinstance(v, Stack):
            stack.extend((o, guards) for o in v.operands())
        elif definitions and isinstance(v, Generic) and v.guard is not None:
            stack += [(v.guard, guards), (v.body, guards + (v.guard,))]
        elif definitions and not isinstance(v, RecValue):
            stack.extend((o, guards) for o in v.operands())
    return out


def branches(v: Value) -> Optional[list]:
    """(operand, the conditions added where it runs) for each operand of an `if` (its test
    always, each branch under its test or the test's negation) or of a scalar `&&` / `||`
    (they short-circuit: the right side runs only where the left holds, or fails); None for
    other nodes."""
    if isinstance(v, Op) and v.op == "select":
        cond = v.args[0]
        return [(cond, ()), (v.args[1], (cond,)), (v.args[2], (Op("not", (cond,), cond.dtype),))]
    if isinstance(v, Op) and v.op in ("and", "or") and v.rank == 0:
        left = v.args[0]
        return [(left, ()), (v.args[1], (left if v.op == "and" else Op("not", (left,), left.dtype),))]
    return None


def offset_bounds(sub: Value, var: IndexVar, var_range: tuple, guards: tuple, ranges: tuple = ()) -> tuple:
    """(lower bounds, upper bounds) of `sub - var`, each a Lin in sizes, or None when `sub` is
    not affine: the reduction variables of `sub` take every bound their ranges and `guards`
    give, and `var` runs over `var_range` (first, last). `ranges` gives other variables' ranges
    (variable, first, last), an inner loop's step. Every bound listed holds."""
    lin = affine.affine_of(sub)
    if lin is None:
        return None
    diff = lin - Lin.of(var)
    limits = _guard_limits(guards)
    for k, first, last in ranges:
        limits.setdefault((k, "lower"), []).append(first)
        limits.setdefault((k, "upper"), []).append(last)
    lows = _bounds(diff, var, var_range, limits, low=True)
    highs = _bounds(diff, var, var_range, limits, low=False)
    if _excludes_zero(diff, guards):             # `j <= i` and `j != i`: j - i <= -1
        lows += [Lin(1)] if any(affine.surely_nonnegative(low) for low in lows) else []
        highs += [Lin(-1)] if any(affine.surely_nonnegative(-high) for high in highs) else []
    return lows, highs


def first_step(step: IndexVar, start: Lin, guards: tuple) -> Lin:
    """The first step from `start` at which `guards` can all hold: the greatest constant-offset
    lower bound they state on `step` (`t > 0`, `t >= start + 2`, `t > k` with `k >= 1`), then
    past each step a conjunct `t != c` excludes (`!(t == 0 || i == 0)`). A read under
    `if t > 0 { x[t - 1] }` is made from there on only."""
    limits = _guard_limits(guards)
    for low in limits.get((step, "lower"), []):
        # a bound through another variable counts at that variable's own least value
        # (`k < n` with `k > 0`: n >= 2)
        gaps = [d.const for d in _bounds(low - start, step, (start, start), limits, True) if d.is_const]
        if gaps and max(gaps) > 0:
            start = start + max(gaps)
    excluded = [affine.affine_of(side) for cond in (c for g in guards for c in _conjuncts(g) if c.op == "ne")
                for side, other in ((cond.args[0], cond.args[1]), (cond.args[1], cond.args[0]))
                if affine.affine_of(other) == Lin.of(step)]
    while any(value is not None and value == start for value in excluded):
        start = start + 1
    return start


def _excludes_zero(diff: Lin, guards: tuple) -> bool:
    """Whether a guard's conjunct says `diff != 0` (its two sides differ by +-diff)."""
    for cond in (c for g in guards for c in _conjuncts(g) if c.op == "ne"):
        a, b = (affine.affine_of(x) for x in cond.args)
        if a is not None and b is not None and (a - b == diff or b - a == diff):
            return True
    return False


def _bounds(diff: Lin, var: IndexVar, var_range: tuple, limits: dict, low: bool, depth: int = 0) -> list:
    """The lower (upper) bounds of `diff`, one per choice of a bound for each other variable
    (a bound may name further variables, `k < j` with `j < i`: chosen in turn, a few deep),
    taken at the end of `var_range` that makes it least (greatest). One variable is replaced at a
    time, first one that no other's bounds name, so that a bound through another variable cancels
    it (`r - i` with r in i..i + l is at most l - 1 at every i, not l - 1 + i's hull)."""
    free = [k for k in diff.keys() if isinstance(k, IndexVar) and k is not var]
    if not free:
        c = diff.terms.get(var, 0)
        end = var_range[0] if (c > 0) == low else var_range[1]
        return [diff.substitute({var: end}) if c else diff]
    if depth == _DEPTH:
        return []
    options = {k: _var_bounds(k, limits, lower=(diff.terms[k] > 0) == low) for k in free}
    named = {v for k in free for b in options[k] for v in b.keys() if v is not k}
    k = next((k for k in free if k not in named), free[0])
    return [b for bound in options[k]
            for b in _bounds(diff.substitute({k: bound}), var, var_range, limits, low, depth + 1)]


_DEPTH = 8


def _var_bounds(k: IndexVar, limits: dict, lower: bool) -> list:
    """k's lower (upper) bounds, inclusive: its hull's end and the guards' comparisons."""
    hull = [] if k.extent is None else [k.lo if lower else k.lo + k.extent - 1]
    return hull + limits.get((k, "lower" if lower else "upper"), [])


def _guard_limits(guards: tuple) -> dict:
    """(variable, "lower" | "upper") -> the inclusive bounds the guards' conjuncts state on a
    variable of coefficient +-1 (`k >= i + 1`, `k < min(i, 3)`)."""
    limits: dict = {}
    for cond in (c for g in guards for c in _conjuncts(g) if c.op in _FLIPPED):
        for side, other, op in ((cond.args[0], cond.args[1], cond.op), (cond.args[1], cond.args[0], _FLIPPED[cond.op])):
            for bound in _sides(other, op):
                _note_limit(limits, affine.affine_of(side), bound, op)
    return limits


def _conjuncts(cond: Value, holds: bool = True) -> list:
    """The comparisons that hold when `cond` is `holds` (`!(j > i)` gives `j <= i`)."""
    if not isinstance(cond, Op):
        return []
    if cond.op == "not":
        return _conjuncts(cond.args[0], not holds)
    if cond.op == ("and" if holds else "or"):
        return [c for a in cond.args for c in _conjuncts(a, holds)]
    if cond.op in ("eq", "ne") and (cond.op == "ne") == holds:
        return [Op("ne", cond.args, cond.dtype)]
    if cond.op not in _FLIPPED:
        return []
    return [cond if holds else Op(_NEGATED[cond.op], cond.args, cond.dtype)]


def _sides(v: Value, op: str) -> list:
    """The affine forms `v` bounds a variable by: a min's arguments each bound it from above, a
    max's from below."""
    if isinstance(v, Op) and v.op == ("min" if op in ("lt", "le") else "max"):
        return [x for a in v.args for x in _sides(a, op)]
    lin = affine.affine_of(v)
    return [] if lin is None else [lin]


def _note_limit(limits: dict, side: Optional[Lin], bound: Lin, op: str) -> None:
    """`side op bound` with side = c k + rest, c = +-1: a bound of k."""
    if side is None:
        return
    for k, c in side.terms.items():
        if isinstance(k, IndexVar) and abs(c) == 1:
            rest = side - Lin.of(k, c)
            if any(isinstance(x, IndexVar) and x is k for x in bound.keys()):
                continue
            value = (bound - rest).scale(c)            # c k op bound - rest
            upper = (op in ("lt", "le")) == (c > 0)
            strict = op in ("lt", "gt")
            value = value - (1 if upper else -1) if strict else value
            limits.setdefault((k, "upper" if upper else "lower"), []).append(value)
