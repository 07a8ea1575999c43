"""Forward mode through a recurrence: tangent members run in the primal's own loop.

Every member that x reaches (directly, or by reading a member x reaches) gets a tangent
member in the same RecurrenceGroup, right after its primal member: at step t it reads the primal
states of step t and the tangent states of earlier steps, exactly as the primal reads its own
history, so the storage plan and the step order apply to it unchanged.
"""
from __future__ import annotations

from einc.ir.nodes import (Generic, IndexRef, Op, Read, RecClause, RecMember, RecValue, Reduce, Stack, StateRead,
                           Value, walk)
from einc.autodiff.local_rules import const
from einc.autodiff.recurrence_adjoint import (at_points_of_step_tensors, check_inner_loop_inputs,
                                              check_no_step_tensors, check_not_own_member, computed_from_state,
                                              sole_writer)
from einc.autodiff.rewrite import replace_nodes


def recurrence_tangent(tan, value: RecValue):
    check_not_own_member(value.group, tan.x, tan.span)
    check_no_step_tensors([at_points_of_step_tensors(v) for m in value.group.members for c in m.clauses
                           for v in (c.body, c.guard) if v is not None], tan.span, value.group)
    check_inner_loop_inputs(value.group, tan.span, tan.x if tan.dirs else None)
    if id(value.member) not in tan.states:
        _add_tangent_members(tan, value.group, value.member)
    member = tan.states[id(value.member)]
    return None if member is None else RecValue(value.group, member, span=value.span)


def _add_tangent_members(tan, group, wanted: RecMember) -> None:
    """Tangents of `wanted` and of the members it reads (no others: the group may already
    hold the tangent members of other derivative requests)."""
    primal = _read_by(wanted, group)
    reached = _reached_members(tan, primal)
    taken = {m.name for m in group.members}
    for m in primal:
        tan.states[id(m)] = None
        if id(m) in reached:
            shape = tuple(m.shape) + tuple(v.extent for v in tan.dirs)
            name = _unique(f"{m.name}'", taken)
            tan.states[id(m)] = RecMember(name, m.dtype, shape, [], span=m.span)
    for m in primal:
        dm = tan.states[id(m)]
        if dm is None:
            continue
        for c in m.clauses:
            primal = at_points_of_step_tensors(c.body)
            body = tan.of_scalar(primal)
            if body is not None and sole_writer(m, c):
                # partials that repeat the whole body read the value this step just stored
                here = (IndexRef(group.t_var),) + tuple(IndexRef(v) for v in c.vars)
                body = replace_nodes(body, {id(primal): StateRead(m, here)})
            dm.clauses.append(RecClause(c.t_lo, c.t_hi, tuple(c.vars) + tan.dirs,
                                        const(0.0, c.body) if body is None else body, c.guard, keeps=c.keeps))
        group.members.insert(_after_tangents_of(group, m), dm)


def _after_tangents_of(group, m: RecMember) -> int:
    """Where a tangent of `m` goes: right after `m` and the tangents of it other requests added
    (a loop inside a later member's step may read it at the step, `r7'[t]` in the tangent of a
    loop reading `r7[t]`, so it runs before every later primal member, not after all of them)."""
    k = group.members.index(m) + 1
    while k < len(group.members) and group.members[k].name.startswith(m.name + "'"):
        k += 1
    return k


def _unique(name: str, taken: set) -> str:
    """A member name not yet in the group (the lowering keeps members' storage apart by name)."""
    out, k = name, 1
    while out in taken:
        k += 1
        out = f"{name}{k}"
    taken.add(out)
    return out


def _read_by(wanted: RecMember, group) -> list:
    """`wanted` and the members its clauses read, directly or not, in group order."""
    keep, stack = {id(wanted)}, [wanted]
    while stack:
        for c in stack.pop().clauses:
            for m in _scan_states(at_points_of_step_tensors(c.body), group) | (
                    _scan_states(at_points_of_step_tensors(c.guard), group) if c.guard is not None else set()):
                if id(m) not in keep:
                    keep.add(id(m))
                    stack.append(m)
    return [m for m in group.members if id(m) in keep]


def _scan_states(v: Value, group) -> set:
    """The members of `group` that `v` reads, in its scalar code or in a loop it runs."""
    own = {id(m) for m in group.members}
    return {n.member for n in walk([v]) if isinstance(n, StateRead) and id(n.member) in own}


def _reached_members(tan, members: list) -> set:
    """ids of the float members whose value depends on x."""
    reads = {id(m): set() for m in members}
    reached = set()
    for m in members:
        if not m.dtype.is_float:
            continue
        for c in m.clauses:
            direct, states = _scan(tan, at_points_of_step_tensors(c.body), members)
            reads[id(m)] |= states
            if direct:
                reached.add(id(m))
    changed = True
    while changed:
        changed = False
        for m in members:
            if id(m) not in reached and m.dtype.is_float and reads[id(m)] & reached:
                reached.add(id(m))
                changed = True
    return reached


def _scan(tan, body: Value, members: list):
    """(whether `body` reaches x other than through state reads, ids of members it reads). A
    tensor the step computes from `members`' states, or a loop it runs reading them, is scanned
    as the step's own code: its tangent is built (and kept) only once the tangent members it
    reads exist. A state of an enclosing loop with a tangent reaches x."""
    own = {id(m) for m in members}
    direct, states, seen, stack = False, set(), set(), [body]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if v is tan.x:
            direct = True
        elif isinstance(v, StateRead):
            states.add(id(v.member))
            direct = direct or (id(v.member) not in own and tan.states.get(id(v.member)) is not None)
        # a tensor an inner loop's step computes from that loop's state: its tangent exists only
        # once that loop's tangent members do, so asking for it now would keep a zero
        elif isinstance(v, Read) and (_reads_states(v.tensor, own) or computed_from_state(v.tensor)):
            stack.extend(_code_of(v.tensor) + tuple(v.subs))
        elif _reads_states(v, own):             # a row of an array literal
            stack.extend(_code_of(v))
        elif isinstance(v, Read):
            direct = direct or v.tensor is tan.x or tan.of_tensor(v.tensor) is not None
        elif isinstance(v, (Op, Reduce)):
            stack.extend(v.operands())
    return direct, states


def _reads_states(t: Value, own: set) -> bool:
    """Whether the tensor `t` is computed in the step from `own`'s states: a tensor of the step,
    or an inner loop run in it."""
    return isinstance(t, (Generic, Stack, RecValue)) and any(
        isinstance(n, StateRead) and id(n.member) in own for n in walk([t]))


def _code_of(t: Value) -> tuple:
    """The scalar code computing the tensor `t` (_reads_states)."""
    if isinstance(t, Generic):
        return tuple(u for u in (t.body, t.guard) if u is not None)
    if isinstance(t, Stack):
        return tuple(t.elems)
    return tuple(t.group.code())
