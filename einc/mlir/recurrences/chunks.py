"""A recurrence group run by the host in chunks of steps (vulkan-spirv): what the workgroup form
(one dispatch a chunk, recurrence_workgroup) and the host-loop form (a kernel per clause and
step, recurrence_host) share.

IREE-13: every step of a host-level loop gets new allocations, copies and fences, alive until
the device catches up. Two things keep a step's cost flat here:
- the loop carries chunk storage, never the whole history (a ChunkLayout): a member read at
  t - c holds its `tail` steps before the chunk and the chunk's own steps, behind a pinned row
  for each fixed step it is read at (`x[0]`); after each chunk the host inserts the chunk's
  steps into the whole tensor, which is only written. A member kept in a window carries its
  window. A member read at any other step (a prefix `sum[s in 0..t](x[s])`, a data-dependent
  step) carries its whole tensor, copied by IREE each step (the host-loop form only);
- the host waits for all a chunk queued, the steps and the insertion into the whole tensor,
  before it queues the next (a read back from the device), so what IREE allocates stays that
  of one chunk.
"""
from __future__ import annotations

from typing import Callable

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor, util

from einc.ir import affine
from einc.ir.nodes import IndexVar, RecMember, RecurrenceGroup, step_state_reads
from einc.ir.state_slices import is_state_history, is_state_slice
from einc.ir.types import F32, I32, DType, Lin
from einc.mlir.core import scalar_ops
from einc.mlir.recurrences.flat_storage import (FlatStorage, as_index, flat_empty, length, product, tied,
                                                unflattened)
from einc.mlir.recurrences.step import as_member_type, sizes_of, storage_shape, stored_dtype
from einc.mlir.core.dispatch_captures import fence_captured_tensors, host_fence
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type

DYNAMIC = ir.ShapedType.get_dynamic_size()
WINDOW, ROWS, WHOLE = "window", "rows", "whole"      # how a chunk keeps a member (ChunkLayout.kinds)


class ReadPlan:
    """What the steps of a group read of its members: `tails[m]`, the most steps back a read at
    t - c reaches (0 when none); `pins[m]`, the fixed steps read (a Lin each, at or before the
    first step of the clause reading it); `unbounded`, the members read at any other step."""

    def __init__(self, group: RecurrenceGroup):
        self.tails = {m: 0 for m in group.members}
        self.pins: dict = {m: [] for m in group.members}
        self.unbounded: set = set()
        for member in group.members:
            for clause in member.clauses:
                for read in step_state_reads([clause.body, clause.guard]):
                    self._add(read.member, affine.affine_of(read.subs[0]), group.t_var, clause.t_lo)
        # a step's tensors read members through slices (`w[k - 1]` whole, einc.ir.state_slices),
        # which the clause bodies hold as tensors: their lookback counts too (a fixed step is
        # pinned only if it is at or before every clause's first step)
        for v in group.step_work:
            if is_state_history(v):
                self.unbounded.add(v.body.member)
            elif is_state_slice(v):
                for clause in (c for m in group.members for c in m.clauses):
                    self._add(v.body.member, affine.affine_of(v.body.subs[0]), group.t_var, clause.t_lo)

    def _add(self, member: RecMember, step, t_var: IndexVar, t_lo: Lin) -> None:
        if step is not None and step.terms == {t_var: 1} and step.const <= 0:
            self.tails[member] = max(self.tails[member], -step.const)
        elif step is not None and not any(isinstance(k, IndexVar) for k in step.keys()) \
                and affine.surely_nonnegative(t_lo - step):
            if step not in self.pins[member]:
                self.pins[member].append(step)
        else:
            self.unbounded.add(member)


