"""Which recurrence groups and members the program runs (before the storage plan).

Derivative requests change recurrences while the program is elaborated: forward mode adds
tangent members to a group, reverse mode makes new groups (adjoint loops). Some requests end
up unused (a projection bound to a name that is not an output), and a group runs as one loop,
so their members would still be computed. This pass keeps a member only when an output, an
effect, or a kept member reads it, and lists every group the outputs reach in
`program.recurrences` (the groups the front end made first, then the generated ones), so the
storage plan and --explain cover them.
"""
from __future__ import annotations

from einc.ir.nodes import Program, RecValue, StateRead


def settle_groups(program: Program) -> None:
    used, groups = _observed(program)
    known = {id(g) for g in program.recurrences}
    program.recurrences = [g for g in program.recurrences if id(g) in groups] + \
        [g for g in groups.values() if id(g) not in known]
    for group in program.recurrences:
        group.members = [m for m in group.members if id(m) in used]


def _observed(program: Program):
    """(ids of the members in use, id(group) -> group for the groups they belong to)."""
    used, groups, seen, stack = set(), {}, set(), program.roots()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, RecValue):
            groups.setdefault(id(v.group), v.group)
            stack.extend(_member(v.member, used))
            continue                  # not its operands: those are every member's clauses
        if isinstance(v, StateRead):
            stack.extend(_member(v.member, used))
        stack.extend(v.operands())
    return used, groups


def _member(member, used: set) -> list:
    """The values `member`'s clauses read, the first time the member is found in use."""
    if id(member) in used:
        return []
    used.add(id(member))
    return [x for c in member.clauses for x in (c.body, c.guard) if x is not None]
