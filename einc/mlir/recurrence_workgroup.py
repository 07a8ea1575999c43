"""A recurrence group that cannot loop inside one invocation (recurrence_kernel: an RNN's vector
state, a filter whose history is observed, a step with a reduction) as chunks of steps inside
one workgroup (vulkan-spirv).

The host-loop form (recurrence_host) costs more per step the longer it runs: IREE 3.13 gives
every step of a host-level loop new allocations, copies of each member's whole storage and
five new fences, all alive until the device catches up with the host (checked: an RNN with
H = 64 took 17 ms a step at T = 4000 on lavapipe, with 10 GB of memory). Here one dispatch runs
a chunk of steps. Its WORKGROUP_SIZE invocations share each clause's points (point p goes to
invocation p mod size); a barrier after each write makes the points visible to the next clause
and step. The region carries the workgroup size in the compilation_info of its one linalg op
(`_reached`): IREE gives a dispatch without one a single invocation.

Storage lives per chunk: a member kept in a window works on a copy of its window (slot = step
mod window); a member kept whole on its `lookback` steps before the chunk followed by the
chunk's steps, which the host then inserts into the whole tensor. A chunk allocates and copies
O(chunk), and the whole tensor is only written, so IREE updates it in place. Every storage the
host loop carries is one-dimensional (flat_storage: IREE lost the offsets of several carried
tensors of run-time size).

Lavapipe stops an invocation after ~65,535 loop iterations counted over all its loops (inner
loops included), so a chunk runs as many steps as fit in LOOP_BUDGET: the host computes an
upper bound of one step's iterations for one invocation from the sizes (`_step_iterations`).
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, flow, gpu, linalg, scf, tensor, util

from einc.ir import affine
from einc.ir.nodes import IndexVar, Op, RecMember, RecurrenceGroup, Reduce, Stack, step_code, step_state_reads
from einc.ir.types import Lin
from einc.mlir import scalar_ops
from einc.mlir.flat_storage import (FlatStorage, as_index, flat_empty, length, product, row_major, tied,
                                    unflattened)
from einc.mlir.recurrence_host import check_no_same_step_self_reads
from einc.mlir.recurrence_scalars import Storage
from einc.mlir.recurrence_step import PointValue, covers_every_step, emit_step, sizes_of, storage_shape, when
from einc.mlir.shapes import index_const
from einc.mlir.types import element_type

WORKGROUP_SIZE = 64
LOOP_BUDGET = 65_000          # lavapipe's limit is 65,535 iterations an invocation (checked)
INTEGER_POWER_ITERATIONS = 63  # einc.mlir.scalar_ops runs one iteration per exponent bit
DYNAMIC = ir.ShapedType.get_dynamic_size()


def fits(group: RecurrenceGroup) -> bool:
    """Whether every read of a member inside the group is at t - c (c >= 0 constant), and every
    extent a step loops over is a size, so the host can bound a step's loop iterations."""
    bodies = _bodies(group)
    for read in step_state_reads(bodies):
        lin = affine.affine_of(read.subs[0])
        if lin is None or lin.terms != {group.t_var: 1} or lin.const > 0:
            return False
    extents = [v.extent for m in group.members for c in m.clauses for v in c.vars]
    extents += [v.lo for m in group.members for c in m.clauses for v in c.vars]
    for v in step_code(bodies):
        if isinstance(v, Stack):
            return False
        if isinstance(v, Reduce):
            extents += [var.extent for var in v.vars]
    return all(_sizes_only(e) for e in extents)


