"""Storage plan of recurrences (thesis 5.8): how many steps each member keeps.

window = max(lookback + 1, tail) when every read from outside the loop is at a static step
(`x[T - 1]`, `x[N - 3]`) and the member does not leave the program; the whole tensor
otherwise. With a window, step t lives in slot t mod window, so reads from outside are
rewritten here to slot indices; the lowering then sees a smaller tensor and never allocates
the full one.
"""
from __future__ import annotations

import numpy as np

from einc.ir import affine
from einc.ir.nodes import Const, Op, Print, Program, Read, RecValue, StateRead, Value, walk
from einc.ir.types import I32


def plan_storage(program: Program) -> None:
    outside = _outside_reads(program)
    for group in program.recurrences:
        for member in group.members:
            _plan(member, group, outside.get(member, []))


def _plan(member, group, uses: list) -> None:
    lookback, why = _lookback(member, group)
    tail, observed = _tail(member, uses)
    extent = member.shape[0]
    plan = {"lookback": lookback, "tail": tail, "read_outside": uses != []}
    if lookback is None:
        plan["reason"] = why
    elif tail is None:
        plan["reason"] = observed
    else:
        window = max(lookback + 1, tail)
        if extent.is_const and window >= extent.const:
            plan["reason"] = f"a window of {window} would hold every step"
        else:
            member.window = window
            plan["reason"] = f"history needs {lookback + 1} step(s), later reads {tail}"
            for read in uses:
                read.subs = (_slot(read.subs[0], window),) + tuple(read.subs[1:])
                # its step is a fixed distance from the end, so its slot is inside the window: a
                # far end recorded along the steps (a read in a dependent range) is no longer checked
                read.extreme_points = tuple(p for p in read.extreme_points if p[0] != 0)
    plan["window"] = member.window
    member.plan = plan


def _lookback(member, group):
    """Largest c over reads `m[t - c, ..]` of this member inside the loop; None if unbounded."""
    worst = 0
    for m in group.members:
        for read in _state_reads(m):
            if read.member is not member:
                continue
            lin = affine.affine_of(read.subs[0])
            if lin is None or lin.terms != {group.t_var: 1}:
                return None, f"`{member.name}` is read at a step that is not t - constant"
            worst = max(worst, -lin.const)
    return worst, ""


def _tail(member, uses: list):
    """How many final steps outside reads need; None (and why) if not a static suffix."""
    if uses is None:
        return None, "the whole tensor is observed"
    tail = 1
    for read in uses:
        lin = affine.affine_of(read.subs[0])
        back = None if lin is None else member.shape[0] - lin
        if back is None or not back.is_const or back.const < 1:
            return None, f"`{member.name}` is read at a step that is not a fixed distance from its end"
        tail = max(tail, back.const)
    return tail, ""


def _slot(sub: Value, window: int) -> Value:
    return Op("rem", (sub, Const(np.asarray(window, dtype=np.int32))), I32, span=sub.span)


def _outside_reads(program: Program) -> dict:
    """member -> the Reads of its RecValue outside its loop, or None when it is used whole."""
    uses: dict = {}
    roots = program.roots()
    for _, v in program.outputs:
        if isinstance(v, RecValue):
            uses[v.member] = None
    for e in program.effects:
        for a in (e.args if isinstance(e, Print) else e.printed()):
            if isinstance(a, RecValue):
                uses[a.member] = None
    for v in walk(roots):
        for o in v.operands():
            if isinstance(o, RecValue) and not (isinstance(v, Read) and o is v.tensor):
                uses[o.member] = None
        if isinstance(v, Read) and isinstance(v.tensor, RecValue):
            if uses.get(v.tensor.member, []) is not None:
                uses.setdefault(v.tensor.member, []).append(v)
    return uses


def _state_reads(member) -> list:
    out = []
    for v in walk([x for c in member.clauses for x in (c.body, c.guard) if x is not None]):
        if isinstance(v, StateRead):
            out.append(v)
    return out

