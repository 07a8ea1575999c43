"""`einc build --explain`: what the compiler decided, per definition, in plain words."""
from __future__ import annotations

from einc.ir import nodes as ir
from einc.ir.types import shape_str


def explain_program(p: ir.Program) -> str:
    lines = [f"program {p.source}"]
    lines += [f"  input {i.name}: {_type(i)}" for i in p.inputs]
    for name, v in p.outputs:
        lines.append(f"  output {name}: {_type(v)} — {_how(v)}")
    groups = getattr(p, "recurrences", [])
    if not groups:
        lines.append("recurrences: none")
    return "\n".join(lines) + "\n"


def _how(v: ir.Value) -> str:
    if isinstance(v, ir.Generic):
        return f"computed point by point over {len(v.vars)} axes (one linalg op)"
    if isinstance(v, ir.Piecewise):
        return f"piecewise, {len(v.clauses)} clauses written in order into one buffer"
    if isinstance(v, (ir.Input, ir.Const)):
        return "passed through"
    return "scalar"


def _type(v: ir.Value) -> str:
    return str(v.dtype) if v.rank == 0 else f"{v.dtype}{shape_str(v.shape)}"
