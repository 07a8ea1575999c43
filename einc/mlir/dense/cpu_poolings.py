"""Poolings on llvm-cpu as one elementwise pass over the window's shifted views of the image.

IREE 3.13 runs a `linalg.pooling_*` op as a convolution: over a run-time width it vectorizes 2
channels by 1 column (8 by 8 at a fixed width), and with the channels last and a window axis of
run-time size it ran 4.6-5.9x its fixed-size time. Such a pooling is written out here instead:
one strided `tensor.extract_slice` of the image per window point (offset by the point times the
dilation, every stride-th point), combined by one elementwise `linalg.generic` in the op's order
of the window. IREE folds the slices into the dispatch's reads of the image and vectorizes the
generic along the result's last axis, 16 a step, with a remainder loop for a run-time length.
Written out where measured faster (`_faster_written_out`): a 3x3 average pool (NCHW) ran 3x
faster than the op at a fixed width and 1.0-1.1x that at a run-time one. Windows of more than
WINDOW_POSITIONS points keep the op, as do targets without `unrolled_poolings` (Vulkan).
Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from itertools import product
from math import prod
from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.mlir.core.cpu_tiles import compilation_info
from einc.mlir.core.shapes import index_const
from einc.mlir.dense import named_ops, pooling_rows
from einc.mlir.dense.named_ops import Match, emit as emit_named

DYNAMIC = ir.ShapedType.get_dynamic_size()
# a slice (a read of the image) per point of the window: a global pool over a large window
# would read the image that many times in one dispatch
WINDOW_POSITIONS = 64
VECTOR, DISTRIBUTED, DISTRIBUTED_CHANNELS = 16, 64, 2
# channels last at fixed sizes, a 3x3 average pool written out against IREE's op: 3 channels
# 0.20 against 0.81 ms, 8 channels 0.87 against 0.45 (docs/DECISIONS.md)
FEW_CHANNELS = 8
COMBINERS = {"sum": arith.addf, "max": arith.maximumf, "min": arith.minimumf}


def emit(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """The pooling `found` written out as shifted slices, or None where the named op stays."""
    window = _window(lw, found)
    if window is None:
        return None
    return emit_named(lw, found, init, build=lambda ins, out: _pooled(found, window, ins[0], out))


def form(lw, found: Match) -> str:
    """The form `emit` gave `found` (named_ops.FORMS), for `einc build --explain`."""
    return named_ops.BARE_WRITTEN_OUT if found.pattern.written_only else named_ops.WRITTEN_OUT


def as_before(lw, found: Match, ins: list, out: ir.Value) -> ir.Value:
    """The pooling `found` of the image `ins[0]` into `out` as this rule or else IREE's op
    computes it (pooling_pairs, for a width it cannot take)."""
    window = _window(lw, found)
    if window is not None:
        return _pooled(found, window, ins[0], out)
    return getattr(linalg, found.pattern.op)(*ins, outs=[out], strides=found.strides, dilations=found.dilations)


def _window(lw, found: Match) -> Optional[list[int]]:
    """The sizes of the window of `found` where it is a pooling `emit` writes out, else None."""
    if not lw.target.unrolled_poolings or not found.pattern.op.startswith("pooling_"):
        return None
    window = [a.vars[1].extent for a in found.operand_axes[0] if a.stride]
    if not all(w.is_const for w in window) or prod(w.const for w in window) > WINDOW_POSITIONS:
        return None
    return [w.const for w in window] if found.written_out_only or _faster_written_out(found) else None


def _faster_written_out(found: Match) -> bool:
    """Whether the written-out form was measured faster than IREE's op for `found`'s layout and
    sizes: channels first with the window read point by point along the rows, always; every
    few points, only over a run-time length in 1-d (IREE's op gathers such a row with contiguous
    loads and shuffles, the slices a point at a time); channels last, with a window axis of
    run-time size, or fewer than FEW_CHANNELS of them (at fixed sizes IREE's op reuses each load
    across the window, along the channels a vector step)."""
    axes = found.operand_axes[0]             # a pooling's result axes are its operand's, in order
    last = axes[-1]
    windowed = [not out.vars[0].extent.is_const for out, axis in zip(found.out, axes, strict=True) if axis.stride]
    if not last.stride:
        channels = found.out[-1].vars[0].extent
        return any(windowed) or (channels.is_const and channels.const < FEW_CHANNELS)
    if last.stride == 1:
        return True
    return len(windowed) == 1 and windowed[0]


def _pooled(found: Match, window: list[int], image: ir.Value, out: ir.Value) -> ir.Value:
    """`out` (shaped as the op's result, same axis order as `image`) computed from `image`."""
    axes = found.operand_axes[0]
    windowed = [k for k, a in enumerate(axes) if a.stride]
    out_type = ir.RankedTensorType(out.type)
    sizes = [out_type.get_dim_size(k) for k in range(out_type.rank)]
    dynamic = [tensor.dim(out, index_const(k)) for k, s in enumerate(sizes) if s == DYNAMIC]
    # the window's points in the op's order (the last axis fastest), those its mask keeps
    slices = [_shifted(image, out_type, dynamic, windowed, found, position)
              for position in product(*(range(size) for size in window)) if _kept(found, position)]
    if not slices:
        return out                  # a mask keeping no point: the reduction's identity
    combine = COMBINERS[found.pattern.kind]
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(out_type.rank))
    op = linalg.GenericOp([out.type], slices, [out], ir.ArrayAttr.get([identity] * (len(slices) + 1)),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * out_type.rank))
    block = op.regions[0].blocks.append(*[out_type.element_type] * (len(slices) + 1))
    with ir.InsertionPoint(block):
        acc = block.arguments[0]
        for value in list(block.arguments)[1:len(slices)]:
            acc = combine(acc, value)
        linalg.YieldOp([acc])
    if axes[-1].stride > 1:
        op.attributes["compilation_info"] = _strided_tiles(found.pattern.out.split())
    elif not axes[-1].stride and windowed[-1] == len(axes) - 2 and axes[-2].stride == 1:
        pooling_rows.mark(op)
    return op.result


