"""Shapes of programs that known issues are about (fuzz.known_issues)."""
from __future__ import annotations

from fuzz.programs.structure import Group, Program, Read, Reduce, item_exprs, walk


def reduction_reading_no_array(program: Program) -> bool:
    """A reduction whose body reads no array element (`sum[p in 0..4](2)`, `sum[i](x0)`)."""
    return any(isinstance(node, Reduce) and not any(
        isinstance(n, Read) and n.subs for part in (node.body, node.guard) if part is not None
        for n in walk(part))
        for item in program.items for expr in item_exprs(item) for node in walk(expr))


def recurrence_reads_another(program: Program) -> bool:
    """A recurrence reads a member of another recurrence (its finished values)."""
    group_of = {m.name: k for k, item in enumerate(program.items) if isinstance(item, Group)
                for m in item.members}
    return any(isinstance(node, Read) and group_of.get(node.name, k) != k
               for k, item in enumerate(program.items) if isinstance(item, Group)
               for expr in item_exprs(item) for node in walk(expr))