class ChunkLayout:
    """How a chunk keeps each member (`kinds`): its window (WINDOW), rows (ROWS: the pins, then
    `tail` steps before the chunk, then the chunk's `chunk` steps; step s of a chunk starting at
    `start` in row s - start + pins + tail) or its whole tensor (WHOLE). Every chunk storage is
    one-dimensional, its points row-major (flat_storage: IREE lost the offsets of several
    tensors of run-time size that a host loop carries)."""

    def __init__(self, lw, group: RecurrenceGroup, reads: ReadPlan, chunk: ir.Value, bools_as_bytes: bool = False):
        self.lw = lw
        self.group = group
        self.chunk = chunk
        self.reads = reads
        # a form writing points inside its dispatch keeps bools as i8 (recurrence_step.stored_dtype)
        self.dtypes = {m: stored_dtype(m) if bools_as_bytes else m.dtype for m in group.members}
        self.kinds = {m: WINDOW if m.window is not None else WHOLE if m in self.reads.unbounded else ROWS
                      for m in group.members}

    def head(self, member: RecMember) -> int:
        """Rows before the chunk's steps: the pins and the tail."""
        return len(self.reads.pins[member]) + self.reads.tails[member]

    def shape(self, member: RecMember) -> list:
        """The sizes the chunk storage's points are laid out in (ints and index values)."""
        kind = self.kinds[member]
        if kind == WINDOW:
            return sizes_of(self.lw, storage_shape(member))
        if kind == WHOLE:
            return sizes_of(self.lw, member.shape)
        return [arith.addi(self.chunk, index_const(self.head(member)))] + sizes_of(self.lw, member.shape[1:])

    def slot(self, member: RecMember, step: ir.Value, start: ir.Value) -> ir.Value:
        """The row of `step` in the storage of the chunk starting at `start`."""
        kind = self.kinds[member]
        if kind == WINDOW:
            return arith.remui(step, index_const(member.window))
        if kind == WHOLE:       # a member with fewer steps than the loop: its last row past its end
            return arith.minui(step, arith.subi(self.lw.sizes.index(member.shape[0]), index_const(1)))
        pins = self.reads.pins[member]
        row = arith.addi(arith.subi(step, start), index_const(self.head(member)))
        if not pins:
            return row
        in_chunk = arith.cmpi(arith.CmpIPredicate.uge, arith.addi(step, index_const(self.reads.tails[member])), start)
        pinned = index_const(0)
        for k, pin in enumerate(pins):
            pinned = arith.select(arith.cmpi(arith.CmpIPredicate.eq, step, self.lw.sizes.index(pin)),
                                  index_const(k), pinned)
        return arith.select(in_chunk, row, pinned)

    def carried_row(self, member: RecMember, row: ir.Value, start: ir.Value) -> ir.Value:
        """The row of the previous chunk's storage that row `row` (< head) of the chunk starting
        at `start` takes over: the tail rows follow the previous chunk's steps, and pinned step
        c comes from that chunk's rows when they hold it, else from its pinned row."""
        pins = self.reads.pins[member]
        carried = arith.addi(row, self.chunk)
        for k, pin in enumerate(pins):
            carried = arith.select(arith.cmpi(arith.CmpIPredicate.eq, row, index_const(k)),
                                   self.pinned_source(member, k, start), carried)
        return carried

    def pinned_source(self, member: RecMember, k: int, start: ir.Value) -> ir.Value:
        """The previous chunk's row holding pinned step k (its pinned row before the first chunk)."""
        pin = self.lw.sizes.index(self.reads.pins[member][k])
        # the previous chunk held steps start - chunk - tail .. start - 1, step s in row
        # s - (start - chunk) + head
        reach = arith.addi(self.chunk, index_const(self.reads.tails[member]))
        held = arith.andi(arith.cmpi(arith.CmpIPredicate.uge, arith.addi(pin, reach), start),
                          arith.cmpi(arith.CmpIPredicate.ult, pin, start))
        row = arith.subi(arith.addi(pin, arith.addi(self.chunk, index_const(self.head(member)))), start)
        return arith.select(held, row, index_const(k))

    def shapes(self) -> dict:
        """member -> its `shape`, made once where the chunk's code can use it."""
        return {m: self.shape(m) for m in self.group.members}

    def storage(self, t: ir.Value, tensors: dict, start: ir.Value, shapes: dict) -> "ChunkStorage":
        return ChunkStorage(self, t, tensors, start, shapes)


