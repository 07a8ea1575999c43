"""Sliding-window ops over a run-time width, run as blocks of a build-time width (llvm-cpu).

IREE 3.13 vectorizes a convolution or pooling along the result's columns only when their count
is known at build time: over a run-time width the same `linalg.conv_2d_nchw_fchw` ran 20-30x
slower, while a run-time batch or height cost nothing. So the columns are cut into
q = ceil(OW / BLOCK) blocks and an `scf.for` runs the op once a block (one dispatch each): block
b reads the image's columns b * BLOCK * stride .. + span (span: the columns BLOCK results read;
the image is zero-padded on the right where the last block runs past it) in place and writes
its BLOCK result columns into their place in a result q * BLOCK columns wide, which is cut to
OW columns where it is read. Blocks copied into a batch of N * q images and read back cost a
pass over the image and one over the result: 1.5-1.85x the `--dim` time of a layer of the
MNIST CNN, 1.2-1.26x in place. Figures: docs/DECISIONS.md (named dims).
"""
from __future__ import annotations

from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

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
    """`op(ins, out)` run once a block of BLOCK result columns (where `applies`)."""
    image_axis, out_axis, stride, span = _width_axes(found, out)
    count = arith.ceildivui(tensor.dim(out, index_const(out_axis)), index_const(BLOCK))
    step = BLOCK * stride
    padded = _padded_for(ins[0], image_axis, count, step, span)

    def block_result(block: ir.Value, filled: ir.Value) -> ir.Value:
        image = slice_of(padded, image_axis, arith.muli(block, index_const(step)), span)
        return op([image, *ins[1:]], filled)
    return side_by_side(out, out_axis, count, BLOCK, block_result)


def side_by_side(out: ir.Value, axis: int, count: ir.Value, length: int, block_result: Callable) -> ir.Value:
    """An `scf.for` over blocks b in 0..count of `length` entries on `axis` of a result like
    `out`: `block_result(b, filled)` (filled: `out`'s identity, `length` entries on `axis`) is
    written in place at b * length, and the whole is cut to `out`'s sizes."""
    sizes = axis_sizes(out)
    element = ir.RankedTensorType(out.type).element_type
    every = list(sizes)
    every[axis] = arith.muli(count, index_const(length))
    loop = scf.ForOp(index_const(0), count, index_const(1), [tensor.empty(every, element)])
    with ir.InsertionPoint(loop.body):
        block = list(sizes)
        block[axis] = length
        filled = linalg.fill(fill_value(out), outs=[tensor.empty(block, element)])
        result = block_result(loop.induction_variable, filled)
        first = arith.muli(loop.induction_variable, index_const(length))
        scf.yield_([inserted(result, loop.inner_iter_args[0], axis, first)])
    return cut(loop.results[0], out, sizes)


def _padded_for(value: ir.Value, axis: int, count: ir.Value, step: int, span: int) -> ir.Value:
    """`value` zero-padded on `axis` so that `count` blocks of `span` entries, `step` apart, fit."""
    needed = arith.addi(arith.muli(arith.subi(count, index_const(1)), index_const(step)), index_const(span))
    shortfall = arith.maxsi(arith.subi(needed, tensor.dim(value, index_const(axis))), index_const(0))
    return zero_padded(value, axis, shortfall)


def slice_of(value: ir.Value, axis: int, first: ir.Value, length: int) -> ir.Value:
    """`length` entries of `value` on `axis` from `first`."""
    sizes = axis_sizes(value)
    sizes[axis] = length
    source = ir.RankedTensorType(value.type)
    offsets = [first if a == axis else 0 for a in range(source.rank)]
    return tensor.extract_slice(ir.RankedTensorType.get(static_sizes(sizes), source.element_type), value,
                                *slice_operands(offsets, sizes))


def inserted(block: ir.Value, into: ir.Value, axis: int, first: ir.Value) -> ir.Value:
    """`block` written into `into` from `first` on `axis` (from 0 on the others)."""
    sizes = axis_sizes(block)
    offsets = [first if a == axis else 0 for a in range(len(sizes))]
    return tensor.insert_slice(block, into, *slice_operands(offsets, sizes))


def cut(value: ir.Value, like: ir.Value, sizes: list) -> ir.Value:
    """The first `sizes` entries of `value` on each axis, of `like`'s type."""
    return tensor.extract_slice(like.type, value, *slice_operands([0] * len(sizes), sizes))


def slice_operands(offsets: list, sizes: list) -> tuple:
    """A unit-stride slice's offsets, sizes and strides operands, dynamic ones then static ones;
    an int in `offsets` or `sizes` is known at build time, an index value is not."""
    dynamic = lambda values: [v for v in values if not isinstance(v, int)]
    return dynamic(offsets), dynamic(sizes), [], static_sizes(offsets), static_sizes(sizes), [1] * len(sizes)


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


def static_sizes(sizes: list) -> list[int]:
    return [s if isinstance(s, int) else DYNAMIC for s in sizes]


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
