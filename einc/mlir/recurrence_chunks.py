"""A recurrence group run by the host in chunks of steps (vulkan-spirv): what the workgroup form
(one dispatch a chunk, recurrence_workgroup) and the host-loop form (a kernel per clause and
step, recurrence_host) share.

IREE 3.13 gives every step of a host-level loop new allocations, a copy of each tensor the loop
carries and new fences, all alive until the device catches up; a host that never waits keeps
every step's (checked: a host loop of 10,000 steps reading a fixed step took 23 ms a step and
12.5 GB on lavapipe, and an NVIDIA driver ran out of file descriptors). Two things keep a
step's cost flat here:
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
from iree.compiler.dialects import arith, flow, linalg, scf, tensor, util

from einc.ir import affine
from einc.ir.nodes import IndexVar, RecMember, RecurrenceGroup, step_state_reads
from einc.ir.types import F32, I32, Lin
from einc.mlir import scalar_ops
from einc.mlir.recurrence_scalars import Storage
from einc.mlir.recurrence_step import compact, expanded, sizes_of, storage_shape, unit_axes
from einc.mlir.shapes import index_const
from einc.mlir.types import element_type

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
    `start` in row s - start + pins + tail) or its whole tensor (WHOLE). With `compact`, chunk
    storage has no axes of size 1 (recurrence_step.compact: a loop inside a dispatch carries it)."""

    def __init__(self, lw, group: RecurrenceGroup, reads: ReadPlan, chunk: ir.Value, compact_axes: bool):
        self.lw = lw
        self.group = group
        self.chunk = chunk
        self.reads = reads
        self.compact_axes = compact_axes
        self.kinds = {m: WINDOW if m.window is not None else WHOLE if m in self.reads.unbounded else ROWS
                      for m in group.members}

    def head(self, member: RecMember) -> int:
        """Rows before the chunk's steps: the pins and the tail."""
        return len(self.reads.pins[member]) + self.reads.tails[member]

    def full_sizes(self, member: RecMember) -> list:
        kind = self.kinds[member]
        if kind == WINDOW:
            return sizes_of(self.lw, storage_shape(member))
        if kind == WHOLE:
            return sizes_of(self.lw, member.shape)
        return [arith.addi(self.chunk, index_const(self.head(member)))] + sizes_of(self.lw, member.shape[1:])

    def sizes(self, member: RecMember) -> list:
        """The chunk storage's sizes as kept (ints and index values)."""
        full = self.full_sizes(member)
        return compact(full) if self.compact_axes else full

    def units(self, member: RecMember) -> tuple:
        """The axes of size 1 chunk storage is kept without."""
        if not self.compact_axes:
            return ()
        kind = self.kinds[member]
        if kind == ROWS:
            return tuple(k + 1 for k in unit_axes(member.shape[1:]))
        return unit_axes(storage_shape(member) if kind == WINDOW else member.shape)

    def slot(self, member: RecMember, step: ir.Value, start: ir.Value) -> ir.Value:
        """The row of `step` in the storage of the chunk starting at `start`."""
        kind = self.kinds[member]
        if kind == WINDOW:
            return arith.remui(step, index_const(member.window))
        if kind == WHOLE:
            return step
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

    def storage(self, t: ir.Value, tensors: dict, start: ir.Value) -> "ChunkStorage":
        return ChunkStorage(self, t, tensors, start)

    def tie(self, member: RecMember, value: ir.Value) -> ir.Value:
        # IREE cannot resolve the dynamic sizes of loop-carried tensors on the host ("tensor.dim
        # op unexpected during shape cleanup"): state them
        dims = [s for s in self.sizes(member) if not isinstance(s, int)]
        return flow.tensor_tie_shape(value, dims) if dims else value


class ChunkStorage(Storage):
    """Storage inside a chunk: rows as its ChunkLayout places them."""

    def __init__(self, layout: ChunkLayout, t: ir.Value, tensors: dict, start: ir.Value):
        super().__init__(layout.group.t_var, t, tensors, units={m: layout.units(m) for m in layout.group.members})
        self.layout = layout
        self.start = start

    def with_tensor(self, member, value: ir.Value) -> "ChunkStorage":
        return ChunkStorage(self.layout, self.t, {**self.tensors, member: value}, self.start)

    def slot(self, member, step: ir.Value) -> ir.Value:
        return self.layout.slot(member, step, self.start)


# run_chunk(start, end, storages) -> (storages after steps start .. end - 1, the step to go on from)
RunChunk = Callable[[ir.Value, ir.Value, list], tuple]


