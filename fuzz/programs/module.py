"""Many generated programs in one module: each under its own name prefix, so one IREE compile
checks them all (about a second each otherwise)."""
from __future__ import annotations

from dataclasses import dataclass

from fuzz.programs.render import render_statements
from fuzz.programs.structure import Program

HEADER = ["use std::math::*;"]


@dataclass(frozen=True)
class Module:
    source: str
    lines: dict                    # key -> (first line, last line) of its program
    outputs: tuple                 # prefixed output names, every program's
    dims: dict                     # prefixed named dims fixed at build time (`--dim`) -> size


def prefix(key) -> str:
    return f"p{key}_"


def assemble(programs: dict, render=render_statements) -> Module:
    """`programs`: key -> Program (or another campaign's program with `outputs`, written by
    `render(program, prefix)` as a list of statements), keys small integers."""
    text = header(programs.values())
    lines, outputs, dims = {}, [], {}
    for key, program in programs.items():
        statements = render(program, prefix(key))
        text.append(f"// program {key}")
        lines[key] = (len(text) + 1, len(text) + len(statements))
        text += statements
        outputs += [prefix(key) + name for name in program.outputs]
        if isinstance(program, Program) and program.fixed:
            dims.update({prefix(key) + name: value for name, value in program.dims})
    return Module("\n".join(text) + "\n", lines, tuple(outputs), dims)


def header(programs) -> list:
    """`use std::math::*;` for every module: std::math's `sum`, `min` and `max` are the prelude's,
    so the import leaves `sum(x)`, `min(x)` and `max(x)` of a whole array as they are."""
    return list(HEADER)


def owner(module: Module, line: int | None):
    """The key of the program on `line`, or None."""
    for key, (first, last) in module.lines.items():
        if line is not None and first <= line <= last:
            return key
    return None
