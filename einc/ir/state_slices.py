"""A recurrence member's whole state at an earlier step, as a tensor inside its own loop.

`w[k - 1]` inside the recurrence of `w[k, d]` names the vector of step k - 1. It is a `Generic`
over the remaining axes whose body is one `StateRead`: ordinary tensor code (a loss, its
gradient) can read it, and the storage plan sees the read's lookback. Tensors computed from a
slice depend on the step, so they are computed once per step (einc.passes.step_work). A slice
of the current step (`r[t]`, another member computed earlier in the step) exists only once that
member is written: `computable_after` says where in the step each such tensor can be computed.
"""
from __future__ import annotations

from einc.ir import affine
from einc.ir.types import Lin
from einc.ir.nodes import (Generic, IndexRef, RecMember, RecurrenceGroup, RecValue, StateRead, Value,
                           fresh_index_vars, walk)


def state_slice(member: RecMember, step_sub: Value, span=None) -> Generic:
    vars_ = fresh_index_vars(member.shape[1:], "s")
    read = StateRead(member, (step_sub,) + tuple(IndexRef(v) for v in vars_), span=span)
    return Generic(vars_, read, span=span)


def state_history(member: RecMember, span=None) -> Generic:
    """The member's every step as one tensor inside its loop (`h[s] = if s < t { y[s] } ..`, a
    step tensor reading earlier steps by its own index): the member is then stored whole."""
    vars_ = fresh_index_vars(member.shape, "s")
    return Generic(vars_, StateRead(member, tuple(IndexRef(v) for v in vars_), span=span), span=span)


def is_state_history(v: Value) -> bool:
    return _reads_by_its_vars(v, 0)


def is_part_of_row(v: Generic) -> bool:
    """Whether a state slice (or history) runs over only part of its member's axes: a slice
    batched over an enclosing index whose range starts past 0 or ends early (`let c[e in 1..E]
    = f(x[e - 1]);` with f's loop reading its state whole) has that index's range, not the
    member's whole axis. Its value is then the block its variables run over."""
    axes = v.body.member.shape[len(v.body.subs) - len(v.vars):]
    return any(var.lo != Lin(0) or var.extent != axis for var, axis in zip(v.vars, axes))


def is_state_slice(v: Value) -> bool:
    """A slice at one step, or the whole history (state_history)."""
    return _reads_by_its_vars(v, 1) or _reads_by_its_vars(v, 0)


def _reads_by_its_vars(v: Value, skip: int) -> bool:
    if not isinstance(v, Generic) or not isinstance(v.body, StateRead) or v.guard is not None:
        return False
    rest = v.body.subs[skip:]
    return len(rest) == len(v.vars) and all(
        isinstance(s, IndexRef) and s.var is var for s, var in zip(rest, v.vars))


def reads_current_step(slice_: Generic, group: RecurrenceGroup) -> bool:
    """Whether a state slice reads its member at the group's current step `t` (not `t - c`)."""
    step = affine.affine_of(slice_.body.subs[0])
    return step is not None and step.terms == {group.t_var: 1} and step.const == 0


def computable_after(group: RecurrenceGroup) -> dict:
    """id of each tensor of `group.step_work` -> how many of the step's members (in order) must be
    written before it is computed: past every member it reads at the current step, 0 if none."""
    position = {id(m): k for k, m in enumerate(group.members)}
    after: dict = {}
    for v in group.step_work:                      # operands first
        if is_state_slice(v):
            after[id(v)] = position[id(v.body.member)] + 1 if reads_current_step(v, group) else 0
        else:
            # a loop run inside the step (a RecValue) after the slices and loops its clauses read
            roots = v.group.code() if isinstance(v, RecValue) else [v]
            after[id(v)] = max((after[id(o)] for o in walk(roots, opaque=(RecValue,))
                                if o is not v and id(o) in after), default=0)
    return after