def emit_group(lw, group: RecurrenceGroup) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order."""
    check_no_same_step_self_reads(group, lw.target)
    members = group.members
    tails = _lookbacks(group)
    steps = lw.sizes.index(group.t_var.extent)
    chunk = _chunk_steps(lw, group, tails)
    whole = [m for m in members if m.window is None]
    # a member kept whole needs no zeros in its first chunk storage: chunk 0 reads none of the
    # tail rows it copies (a step reads t - c >= 0, or clamps to step 0 in a clause that is not
    # active); a window starts as zeros, as in recurrence_host
    locals_ = [_zeros(_local_length(lw, m, tails[m], chunk), m) if m.window is not None
               else flat_empty(_local_length(lw, m, tails[m], chunk), element_type(m.dtype)) for m in members]
    storages = [_zeros(_whole_length(lw, m), m) for m in whole]
    inits = [index_const(0)] + locals_ + storages
    loop = scf.WhileOp([v.type for v in inits], inits)
    before_block = loop.before.blocks.append(*[v.type for v in inits])
    with ir.InsertionPoint(before_block):
        arguments = list(before_block.arguments)
        scf.condition(arith.cmpi(arith.CmpIPredicate.ult, arguments[0], steps), arguments)
    after_block = loop.after.blocks.append(*[v.type for v in inits])
    with ir.InsertionPoint(after_block):
        start, carried = after_block.arguments[0], list(after_block.arguments)[1:]
        before = [_tie(lw, b, m, tails, chunk) for m, b in zip(members, carried[:len(members)])]
        kept = [_tie_whole(lw, k, m) for m, k in zip(whole, carried[len(members):])]
        end = arith.minui(arith.addi(start, chunk), steps)
        after, reached = _dispatch(lw, group, tails, chunk, start, end, before)
        count = arith.subi(end, start)
        kept = [_insert_rows(lw, m, after[members.index(m)], whole_storage, tails[m], start, count)
                for m, whole_storage in zip(whole, kept)]
        # the next chunk starts where the device says this one ended: the host waits for each
        # chunk before queuing the next, so a chunk's buffers are released before the next
        # one's are made (IREE copies the whole tensors each chunk, and a host running ahead
        # kept every chunk's copy alive: memory grew with the number of chunks)
        scf.yield_([_read_index(reached)] + after + kept)
    results = list(loop.results)[1:]
    by_member = dict(zip(whole, results[len(members):]))
    return [unflattened(_tie_whole(lw, by_member[m], m), sizes_of(lw, m.shape)) if m.window is None
            else unflattened(_tie(lw, results[i], m, tails, chunk), sizes_of(lw, storage_shape(m)))
            for i, m in enumerate(members)]


def _read_index(one: ir.Value) -> ir.Value:
    return arith.index_cast(ir.IndexType.get(), tensor.extract(one, [index_const(0)]))


def _tie(lw, value: ir.Value, member: RecMember, tails: dict, chunk: ir.Value) -> ir.Value:
    return tied(value, _local_length(lw, member, tails[member], chunk))


def _tie_whole(lw, value: ir.Value, member: RecMember) -> ir.Value:
    return tied(value, _whole_length(lw, member))


# ------------------------------------------------------------------------------------ host side

def _bodies(group: RecurrenceGroup) -> list:
    return [part for m in group.members for c in m.clauses for part in (c.body, c.guard)]


def _sizes_only(lin: Lin) -> bool:
    return not any(isinstance(k, IndexVar) for k in lin.keys())


def _lookbacks(group: RecurrenceGroup) -> dict:
    """member -> the most steps back any step reads it (0 when only read at t)."""
    back = {m: 0 for m in group.members}
    for read in step_state_reads(_bodies(group)):
        back[read.member] = max(back[read.member], -affine.affine_of(read.subs[0]).const)
    return back


def _rest_points(lw, member: RecMember) -> ir.Value:
    return _product(lw, member.shape[1:])


def _product(lw, extents) -> ir.Value:
    total = index_const(1)
    for e in extents:
        total = arith.muli(total, lw.sizes.index(e))
    return total


def _local_shape(lw, member: RecMember, tail: int, chunk: ir.Value) -> list:
    """The layout of a chunk's storage of `member`: its window, or `tail` steps then `chunk`
    steps."""
    if member.window is not None:
        return sizes_of(lw, storage_shape(member))
    return [arith.addi(chunk, index_const(tail))] + sizes_of(lw, member.shape[1:])


def _local_length(lw, member: RecMember, tail: int, chunk: ir.Value):
    return length(_local_shape(lw, member, tail, chunk))


def _whole_length(lw, member: RecMember):
    return length(sizes_of(lw, member.shape))


def _zeros(count, member: RecMember) -> ir.Value:
    element = element_type(member.dtype)
    return linalg.fill(scalar_ops.constant(member.dtype, 0), outs=[flat_empty(count, element)])


def _chunk_steps(lw, group: RecurrenceGroup, tails: dict) -> ir.Value:
    """Steps a chunk runs: as many as fit in LOOP_BUDGET after the chunk's copies, at least 1."""
    per_step = _step_iterations(lw, group)
    fixed = index_const(100)
    for m in group.members:
        rows = m.window if m.window is not None else tails[m]
        fixed = arith.addi(fixed, _share(arith.muli(_rest_points(lw, m), index_const(rows))))
    room = arith.subi(arith.maxui(index_const(LOOP_BUDGET), fixed), fixed)
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
        result = index_const(INTEGER_POWER_ITERATIONS if _integer_power(v) else 0)
        for operand in v.operands():
            result = arith.addi(result, _iterations(lw, operand, memo))
    memo[id(v)] = result
    return result


def _integer_power(v) -> bool:
    return isinstance(v, Op) and v.op == "pow" and not v.dtype.is_float


def _insert_rows(lw, member: RecMember, local: ir.Value, whole: ir.Value, tail: int, start: ir.Value,
                 count: ir.Value) -> ir.Value:
    """The chunk's steps (rows tail .. tail + count of `local`) written into the whole tensor:
    both are row-major, so the rows are one run of elements in each."""
    row = as_index(product(sizes_of(lw, member.shape[1:])))
    elements = arith.muli(count, row)
    rows_type = ir.RankedTensorType.get([DYNAMIC], element_type(member.dtype))
    rows = tensor.extract_slice(rows_type, local, [arith.muli(index_const(tail), row)], [elements], [],
                                [DYNAMIC], [DYNAMIC], [1])
    return tensor.insert_slice(rows, whole, [arith.muli(start, row)], [elements], [], [DYNAMIC], [DYNAMIC], [1])


