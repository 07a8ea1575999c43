"""`einc build --explain`: what the compiler decided, per definition, in plain words."""
from __future__ import annotations

from einc.ir import clause_order, nodes as ir
from einc.ir.types import shape_str


def explain_program(p: ir.Program, target: str, lowerings: list[str], unchecked_indices: bool = False,
                    dense_kernels: tuple = (), kernels: list[str] = (), packed: list = ()) -> str:
    """`lowerings`: how each group of `p.recurrences` runs on `target`, in words
    (einc.mlir.recurrences.forms.choose_form, the choice the lowering makes); `unchecked_indices`:
    the build leaves data-dependent subscripts unchecked; `dense_kernels`: the named ops the
    lowering emitted (einc.mlir.dense.named_ops.DenseKernel); `kernels`: the linalg ops each source
    definition became (einc.mlir.kernel_census, read from the lowered module); `packed`: per group,
    the weights its steps read from a copy packed before the loop (einc.mlir.recurrences.packed_weights)."""
    lines = [f"program {p.source}, built for {target}"]
    lines += [f"  input {i.name}: {_type(i)}" for i in p.inputs]
    numbers = {id(g): k for k, g in enumerate(p.recurrences)}
    for name, v in p.outputs:
        how = f"member of recurrence group {numbers[id(v.group)]}" if isinstance(v, ir.RecValue) else _how(v)
        lines.append(f"  output {name}: {_type(v)} — {how}")
    if not p.recurrences:
        lines.append("recurrences: none")
    for k, (group, lowering) in enumerate(zip(p.recurrences, lowerings, strict=True)):
        lines += _group(k, group, lowering) + _nesting(group, p.recurrences) + _packed(packed[k] if packed else [])
    lines += _dense_kernels(p, dense_kernels)
    lines += _index_checks(p, unchecked_indices)
    if kernels:
        lines += ["kernels per source definition (the lowered module's linalg ops; a generic beside a named",
                  "  op is the rest of that definition, e.g. a bias or activation around the matmul, emitted",
                  "  as its own op: IREE's dispatch formation decides whether it fuses into the named op's",
                  "  dispatch; recurrences run as described above):"] + list(kernels)
    return "\n".join(lines) + "\n"


# What run-time sizes cost each kind of kernel on IREE 3.13 and what fixed sizes give instead
# (measured, docs/DECISIONS.md, "Dense kernels" and "Specialized builds"): a window op is tiled
# for the run-time sizes of its channels, rows and columns as for no size in particular (a conv
# layer 17-50x slower than with --dim), for a run-time batch as for a fixed one; on llvm-cpu a
# 2-d convolution's run-time output channels and columns, and a 1-d one's columns, run on blocks
# of build-time size, a dispatch and a copy each (0.4-1.4x on AVX-512, 1.0-1.8x on AVX2); a window
# whose reads are not proven in bounds is a loop nest instead of the named op (a 2x2 max pool
# 1.6-5.8x slower); a pooling's run-time sizes cost 1.1-1.8x as IREE's named op; contractions take
# IREE's data-tiled path either way. The target's own forms of an op (FORMS) take run-time sizes
# at about fixed-size speed.
WINDOW_COST = ("a window op with run-time sizes other than its batch: IREE's dynamic-shape code, the slower "
               "path (a conv layer with run-time channels measured 17-50x slower than with the sizes fixed)")
POOLING_COST = ("a pooling with run-time sizes other than its batch: IREE's dynamic-shape code, measured "
                "1.1-1.8x the time with the sizes fixed on llvm-cpu (max pools of 2x2 and 3x3, strided)")
BLOCKS_COST = ("a window op with run-time sizes other than its batch, run on blocks of {} of build-time size, "
               "a dispatch and a copy into place each: a run-time width of one block's length (on AVX2 any "
               "whole count of 8-column rows up to 64) runs once, as fast as fixed, a wider one measured 0.4-1.4x the time with the sizes fixed on AVX-512 and "
               "1.0-1.8x on AVX2 (IREE's dynamic-shape code alone: 1.8-50x)")
UNPROVEN_COST = ("a loop nest (linalg.generic) instead of the named op: its read(s) at {} are not proven "
                 "inside their axes for every run-time size, which the named op needs (a 2x2 max pool "
                 "measured 1.6-5.8x slower than with the sizes fixed)")
