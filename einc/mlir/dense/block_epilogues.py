"""An elementwise op on a convolution over width blocks, moved into the blocks (llvm-cpu).

width_blocks picks a convolution's form by the result's width at run time (`scf.if`s, marked
CHOICE) and writes blocks of columns into place in loops. IREE forms dispatches inside each
branch and loop body, so an elementwise op on the chosen result (a conv layer's bias and ReLU)
was a dispatch of its own after the choice, one more pass over the result: the 64 x 64 conv
layer of issue 19 ran 1.24x its `--dim` time. Here such an op is computed in each branch
instead, and in a loop on each block before it is written into place, its other operands cut
to the block; IREE then fuses it into the block's convolution, as at fixed sizes.
Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import tensor

from einc.mlir.core.marks import taken
from einc.mlir.dense.width_blocks import CHOICE, axis_sizes, slice_operands, static_sizes

DYNAMIC = ir.ShapedType.get_dynamic_size()


def move_epilogues(module: ir.Module) -> None:
    """Move the elementwise consumer of each marked choice into its branches and blocks."""
    for choice in taken(module, CHOICE):
        found = _epilogue(choice)
        if found is not None:
            _move_into(choice, *found)


def _epilogue(choice) -> Optional[tuple]:
    """(the consumer, the position of the choice among its operands, the maps of its operands)
    where the choice's one use is an elementwise `linalg.generic` of the same type that reads it
    at each of its points, every other operand at a projection of the point, ignores its own
    output's values and uses nothing computed after the choice (so all of it is available
    inside)."""
    result = choice.results[0]
    uses = list(result.uses)
    if len(choice.results) != 1 or len(uses) != 1:
        return None
    consumer, position = uses[0].owner, uses[0].operand_number
    if consumer.name != "linalg.generic" or len(consumer.results) != 1 or consumer.results[0].type != result.type:
        return None
    inputs = len(consumer.operands) - 1
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(consumer.attributes["indexing_maps"])][:inputs]
    if position >= inputs or not _reads_at_points(consumer, position, maps):
        return None
    others = [v for k, v in enumerate(list(consumer.operands)[:inputs]) if k != position]
    if not all(_available(v, choice) for v in others + _captured(consumer)):
        return None
    return consumer, position, maps


def _reads_at_points(consumer, position: int, maps: list) -> bool:
    """Whether the elementwise `consumer` reads operand `position` at each point, its others at
    projections of the point (dims only), and not its output."""
    parallel = all("parallel" in str(it) for it in ir.ArrayAttr(consumer.attributes["iterator_types"]))
    output = consumer.regions[0].blocks[0].arguments[len(maps)]
    return (parallel and maps[position] == ir.AffineMap.get_identity(maps[position].n_dims)
            and all(isinstance(e, ir.AffineDimExpr) for m in maps for e in m.results) and not list(output.uses))


def _captured(op) -> list:
    """The values the ops in `op`'s region use that are defined outside it."""
    inside, used = set(), []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        inside.update(inner.results)
        used.extend(inner.operands)
        return ir.WalkResult.ADVANCE
    for inner in op.regions[0].blocks[0].operations:
        inner.operation.walk(visit)
    arguments = set(op.regions[0].blocks[0].arguments)
    return [v for v in used if v not in inside and v not in arguments]


def _available(value: ir.Value, op) -> bool:
    """Whether `value` is defined before `op` in `op`'s block or a block around it."""
    current = op.operation
    while current is not None:
        block = current.block
        if isinstance(value, ir.BlockArgument):
            if value.owner == block:
                return True
        elif value.owner.operation.block == block and value.owner.operation.is_before_in_block(current):
            return True
        current = current.parent.operation if current.parent is not None else None
        if current is not None and current.name == "builtin.module":
            return False
    return False


def _move_into(choice, consumer, position: int, maps: list) -> None:
    """`consumer` applied inside `choice` instead of after it."""
    _place(choice.results[0], None, 0, consumer, position, maps)
    consumer.results[0].replace_all_uses_with(choice.results[0])
    consumer.erase()


