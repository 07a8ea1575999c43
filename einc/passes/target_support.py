"""What a target cannot run, reported as a user error before IREE fails on it."""
from __future__ import annotations

from einc import diagnostics
from einc.ir.nodes import Program, walk
from einc.passes import same_step_reads
from einc.target import DEFAULT, Target


def check_target(program: Program, target: Target) -> None:
    values = walk(list(program.inputs) + program.roots())
    for v in values:
        instead = target.replacement_for(v.dtype.name)
        if instead is not None:
            raise diagnostics.error(
                diagnostics.UNSUPPORTED,
                f"{v.dtype} is not supported on {target.name}; use {instead} or --target {DEFAULT.name}"
                + _as_output(program, v), v.span, notes=_call_site(program, values, v))
    same_step_reads.check_program(program, target)


def _call_site(program: Program, values: list, culprit) -> list:
    """A note at the program's own expression that reaches `culprit` when `culprit` comes from a
    library's source (`std::ml::argmax` returns i64): without it the user sees only the library."""
    if culprit.span is None or culprit.span.file == program.source:
        return []
    caller: dict[int, object] = {}
    for v in reversed(values):                     # users before the values they read
        mine = v.span if v.span is not None and v.span.file == program.source else caller.get(id(v))
        for operand in v.operands():
            caller.setdefault(id(operand), mine)
    span = caller.get(id(culprit))
    return [] if span is None else [diagnostics.Label(span, "from this expression of the program", call_site=True)]


def _as_output(program: Program, culprit) -> str:
    names = [name for name, v in program.outputs if v is culprit]
    return f" (in the output `{names[0]}`)" if names and culprit.span is not None and culprit.span.file != program.source else ""
