"""Drop recurrence members that nothing observes (before the storage plan).

Derivative requests add tangent members to a recurrence's group while the program is
elaborated, including for requests whose value is never used (a projection bound to a name
that is not an output). The whole group runs as one loop, so such members would still be
computed; this pass keeps a member only when an output, an effect, or a kept member reads it.
"""
from __future__ import annotations

from einc.ir.nodes import Print, Program, RecValue, StateRead


def prune_members(program: Program) -> None:
    used = _observed_members(program)
    for group in program.recurrences:
        group.members = [m for m in group.members if id(m) in used]


def _observed_members(program: Program) -> set:
    roots = [v for _, v in program.outputs]
    for e in program.effects:
        roots += list(e.args) if isinstance(e, Print) else [e.cond]
    used, seen, stack = set(), set(), list(roots)
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, RecValue):
            stack.extend(_member(v.member, used))
            continue                  # not its operands: those are every member's clauses
        if isinstance(v, StateRead):
            stack.extend(_member(v.member, used))
        stack.extend(v.operands())
    return used


def _member(member, used: set) -> list:
    """The values `member`'s clauses read, the first time the member is found in use."""
    if id(member) in used:
        return []
    used.add(id(member))
    return [x for c in member.clauses for x in (c.body, c.guard) if x is not None]
