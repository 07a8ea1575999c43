"""A recurrence group that cannot loop inside one invocation (recurrence_kernel: an RNN's vector
state, a filter whose history is observed, a step with a reduction) as chunks of steps inside
one workgroup (vulkan-spirv).

One dispatch runs a chunk of steps (recurrence_chunks: the host's loop over chunks, and how a
chunk keeps each member). Its WORKGROUP_SIZE invocations share each clause's points (point p
goes to invocation p mod size); a barrier after each write makes the points visible to the next
clause and step. The region carries the workgroup size in the compilation_info of its one
linalg op (`_reached`): IREE gives a dispatch without one a single invocation. The device
reports where the chunk ended, which the host reads back as the next chunk's start. Every
storage is one-dimensional (flat_storage, as recurrence_chunks says), its points row-major.

IREE-30: an invocation stops after ~65,535 loop iterations, inner loops included, so a chunk
runs as many steps as fit in the target's `loop_budget`, by an upper bound of one step's iterations computed
from the sizes (`_step_iterations`). A single step past the budget would stop midway and leave wrong
values, so the host asserts that one step fits (a run-time error naming the recurrence instead).
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, cf, flow, gpu, linalg, scf, tensor, util

from einc.ir.nodes import IndexVar, RecMember, RecurrenceGroup, Reduce, Stack, step_code
from einc.ir.types import Lin
from einc.mlir.core import scalar_ops
from einc.mlir.core.dispatch_captures import pack_captured_scalars, recompute_sizes_inside
from einc.mlir.recurrences.flat_storage import flat_empty, length, row_major, row_major_coordinates
from einc.mlir.recurrences.chunks import ROWS, WINDOW, ChunkLayout, ReadPlan, emit_chunks
from einc.passes.same_step_reads import check_no_same_step_self_reads
from einc.mlir.recurrences.scalars import Storage, store_element
from einc.mlir.recurrences.step import PointValue, covers_every_step, emit_step, when
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type

WORKGROUP_SIZE = 64
FORM = f"chunks of steps, each one dispatch of a workgroup of {WORKGROUP_SIZE} invocations"   # for --explain
INTEGER_POWER_ITERATIONS = 64  # einc.mlir.core.scalar_ops runs one iteration per exponent bit (u64: 64)


def misfit(group: RecurrenceGroup) -> Optional[str]:
    """Why the group cannot run here (None when it can): every read of a member inside the
    group must be at t - c (c >= 0 constant) or at a fixed step (recurrence_chunks.ReadPlan),
    no step may build a Stack of points, and every extent a step loops over must be a size, so
    the host can bound a step's loop iterations."""
    unbounded = ReadPlan(group).unbounded
    for m in group.members:
        if m in unbounded:
            return f"`{m.name}` is read at a step that is neither t - c nor a fixed step"
    extents = [v.extent for m in group.members for c in m.clauses for v in c.vars]
    extents += [v.lo for m in group.members for c in m.clauses for v in c.vars]
    for v in step_code(_bodies(group)):
        if isinstance(v, Stack):
            return "a step builds a literal array of points"
        if isinstance(v, Reduce):
            extents += [var.extent for var in v.vars]
    if not all(_sizes_only(e) for e in extents):
        return "a step loops over a range that depends on the step or a point, which the host cannot bound"
    return None