BATCH_COST = "a window op whose only run-time size is its batch: measured as fast as with the sizes fixed"
FAST_COST = ("a window op whose run-time sizes other than its batch ({}) are summed input channels, which "
             "this target's convolution takes at run time: measured as fast as with the sizes fixed")
WRITTEN_OUT_COST = ("a pooling written out as one pass over its window's shifted slices of the image: measured "
                    "1.0-1.3x the time with the sizes fixed")
BARE_WRITTEN_OUT_COST = ("a window over an image with no batch or channel axis (linalg has no op for it) written "
                         "out as one pass over its window's shifted slices of the image: measured 0.4-1.3x the "
                         "time with the sizes fixed")
PAIRS_COST = ("a pooling over pairs of columns (its last window axis 2 points 2 apart), each pair one 64-bit "
              "read (128-bit in f64): measured 0.9-1.2x the time with the sizes fixed; an odd width runs as "
              "before (a 2-d one as IREE's op, 1.3-1.7x)")
WINDOWS_MATMUL_COST = ("a convolution run as a matmul over its windows (llvm-cpu's register tiles), the windows "
                       "copied out as rows by a pass of scalar code, then packed: run-time sizes measured "
                       "1.0-1.5x the time with the sizes fixed (the copy is the slower part)")
PACKED_WINDOWS_COST = ("a convolution run as its filter times its windows, which one pass copies straight into "
                       "the matmul's packed operand (a run-time width on a host whose register tiles' rows "
                       "are not a power of two, AVX2's 6: there the copy into rows cannot join the pack): "
                       "measured 0.7-1.3x the time with the sizes fixed")
PADDED_KEYS_COST = ("fused attention over a fixed key count: run-time batch and query counts cost about what "
                    "they cost a contraction")
# each of the target's own forms of an op (einc.mlir.dense.named_ops.FORMS, "": the op): what the
# kernel's line adds to the op's name, what its run-time sizes cost, and what fixed sizes give
FORMS = {"": ("", "", ""),
         "written out": ("", WRITTEN_OUT_COST, "the same pass, or IREE's op where that measured faster at "
                         "build-time sizes"),
         "written out, no op": ("", BARE_WRITTEN_OUT_COST, "the same pass"),
         "over pairs of columns": (" over pairs of columns", PAIRS_COST, "the same pass on IREE's tiles (an "
                                   "odd width: IREE's op)"),
         "a matmul over its windows": (" as a matmul over its windows", WINDOWS_MATMUL_COST,
                                       "the same form over static shapes"),
         "a matmul by its packed windows": (" as a matmul by its packed windows", PACKED_WINDOWS_COST,
                                            "the windows copied out as rows instead (a matmul over its windows)"),
         "over keys padded to whole steps": (" over its keys padded to whole vector steps (the padding masked "
                                             "out)", PADDED_KEYS_COST, "the same form over static shapes")}
CONTRACTION_COST = "a contraction: IREE's data-tiled code takes run-time sizes at about the speed of fixed ones"
SPECIALIZED = "(or einc run / einc.jit, which build for the sizes of the inputs they are given)"
FIXES = {"window": "gives IREE static shapes", "unproven": "lets the build check the reads for those sizes",
         "blocks": "runs the op once over static shapes, with no blocks"}


def _dense_kernels(p: ir.Program, kernels) -> list:
    if not kernels:
        return ["dense kernels (named ops): none"]
    named = {d for i in p.inputs for d in i.declared_dims or () if isinstance(d, str)}
    slow = [k for k in kernels if _slower(k)]
    lines = [f"dense kernels (named ops): {len(kernels)}, {len(slow)} of them on a slower path for run-time sizes"]
    for k in kernels:
        lines.append(f"  {k.would_be or k.op}{FORMS[k.form][0]} at {k.span}: " + _dense_cost(k, named))
    return lines


def _slower(kernel) -> bool:
    return bool(kernel.unproven) or (kernel.is_window and bool(kernel.slow_sizes))


