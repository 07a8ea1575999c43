"""A group of scalar states as a loop inside one kernel (vulkan-spirv): no step touches the host.

SPIR-V cannot compile the one-dispatch form of recurrence_region, but a loop in the body of a
linalg.generic does compile. A group whose members are all scalar states with a
window (a logistic map, a scalar Kalman filter) keeps its whole state in the loop's registers:
each member's last `window` values. The kernel's points are the window's slots: every point
runs the same loop and yields the value its slot holds at the end, so the result is the
member's window storage, as the other forms leave it (slot = step mod window).

IREE-30: a shader invocation stops after about 65,535 loop iterations, inner loops included, so
one kernel runs at most the target's `loop_budget` steps (a host loop runs as many kernels as needed) and
a step that runs loops of its own (a reduction, a Stack, an integer exponent) does not fit here:
such a group runs inside a workgroup (recurrence_workgroup) or as a host loop (recurrence_host).
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc.ir.nodes import RecMember, RecurrenceGroup, Reduce, Stack, step_code
from einc.ir.types import Lin
from einc.mlir.core import scalar_ops
from einc.mlir.core.dispatch_captures import pack_captured_scalars
from einc.mlir.recurrences.scalars import Storage
from einc.mlir.recurrences.step import PointValue, emit_step, held_point
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type, tensor_type

FORM = "a loop over the steps inside one kernel"     # what `einc build --explain` calls it


def misfit(group: RecurrenceGroup) -> Optional[str]:
    """Why the group cannot run here (None when it can): every member must be a scalar state
    kept in a window, and a step must run no loop."""
    for m in group.members:
        if len(m.shape) != 1:
            return f"`{m.name}` holds more than one scalar a step"
        if m.window is None:
            return f"`{m.name}` keeps its whole history"
    bodies = [part for m in group.members for c in m.clauses for part in (c.body, c.guard)]
    loops = [what for what in map(_loop_of, step_code(bodies)) if what]
    return f"a step runs a loop of its own ({loops[0]})" if loops else None


def _loop_of(v) -> Optional[str]:
    """The loop (an scf.for) that lowering `v` inside the step emits, if any: reductions and
    point loops (einc.mlir.recurrences.scalars), integer exponents (einc.mlir.core.scalar_ops)."""
    if isinstance(v, Reduce):
        return "a reduction"
    if isinstance(v, Stack):
        return "a literal array of points"
    if scalar_ops.is_power_loop(v):
        return "a power with an integer exponent"
    return None


def emit_group(lw, group: RecurrenceGroup) -> list[ir.Value]:
    """Every member's window storage after the last step, in `group.members` order."""
    members = group.members
    slots = max(m.window for m in members)
    steps = lw.sizes.index(group.t_var.extent)
    per_kernel = index_const(lw.target.loop_budget)
    kernels = arith.divui(arith.addi(steps, index_const(lw.target.loop_budget - 1)), per_kernel)
    zeros = [linalg.fill(scalar_ops.constant(m.dtype, 0), outs=[_slots(m, slots)]) for m in members]
    loop = scf.ForOp(index_const(0), kernels, index_const(1), zeros)
    with ir.InsertionPoint(loop.body):
        start = arith.muli(loop.induction_variable, per_kernel)
        end = arith.minui(arith.addi(start, per_kernel), steps)
        scf.yield_(_kernel(lw, group, slots, start, end, list(loop.inner_iter_args)))
    return [tensor.extract_slice(tensor_type(m.dtype, (Lin(m.window),)), result, [], [], [], [0], [m.window], [1])
            for m, result in zip(members, loop.results)]


def _slots(member: RecMember, slots: int) -> ir.Value:
    return tensor.empty([slots], element_type(member.dtype))


def _kernel(lw, group: RecurrenceGroup, slots: int, start: ir.Value, end: ir.Value,
            before: list[ir.Value]) -> list[ir.Value]:
    """Steps start .. end - 1 from the storage `before`; the storage after them."""
    members = group.members
    outs = [_slots(m, slots) for m in members]
    identity = ir.AffineMap.get_identity(1)
    op = linalg.GenericOp_([], outs, [identity] * len(outs), [linalg.IteratorType.parallel])
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        slot = linalg.IndexOp(0).result
        # register k of a member holds step t - 1 - k, which sits in slot (t - 1 - k) mod window
        initial = [tensor.extract(b, [_slot_of(start, k + 1, m.window)]) for m, b in zip(members, before)
                   for k in range(m.window)]
        steps = scf.ForOp(start, end, index_const(1), initial)
        with ir.InsertionPoint(steps.body):
            registers = iter(steps.inner_iter_args)
            recent = {m: [next(registers) for _ in range(m.window)] for m in members}
            storage = Storage(group.t_var, steps.induction_variable, {m: None for m in members}, recent)
            emit_step(lw, group, storage, _write_held)
            scf.yield_([v for m in members for v in [storage.current[m]] + recent[m][:-1]])
        registers = iter(steps.results)
        last = {m: [next(registers) for _ in range(m.window)] for m in members}
        linalg.YieldOp([_pick(last[m], _back_from(end, slot, m.window)) for m in members])
    if lw.target.has_defect("IREE-220"):
        pack_captured_scalars(op)
    return list(op.results)


def _slot_of(t: ir.Value, back: int, window: int) -> ir.Value:
    """The slot of step t - back (0 < back <= window), kept non-negative for t >= 0."""
    return arith.remui(arith.addi(t, index_const(window - back)), index_const(window))


def _back_from(end: ir.Value, slot: ir.Value, window: int) -> ir.Value:
    """k such that step end - 1 - k is the last step before `end` in `slot` (slot < window)."""
    return arith.remui(arith.subi(arith.addi(end, index_const(window - 1)), slot), index_const(window))


def _pick(values: list[ir.Value], k: ir.Value) -> ir.Value:
    """values[k] for an index k < len(values); slots past a member's window get values[-1]."""
    picked = values[-1]
    for index in range(len(values) - 2, -1, -1):
        picked = arith.select(arith.cmpi(arith.CmpIPredicate.eq, k, index_const(index)), values[index], picked)
    return picked


def _write_held(lw, member: RecMember, storage: Storage, vars_: list, active: Optional[ir.Value],
                value: PointValue, _clause) -> None:
    """A point of a scalar state, kept only in registers; the slot of step t held step
    t - window, the oldest register."""
    held_point(member, storage, active, value, lambda: storage.recent[member][-1])
