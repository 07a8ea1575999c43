"""Channels-last poolings written out (cpu_poolings), tiled by rows of the image (llvm-cpu).

IREE 3.13 merges a channels-last pass's column and channel axes into one (every slice reads
them contiguously) and distributes it 64 entries to a workgroup: with 16 channels 4 columns,
so each workgroup streams the rows of every image for 4 columns and the image came from memory
about twice (an NHWC 3x3 max pool over 16 channels 2.4-3x its `--dim` time). That merge drops
einc's `compilation_info`, and so does IREE's fusion of a consumer (an average's division).
So, over the finished module, a pass marked ROWS here takes in its elementwise consumer (one
op, one compilation_info), its column and channel axes are merged where the channels are of
build-time size, and it carries einc's tiles (`_by_rows`), the rest of a vector step peeled.
Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import linalg, tensor

from einc.mlir.core import marks
from einc.mlir.core.cpu_tiles import compilation_info
from einc.mlir.dense.width_blocks import axis_sizes, static_sizes

ROWS = "einc.pooling_rows"
DYNAMIC = ir.ShapedType.get_dynamic_size()
# NHWC 3x3 average pool, 32 x 66 x 66, one core (docs/DECISIONS.md): 8 whole rows a workgroup
# either way (fewer, larger workgroups: 8 columns each cost 1.4x); 16 channels of build-time size
# 64 entries a vector step (4 columns: loads shared across the window), a run-time channel count
# 8 columns by 16 channels
ROWS_A_WORKGROUP, MERGED_VECTOR, COLUMNS, VECTOR = 8, 64, 8, 16


def mark(op) -> None:
    """Mark a written-out channels-last pooling whose last window axis reads every column."""
    marks.mark(op, ROWS)


def run_rows(module: ir.Module) -> None:
    """Each marked pass with its consumer taken in, merged and tiled (`_by_rows`)."""
    for pooling in marks.taken(module, ROWS):
        consumer = _consumer(pooling)
        merged = _merged(pooling, consumer) if consumer is not None else pooling
        _by_rows(merged)


def _consumer(op) -> Optional[ir.Operation]:
    """The one user of `op`'s result where it is an elementwise `linalg.generic` that reads it,
    and each of its other operands, at each of its points (identity maps), and ignores its own
    output's values."""
    uses = list(op.results[0].uses)
    if len(uses) != 1 or uses[0].owner.name != "linalg.generic":
        return None
    user = uses[0].owner
    inputs = len(user.operands) - 1
    identity = ir.AffineMap.get_identity(ir.RankedTensorType(op.results[0].type).rank)
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(user.attributes["indexing_maps"])]
    body = user.regions[0].blocks[0]
    if (uses[0].operand_number >= inputs or any(m != identity for m in maps) or len(user.results) != 1
            or len(list(body.arguments[inputs].uses)) != 0):
        return None
    return user


def _merged(pooling, consumer) -> ir.Operation:
    """One elementwise op computing `consumer` with `pooling`'s pass inside it, in its place."""
    position = next(u.operand_number for u in pooling.results[0].uses)
    own = list(pooling.operands)[:-1]
    others = [v for k, v in enumerate(list(consumer.operands)[:-1]) if k != position]
    out = consumer.operands[len(consumer.operands) - 1]
    result_type = consumer.results[0].type
    element = lambda v: ir.ShapedType(v.type).element_type
    with ir.InsertionPoint(consumer), consumer.location:
        op = linalg.GenericOp([result_type], own + others, [out], _identities(len(own) + len(others) + 1, result_type),
                              consumer.attributes["iterator_types"])
        block = op.regions[0].blocks.append(*[element(v) for v in own + others + [out]])
        args = list(block.arguments)
        with ir.InsertionPoint(block):
            pooled = _inlined(pooling.regions[0].blocks[0], args[:len(own)] + [args[-1]])
            consumer_args = args[len(own):len(own) + position] + [pooled] + args[len(own) + position:]
            linalg.YieldOp([_inlined(consumer.regions[0].blocks[0], consumer_args)])
    consumer.results[0].replace_all_uses_with(op.result)
    consumer.erase()
    pooling.erase()
    return op.operation


def _identities(count: int, result_type: ir.Type) -> ir.ArrayAttr:
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(ir.RankedTensorType(result_type).rank))
    return ir.ArrayAttr.get([identity] * count)


def _inlined(block: ir.Block, args: list) -> ir.Value:
    """The value `block` (a linalg region, its arguments taking `args`) yields, its ops cloned
    at the insertion point."""
    mapping = dict(zip(block.arguments, args))
    for inner in list(block.operations):
        if inner.name == "linalg.yield":
            return mapping.get(inner.operands[0], inner.operands[0])
        copy = inner.clone()
        for k, operand in enumerate(copy.operands):
            if operand in mapping:
                copy.operands[k] = mapping[operand]
        mapping.update(zip(inner.results, copy.results))
    raise ValueError("a linalg region without linalg.yield")


