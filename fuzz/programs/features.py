"""Shapes of programs that known issues are about (fuzz.known_issues)."""
from __future__ import annotations

from fuzz.programs.structure import (
    Define, Derivative, Group, Index, Program, Read, Reduce, Var, item_exprs, reads_of, walk)


def reduction_reading_no_array(program: Program, detail: str = "") -> bool:
    """A reduction whose body reads no array element that varies (`sum[p in 0..4](2)`,
    `sum[i](x0)`, `sum[l](d[l])` with `let d[i in 0..4] = N;`, which einc reads as one value)."""
    uniform = _uniform_definitions(program)
    return any(isinstance(node, Reduce) and not any(
        isinstance(n, Read) and n.subs and n.name not in uniform
        for part in (node.body, node.guard) if part is not None for n in walk(part))
        for item in program.items for expr in item_exprs(item) for node in walk(expr))


def _uniform_definitions(program: Program) -> set:
    """Definitions whose value is the same at every point: their bodies use no index and read
    nothing that varies, directly or through where-bindings."""
    uniform = set()

    def varies(expr, varying_locals: set) -> bool:
        return any(isinstance(n, Index) or (isinstance(n, Var) and n.name in varying_locals)
                   or (isinstance(n, Read) and n.subs and n.name not in uniform) for n in walk(expr))

    for item in program.items:
        if not isinstance(item, Define):
            continue
        same_everywhere = True
        for clause in item.clauses:
            varying = set()
            for where in clause.wheres:
                if where.name is not None and varies(where.expr, varying):
                    varying.add(where.name)
            same_everywhere &= not varies(clause.body, varying)
        if same_everywhere:
            uniform.add(item.name)
    return uniform


def recurrence_reads_another(program: Program, detail: str = "") -> bool:
    """A recurrence reads a member of another recurrence (its finished values)."""
    group_of = {m.name: k for k, item in enumerate(program.items) if isinstance(item, Group)
                for m in item.members}
    return any(isinstance(node, Read) and group_of.get(node.name, k) != k
               for k, item in enumerate(program.items) if isinstance(item, Group)
               for expr in item_exprs(item) for node in walk(expr))


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


def recurrence_with_points_before_its_step(program: Program, detail: str = "") -> bool:
    """A recurrence member with two or more clauses at literal points of its first axis
    (`let r[0] = ..; let r[1] = ..; let r[t in 2..T] = ..`), and the outcome is about a member."""
    for item in program.items:
        if isinstance(item, Group):
            for member in item.members:
                points = [c for c in member.clauses if c.slots[0].var is None]
                if len(points) >= 2 and any(detail.startswith(f"{m.name} ") for m in item.members):
                    return True
    return False
