"""Sliding-window ops over a run-time width, run as blocks of a build-time width (llvm-cpu).

IREE 3.13 vectorizes a convolution or pooling along the result's columns only when their count
is known at build time: over a run-time width the same `linalg.conv_2d_nchw_fchw` ran 20-30x
slower, while a run-time batch or height cost nothing. So the columns are cut into
q = ceil(OW / BLOCK) blocks, and the blocks become images of the batch: block b of image n is
the columns b * BLOCK * stride .. + span of the image (span: the columns BLOCK results read;
zero-padded on the right where the last block runs past the image), copied into a batch of
N * q images `span` columns wide. The op runs on that batch with a build-time result width,
and each of the OW result columns is read back from its block. The copies cost a pass over
the image and one over the result. Figures: docs/DECISIONS.md (named dims).
"""
from __future__ import annotations

from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.mlir.core.shapes import index_const

DYNAMIC = ir.ShapedType.get_dynamic_size()
BLOCK = 16
# The ops a run-time width slowed down (23-33x; 4.6x and 1.5x on blocks). 1-d, 3-d and
# depthwise convolutions ran as fast with a run-time width as with a fixed one, and slower on
# blocks; so did poolings. A run-time count of output channels is cut into blocks too
# (channel_blocks, inside these). Figures: docs/DECISIONS.md.
BLOCKED_OPS = ("conv_2d_nchw_fchw", "conv_2d_nhwc_hwcf", "conv_2d_nhwc_fhwc")


def applies(found, out: ir.Value) -> bool:
    """Whether `found` (a named_ops Match) slides a window of build-time size along a run-time
    width of batched images, into `out`, an identity-filled tensor."""
    return _width_axes(found, out) is not None and fill_value(out) is not None


def blocked(found, ins: list, out: ir.Value, op: Callable) -> ir.Value:
    """`op(ins, out)` run on width blocks (where `applies`)."""
    image_axis, out_axis, stride, span = _width_axes(found, out)
    identity = fill_value(out)
    count = arith.ceildivui(tensor.dim(out, index_const(out_axis)), index_const(BLOCK))
    images = _blocks(ins[0], image_axis, count, BLOCK * stride, span)
    shape = axis_sizes(out)
    shape[0], shape[out_axis] = arith.muli(as_index(shape[0]), count), BLOCK
    acc = linalg.fill(identity, outs=[tensor.empty(shape, ir.RankedTensorType(out.type).element_type)])
    return _unblocked(op([images, *ins[1:]], acc), out, out_axis, count)


def _width_axes(found, out: ir.Value) -> Optional[tuple]:
    """(image axis, result axis, stride, span of a block's input) for the last window axis of
    a BLOCKED_OPS op whose result has a run-time size there and whose window's size is known."""
    pattern = found.pattern
    if pattern.op not in BLOCKED_OPS or not all(size.is_const for size in window_sizes(found)):
        return None
    out_letters, image_tokens = pattern.out.split(), pattern.operands[0].split()
    image_axis = max(k for k, token in enumerate(image_tokens) if "+" in token)
    out_axis = out_letters.index(image_tokens[image_axis].split("+")[0])
    size = found.operand_axes[0][image_axis].vars[1].extent
    if ir.RankedTensorType(out.type).get_dim_size(out_axis) != DYNAMIC or not size.is_const:
        return None
    stride = found.strides[-1] if found.strides else 1
    dilation = found.dilations[-1] if found.dilations else 1
    return image_axis, out_axis, stride, (BLOCK - 1) * stride + (size.const - 1) * dilation + 1


def window_sizes(found) -> list:
    """The sizes of a convolution's filter other than its channel counts (its window)."""
    return [size for letter, size in zip(found.pattern.operands[1].split(), found.views[1].shape)
            if letter not in ("f", "c")]


def fill_value(out: ir.Value) -> Optional[ir.Value]:
    """The scalar `out` is filled with (its reduction's identity), or None."""
    owner = out.owner
    return owner.operands[0] if isinstance(owner, ir.OpView) and owner.operation.name == "linalg.fill" else None


