"""A recurrence member's whole state at an earlier step, as a tensor inside its own loop.

`w[k - 1]` inside the recurrence of `w[k, d]` names the vector of step k - 1. It is a `Generic`
over the remaining axes whose body is one `StateRead`: ordinary tensor code (a loss, its
gradient) can read it, and the storage plan sees the read's lookback. Tensors computed from a
slice depend on the step, so they are computed once per step (einc.passes.step_work).
"""
from __future__ import annotations

from einc.ir.nodes import Generic, IndexRef, RecMember, StateRead, Value, fresh_index_vars


def state_slice(member: RecMember, step_sub: Value, span=None) -> Generic:
    vars_ = fresh_index_vars(member.shape[1:], "s")
    read = StateRead(member, (step_sub,) + tuple(IndexRef(v) for v in vars_), span=span)
    return Generic(vars_, read, span=span)


def is_state_slice(v: Value) -> bool:
    if not isinstance(v, Generic) or not isinstance(v.body, StateRead) or v.guard is not None:
        return False
    rest = v.body.subs[1:]
    return len(rest) == len(v.vars) and all(
        isinstance(s, IndexRef) and s.var is var for s, var in zip(rest, v.vars))