def _dense_cost(kernel, named: set) -> str:
    if not kernel.run_time_sizes:
        return "every size fixed at build time"
    sizes = f"run-time sizes {', '.join(kernel.run_time_sizes)} — "
    if kernel.form:
        _, cost, fixed = FORMS[kernel.form]
        dims = " ".join(f"--dim {d}=SIZE" for d in kernel.run_time_sizes if d in named)
        return sizes + cost + (f"; {dims} {SPECIALIZED}: {fixed}" if dims else "")
    if not _slower(kernel):
        if not kernel.is_window:
            return sizes + CONTRACTION_COST
        return sizes + (FAST_COST.format(", ".join(kernel.fast_sizes)) if kernel.fast_sizes else BATCH_COST)
    if kernel.unproven:
        cost, fixing = UNPROVEN_COST.format(", ".join(map(str, kernel.unproven))), "unproven"
        wanted = kernel.run_time_sizes
    else:
        cost = BLOCKS_COST.format(" and ".join(kernel.blocks)) if kernel.blocks else \
            POOLING_COST if kernel.op.startswith("pooling_") else WINDOW_COST
        fixing, wanted = "blocks" if kernel.blocks else "window", kernel.slow_sizes
    fixable = [d for d in wanted if d in named]
    dims = " ".join(f"--dim {d}=SIZE" for d in fixable)
    fix = f"; {dims} {SPECIALIZED} {FIXES[fixing]}" if fixable else ""
    rest = [d for d in wanted if d not in named]
    stays = f"; {', '.join(rest)} stay run-time (no named dim)" if rest else ""
    return sizes + cost + fix + stays


def _index_checks(p: ir.Program, unchecked: bool) -> list:
    if unchecked:
        return ["data-dependent indices: not checked (--unchecked-indices): an index outside its axis "
                "is clamped into it, an integer division by zero is 0"]
    if not p.index_checks:
        return ["data-dependent indices: none"]
    lines = [f"data-dependent indices: {len(p.index_checks)} checked at run time (an index outside its axis "
             "is a run-time error; --unchecked-indices clamps instead)"]
    for check in p.index_checks:
        over = ", ".join(v.name for v in check.vars) or "no index"
        what = "divisor (0 is a run-time error)" if check.kind == "divisor" else f"axis {check.axis}"
        lines.append(f"  {check.text} {what} at {check.span}: one pass over {over}")
    return lines


def _clause_lines(member) -> str:
    return " -> ".join(f"line {c.span.line}" if c.span is not None else "a clause" for c in member.clauses)


def _group(k: int, group, lowering: str) -> list:
    t = group.t_var
    lines = [f"recurrence group {k}: {', '.join(m.name for m in group.members)}",
             f"  axis: {t.name} (axis {group.written_axis}{_batch_first(group)}), steps 0..{t.extent!r}, one loop",
             f"  order inside a step: {' -> '.join(m.name for m in group.members)}",
             f"  lowering: {lowering}"]
    lines += [f"  clauses of {m.name} inside a step: {_clause_lines(m)} (each after the clauses whose points "
              "of the step it reads)" for m in group.members if clause_order.reads_across_clauses(m, t)]
    for m in group.members:
        plan = m.plan
        window = f"{plan['window']} slots (slot = step mod {plan['window']})" if plan.get("window") \
            else f"whole tensor {shape_str(m.shape)}"
        lines.append(f"  {m.name}: lookback {_opt(plan.get('lookback'))}, tail "
                     f"{_opt(plan.get('tail'))}, storage {window} — {plan.get('reason', '')}")
    return lines


def _batch_first(group) -> str:
    if not group.written_axis:
        return ""
    return " as written, after batch axes: stored first, read in the written order"


def _nesting(group, groups: list) -> list:
    """Which group's steps this one runs in, and which groups run in each of its steps."""
    def named(g) -> str:
        return f"group {groups.index(g)} ({', '.join(m.name for m in g.members)})"
    inner = [g for g in groups if g.enclosing is group]
    lines = [f"  nested: runs whole inside each step of {named(group.enclosing)}, reading its state at earlier "
             f"steps{_per_point(group)}; its storage is made anew at each of those steps"] \
        if group.enclosing is not None else []
    if inner:
        lines.append(f"  inside each step: the loops of {', '.join(map(named, inner))}, after the slices they read")
    return lines


def _per_point(group) -> str:
    """A nested loop run for every point of the clause or definition it is computed in (its batch
    axes)."""
    batch = group.members[0].batch
    if not batch:
        return ""
    return f", for every point ({', '.join(v.name for v in batch)}) of the clause or definition it is computed in at once"


PACKED = ("  packed weights: {} — copied once per call with the last two axes swapped, so each lane's sum "
          "reads along the lanes: in-order chains of FMAs, several accumulators per vector")


def _packed(names: list) -> list:
    return [PACKED.format(", ".join(names))] if names else []


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
