"""Sliding-window ops over a run-time width, run as blocks of a build-time width (llvm-cpu).

IREE 3.13 vectorizes a convolution or pooling along the result's columns only when their count
is known at build time: over a run-time width the same `linalg.conv_2d_nchw_fchw` ran 20-30x
slower, while a run-time batch or height cost nothing. So the columns are cut into
q = ceil(OW / BLOCK) blocks and an `scf.for` runs the op once a block (one dispatch each): block
b reads the image's columns b * BLOCK * stride .. + span (span: the columns BLOCK results read;
the image is zero-padded on the right where the last block runs past it) in place and writes
its BLOCK result columns into their place in a result q * BLOCK columns wide, which is cut to
OW columns where it is read. Blocks copied into a batch of N * q images and read back cost a
pass over the image and one over the result: 1.3-1.6x the `--dim` time of a layer of the
MNIST CNN, 1.05-1.2x in place; but 1.5x against 1.7x in place for 64 x 64 images, where IREE's
copy of each block's result into place (an `insert_slice` that is not contiguous gets a
dispatch of its own) costs more. With blocks of channels too (channel_blocks), one loop runs
over the pairs, so a block's result is copied once. Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc.mlir.core.shapes import index_const

DYNAMIC = ir.ShapedType.get_dynamic_size()
BLOCK = 16
# The ops a run-time width slowed down (2-d: 23-33x; 1-d: 1.8x), with the width of their wide
# blocks (2-d: 64 columns 1.3x the `--dim` time at 64 x 64, 32 1.6x, 16 1.8x; 1-d over 4296
# points: 1024 0.6x, 256 0.8x). 3-d and depthwise convolutions ran as fast with a run-time width
# as with a fixed one, and slower on blocks of 16; so did poolings. A run-time count of output
# channels of a 2-d one is cut into blocks too (channel_blocks, in the same loop). Figures:
# docs/DECISIONS.md.
BLOCKED_OPS = {"conv_2d_nchw_fchw": 64, "conv_2d_nhwc_hwcf": 64, "conv_2d_nhwc_fhwc": 64, "conv_1d_ncw_fcw": 1024}


def applies(found, out: ir.Value) -> bool:
    """Whether `found` (a named_ops Match) slides a window of build-time size along a run-time
    width of batched images, into `out`, an identity-filled tensor."""
    return _width_axes(found, out) is not None and fill_value(out) is not None


@dataclass(frozen=True)
class Blocks:
    """`count` blocks (an index value) of `length` entries on result axis `axis`, the first at
    entry `first` (an int or an index value); `operands(ins, b)` are the op's operands `ins` as
    block b reads them."""
    axis: int
    count: ir.Value
    length: int
    operands: Callable
    first: object = 0

    def offset(self, block: ir.Value) -> ir.Value:
        """Where block `block` starts on `axis`."""
        start = arith.muli(block, index_const(self.length))
        return start if self.first == 0 else arith.addi(self.first, start)

    def end(self) -> ir.Value:
        """Where the last block ends on `axis`."""
        return self.offset(self.count)


def columns(found, ins: list, out: ir.Value) -> list:
    """The blocks of result columns (where `applies`), one Blocks a loop: floor(OW / wide) blocks
    of the op's wide length, then ceil(rest / BLOCK) blocks of BLOCK; each reads its columns of the
    image (from column first * stride, span of them), zero-padded on the right to fit the last."""
    image_axis, out_axis, stride, reach = _width_axes(found, out)
    wide_length = BLOCKED_OPS[found.pattern.op]
    width = tensor.dim(out, index_const(out_axis))
    wide = arith.divui(width, index_const(wide_length))
    first = arith.muli(wide, index_const(wide_length))
    narrow = arith.ceildivui(arith.subi(width, first), index_const(BLOCK))
    end = arith.addi(first, arith.muli(narrow, index_const(BLOCK)))
    needed = arith.addi(arith.muli(arith.subi(end, index_const(1)), index_const(stride)), index_const(reach))
    shortfall = arith.maxsi(arith.subi(needed, tensor.dim(ins[0], index_const(image_axis))), index_const(0))
    padded = zero_padded(ins[0], image_axis, shortfall)

    def blocks(count: ir.Value, length: int, start) -> Blocks:
        def operands(current: list, block: ir.Value) -> list:
            column = arith.muli(this.offset(block), index_const(stride))
            return [slice_of(padded, image_axis, column, (length - 1) * stride + reach), *current[1:]]
        this = Blocks(out_axis, count, length, operands, start)
        return this
    return [blocks(wide, wide_length, 0), blocks(narrow, BLOCK, first)]


def in_blocks(out: ir.Value, loops: list, ins: list, op: Callable) -> ir.Value:
    """`op(ins, out)` run once a combination of the blocks of each of `loops` (lists of Blocks;
    `out`, identity-filled, with each block's length on its axis), one `scf.for` a list over
    its combinations (IREE resolves the sizes of a loop's carried tensor, not those of one
    carried through two nested loops): each result is written in place into one result that
    reaches the end of the last loop's blocks on their axes, cut to `out`'s sizes."""
    sizes = axis_sizes(out)
    every = list(sizes)
    for b in loops[-1]:
        every[b.axis] = b.end()
    result = tensor.empty(every, ir.RankedTensorType(out.type).element_type)
    for blocks in loops:
        result = _loop(out, result, blocks, ins, op)
    return cut(result, out, sizes)


def _loop(out: ir.Value, into: ir.Value, blocks: list, ins: list, op: Callable) -> ir.Value:
    """`into` with `op`'s result on each combination of `blocks` written in place, in one loop."""
    block = axis_sizes(out)
    total = index_const(1)
    for b in blocks:
        block[b.axis] = b.length
        total = arith.muli(total, b.count)
    element = ir.RankedTensorType(out.type).element_type
    loop = scf.ForOp(index_const(0), total, index_const(1), [into])
    with ir.InsertionPoint(loop.body):
        rest, operands, offsets = loop.induction_variable, ins, {}
        for b in reversed(blocks):          # the last of `blocks` varies fastest
            index = arith.remui(rest, b.count)
            rest = arith.divui(rest, b.count)
            operands = b.operands(operands, index)
            offsets[b.axis] = b.offset(index)
        filled = linalg.fill(fill_value(out), outs=[tensor.empty(block, element)])
        scf.yield_([inserted(op(operands, filled), loop.inner_iter_args[0], offsets)])
    return loop.results[0]


def slice_of(value: ir.Value, axis: int, first: ir.Value, length: int) -> ir.Value:
    """`length` entries of `value` on `axis` from `first`."""
    sizes = axis_sizes(value)
    sizes[axis] = length
    source = ir.RankedTensorType(value.type)
    offsets = [first if a == axis else 0 for a in range(source.rank)]
    return tensor.extract_slice(ir.RankedTensorType.get(static_sizes(sizes), source.element_type), value,
                                *slice_operands(offsets, sizes))


def inserted(block: ir.Value, into: ir.Value, offsets: dict) -> ir.Value:
    """`block` written into `into` from `offsets[axis]` on the axes given, from 0 on the others."""
    sizes = axis_sizes(block)
    return tensor.insert_slice(block, into, *slice_operands([offsets.get(a, 0) for a in range(len(sizes))], sizes))


def cut(value: ir.Value, like: ir.Value, sizes: list) -> ir.Value:
    """The first `sizes` entries of `value` on each axis, of `like`'s type."""
    return tensor.extract_slice(like.type, value, *slice_operands([0] * len(sizes), sizes))


def slice_operands(offsets: list, sizes: list) -> tuple:
    """A unit-stride slice's offsets, sizes and strides operands, dynamic ones then static ones;
    an int in `offsets` or `sizes` is known at build time, an index value is not."""
    dynamic = lambda values: [v for v in values if not isinstance(v, int)]
    return dynamic(offsets), dynamic(sizes), [], static_sizes(offsets), static_sizes(sizes), [1] * len(sizes)


def _width_axes(found, out: ir.Value) -> Optional[tuple]:
    """(image axis, result axis, stride, reach: the input columns one result reads) for the last window axis of
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
    return image_axis, out_axis, stride, (size.const - 1) * dilation + 1


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
