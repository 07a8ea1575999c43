"""2-d convolutions with a run-time count of output channels, run as a loop over blocks of a
build-time count (llvm-cpu).

IREE 3.13 tiles the output channels of a convolution by einc's vector step (8, cpu_convolutions)
and runs a tile of run-time size as scalar code: with the output channels a run-time size, the
MNIST CNN's second layer ran 25-40x slower than its `--dim` twin, while a run-time count of
input channels (summed one at a time) cost nothing. So the filter is zero-padded on its output
channels to q = ceil(F / BLOCK) blocks, an `scf.for` runs the op once a block on the block's
filter slice (one dispatch each, BLOCK channels known at build time) and writes its results
into the block's place, and the result is cut to F channels. A block is einc's vector step:
blocks of 16 cost 2x on 8 channels and gained under 10% on 64. Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc.mlir.core.shapes import index_const
from einc.mlir.dense import width_blocks

DYNAMIC = ir.ShapedType.get_dynamic_size()
BLOCK = 8


def applies(found, out: ir.Value) -> bool:
    """Whether `found` (a named_ops Match) is a width_blocks.BLOCKED_OPS convolution whose
    result `out`, an identity-filled tensor, has a run-time count of output channels."""
    return _channel_axes(found, out) is not None and width_blocks.fill_value(out) is not None


def blocked(found, ins: list, out: ir.Value, op: Callable) -> ir.Value:
    """`op(ins, out)` run once a block of BLOCK output channels (where `applies`)."""
    filter_axis, out_axis = _channel_axes(found, out)
    image, weights = ins
    count = arith.ceildivui(tensor.dim(weights, index_const(filter_axis)), index_const(BLOCK))
    length = arith.muli(count, index_const(BLOCK))
    padded = _padded_to(weights, filter_axis, length)
    sizes = width_blocks.axis_sizes(out)
    all_blocks = list(sizes)
    all_blocks[out_axis] = length
    element = ir.RankedTensorType(out.type).element_type
    loop = scf.ForOp(index_const(0), count, index_const(1), [tensor.empty(all_blocks, element)])
    with ir.InsertionPoint(loop.body):
        first = arith.muli(loop.induction_variable, index_const(BLOCK))
        block = list(sizes)
        block[out_axis] = BLOCK
        filled = linalg.fill(width_blocks.fill_value(out), outs=[tensor.empty(block, element)])
        result = op([image, _slice(padded, filter_axis, first)], filled)
        scf.yield_([_inserted(result, loop.inner_iter_args[0], out_axis, first, block)])
    return _cut(loop.results[0], out, sizes)


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


def _slice(value: ir.Value, axis: int, first: ir.Value) -> ir.Value:
    """BLOCK entries of `value` on `axis` from `first`."""
    sizes = width_blocks.axis_sizes(value)
    sizes[axis] = BLOCK
    source = ir.RankedTensorType(value.type)
    offsets = [first if a == axis else 0 for a in range(source.rank)]
    return tensor.extract_slice(ir.RankedTensorType.get(width_blocks.static_sizes(sizes), source.element_type), value,
                                *_slice_operands(offsets, sizes))


def _inserted(block: ir.Value, into: ir.Value, axis: int, first: ir.Value, sizes: list) -> ir.Value:
    offsets = [first if a == axis else 0 for a in range(len(sizes))]
    return tensor.insert_slice(block, into, *_slice_operands(offsets, sizes))


def _cut(value: ir.Value, like: ir.Value, sizes: list) -> ir.Value:
    """The first `sizes` entries of `value` on each axis, of `like`'s type."""
    return tensor.extract_slice(like.type, value, *_slice_operands([0] * len(sizes), sizes))


def _slice_operands(offsets: list, sizes: list) -> tuple:
    """A unit-stride slice's offsets, sizes and strides operands, dynamic ones then static ones;
    an int in `offsets` or `sizes` is known at build time, an index value is not."""
    dynamic = lambda values: [v for v in values if not isinstance(v, int)]
    static = width_blocks.static_sizes
    return dynamic(offsets), dynamic(sizes), [], static(offsets), static(sizes), [1] * len(sizes)