def _place(value: ir.Value, user, operand: int, consumer, position: int, maps: list) -> None:
    """Make `value`, read by operand `operand` of `user` (None: the top), the consumer's result
    on it: inside the branches of an `scf.if`, on the blocks a loop writes into place (and on
    what it writes them into), else by the consumer applied to it just before `user`."""
    owner = None if isinstance(value, ir.BlockArgument) else value.owner.operation
    if _made_by(value, "scf.if"):
        for region in owner.regions:
            terminator = list(region.blocks[0].operations)[-1]
            _place(terminator.operands[0], terminator, 0, consumer, position, maps)
    elif _made_by(value, "tensor.cast"):
        _apply_before(owner, 0, consumer, position, maps, [0] * _rank(value))
    elif owner is not None and (insert := _block_written(owner)) is not None:
        _apply_before(insert, 0, consumer, position, maps, _offsets(insert))
        start = owner.operands[3]           # scf.for's operands: lower, upper, step, init
        if not _made_by(start, "tensor.empty"):      # entries the blocks do not write are undefined
            _place(start, owner, 3, consumer, position, maps)
    else:
        _apply_before(user, operand, consumer, position, maps, None)


def _made_by(value: ir.Value, name: str) -> bool:
    return not isinstance(value, ir.BlockArgument) and value.owner.operation.name == name


def _block_written(loop) -> Optional[ir.Operation]:
    """The `tensor.insert_slice` of an `scf.for` whose one carried tensor is each step's
    destination of that unit-stride insert, yielded; else None."""
    if loop.name != "scf.for" or len(loop.results) != 1:
        return None
    body = loop.regions[0].blocks[0]
    terminator = list(body.operations)[-1]
    insert = terminator.operands[0].owner
    if isinstance(terminator.operands[0], ir.BlockArgument) or insert.operation.name != "tensor.insert_slice":
        return None
    insert = insert.operation
    carried = body.arguments[1]
    strides = ir.DenseI64ArrayAttr(insert.attributes["static_strides"])
    return insert if insert.operands[1] == carried and all(s == 1 for s in strides) else None


def _offsets(insert) -> list:
    """The offsets of `insert` per axis: an int where known at build time, else an index value."""
    static = ir.DenseI64ArrayAttr(insert.attributes["static_offsets"])
    dynamic = iter(list(insert.operands)[2:2 + sum(1 for s in static if s == DYNAMIC)])
    return [next(dynamic) if s == DYNAMIC else s for s in static]


def _apply_before(user, operand: int, consumer, position: int, maps: list, offsets: Optional[list]) -> None:
    """Operand `operand` of `user` replaced by `consumer` applied to it, just before `user`:
    on the whole value (`offsets` None), or on a block of the consumer's result from `offsets`,
    the consumer's other operands cut to that block."""
    value = user.operands[operand]
    with ir.InsertionPoint(user), user.location:
        sizes = axis_sizes(value)
        ins = list(consumer.operands)[:len(maps)]
        if offsets is not None:
            ins = [value if k == position else _cut(v, m, offsets, sizes) for k, (v, m) in enumerate(zip(ins, maps))]
        ins[position] = value
        element = ir.RankedTensorType(consumer.results[0].type).element_type
        out = tensor.empty(sizes, element)
        applied = consumer.clone()
        for k, v in enumerate(ins + [out]):
            applied.operands[k] = v
        applied.results[0].set_type(value.type)
        user.operands[operand] = applied.results[0]


def _cut(value: ir.Value, map_: ir.AffineMap, offsets: list, sizes: list) -> ir.Value:
    """The part of `value` (read at `map_`, dims only) that a block from `offsets` of `sizes` reads."""
    axes = [e.position for e in map_.results]
    if not axes:
        return value
    block_offsets, block_sizes = [offsets[a] for a in axes], [sizes[a] for a in axes]
    source = ir.RankedTensorType(value.type)
    result = ir.RankedTensorType.get(static_sizes(block_sizes), source.element_type)
    return tensor.extract_slice(result, value, *slice_operands(block_offsets, block_sizes))


def _rank(value: ir.Value) -> int:
    return ir.RankedTensorType(value.type).rank
