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
blocks of 16 cost 2x on 8 channels and gained under 10% on 64. A 1-d convolution with the
output channels and length named ran 2.45x its `--dim` time as IREE has it, 0.98x on blocks.
Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, tensor

from einc.mlir.core.shapes import index_const
from einc.mlir.dense import width_blocks

DYNAMIC = ir.ShapedType.get_dynamic_size()
BLOCK = 8


def applies(found, out: ir.Value) -> bool:
    """Whether `found` (a named_ops Match) is a width_blocks.BLOCKED_OPS convolution whose
    result `out`, an identity-filled tensor, has a run-time count of output channels."""
    return _channel_axes(found, out) is not None and width_blocks.fill_value(out) is not None


def channels(found, ins: list, out: ir.Value) -> width_blocks.Blocks:
    """The blocks of BLOCK output channels (where `applies`): block b reads its slice of the
    filter, zero-padded to whole blocks."""
    filter_axis, out_axis = _channel_axes(found, out)
    count = arith.ceildivui(tensor.dim(ins[1], index_const(filter_axis)), index_const(BLOCK))
    padded = _padded_to(ins[1], filter_axis, arith.muli(count, index_const(BLOCK)))

    def operands(current: list, block: ir.Value) -> list:
        first = arith.muli(block, index_const(BLOCK))
        return [current[0], width_blocks.slice_of(padded, filter_axis, first, BLOCK)]
    return width_blocks.Blocks(out_axis, count, BLOCK, operands, lambda block: arith.muli(block, index_const(BLOCK)),
                               arith.muli(count, index_const(BLOCK)))


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
