"""Shapes of programs that known issues are about (fuzz.known_issues)."""
from __future__ import annotations

from fuzz.programs.structure import Derivative, Group, Program, reads_of


def derivative_of_build_time_value(program: Program, detail: str = "") -> bool:
    """`@y / @v` with `v` a binding no run-time input reaches (einc folds it at build time), and
    the outcome is about that derivative."""
    run_time = {i.name for i in program.inputs}
    for item in program.items:
        if isinstance(item, Derivative) and item.wrt not in run_time and detail.startswith(f"{item.name} "):
            return True
        if reads_of(item) & run_time:
            run_time |= _names(item)
    return False


def _names(item) -> set:
    return {m.name for m in item.members} if isinstance(item, Group) else {getattr(item, "name", "")}

