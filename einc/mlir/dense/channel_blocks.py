"""1-d and 2-d convolutions with a run-time count of output channels, run as a loop over blocks
of a build-time count (llvm-cpu).

IREE 3.13 tiles the output channels of a convolution by einc's vector step (8, cpu_convolutions)
and runs a tile of run-time size as scalar code: with the output channels a run-time size, the
MNIST CNN's second layer ran 25-40x slower than its `--dim` twin, while a run-time count of
input channels (summed one at a time) cost nothing. So the filter is zero-padded on its output
channels to q = ceil(F / BLOCK) blocks, an `scf.for` runs the op once a block on the block's
filter slice (one dispatch each, BLOCK channels known at build time) and writes its results
into the block's place, and the result is cut to F channels; with width blocks too, one loop
runs over both (width_blocks.in_blocks). A block is einc's vector step:
blocks of 16 cost 2x on 8 channels and gained under 10% on 64; channels-last convolutions,
whose step is 16 channels, take blocks of 16 and then of 8 for the rest (LENGTHS). A 1-d
convolution with the output channels and length named ran 2.45x its `--dim` time as IREE has
it, 0.98x on blocks. Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, tensor

from einc.mlir.core.shapes import index_const
from einc.mlir.dense import width_blocks

DYNAMIC = ir.ShapedType.get_dynamic_size()
BLOCK = 8
# The lengths of the blocks, longest first (as many whole blocks of each as fit, then blocks of
# the last that cover the rest): channels-last convolutions vectorize the output channels, 16 a
# step (cpu_convolutions), and ran 1.6x their `--dim` time on blocks of 8 against 1.26x on blocks
# of 16 with 16 channels, but 2.0x on blocks of 16 against 1.23x on blocks of 8 with 8 channels.
LENGTHS = {"conv_2d_nhwc_hwcf": (16, BLOCK), "conv_2d_nhwc_fhwc": (16, BLOCK)}


def applies(found, out: ir.Value) -> bool:
    """Whether `found` (a named_ops Match) is a width_blocks.BLOCKED_OPS convolution whose
    result `out`, an identity-filled tensor, has a run-time count of output channels."""
    return _channel_axes(found, out) is not None and width_blocks.fill_value(out) is not None


def channels(found, ins: list, out: ir.Value) -> list:
    """The blocks of output channels (where `applies`), one Blocks a length of LENGTHS (BLOCK by
    default): block b reads its slice of the filter, zero-padded to whole blocks."""
    filter_axis, out_axis = _channel_axes(found, out)
    spans, first = width_blocks.block_spans(tensor.dim(ins[1], index_const(filter_axis)), lengths(found))
    padded = _padded_to(ins[1], filter_axis, first)

    def blocks(count: ir.Value, length: int, start: ir.Value) -> width_blocks.Blocks:
        offset = lambda index: arith.addi(start, arith.muli(index, index_const(length)))

        def operands(current: list, index: ir.Value) -> list:
            return [current[0], width_blocks.slice_of(padded, filter_axis, offset(index), length)]
        return width_blocks.Blocks(out_axis, count, length, operands, offset, first)
    return [blocks(*span) for span in spans]


def lengths(found) -> tuple:
    """The lengths of `found`'s blocks of output channels, longest first."""
    return LENGTHS.get(found.pattern.op, (BLOCK,))


def _channel_axes(found, out: ir.Value) -> Optional[tuple]:
    """(filter axis, result axis) of the output channels, where the result has a run-time count
    of them and the filter's window is of build-time size."""
    pattern = found.pattern
    if pattern.op not in width_blocks.BLOCKED_OPS:
        return None
    out_axis = pattern.out.split().index("f")
    if ir.RankedTensorType(out.type).get_dim_size(out_axis) != DYNAMIC:
        return None
    if not all(size.is_const for size in width_blocks.window_sizes(found)):
        return None
    return pattern.operands[1].split().index("f"), out_axis


def _padded_to(value: ir.Value, axis: int, length: ir.Value) -> ir.Value:
    """`value` zero-padded at the end of `axis` to `length`."""
    high = arith.subi(length, tensor.dim(value, index_const(axis)))
    return width_blocks.zero_padded(value, axis, high)