# ------------------------------------------------------------------------------------ the dispatch

class ChunkStorage(FlatStorage):
    """Storage inside a chunk: a member kept whole holds step s at row s - start + tail."""

    def __init__(self, t_var: IndexVar, t: ir.Value, tensors: dict, shapes: dict, start: ir.Value, tails: dict):
        super().__init__(t_var, t, tensors, shapes)
        self.start = start
        self.tails = tails

    def with_tensor(self, member, value: ir.Value) -> "ChunkStorage":
        return ChunkStorage(self.t_var, self.t, {**self.tensors, member: value}, self.shapes, self.start,
                            self.tails)

    def slot(self, member, step: ir.Value) -> ir.Value:
        if member.window is not None:
            return super().slot(member, step)
        return arith.addi(arith.subi(step, self.start), index_const(self.tails[member]))


def _dispatch(lw, group: RecurrenceGroup, tails: dict, chunk: ir.Value, start: ir.Value, end: ir.Value,
              before: list[ir.Value]) -> tuple[list[ir.Value], ir.Value]:
    """One dispatch running steps start .. end - 1 from the chunk storages `before`: the
    storages after them, and `end` as the device reports it."""
    members = group.members
    types = [b.type for b in before]
    # the sizes of the fresh storages are the results' sizes, the same values: IREE then writes
    # each storage straight into its result buffer
    shapes = {m: _local_shape(lw, m, tails[m], chunk) for m in members}
    lengths = [_local_length(lw, m, tails[m], chunk) for m in members]
    i32 = ir.IntegerType.get_signless(32)
    region = flow.DispatchRegionOp(types + [ir.RankedTensorType.get([1], i32)],
                                   [n for n in lengths if not isinstance(n, int)], [])
    with ir.InsertionPoint(region.body.blocks.append()):
        workers = Workers(gpu.thread_id(gpu.Dimension.x), gpu.block_dim(gpu.Dimension.x))
        locals_ = [_copy_tail(lw, workers, m, b, shapes[m], n, tails[m], chunk)
                   for m, b, n in zip(members, before, lengths)]
        workers.barrier()
        loop = scf.ForOp(start, end, index_const(1), locals_)
        with ir.InsertionPoint(loop.body):
            storage = ChunkStorage(group.t_var, loop.induction_variable, dict(zip(members, loop.inner_iter_args)),
                                   shapes, start, tails)
            for m in members:
                if m.window is None and not covers_every_step(m):
                    zero = scalar_ops.constant(m.dtype, 0)
                    axes = [IndexVar("p", Lin(0), size) for size in m.shape[1:]]
                    storage.tensors[m] = workers.write(lw, m, storage, axes, None, lambda _s, _c, z=zero: z, None)
            emit_step(lw, group, storage, workers.write)
            scf.yield_([storage.tensors[m] for m in members])
        flow.ReturnOp(list(loop.results) + [_reached(end)])
    results = list(region.results)
    return results[:-1], results[-1]


def _copy_tail(lw, workers: "Workers", member: RecMember, before: ir.Value, shape: list, count, tail: int,
               chunk: ir.Value) -> ir.Value:
    """A fresh chunk storage whose first rows hold what the next steps read of the last chunk:
    the whole window, or the `tail` rows after the previous chunk's `chunk` steps. Scalar
    stores shared by the invocations, like a clause's points (a linalg copy of a slice is not
    kept in place by IREE's SPIR-V pipeline: it allocated workgroup memory of unbounded size)."""
    rows = member.window if member.window is not None else tail
    fresh = _distinct(flat_empty(count, element_type(member.dtype)), member)
    if rows == 0:
        return fresh
    offset = index_const(0) if member.window is not None else chunk
    extents = [index_const(rows)] + [lw.sizes.index(s) for s in member.shape[1:]]

    def copy(coords: list[ir.Value], out: ir.Value) -> ir.Value:
        source = [arith.addi(coords[0], offset)] + coords[1:]
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
            scf.yield_([body(_coords(loop.induction_variable, extents), loop.inner_iter_args[0])])
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
                return tensor.insert(scalar, out, storage.at(member, [slot] + [at[v] for v in vars_]))
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


def _coords(flat: ir.Value, extents: list[ir.Value]) -> list[ir.Value]:
    """Row-major coordinates of a flat point index."""
    coords = []
    for e in reversed(extents[1:]):
        coords.append(arith.remui(flat, e))
        flat = arith.divui(flat, e)
    return [flat] + list(reversed(coords)) if extents else []

