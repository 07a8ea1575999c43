"""Shapes of programs that known issues are about (fuzz.known_issues)."""
from __future__ import annotations

from fuzz.programs.structure import Derivative, Group, Program


def derivative_of_a_recurrence(program: Program, detail: str = "") -> bool:
    """`@y / @x` with `y` a recurrence member (its tangent runs in the recurrence's loop)."""
    members = {m.name for item in program.items if isinstance(item, Group) for m in item.members}
    return any(isinstance(item, Derivative) and item.of in members for item in program.items)