def _kept(found: Match, position: tuple) -> bool:
    """Whether the mask of `found`, if any, keeps the window point at `position` (one offset per
    windowed axis, in the operand's order)."""
    if found.mask is None:
        return True
    variables, keeps = found.mask
    at = [0] * len(variables)
    for axis, offset in zip((a for a in found.operand_axes[0] if a.stride), position):
        at[variables.index(axis.vars[1])] = offset
    return bool(keeps[tuple(at)])


def _strided_tiles(letters: list[str]) -> ir.Attribute:
    """IREE's own tiles for a pooling read every few points along its last axis (a vector step
    gathers them), with a partial step peeled: IREE masks every step of such a pass (its axes
    are not all of run-time size), and a masked gather is a loop over its lanes."""
    distribution = [DISTRIBUTED_CHANNELS if letter == "c" else DISTRIBUTED for letter in letters]
    vector = [1] * (len(letters) - 1) + [VECTOR]
    return compilation_info({"distribution": distribution, "vector_common_parallel": vector},
                            "DoubleTilingExpert", peeled=True)


def _shifted(image: ir.Value, out_type: ir.RankedTensorType, dynamic: list, windowed: list[int], found: Match,
             position: tuple) -> ir.Value:
    """The points of `image` that window `position` reads for each point of a result of type
    `out_type` (`dynamic`: its run-time sizes)."""
    offsets, strides = [0] * out_type.rank, [1] * out_type.rank
    for k, p, stride, dilation in zip(windowed, position, found.strides, found.dilations):
        offsets[k], strides[k] = p * dilation, stride
    sizes = [out_type.get_dim_size(k) for k in range(out_type.rank)]
    return tensor.extract_slice(out_type, image, [], dynamic, [], offsets, sizes, strides)
