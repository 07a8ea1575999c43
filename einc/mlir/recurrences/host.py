"""A recurrence group as a host loop over steps (vulkan-spirv: groups that neither loop inside a
kernel, recurrence_kernel, nor inside a workgroup, recurrence_workgroup; steps that compute
whole tensors on every target, recurrence_tensor_steps): one kernel per clause and step.

SPIR-V cannot compile the one-dispatch form, so the step loop is an scf.for at function level
carrying the storage tensors. Each clause is one linalg.generic per step computing the member's
row at step t from the storage as it was before the clause, written back with
tensor.insert_slice at the step's slot. The loop runs on the host, so no shader loop limit
(IREE-30) bounds the number of steps. The steps run in chunks (recurrence_chunks, IREE-13) of
at most CHUNK_STEPS steps and about CHUNK_BYTES; every storage is one-dimensional
(flat_storage, IREE-11), so a row is one run of elements.

The points of a kernel are computed in parallel from that snapshot, so a clause must not read
its own points at the step it is computing (`D[i, j - 1]`): such groups are rejected here. It
may read points other clauses wrote at the step (an edge copying the interior), which ran first.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc.ir.nodes import RecMember, RecurrenceGroup
from einc.ir.types import Lin
from einc.mlir.recurrences.flat_storage import (FlatStorage, as_index, flat_empty, length,
                                                row_major_coordinates, tied)
from einc.mlir.recurrences.chunks import ROWS, ChunkLayout, ReadPlan, copy_rows, emit_chunks, own_zeros, zeros
from einc.mlir.recurrences.step import PointValue, covers_every_step, emit_step
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type
from einc.passes.same_step_reads import check_no_same_step_self_reads

DYNAMIC = ir.ShapedType.get_dynamic_size()
CHUNK_STEPS = 256
FORM = f"a host loop over chunks of up to {CHUNK_STEPS} steps, one kernel per clause and step"   # for --explain
CHUNK_BYTES = 64 << 20      # what one chunk's steps may allocate before the host waits


def emit_group(lw, group: RecurrenceGroup, step_lowering=None) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order.
    `step_lowering(storage)`, when given, makes the lowering each step's body uses and what to
    run before each member's points (emit_step's `before`)."""
    check_no_same_step_self_reads(group, lw.target)
    members = group.members
    reads = ReadPlan(group)
    layout = ChunkLayout(lw, group, reads, _chunk_steps(lw, group, reads))

    def run_chunk(start: ir.Value, end: ir.Value, before: list, shapes: dict) -> tuple:
        lengths = {m: length(shapes[m]) for m in members}
        carried = [_carried_over(lw, layout, m, b, start, lengths[m]) for m, b in zip(members, before)]
        loop = scf.ForOp(start, end, index_const(1), carried)
        with ir.InsertionPoint(loop.body):
            tensors = {m: tied(arg, lengths[m]) for m, arg in zip(members, loop.inner_iter_args)}
            storage = layout.storage(loop.induction_variable, tensors, start, shapes)
            step_lw, before = step_lowering(storage) if step_lowering else (lw, None)
            emit_step(step_lw, group, storage, _write_points, before)
            scf.yield_([storage.tensors[m] for m in members])
        return [tied(result, lengths[m]) for m, result in zip(members, loop.results)], end
    return emit_chunks(lw, layout, run_chunk)


def _chunk_steps(lw, group: RecurrenceGroup, reads: ReadPlan) -> ir.Value:
    """CHUNK_STEPS, or fewer where the storages the loop carries through CHUNK_STEPS steps
    would allocate more than CHUNK_BYTES (two copies each a step), at least 1."""
    step_bytes = index_const(0)
    for m in group.members:
        rows = Lin(m.window) if m.window is not None else m.shape[0] if m in reads.unbounded else \
            Lin(CHUNK_STEPS + reads.tails[m] + len(reads.pins[m]))
        points = index_const(2 * m.dtype.numpy.itemsize)
        for size in (rows,) + tuple(m.shape[1:]):
            points = arith.muli(points, lw.sizes.index(size))
        step_bytes = arith.addi(step_bytes, points)
    steps = arith.divui(index_const(CHUNK_BYTES), arith.maxui(step_bytes, index_const(1)))
    return arith.maxui(arith.minui(steps, index_const(CHUNK_STEPS)), index_const(1))


