"""The order of a recurrence member's clauses within a step (LANGUAGE.md section 4).

A clause may read points of the step being computed that other clauses of its member write (an
insulated edge `u[t, 0] = u[t, 1]` copying the interior just computed). A step runs a member's
clauses in an order where each runs after every clause whose points it may read at that step,
and, where two clauses may write one point, in source order (the later one wins). Such
dependencies are decided from the clauses' boxes and the reads' affine subscripts: a read is
apart from a clause when, along some axis, it surely lands outside the clause's range.
"""
from __future__ import annotations

from typing import Optional

from einc.ir import affine, step_reach
from einc.ir.nodes import IndexVar, RecClause, RecMember, StateRead
from einc.ir.types import Lin, Sym


def may_read_now(read: StateRead, clause: RecClause, step: IndexVar, guards: tuple) -> bool:
    """Whether `read`, made in `clause`, may be of the step being computed."""
    reach = step_reach.offset_bounds(read.subs[0], step, (clause.t_lo, clause.t_hi - 1), guards)
    if reach is None:
        return True
    lows, highs = reach
    return not (any(affine.surely_negative(high) for high in highs)
                or any(affine.surely_nonnegative(low - 1) for low in lows))


def may_reach(read: StateRead, guards: tuple, target: RecClause) -> bool:
    """Whether the point `read` reads (its axes after the step) may be one `target` writes."""
    return miss(read, guards, target) is None


def miss(read: StateRead, guards: tuple, target: RecClause, large: bool = False) -> Optional[Lin]:
    """A Lin in sizes whose being >= 0 makes `read` miss `target`'s points, surely so for every
    admissible size (with `large`, for every size of at least LARGE), or None when none is known."""
    for sub, var in zip(read.subs[1:], target.vars):
        # a stand-in for any point of the range, also where `sub` names the variable itself
        anywhere = IndexVar(var.name, var.lo, var.extent)
        reach = step_reach.offset_bounds(sub, anywhere, (var.lo, var.lo + var.extent - 1), guards)
        if reach is None:
            continue
        lows, highs = reach
        for gap in [-high - 1 for high in highs] + [low - 1 for low in lows]:
            if affine.surely_nonnegative(_grown(gap) if large else gap):
                return gap
    return None


LARGE = 16      # the sizes an order chosen for large sizes assumes, checked at run time (step_order)


def _grown(lin: Lin) -> Lin:
    """`lin` with each size at least LARGE."""
    return lin.substitute({k: Lin.of(k) + (LARGE - 1) for k in lin.keys() if isinstance(k, Sym)})


def steps_meet(a: RecClause, b: RecClause) -> bool:
    """Whether the clauses may run at one step."""
    return not (affine.surely_nonnegative(b.t_lo - a.t_hi) or affine.surely_nonnegative(a.t_lo - b.t_hi))


def boxes_meet(a: RecClause, b: RecClause) -> bool:
    """Whether the clauses may write one point."""
    return steps_meet(a, b) and not any(
        affine.surely_nonnegative(vb.lo - va.lo - va.extent) or affine.surely_nonnegative(va.lo - vb.lo - vb.extent)
        for va, vb in zip(a.vars, b.vars))


def reads_other_clauses_only(member: RecMember, clause: RecClause, read: StateRead, guards: tuple) -> bool:
    """Whether a same-step read of `member` in its own `clause` surely misses that clause's
    points (it reads what other clauses of the step wrote)."""
    return read.member is member and not may_reach(read, guards, clause)


def reads_across_clauses(member: RecMember, step: IndexVar) -> bool:
    """Whether a clause of `member` may read points another one writes at the same step."""
    return any(dependencies(member, step, reads_only=True).values())


def dependencies(member: RecMember, step: IndexVar, large: bool = False, reads_only: bool = False) -> dict:
    """Index of each clause -> {index of a clause that must run before it in a step: the
    conditions under which it need not (Lins in sizes, all >= 0 then; None: always needed)}. With
    `large`, a read that misses a clause at sizes of at least LARGE is needed only below them."""
    clauses = member.clauses
    before: dict = {k: {} for k in range(len(clauses))}
    for k, clause in enumerate(clauses):
        for read, guards in step_reach.guarded_state_reads([clause.body, clause.guard]):
            if read.member is not member or not may_read_now(read, clause, step, guards):
                continue
            for j, other in enumerate(clauses):
                if j != k and steps_meet(clause, other) and may_reach(read, guards, other):
                    unless = miss(read, guards, other, large=True) if large else None
                    known = before[k].get(j, [])
                    before[k][j] = None if unless is None or known is None else known + [unless]
        if not reads_only:
            before[k].update({j: None for j in range(k) if boxes_meet(clauses[j], clause)})
    return before


def step_order(member: RecMember, step: IndexVar) -> tuple[list, list, Optional[list]]:
    """(the clauses in an order their dependencies allow, source order where they allow several;
    the Lins in sizes that must be >= 0 for that order to hold; None), or (the clauses unchanged,
    [], a cycle of clause indices). Where the dependencies at some sizes form a cycle (an edge
    reading `u[t, 1]` and the other `u[t, N - 2]` meet when N = 2), the order is the one of large
    sizes, and the sizes where it fails are the run-time checks."""
    order, cycle = _sorted(dependencies(member, step))
    if cycle is None:
        return [member.clauses[k] for k in order], [], None
    before = dependencies(member, step, large=True)
    order, _ = _sorted({k: {j for j, unless in deps.items() if unless is None} for k, deps in before.items()})
    if order is None:
        return member.clauses, [], cycle
    place = {k: n for n, k in enumerate(order)}
    checks = [gap for k, deps in before.items() for j, unless in deps.items() if place[j] > place[k] for gap in unless]
    return [member.clauses[k] for k in order], checks, None


def _sorted(before: dict) -> tuple[Optional[list], Optional[list]]:
    """(clause indices in an order after their dependencies, None) or (None, a cycle)."""
    order, done = [], set()
    while len(order) < len(before):
        ready = next((k for k in sorted(before) if k not in done and set(before[k]) <= done), None)
        if ready is None:
            return None, _cycle(before, done)
        order.append(ready)
        done.add(ready)
    return order, None


def _cycle(before: dict, done: set) -> list:
    """A cycle among the clauses not yet ordered, as clause indices, its first one repeated."""
    path = [min(k for k in before if k not in done)]
    while True:
        nxt = min(j for j in before[path[-1]] if j not in done)
        if nxt in path:
            return path[path.index(nxt):] + [nxt]
        path.append(nxt)