def emit_group(lw, group: RecurrenceGroup) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order."""
    check_no_same_step_self_reads(group, lw.target)
    reads = ReadPlan(group)
    layout = ChunkLayout(lw, group, reads, _chunk_steps(lw, group, reads), bools_as_bytes=True)

    def run_chunk(start: ir.Value, end: ir.Value, before: list, shapes: dict) -> tuple:
        after, reached = _dispatch(lw, layout, start, end, before, shapes)
        # the next chunk starts where the device says this one ended
        return after, arith.index_cast(ir.IndexType.get(), tensor.extract(reached, [index_const(0)]))
    return emit_chunks(lw, layout, run_chunk)


# ------------------------------------------------------------------------------------ host side

def _bodies(group: RecurrenceGroup) -> list:
    return [part for m in group.members for c in m.clauses for part in (c.body, c.guard)]


def _sizes_only(lin: Lin) -> bool:
    return not any(isinstance(k, IndexVar) for k in lin.keys())


def _rest_points(lw, member: RecMember) -> ir.Value:
    return _product(lw, member.shape[1:])


def _product(lw, extents) -> ir.Value:
    total = index_const(1)
    for e in extents:
        total = arith.muli(total, lw.sizes.index(e))
    return total


def _chunk_steps(lw, group: RecurrenceGroup, reads: ReadPlan) -> ir.Value:
    """Steps a chunk runs: as many as fit in the target's loop budget after the chunk's copies,
    at least 1."""
    per_step = _step_iterations(lw, group)
    fixed = index_const(100)
    for m in group.members:
        rows = m.window if m.window is not None else reads.tails[m] + len(reads.pins[m])
        fixed = arith.addi(fixed, _share(arith.muli(_rest_points(lw, m), index_const(rows))))
    budget = index_const(lw.target.loop_budget)
    names = ", ".join(f"`{m.name}`" for m in group.members)
    # "device limit: " makes the failure a RunError (einc/runtime/program.py `_as_run_error`)
    cf.assert_(arith.cmpi(arith.CmpIPredicate.ule, arith.addi(fixed, per_step), budget),
               f"device limit: a step of the recurrence {names} runs more loop iterations than one {lw.target.name} "
               f"invocation may ({lw.target.loop_budget}, IREE-30) at these sizes: build it for llvm-cpu")
    room = arith.subi(arith.maxui(budget, fixed), fixed)
    steps = arith.maxui(arith.divui(room, per_step), index_const(1))
    # kept a run-time value even where the sizes are constants: canonicalization rebuilds a
    # tensor.empty of constant sizes without its attributes, and CSE then merges the members'
    # chunk storages (see _distinct)
    return util.optimization_barrier([steps.type], [steps])


def _step_iterations(lw, group: RecurrenceGroup) -> ir.Value:
    """An upper bound of the loop iterations one step costs one invocation: the step itself, a
    clearing of each member's slot, and each clause's share of points times what a point runs."""
    total = index_const(1)
    memo: dict[int, ir.Value] = {}
    for m in group.members:
        total = arith.addi(total, arith.addi(_share(_rest_points(lw, m)), index_const(1)))
        for c in m.clauses:
            point = index_const(1)
            for part in (c.body, c.guard):
                if part is not None:
                    point = arith.addi(point, _iterations(lw, part, memo))
            share = _share(_product(lw, [v.extent for v in c.vars]))
            total = arith.addi(total, arith.addi(arith.muli(share, point), index_const(1)))
    return total


def _share(points: ir.Value) -> ir.Value:
    """Points an invocation computes of `points`: ceil(points / WORKGROUP_SIZE)."""
    return arith.divui(arith.addi(points, index_const(WORKGROUP_SIZE - 1)), index_const(WORKGROUP_SIZE))


def _iterations(lw, v, memo: dict) -> ir.Value:
    """Loop iterations evaluating the step value `v` once runs (an upper bound: shared values
    count at every use)."""
    if id(v) in memo:
        return memo[id(v)]
    if lw.is_program_level(v) or not (v.rank == 0 or isinstance(v, Stack)):
        result = index_const(0)
    elif isinstance(v, Reduce):
        # a nest of one loop per variable: at most (levels + body) iterations per innermost one
        inner = index_const(len(v.vars))
        for part in v.operands():
            inner = arith.addi(inner, _iterations(lw, part, memo))
        result = arith.muli(_product(lw, [var.extent for var in v.vars]), inner)
    else:
        result = index_const(INTEGER_POWER_ITERATIONS if scalar_ops.is_power_loop(v) else 0)
        for operand in v.operands():
            result = arith.addi(result, _iterations(lw, operand, memo))
    memo[id(v)] = result
    return result


# ------------------------------------------------------------------------------------ the dispatch

def _dispatch(lw, layout: ChunkLayout, start: ir.Value, end: ir.Value, before: list[ir.Value],
              shapes: dict) -> tuple[list[ir.Value], ir.Value]:
    """One dispatch running steps start .. end - 1 from the chunk storages `before`: the
    storages after them, and `end` as the device reports it."""
    members = layout.group.members
    types = [b.type for b in before]
    # the sizes of the fresh storages are the results' sizes, the same values: IREE then writes
    # each storage straight into its result buffer
    lengths = [length(shapes[m]) for m in members]
    i32 = ir.IntegerType.get_signless(32)
    region = flow.DispatchRegionOp(types + [ir.RankedTensorType.get([1], i32)],
                                   [n for n in lengths if not isinstance(n, int)], [])
    with ir.InsertionPoint(region.body.blocks.append()):
        workers = Workers(gpu.thread_id(gpu.Dimension.x), gpu.block_dim(gpu.Dimension.x))
        locals_ = [_copy_head(lw, workers, layout, m, b, shapes[m], n, start)
                   for m, b, n in zip(members, before, lengths)]
        workers.barrier()
        loop = scf.ForOp(start, end, index_const(1), locals_)
        with ir.InsertionPoint(loop.body):
            storage = layout.storage(loop.induction_variable, dict(zip(members, loop.inner_iter_args)), start,
                                     shapes)
            for m in members:
                if layout.kinds[m] == ROWS and not covers_every_step(m):
                    zero = scalar_ops.constant(m.dtype, 0)
                    axes = [IndexVar("p", Lin(0), size) for size in m.shape[1:]]
                    storage.tensors[m] = workers.write(lw, m, storage, axes, None, lambda _s, _c, z=zero: z, None)
            emit_step(lw, layout.group, storage, workers.write)
            scf.yield_([storage.tensors[m] for m in members])
        flow.ReturnOp(list(loop.results) + [_reached(end)])
    if lw.target.has_defect("IREE-220"):
        pack_captured_scalars(region)
    recompute_sizes_inside(region)
    results = list(region.results)
    return results[:-1], results[-1]


def _copy_head(lw, workers: "Workers", layout: ChunkLayout, member: RecMember, before: ir.Value, shape: list,
               count, start: ir.Value) -> ir.Value:
    """A fresh chunk storage whose first rows hold what the chunk's steps read of earlier
    chunks: the whole window, or the pinned rows and the `tail` steps before the chunk
    (ChunkLayout.carried_row). Scalar stores shared by the invocations, like a clause's points
    (a linalg copy of a slice is not kept in place by IREE's SPIR-V pipeline: it allocated
    workgroup memory of unbounded size)."""
    window = layout.kinds[member] == WINDOW
    rows = member.window if window else layout.head(member)
    fresh = _distinct(flat_empty(count, element_type(layout.dtypes[member])), member)
    if rows == 0:
        return fresh
    extents = [index_const(rows)] + [lw.sizes.index(s) for s in member.shape[1:]]

    def copy(coords: list[ir.Value], out: ir.Value) -> ir.Value:
        source = [coords[0] if window else layout.carried_row(member, coords[0], start)] + coords[1:]
        return tensor.insert(tensor.extract(before, [row_major(source, shape)]), out, [row_major(coords, shape)])
    return workers.each_point(extents, fresh, copy)


def _reached(end: ir.Value) -> ir.Value:
    """The step after the chunk's last, as a one-element i32 tensor. Its linalg op is the
    dispatch's only one and carries the workgroup size: IREE's SPIR-V code generator reads it
    from the compilation_info of a compute op (one at most), and gives a dispatch without one a
    single invocation. Every invocation writes the same value."""
    i32 = ir.IntegerType.get_signless(32)
    op = linalg.GenericOp_([], [tensor.empty([1], i32)], [ir.AffineMap.get_identity(1)],
                           [linalg.IteratorType.parallel])
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        linalg.YieldOp([arith.index_cast(i32, end)])
    op.operation.attributes["compilation_info"] = _compilation_info()
    return op.result


def _distinct(empty: ir.Value, member: RecMember) -> ir.Value:
    """CSE would merge the members' identical tensor.empty ops, and one buffer cannot back two
    results: IREE then copies them through workgroup memory (as in recurrence_region). The
    attribute keeps them apart."""
    empty.owner.attributes["einc.storage"] = ir.StringAttr.get(member.name)
    return empty


def _compilation_info() -> ir.Attribute:
    # IREE's SPIR-V code generator reads the pipeline and workgroup size of a dispatch from a
    # compute op's compilation_info; BaseLowering keeps the code as written (no distribution)
    return ir.Attribute.parse(
        "#iree_codegen.compilation_info<lowering_config = #iree_codegen.lowering_config<tile_sizes = [[]]>, "
        "translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.spirv_pipeline<BaseLowering> "
        f"workgroup_size = [{WORKGROUP_SIZE}, 1, 1]>>")


class Workers:
    """The invocations of the workgroup sharing the points of each write."""

    def __init__(self, invocation: ir.Value, invocations: ir.Value):
        self.invocation = invocation
        self.invocations = invocations

    def each_point(self, extents: list[ir.Value], out: ir.Value, body) -> ir.Value:
        """`out` after `body(coords, out)` at points invocation, invocation + invocations, ..
        of the row-major points of `extents`, then a barrier."""
        points = index_const(1)
        for e in extents:
            points = arith.muli(points, e)
        loop = scf.ForOp(self.invocation, points, self.invocations, [out])
        with ir.InsertionPoint(loop.body):
            scf.yield_([body(row_major_coordinates(loop.induction_variable, extents), loop.inner_iter_args[0])])
        self.barrier()
        return loop.results[0]

    def write(self, lw, member: RecMember, storage: Storage, vars_: list, active: Optional[ir.Value],
              value: PointValue, _clause) -> ir.Value:
        """The points of `vars_` at step t shared by the invocations, then a barrier (inside
        the branch: `active` depends on t alone, so every invocation takes it alike)."""
        def update() -> ir.Value:
            slot = storage.slot(member, storage.t)

            def point(coords: list[ir.Value], out: ir.Value) -> ir.Value:
                at = {v: arith.addi(c, lw.sizes.index(v.lo)) for v, c in zip(vars_, coords)}
                # reads of this member go to the tensor being written, so that IREE keeps one buffer
                scalar = value(storage.with_tensor(member, out), at)
                return store_element(scalar, out, storage.at(member, [slot] + [at[v] for v in vars_]))
            return self.each_point([lw.sizes.index(v.extent) for v in vars_], storage.tensors[member], point)
        return when(active, storage.tensors[member], update)

    def barrier(self) -> None:
        """Every invocation waits here, and sees the storage-buffer writes made before it
        (gpu.barrier orders only workgroup memory on SPIR-V)."""
        scope = ir.Attribute.parse("#spirv.scope<Workgroup>")
        ir.Operation.create("spirv.ControlBarrier", attributes={
            "execution_scope": scope, "memory_scope": scope,
            "memory_semantics": ir.Attribute.parse(
                "#spirv.memory_semantics<AcquireRelease|UniformMemory|WorkgroupMemory>")})
