"""The work of one step of a recurrence group, as the CPU's one-dispatch form runs it: which of a
clause's reductions it computes once a step (`step_reductions`), and about how many scalar
operations a step runs (`step_operations`, which `einc build --explain` reports beside the form,
einc.mlir.recurrences.forms; docs/DECISIONS.md, "heavy steps")."""
from __future__ import annotations

import math
from typing import Optional

from einc.ir import affine
from einc.ir.nodes import (Generic, IndexVar, Op, RecClause, RecMember, RecurrenceGroup, RecValue, Reduce, Stack,
                           free_vars, postorder, step_state_reads)


def step_reductions(clause: RecClause, member: RecMember, t_var: IndexVar, outer: frozenset) -> list:
    """The reductions in the clause's body with one value at all its points: they use no index
    variable but the step's (and `outer`, those of loops around the group) and read the member
    only at earlier steps (t - c, c >= 1; its points of step t change as they are written). Only
    those every point evaluates (not on a side of a select, the right of `&&`/`||` or in the
    body of a guarded reduction), so computing them first evaluates nothing the points would
    not; inner ones first."""
    allowed = outer | {t_var}

    def children(v) -> tuple:
        if isinstance(v, Op) and v.op in ("select", "and", "or"):
            return v.args[:1]           # only the test (or the left side) runs at every point
        if isinstance(v, Reduce) and v.guard is not None:
            return (v.guard,)
        return v.operands() if v.rank == 0 or isinstance(v, Stack) else ()
    return [v for v in postorder([clause.body], children)
            if isinstance(v, Reduce) and free_vars(v) <= allowed and _reads_earlier_steps(v, member, t_var)]


def _reads_earlier_steps(v, member: RecMember, t_var: IndexVar) -> bool:
    """Whether every read of `member` under `v` is at step t - c, c >= 1."""
    for read in step_state_reads([v]):
        if read.member is member:
            step = affine.affine_of(read.subs[0])
            if step is None or step.terms != {t_var: 1} or step.const >= 0:
                return False
    return True


def step_operations(group: RecurrenceGroup) -> Optional[int]:
    """Scalar operations one step runs: each clause's points times the operations of its body
    and guard (a reduction's body once per point of its range), its `step_reductions` once;
    None where a range's extent is not known at build time (a run-time size, or one that
    depends on the step or a point)."""
    outer, enclosing = set(), group.enclosing
    while enclosing is not None:
        outer.add(enclosing.t_var)
        enclosing = enclosing.enclosing
    total = 0
    for member in group.members:
        for clause in member.clauses:
            once = step_reductions(clause, member, group.t_var, frozenset(outer))
            points = _points(clause.vars)
            each = _operations([clause.body, clause.guard], {id(r) for r in once})
            per_step = _operations(once, set())
            if points is None or each is None or per_step is None:
                return None
            total += points * each + per_step
    nested = set()
    for v in group.step_work:
        if isinstance(v, RecValue) and id(v.group) in nested:
            continue
        nested.add(id(v.group) if isinstance(v, RecValue) else None)
        more = _step_tensor_operations(v)
        if more is None:
            return None
        total += more
    return total


def _step_tensor_operations(v) -> Optional[int]:
    """The operations of one tensor a step computes whole (einc.passes.step_work): a loop nested
    in the step runs all its steps."""
    if isinstance(v, RecValue):
        per_step = step_operations(v.group)
        steps = v.group.t_var.extent
        return None if per_step is None or not steps.is_const else per_step * steps.const
    if isinstance(v, Generic):
        points = _points(v.vars)
        each = _operations([v.body, v.guard], set())
        return None if points is None or each is None else points * each
    return _operations([v], set())


def _points(vars_) -> Optional[int]:
    if not all(v.extent.is_const for v in vars_):
        return None
    return math.prod(max(v.extent.const, 0) for v in vars_)


def _operations(roots, skipped: set) -> Optional[int]:
    """The scalar operations under `roots` but not under `skipped` (ids), each value counted once,
    a reduction's body once per point of its range where it uses the reduction's variables (once
    where it does not: compiled code computes that before the loop); program-level tensors count
    nothing (they are computed before the step loop)."""
    total, seen, stack = 0, set(skipped), [r for r in reversed(roots) if r is not None]   # the first first
    while stack:
        v = stack.pop()
        if id(v) in seen or (v.rank > 0 and not isinstance(v, Stack)):
            continue
        seen.add(id(v))
        total += 1
        if isinstance(v, Reduce):
            points, inner = _points(v.vars), _reduction_body(v, seen)
            if points is None or inner is None:
                return None
            total += points * inner[0] + inner[1]
        else:
            stack.extend(v.operands())
    return total


def _reduction_body(r: Reduce, seen: set) -> Optional[tuple]:
    """(operations of the reduction's body and guard using its variables, those of the parts
    using none of them), not counting `seen`."""
    own, varying, fixed, stack = set(r.vars), 0, [], [p for p in (r.body, r.guard) if p is not None]
    inner_seen = set(seen)
    while stack:
        v = stack.pop()
        if id(v) in inner_seen or (v.rank > 0 and not isinstance(v, Stack)):
            continue
        if not free_vars(v) & own:
            fixed.append(v)
            continue
        inner_seen.add(id(v))
        varying += 1
        if isinstance(v, Reduce):
            points, inner = _points(v.vars), _reduction_body(v, inner_seen)
            if points is None or inner is None:
                return None
            varying += points * inner[0] + inner[1]
        else:
            stack.extend(v.operands())
    once = _operations(fixed, inner_seen)
    return None if once is None else (varying, once)