def axis_sizes(value: ir.Value) -> list:
    """Each axis's size: an int where known at build time, else an index value."""
    source = ir.RankedTensorType(value.type)
    return [s if (s := source.get_dim_size(a)) != DYNAMIC else tensor.dim(value, index_const(a))
            for a in range(source.rank)]


def as_index(size) -> ir.Value:
    """A size from `axis_sizes` as an index value."""
    return index_const(size) if isinstance(size, int) else size


def static_sizes(sizes: list) -> list[int]:
    return [s if isinstance(s, int) else DYNAMIC for s in sizes]


def _blocks(value: ir.Value, axis: int, count: ir.Value, step: int, span: int) -> ir.Value:
    """[N * q, ..., span on `axis`, ...]: block b of image n is its columns b * step .. + span."""
    element = ir.RankedTensorType(value.type).element_type
    needed = arith.addi(arith.muli(arith.subi(count, index_const(1)), index_const(step)), index_const(span))
    shortfall = arith.maxsi(arith.subi(needed, tensor.dim(value, index_const(axis))), index_const(0))
    padded = zero_padded(value, axis, shortfall)
    sizes = axis_sizes(value)
    sizes[axis] = span
    rank = len(sizes)
    gathered = tensor.empty([sizes[0], count, *sizes[1:]], element)
    dims = [ir.AffineDimExpr.get(d) for d in range(rank + 1)]
    reads = [dims[0]] + [dims[1] * step + dims[a + 1] if a == axis else dims[a + 1] for a in range(1, rank)]
    op = linalg.GenericOp_([padded], [gathered],
                           [ir.AffineMap.get(rank + 1, 0, reads), ir.AffineMap.get_identity(rank + 1)],
                           [linalg.IteratorType.parallel] * (rank + 1))
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])
    static = static_sizes(sizes)
    return tensor.collapse_shape(ir.RankedTensorType.get([DYNAMIC, *static[1:]], element), op.result,
                                 _batch_groups(rank))


def _batch_groups(rank: int) -> list[list[int]]:
    """Axes (image, block) as one batch axis, the others as they are."""
    return [[0, 1]] + [[a + 1] for a in range(1, rank)]


def zero_padded(value: ir.Value, axis: int, high: ir.Value) -> ir.Value:
    source = ir.RankedTensorType(value.type)
    shape = [DYNAMIC if a == axis else source.get_dim_size(a) for a in range(source.rank)]
    static_high = [DYNAMIC if a == axis else 0 for a in range(source.rank)]
    op = tensor.PadOp(ir.RankedTensorType.get(shape, source.element_type), value, [], [high],
                      [0] * source.rank, static_high)
    block = op.regions[0].blocks.append(*([ir.IndexType.get()] * source.rank))
    with ir.InsertionPoint(block):
        tensor.YieldOp(arith.constant(source.element_type, 0.0))
    return op.result


def _unblocked(result: ir.Value, like: ir.Value, axis: int, count: ir.Value) -> ir.Value:
    """The blocks of `result` [N * q, ..., BLOCK on `axis`, ...] side by side: `like`'s shape.
    One pass reads each result column w from block w // BLOCK at w % BLOCK (a transpose of the
    blocks and a cut of the last one cost a second pass over the result)."""
    sizes = axis_sizes(like)
    element = ir.RankedTensorType(like.type).element_type
    rank = len(sizes)
    split = [sizes[0], count, *sizes[1:]]
    split[axis + 1] = BLOCK
    expanded = tensor.expand_shape(ir.RankedTensorType.get(static_sizes(split), element), result, _batch_groups(rank),
                                   [s for s in split if not isinstance(s, int)], static_sizes(split))
    dims = [ir.AffineDimExpr.get(d) for d in range(rank)]
    column = dims[axis]
    width = ir.AffineConstantExpr.get(BLOCK)
    block_of, within = ir.AffineFloorDivExpr.get(column, width), ir.AffineModExpr.get(column, width)
    reads = [dims[0], block_of] + [within if a == axis else dims[a] for a in range(1, rank)]
    op = linalg.GenericOp_([expanded], [tensor.empty(sizes, element)],
                           [ir.AffineMap.get(rank, 0, reads), ir.AffineMap.get_identity(rank)],
                           [linalg.IteratorType.parallel] * rank)
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])
    return op.result