def _carried_over(lw, layout: ChunkLayout, member: RecMember, before: ir.Value, start: ir.Value,
                  count) -> ir.Value:
    """The storage (of `count` elements) a chunk starts from: a window or whole tensor as the
    last chunk left it; rows fresh, zero unless every point gets written, with the pinned rows
    and the `tail` steps before the chunk taken over (ChunkLayout.carried_row)."""
    if layout.kinds[member] != ROWS:
        return before
    if lw.target.has_defect("IREE-120"):
        fresh = own_zeros(count, member.dtype)     # equal fresh rows of two members fold into one buffer
    elif covers_every_step(member):
        fresh = flat_empty(count, element_type(member.dtype))
    else:
        fresh = zeros(count, member.dtype)
    pins, tail = len(layout.reads.pins[member]), layout.reads.tails[member]
    for k in range(pins):
        fresh = copy_rows(lw, member, before, layout.pinned_source(member, k, start), fresh, k, 1)
    if tail:
        fresh = copy_rows(lw, member, before, arith.addi(layout.chunk, index_const(pins)), fresh, pins, tail)
    return tied(fresh, count)


def _write_points(lw, member: RecMember, storage: FlatStorage, vars_: list, active: Optional[ir.Value],
                  value: PointValue, _clause) -> ir.Value:
    """One kernel computing the member's row at step t: `value` at the points of `vars_` where
    `active` holds, the row as it was elsewhere; the row is then inserted into the storage.
    Inactive steps still run it (a host-level scf.if makes IREE copy the whole storage every
    step, and failed at run time on Vulkan)."""
    old = storage.tensors[member]
    slot = storage.slot(member, storage.t)
    rest = storage.shapes[member][1:]
    row = as_index(storage.row_elements(member))
    first = arith.muli(slot, row)
    element = element_type(member.dtype)
    op = linalg.GenericOp_([], [flat_empty(row, element)], [ir.AffineMap.get_identity(1)],
                           [linalg.IteratorType.parallel])
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        point = linalg.IndexOp(0).result
        axes = row_major_coordinates(point, rest)
        # the kept value is read before the branch: with a read in each branch, MLIR merges the
        # two blocks into one read through a pointer chosen by the condition, an OpPhi of
        # pointers that SPIR-V forbids without VariablePointers (spirv-val rejects it, an NVIDIA
        # driver crashed on it)
        kept = tensor.extract(old, [arith.addi(first, point)])
        inside = _inside(lw, vars_, axes)
        written = inside if active is None else arith.andi(active, inside)
        branch = scf.IfOp(written, [element], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.yield_([value(storage, dict(zip(vars_, axes)))])
        with ir.InsertionPoint(branch.else_block):
            scf.yield_([kept])
        linalg.YieldOp([branch.results[0]])
    return tensor.insert_slice(op.result, old, [first], [row], [], [DYNAMIC], [DYNAMIC], [1])


def _inside(lw, vars_: list, coords: list[ir.Value]) -> ir.Value:
    """Whether every coordinate lies in its variable's range lo .. lo + extent - 1."""
    inside = arith.constant(ir.IntegerType.get_signless(1), 1)
    for v, c in zip(vars_, coords):
        lo = lw.sizes.index(v.lo)
        hi = arith.addi(lo, lw.sizes.index(v.extent))
        inside = arith.andi(inside, arith.andi(arith.cmpi(arith.CmpIPredicate.sge, c, lo),
                                               arith.cmpi(arith.CmpIPredicate.slt, c, hi)))
    return inside
