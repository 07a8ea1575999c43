"""Sliding-window ops over a run-time width, run as blocks of a build-time width (llvm-cpu).

IREE 3.13 vectorizes a convolution or pooling along the result's columns only when their count
is known at build time: over a run-time width the same `linalg.conv_2d_nchw_fchw` ran 20-30x
slower, while a run-time batch or height cost nothing. So the columns are cut into
q = ceil(OW / BLOCK) blocks, and the blocks become images of the batch: block b of image n is
the columns b * BLOCK * stride .. + span of the image (span: the columns BLOCK results read;
zero-padded on the right where the last block runs past the image), copied into a batch of
N * q images `span` columns wide. The op runs on that batch with a build-time result width,
and the results' blocks are put back side by side and cut to OW columns. The copies cost a
pass over the image and one over the result. Figures: docs/DECISIONS.md (named dims).
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
# blocks; so did poolings; a filter of run-time size (channel counts) keeps the op slow
# whatever its width. Figures: docs/DECISIONS.md.
BLOCKED_OPS = ("conv_2d_nchw_fchw", "conv_2d_nhwc_hwcf", "conv_2d_nhwc_fhwc")


def applies(found, out: ir.Value) -> bool:
    """Whether `found` (a named_ops Match) slides a window of build-time size along a run-time
    width of batched images, into `out`, an identity-filled tensor."""
    return _width_axes(found, out) is not None and _fill_value(out) is not None


def blocked(found, ins: list, out: ir.Value, op: Callable) -> ir.Value:
    """`op(ins, out)` run on width blocks (where `applies`)."""
    image_axis, out_axis, stride, span = _width_axes(found, out)
    identity = _fill_value(out)
    count = arith.ceildivui(tensor.dim(out, index_const(out_axis)), index_const(BLOCK))
    images = _blocks(ins[0], image_axis, count, BLOCK * stride, span)
    shape = _sizes(out)
    batch = index_const(shape[0]) if isinstance(shape[0], int) else shape[0]     # a fixed batch too
    shape[0], shape[out_axis] = arith.muli(batch, count), BLOCK
    acc = linalg.fill(identity, outs=[tensor.empty(shape, ir.RankedTensorType(out.type).element_type)])
    return _unblocked(op([images, *ins[1:]], acc), out, out_axis, count)


def _width_axes(found, out: ir.Value) -> Optional[tuple]:
    """(image axis, result axis, stride, span of a block's input) for the last window axis of
    a BLOCKED_OPS op whose result has a run-time size there and whose filter's size is known."""
    pattern = found.pattern
    if pattern.op not in BLOCKED_OPS or not all(size.is_const for size in found.views[1].shape):
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


def _fill_value(out: ir.Value) -> Optional[ir.Value]:
    """The scalar `out` is filled with (its reduction's identity), or None."""
    owner = out.owner
    return owner.operands[0] if isinstance(owner, ir.OpView) and owner.operation.name == "linalg.fill" else None


def _sizes(value: ir.Value) -> list:
    """Each axis's size: an int where known at build time, else an index value."""
    source = ir.RankedTensorType(value.type)
    return [s if (s := source.get_dim_size(a)) != DYNAMIC else tensor.dim(value, index_const(a))
            for a in range(source.rank)]


def _static(sizes: list) -> list[int]:
    return [s if isinstance(s, int) else DYNAMIC for s in sizes]


def _blocks(value: ir.Value, axis: int, count: ir.Value, step: int, span: int) -> ir.Value:
    """[N * q, ..., span on `axis`, ...]: block b of image n is its columns b * step .. + span."""
    element = ir.RankedTensorType(value.type).element_type
    needed = arith.addi(arith.muli(arith.subi(count, index_const(1)), index_const(step)), index_const(span))
    shortfall = arith.maxsi(arith.subi(needed, tensor.dim(value, index_const(axis))), index_const(0))
    padded = _zero_padded(value, axis, shortfall)
    sizes = _sizes(value)
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
    static = _static(sizes)
    return tensor.collapse_shape(ir.RankedTensorType.get([DYNAMIC, *static[1:]], element), op.result,
                                 _batch_groups(rank))


def _batch_groups(rank: int) -> list[list[int]]:
    """Axes (image, block) as one batch axis, the others as they are."""
    return [[0, 1]] + [[a + 1] for a in range(1, rank)]


def _zero_padded(value: ir.Value, axis: int, high: ir.Value) -> ir.Value:
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
    """The blocks of `result` [N * q, ..., BLOCK on `axis`, ...] side by side: `like`'s shape."""
    sizes = _sizes(like)
    element = ir.RankedTensorType(like.type).element_type
    rank = len(sizes)
    split = [sizes[0], count, *sizes[1:]]
    split[axis + 1] = BLOCK
    expanded = tensor.expand_shape(ir.RankedTensorType.get(_static(split), element), result, _batch_groups(rank),
                                   [s for s in split if not isinstance(s, int)], _static(split))
    order = [0] + list(range(2, axis + 1)) + [1] + list(range(axis + 1, rank + 1))
    moved = [split[k] for k in order]
    side_by_side = linalg.transpose(expanded, outs=[tensor.empty(moved, element)], permutation=order)
    joined = _static(moved[:axis]) + [DYNAMIC] + _static(moved[axis + 2:])
    groups = [[a] for a in range(axis)] + [[axis, axis + 1]] + [[a + 1] for a in range(axis + 1, rank)]
    rows = tensor.collapse_shape(ir.RankedTensorType.get(joined, element), side_by_side, groups)
    cut = _static(sizes)
    return tensor.extract_slice(like.type, rows, [], [s for s in sizes if not isinstance(s, int)], [],
                                [0] * rank, cut, [1] * rank)