class ChunkStorage(FlatStorage):
    """Storage inside a chunk: rows as its ChunkLayout places them."""

    def __init__(self, layout: ChunkLayout, t: ir.Value, tensors: dict, start: ir.Value, shapes: dict):
        super().__init__(layout.group.t_var, t, tensors, shapes)
        self.layout = layout
        self.start = start

    def with_tensor(self, member, value: ir.Value) -> "ChunkStorage":
        return ChunkStorage(self.layout, self.t, {**self.tensors, member: value}, self.start, self.shapes)

    def slot(self, member, step: ir.Value) -> ir.Value:
        return self.layout.slot(member, step, self.start)


# run_chunk(start, end, storages, shapes) -> (storages after steps start .. end - 1, the step to
# go on from); `shapes` maps each member to ChunkLayout.shape, as made for this chunk
RunChunk = Callable[[ir.Value, ir.Value, list, dict], tuple]


def emit_chunks(lw, layout: ChunkLayout, run_chunk: RunChunk) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order."""
    group = layout.group
    members = group.members
    steps = lw.sizes.index(group.t_var.extent)
    rows = [m for m in members if layout.kinds[m] == ROWS]
    wholes = {m: sizes_of(lw, m.shape) for m in rows}
    # IREE-48: the rows a chunk starts from, packed into one allocation with earlier results, are
    # carried at their offset with the allocation's size lost, and read past their binding; behind
    # a barrier they are a resource of their own. Zeros, not uninitialized rows, and on Vulkan no
    # barrier on a window or whole tensor: either made its command buffers copy from a binding
    # they do not declare (OUT_OF_RANGE in the Kalman group, IREE-251's). Not on vulkan-spirv, where the barrier
    # brings IREE-46 back (a print of the recurrence reads stale memory). Elsewhere the first
    # chunk reads none of the head rows it takes over: no zeros there.
    shapes = layout.shapes()

    def starting_storage(m: RecMember) -> ir.Value:
        size = length(shapes[m])
        dtype = layout.dtypes[m]
        if layout.kinds[m] != ROWS:
            # IREE-78: equal zeros folded into one start two windows as one buffer
            return own_zeros(size, dtype) if lw.target.has_defect("IREE-78") else zeros(size, dtype)
        if not lw.target.has_defect("IREE-48"):
            return flat_empty(size, element_type(dtype))
        return host_fence(own_zeros(size, dtype) if lw.target.has_defect("IREE-50") else zeros(size, dtype))
    initial = [starting_storage(m) for m in members]
    # IREE-78: the whole tensors the rows are copied into, of equal sizes, would fold too
    start_whole = own_zeros if lw.target.has_defect("IREE-78") else zeros
    storages = initial + [start_whole(length(wholes[m]), layout.dtypes[m]) for m in rows]
    inits = [index_const(0)] + storages
    loop = scf.WhileOp([v.type for v in inits], inits)
    before_block = loop.before.blocks.append(*[v.type for v in inits])
    with ir.InsertionPoint(before_block):
        arguments = list(before_block.arguments)
        scf.condition(arith.cmpi(arith.CmpIPredicate.ult, arguments[0], steps), arguments)
    after_block = loop.after.blocks.append(*[v.type for v in inits])
    with ir.InsertionPoint(after_block):
        start, carried = after_block.arguments[0], list(after_block.arguments)[1:]
        shapes = layout.shapes()
        before = [tied(b, length(shapes[m])) for m, b in zip(members, carried[:len(members)])]
        kept = [tied(k, length(wholes[m])) for m, k in zip(rows, carried[len(members):])]
        end = arith.minui(arith.addi(start, layout.chunk), steps)
        after, reached = run_chunk(start, end, before, shapes)
        # the chunk's steps, rows head .. head + count of its storage, into the whole tensor
        kept = [copy_rows(lw, m, after[members.index(m)], layout.head(m), whole, start,
                          _steps_held(lw, group, m, start, end))
                for m, whole in zip(rows, kept)]
        # the host waits until the device has run all the chunk queued, the insertion last, so
        # nothing of the chunk is in flight when the next one starts
        _wait_for([(layout.dtypes[m], kept[rows.index(m)], product(wholes[m])) if m in rows
                   else (layout.dtypes[m], s, product(shapes[m])) for m, s in zip(members, after)])
        scf.yield_([reached] + after + kept)
    # IREE-76: a dispatch computing a tensor the loop reads, cloned into the loop, was left
    # outside any execution region ("streamable op expected to be in an execution region").
    # Not on vulkan-spirv, where a host barrier before the loop brings IREE-46 back.
    if lw.target.has_defect("IREE-76"):
        fence_captured_tensors(loop, computed_only=True)
    results = list(loop.results)[1:]
    by_member = dict(zip(rows, results[len(members):]))
    shapes = layout.shapes()
    return [as_member_type(m, unflattened(tied(by_member[m], length(wholes[m])), wholes[m]) if m in by_member
                           else unflattened(tied(results[i], length(shapes[m])), shapes[m]))
            for i, m in enumerate(members)]


def _steps_held(lw, group: RecurrenceGroup, member: RecMember, start: ir.Value, end: ir.Value) -> ir.Value:
    """How many of the chunk's steps start .. end - 1 are rows of `member`: a member can end
    before the loop does, and its whole tensor holds none past its last step."""
    if member.shape[0] == group.t_var.extent:
        return arith.subi(end, start)
    last = arith.minui(end, lw.sizes.index(member.shape[0]))
    return arith.subi(arith.maxui(last, start), start)


def _wait_for(storages: list[tuple]) -> None:
    """The host waits until the device has computed each (element type, storage, its number of
    elements): it reads back a value computed from the first element of each, where it has one."""
    for dtype, storage, count in storages:
        if isinstance(count, int):
            if count:
                _read_back(dtype, storage)
            continue
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, count, index_const(0)))
        with ir.InsertionPoint(branch.then_block):
            _read_back(dtype, storage)
            scf.yield_([])


def _read_back(dtype: DType, storage: ir.Value) -> None:
    """The host reads a value a one-point kernel computes from the storage's first element (a
    conversion, which IREE cannot make a copy). IREE-37: a storage the loop carries, read back
    directly, can have another live storage overwritten."""
    converted = I32 if dtype == F32 else F32
    op = linalg.GenericOp_([], [tensor.empty([1], element_type(converted))], [ir.AffineMap.get_identity(1)],
                           [linalg.IteratorType.parallel])
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        element = tensor.extract(storage, [index_const(0)])
        linalg.YieldOp([scalar_ops.cast(element, dtype, converted)])
    value = tensor.extract(op.result, [index_const(0)])
    util.OptimizationBarrierOp([value.type], [value])


def zeros(count, dtype: DType) -> ir.Value:
    """A one-dimensional storage of `count` zeros."""
    return linalg.fill(scalar_ops.constant(dtype, 0), outs=[flat_empty(count, element_type(dtype))])


def own_zeros(count, dtype: DType) -> ir.Value:
    """Like `zeros`, each element an i32 zero behind a barrier of its own, converted in the
    kernel (the host holds no half floats). IREE-50: equal zeros behind barriers fold into one
    value, which the VM passes to two loop arguments as one moved register (the other reads a
    null buffer)."""
    zero = util.OptimizationBarrierOp([element_type(I32)], [scalar_ops.constant(I32, 0)]).results[0]
    op = linalg.GenericOp_([], [flat_empty(count, element_type(dtype))], [ir.AffineMap.get_identity(1)],
                           [linalg.IteratorType.parallel])
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        linalg.YieldOp([scalar_ops.cast(zero, I32, dtype)])
    return op.result


def copy_rows(lw, member: RecMember, source: ir.Value, source_row, dest: ir.Value, dest_row, rows) -> ir.Value:
    """`dest` with rows dest_row .. dest_row + rows taken from `source` at `source_row`: both
    one-dimensional storages of `member`, whose rows are runs of elements (each of the three an
    int or an index value)."""
    row = product(sizes_of(lw, member.shape[1:]))
    elements = product([rows, row])
    static = elements if isinstance(elements, int) else DYNAMIC
    dynamic = [] if isinstance(elements, int) else [elements]
    block_type = ir.RankedTensorType.get([static], ir.RankedTensorType(source.type).element_type)
    block = tensor.extract_slice(block_type, source, [arith.muli(as_index(source_row), as_index(row))], dynamic, [],
                                 [DYNAMIC], [static], [1])
    return tensor.insert_slice(block, dest, [arith.muli(as_index(dest_row), as_index(row))], dynamic, [],
                               [DYNAMIC], [static], [1])
