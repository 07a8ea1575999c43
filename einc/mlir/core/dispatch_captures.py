"""Tensors a hand-written dispatch region reads from outside it, passed in as they are.

IREE-26: IREE clones cheap producers of captured tensors (a fill) into the region, where a
recurrence region must hold no tileable linalg op. Each captured tensor goes through a
barrier (`host_fence`), which IREE does not clone.

IREE-220: a dispatch binds each tensor it reads or writes, and the runtime refuses one of more
than 32 bindings ("binding count 60 > 32" on the CPU). A step reading many scalars the region
does not compute (each a 0-d tensor of its own kernel: `r[t - 1, 0, 2]` read by a loop nested
in a step, `x[i] * x[i + 1]` for many i) would bind each, so past CAPTURE_BUDGET (with
`packs_scalars`) they are packed into one tensor per element type (`_pack_scalars`).

IREE-32: a kernel takes each integer it reads from outside (a run-time size, or one computed from
sizes) as push constants, two words for an index, of which Vulkan guarantees 128 bytes in all.
`recompute_sizes_inside` computes the integers a region reads from the sizes they are made of
inside it, so that it takes only those.
"""
from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import flow, tensor, util

from einc.mlir.core.shapes import index_const
from einc.target import Target

# The device IREE creates from the target's `--iree-hal-target-device` (its first and only one).
_THE_DEVICE = "#hal.device.promise<@__device_0>"
# ops that only change how a tensor's elements are grouped into axes
RESHAPES = frozenset({"tensor.collapse_shape", "tensor.expand_shape", "flow.tensor.tie_shape"})
CAPTURE_BUDGET = 16   # captured tensors and results a region binds before its scalars are packed (IREE-220)


def fence_captured_tensors(region_op, computed_only: bool = False, packs_scalars: bool = False,
                           reshapes_on: Target | None = None) -> None:
    """Route every tensor that ops inside `region_op` read from outside it through a barrier
    (with `computed_only`, those an op computes, not the function's arguments; with
    `packs_scalars`, 0-d ones past CAPTURE_BUDGET packed first, IREE-220; with `reshapes_on`,
    reshaped ones through `fence`'s device barrier on that target, IREE-260)."""
    inside, readers = _readers(region_op)
    if packs_scalars:
        readers = _packed_if_many(region_op, readers, inside)
    fenced: dict = {}
    with ir.InsertionPoint(region_op):
        for op, k, value in readers:
            if value in inside or (computed_only and isinstance(value, ir.BlockArgument)):
                continue
            if value not in fenced:
                reshaped = reshapes_on is not None and _is_reshape(value)
                fenced[value] = fence(reshapes_on, value) if reshaped else host_fence(value)
            op.operands[k] = fenced[value]


def recompute_sizes_inside(region_op) -> None:
    """Each integer that an op inside `region_op` reads from outside it and that arith ops
    compute from other values (`T + 1`, a chunk's last step `min(start + n, T)`) computed again
    at the start of the region from the values those ops start from (IREE-32)."""
    first = region_op.regions[0].blocks[0].operations[0]
    inside, readers = _readers(region_op, scalars=True)
    copies: dict = {}

    def copied(value: ir.Value) -> ir.Value:
        if value in inside:
            return value
        if not _computed_by_arith(value):
            # behind a barrier, or CSE merges the copies with the values outside they repeat
            if value not in copies:
                copies[value] = util.optimization_barrier([value.type], [value], ip=ir.InsertionPoint(first))
            return copies[value]
        if value not in copies:
            operands = [copied(operand) for operand in value.owner.operands]
            clone = value.owner.clone(ir.InsertionPoint(first))
            for k, operand in enumerate(operands):
                clone.operands[k] = operand
            copies[value] = clone.results[ir.OpResult(value).result_number]
        return copies[value]
    for op, k, value in readers:
        op.operands[k] = copied(value)


def _computed_by_arith(value: ir.Value) -> bool:
    """Whether `value` is an integer or index result of an arith op (all of them are pure)."""
    owner = value.owner
    return (not isinstance(owner, ir.Block) and owner.name.startswith("arith.")
            and isinstance(value.type, (ir.IntegerType, ir.IndexType)))


def _is_reshape(value: ir.Value) -> bool:
    """Whether `value` is a `tensor.expand_shape` or `tensor.collapse_shape` result."""
    op = value.owner
    return not isinstance(op, ir.Block) and op.name in ("tensor.collapse_shape", "tensor.expand_shape")


def pack_captured_scalars(op) -> None:
    """The 0-d tensors ops inside `op` read from outside it packed, past CAPTURE_BUDGET
    (IREE-220), for an op whose other captures stay as they are (a kernel's body)."""
    inside, readers = _readers(op)
    _packed_if_many(op, readers, inside)