def _by_rows(op) -> None:
    """einc's tiles on `op` (its columns, the last window axis, next to last): ROWS_A_WORKGROUP
    whole rows a workgroup; where its channels are of build-time size, its columns and channels
    merged (its window slices read them contiguously) and MERGED_VECTOR entries a vector step,
    else a vector step COLUMNS columns by VECTOR channels."""
    result = ir.RankedTensorType(op.results[0].type)
    columns = result.rank - 2                # every pooling has a batch axis before
    if result.get_dim_size(result.rank - 1) != DYNAMIC:
        op = _merged_columns(op)
        levels = {"distribution": [1] * (columns - 1) + [ROWS_A_WORKGROUP, 0],
                  "vector_common_parallel": [1] * columns + [MERGED_VECTOR]}
    else:
        levels = {"distribution": [1] * (columns - 1) + [ROWS_A_WORKGROUP, 0, 0],
                  "vector_common_parallel": [1] * columns + [COLUMNS, VECTOR]}
    op.attributes["compilation_info"] = compilation_info(levels, "DoubleTilingExpert", peeled=True)


def _merged_columns(op) -> ir.Operation:
    """`op` (elementwise, identity maps) on its operands with their last two axes merged, its
    window slices taken from the merged image; its result expanded back."""
    result = op.results[0]
    rank = ir.RankedTensorType(result.type).rank
    groups = [[k] for k in range(rank - 2)] + [[rank - 2, rank - 1]]
    channels = ir.RankedTensorType(result.type).get_dim_size(rank - 1)
    with ir.InsertionPoint(op), op.location:
        out = _collapsed(op.operands[len(op.operands) - 1], groups)
        sizes, images = axis_sizes(out), {}
        old = list(op.operands)[:-1]
        ins = [_slice_merged(v, groups, channels, sizes, images) for v in old]
        merged = op.clone()
        for k, v in enumerate(ins + [out]):
            merged.operands[k] = v
        merged.results[0].set_type(out.type)
        merged.attributes["indexing_maps"] = _identities(len(ins) + 1, out.type)
        merged.attributes["iterator_types"] = ir.ArrayAttr.get(
            [ir.Attribute.parse("#linalg.iterator_type<parallel>")] * (rank - 1))
        full = axis_sizes(op.operands[len(op.operands) - 1])
        expanded = tensor.expand_shape(result.type, merged.results[0], groups,
                                       [s for s in full if not isinstance(s, int)], static_sizes(full))
    result.replace_all_uses_with(expanded)
    op.erase()
    for value in old:              # the window slices of the image as it was, now unread
        if not isinstance(value, ir.BlockArgument) and not list(value.uses):
            value.owner.operation.erase()
    return merged.operation


def _collapsed(value: ir.Value, groups: list) -> ir.Value:
    source = ir.RankedTensorType(value.type)
    sizes = [source.get_dim_size(k) for k in range(source.rank)]
    last = sizes[-2:]
    merged = sizes[:-2] + [DYNAMIC if DYNAMIC in last else last[0] * last[1]]
    return tensor.collapse_shape(ir.RankedTensorType.get(merged, source.element_type), value, groups)


def _slice_merged(value: ir.Value, groups: list, channels: int, sizes: list, images: dict) -> ir.Value:
    """`value` with its last two axes merged: a window slice of the image (unit steps on those
    axes) as the same slice of the merged image (kept in `images` by the image), any other
    operand collapsed."""
    owner = None if isinstance(value, ir.BlockArgument) else value.owner.operation
    if owner is None or owner.name != "tensor.extract_slice" or len(list(owner.operands)) > 1 + _dynamic_count(owner):
        return _collapsed(value, groups)
    offsets = list(ir.DenseI64ArrayAttr(owner.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(owner.attributes["static_strides"]))
    source = owner.operands[0]
    if source not in images:
        images[source] = _collapsed(source, groups)
    offsets = offsets[:-2] + [offsets[-2] * channels]
    strides = strides[:-1]
    dynamic = [s for s in sizes if not isinstance(s, int)]
    return tensor.extract_slice(ir.RankedTensorType.get(static_sizes(sizes), ir.ShapedType(value.type).element_type),
                                images[source], [], dynamic, [], offsets, static_sizes(sizes), strides)


def _dynamic_count(slice_op) -> int:
    """The run-time sizes of a slice (its only run-time operands where its offsets are known)."""
    return sum(1 for s in ir.DenseI64ArrayAttr(slice_op.attributes["static_sizes"]) if s == DYNAMIC)