def emit_chunks(lw, layout: ChunkLayout, run_chunk: RunChunk) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order."""
    group = layout.group
    members = group.members
    steps = lw.sizes.index(group.t_var.extent)
    rows = [m for m in members if layout.kinds[m] == ROWS]
    # the first chunk reads none of the head rows it takes over (a step reads t - c >= 0, or
    # clamps to step 0 in a clause that is not active; pins are read from the chunk's rows): no
    # zeros there; a window or a whole tensor starts as zeros
    initial = [tensor.empty(layout.sizes(m), element_type(m.dtype)) if layout.kinds[m] == ROWS
               else zeros(layout.sizes(m), m) for m in members]
    inits = [index_const(0)] + initial + [zeros(sizes_of(lw, m.shape), m) for m in rows]
    loop = scf.WhileOp([v.type for v in inits], inits)
    before_block = loop.before.blocks.append(*[v.type for v in inits])
    with ir.InsertionPoint(before_block):
        arguments = list(before_block.arguments)
        scf.condition(arith.cmpi(arith.CmpIPredicate.ult, arguments[0], steps), arguments)
    after_block = loop.after.blocks.append(*[v.type for v in inits])
    with ir.InsertionPoint(after_block):
        start, carried = after_block.arguments[0], list(after_block.arguments)[1:]
        before = [layout.tie(m, b) for m, b in zip(members, carried[:len(members)])]
        kept = [_tie_whole(lw, k, m) for m, k in zip(rows, carried[len(members):])]
        end = arith.minui(arith.addi(start, layout.chunk), steps)
        after, reached = run_chunk(start, end, before)
        count = arith.subi(end, start)
        # the chunk's steps, rows head .. head + count of its storage, into the whole tensor
        kept = [copy_rows(lw, m, expanded(after[members.index(m)], layout.full_sizes(m)), layout.head(m),
                          whole, start, count) for m, whole in zip(rows, kept)]
        # the host waits until the device has run all the chunk queued, the insertion last, so
        # nothing of the chunk is in flight when the next one starts
        _wait_for([(m, kept[rows.index(m)], sizes_of(lw, m.shape)) if m in rows else (m, s, layout.sizes(m))
                    for m, s in zip(members, after)])
        scf.yield_([reached] + after + kept)
    results = list(loop.results)[1:]
    by_member = dict(zip(rows, results[len(members):]))
    return [_tie_whole(lw, by_member[m], m) if m in by_member
            else expanded(layout.tie(m, results[i]), sizes_of(lw, storage_shape(m))) for i, m in enumerate(members)]


def _wait_for(storages: list[tuple]) -> None:
    """The host waits until the device has computed each (member, storage, its sizes): it reads
    back a value computed from an element of each, where the storage has one."""
    for member, storage, sizes in storages:
        if any(isinstance(s, int) and s == 0 for s in sizes):
            continue
        nonempty = None
        for size in (s for s in sizes if not isinstance(s, int)):
            positive = arith.cmpi(arith.CmpIPredicate.ugt, size, index_const(0))
            nonempty = positive if nonempty is None else arith.andi(nonempty, positive)
        if nonempty is None:
            _read_back(member, storage, len(sizes))
            continue
        branch = scf.IfOp(nonempty)
        with ir.InsertionPoint(branch.then_block):
            _read_back(member, storage, len(sizes))
            scf.yield_([])


def _read_back(member: RecMember, storage: ir.Value, rank: int) -> None:
    """The host reads a value a one-point kernel computes from the storage's first element (a
    conversion, which IREE cannot make a copy): read straight from a storage the loop carries (a
    copy into a staging buffer), the value came back but also overwrote two words of another
    live storage on lavapipe (IREE 3.13), now and then, a silent wrong result."""
    converted = I32 if member.dtype == F32 else F32
    op = linalg.GenericOp_([], [tensor.empty([1], element_type(converted))], [ir.AffineMap.get_identity(1)],
                           [linalg.IteratorType.parallel])
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        element = tensor.extract(storage, [index_const(0)] * rank)
        linalg.YieldOp([scalar_ops.cast(element, member.dtype, converted)])
    value = tensor.extract(op.result, [index_const(0)])
    util.OptimizationBarrierOp([value.type], [value])


def zeros(sizes: list, member: RecMember) -> ir.Value:
    element = element_type(member.dtype)
    return linalg.fill(scalar_ops.constant(member.dtype, 0), outs=[tensor.empty(sizes, element)])


def _tie_whole(lw, value: ir.Value, member: RecMember) -> ir.Value:
    dims = lw.sizes.dynamic_dims(member.shape)
    return flow.tensor_tie_shape(value, dims) if dims else value


def copy_rows(lw, member: RecMember, source: ir.Value, source_row, dest: ir.Value, dest_row, rows) -> ir.Value:
    """`dest` with rows dest_row .. dest_row + rows taken from `source` at `source_row` (the
    rows of a storage of `member`; each of the three an int or an index value)."""
    rest = member.shape[1:]
    rest_sizes = [lw.sizes.index(s) for s in rest if not s.is_const]
    static_rest = [s.const if s.is_const else DYNAMIC for s in rest]
    static_rows = rows if isinstance(rows, int) else DYNAMIC
    dynamic_rows = [] if isinstance(rows, int) else [rows]
    block_type = ir.RankedTensorType.get([static_rows] + static_rest, element_type(member.dtype))
    ones = [1] * (len(rest) + 1)

    def at(row) -> tuple:
        return ([], [row] + [0] * len(rest)) if isinstance(row, int) else ([row], [DYNAMIC] + [0] * len(rest))
    dynamic, static = at(source_row)
    block = tensor.extract_slice(block_type, source, dynamic, dynamic_rows + rest_sizes, [], static,
                                 [static_rows] + static_rest, ones)
    dynamic, static = at(dest_row)
    return tensor.insert_slice(block, dest, dynamic, dynamic_rows + rest_sizes, [], static,
                               [static_rows] + static_rest, ones)