def _readers(region_op, scalars: bool = False) -> tuple[set, list]:
    """The values defined inside `region_op`, and (op, operand position, value) of each tensor
    operand of an op inside it (with `scalars`, of each integer or index operand)."""
    inside: set = set()
    readers: list[tuple[ir.Operation, int, ir.Value]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        for block in (b for region in op.regions for b in region.blocks):
            inside.update(block.arguments)
        inside.update(op.results)
        wanted = (ir.IntegerType, ir.IndexType) if scalars else ir.RankedTensorType
        readers.extend((op, k, value) for k, value in enumerate(op.operands) if isinstance(value.type, wanted))
        return ir.WalkResult.ADVANCE
    for block in (b for region in region_op.regions for b in region.blocks):
        for op in block.operations:
            op.operation.walk(visit)
    return inside, readers


def _packed_if_many(region_op, readers: list, inside: set) -> list:
    """`readers`, with the scalars packed (`_pack_scalars`) where the tensors the region reads
    from outside and its results are more than CAPTURE_BUDGET."""
    outside = {value for _, _, value in readers if value not in inside}
    if len(outside) + len(region_op.results) <= CAPTURE_BUDGET:
        return readers
    return _pack_scalars(region_op, readers, outside)


def _pack_scalars(region_op, readers: list, outside: set) -> list:
    """`readers` after the 0-d tensors of `outside` that the region only extracts from are
    packed, per element type, into one tensor built before the region (each written at its
    position) and read there at that position: one binding for them all (IREE-220). Each
    passes a barrier before it is written: IREE otherwise fuses the scalars' kernels and
    writes into one dispatch that binds the packed tensor once per scalar."""
    extracts: dict = {}
    for op, _, value in readers:
        if value in outside:
            extracts.setdefault(value, []).append(op)
    scalars: dict = {}
    for value, ops in extracts.items():
        if not ir.RankedTensorType(value.type).shape and all(_extracts_whole(op) for op in ops):
            scalars.setdefault(str(ir.RankedTensorType(value.type).element_type), []).append(value)
    packed_ops = set()
    for values in (v for v in scalars.values() if len(v) > 1):
        element = ir.RankedTensorType(values[0].type).element_type
        with ir.InsertionPoint(region_op):
            packed = tensor.empty([len(values)], element)
            for k, value in enumerate(values):
                packed = tensor.insert_slice(host_fence(value), packed, [], [], [], [k], [1], [1])
            packed = host_fence(packed)
        for k, value in enumerate(values):
            for op in extracts[value]:
                with ir.InsertionPoint(op):
                    op.result.replace_all_uses_with(tensor.extract(packed, [index_const(k)]))
                packed_ops.add(id(op))
                op.erase()
    return [(op, k, value) for op, k, value in readers if id(op) not in packed_ops]


def _extracts_whole(op: ir.Operation) -> bool:
    """Whether `op` is a `tensor.extract` of a 0-d tensor (no indices)."""
    return op.name == "tensor.extract" and len(op.operands) == 1


def fence(target: Target, value: ir.Value) -> ir.Value:
    """`value` through a barrier IREE neither fuses nor clones across: `flow.tensor.barrier` on
    the module's one device. IREE-62: `util.optimization_barrier` on a tensor is a host op, and
    IREE's stream waits on the host before it for all the work queued so far (in an async
    `main`, a spinning wait of IREE-52's kind on the caller, the task workers idle until it
    ends). IREE-63: IREE's stream partitioning fails ("circular dependency") on a device barrier
    of a reshape of another device barrier's result, on every target, and on some others on
    vulkan-spirv; there the barrier stays the host op."""
    if target.has_defect("IREE-63") or _reshapes_a_device_barrier(value):
        return host_fence(value)
    return flow.TensorBarrierOp(value, _dynamic_sizes(value), ir.Attribute.parse(_THE_DEVICE),
                                results=[value.type]).result


def _reshapes_a_device_barrier(value: ir.Value) -> bool:
    """Whether `value` is a device barrier's result, as it is or through reshapes and plain
    copies only (IREE folds both away, leaving one barrier of the other's result)."""
    op = value.owner
    while not isinstance(op, ir.Block) and (op.name in RESHAPES or _copies(op)):
        op = op.operands[0].owner
    return not isinstance(op, ir.Block) and op.name == "flow.tensor.barrier"


def _copies(op: ir.Operation) -> bool:
    """Whether `op` is a `linalg.generic` writing its one input unchanged, element for element."""
    if op.name != "linalg.generic" or len(op.operands) != 2:
        return False
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    body = op.regions[0].blocks[0]
    ops = list(body.operations)
    return (all(m == ir.AffineMap.get_identity(m.n_dims) for m in maps) and len(ops) == 1
            and ops[0].name == "linalg.yield" and ops[0].operands[0] == body.arguments[0])


def host_fence(value: ir.Value) -> ir.Value:
    """`value` through `util.optimization_barrier`, its dynamic sizes tied back on (IREE cannot
    see through it to them): a barrier that also ends IREE's stream of work. Recurrences keep
    it: with `fence`'s device barrier the LSTM and GRU benchmarks ran 15-25% slower (not
    understood; docs/DECISIONS.md)."""
    return _tied(value, util.OptimizationBarrierOp([value.type], [value]).results[0])


def is_fenced(value: ir.Value) -> bool:
    """Whether `value` is what `fence` returns."""
    op = value.owner
    if not isinstance(op, ir.Block) and op.name == "flow.tensor.tie_shape":
        op = op.operands[0].owner
    return not isinstance(op, ir.Block) and op.name in ("flow.tensor.barrier", "util.optimization_barrier")


def _dynamic_sizes(value: ir.Value) -> list[ir.Value]:
    shape = ir.RankedTensorType(value.type).shape
    return [tensor.dim(value, index_const(k)) for k, n in enumerate(shape) if n == ir.ShapedType.get_dynamic_size()]


def _tied(value: ir.Value, result: ir.Value) -> ir.Value:
    """`result` with `value`'s dynamic sizes tied back on: IREE cannot see through a host barrier
    to them."""
    sizes = _dynamic_sizes(value)
    return flow.tensor_tie_shape(result, sizes) if sizes else result


def written_shifted(target: Target, value: ir.Value) -> ir.Value:
    """`value`, about to be written at a nonzero offset on its last axis (the interior of a padded
    tensor, a clause of a piecewise definition). IREE-42: on vulkan-spirv, with static sizes, IREE
    fuses its producer into a kernel that vectorizes the store to the aligned-down address; behind
    a barrier the write is a copy."""
    return fence(target, value) if target.has_defect("IREE-42") else value
