"""`einc build --explain`: what the compiler decided, per definition, in plain words."""
from __future__ import annotations

from einc.ir import nodes as ir
from einc.ir.types import shape_str


def explain_program(p: ir.Program, target: str, lowerings: list[str], unchecked_indices: bool = False,
                    kernels: list[str] = ()) -> str:
    """`lowerings`: how each group of `p.recurrences` runs on `target`, in words
    (einc.mlir.recurrence.choose_form, the choice the lowering makes); `unchecked_indices`:
    the build leaves data-dependent subscripts unchecked; `kernels`: the linalg ops each
    source definition became (einc.mlir.kernel_census, read from the lowered module)."""
    lines = [f"program {p.source}, built for {target}"]
    lines += [f"  input {i.name}: {_type(i)}" for i in p.inputs]
    numbers = {id(g): k for k, g in enumerate(p.recurrences)}
    for name, v in p.outputs:
        how = f"member of recurrence group {numbers[id(v.group)]}" if isinstance(v, ir.RecValue) else _how(v)
        lines.append(f"  output {name}: {_type(v)} — {how}")
    if not p.recurrences:
        lines.append("recurrences: none")
    for k, (group, lowering) in enumerate(zip(p.recurrences, lowerings, strict=True)):
        lines += _group(k, group, lowering)
    lines += _index_checks(p, unchecked_indices)
    if kernels:
        lines += ["kernels per source definition (the lowered module's linalg ops; a generic beside a named",
                  "  op is the rest of that definition, e.g. a bias or activation around the matmul, emitted",
                  "  as its own op: IREE's dispatch formation decides whether it fuses into the named op's",
                  "  dispatch; recurrences run as described above):"] + list(kernels)
    return "\n".join(lines) + "\n"


def _index_checks(p: ir.Program, unchecked: bool) -> list:
    if unchecked:
        return ["data-dependent indices: not checked (--unchecked-indices): an index outside its axis "
                "is clamped into it"]
    if not p.index_checks:
        return ["data-dependent indices: none"]
    lines = [f"data-dependent indices: {len(p.index_checks)} checked at run time (an index outside its axis "
             "is a run-time error; --unchecked-indices clamps instead)"]
    for check in p.index_checks:
        over = ", ".join(v.name for v in check.vars) or "no index"
        lines.append(f"  {check.text} axis {check.axis} at {check.span}: one pass over {over}")
    return lines


def _group(k: int, group, lowering: str) -> list:
    t = group.t_var
    lines = [f"recurrence group {k}: {', '.join(m.name for m in group.members)}",
             f"  axis: {t.name} (axis 0), steps 0..{t.extent!r}, one loop",
             f"  order inside a step: {' -> '.join(m.name for m in group.members)}",
             f"  lowering: {lowering}"]
    for m in group.members:
        plan = m.plan
        window = f"{plan['window']} slots (slot = step mod {plan['window']})" if plan.get("window") \
            else f"whole tensor {shape_str(m.shape)}"
        lines.append(f"  {m.name}: lookback {_opt(plan.get('lookback'))}, tail "
                     f"{_opt(plan.get('tail'))}, storage {window} — {plan.get('reason', '')}")
    return lines


def _opt(v) -> str:
    return "unbounded" if v is None else str(v)


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
