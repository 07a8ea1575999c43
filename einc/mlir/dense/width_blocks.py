"""Convolutions over a run-time width, run as blocks of build-time widths (llvm-cpu).

IREE 3.13 vectorizes a convolution along the result's columns only when their count is known at
build time: over a run-time width the same `linalg.conv_2d_nchw_fchw` ran 20-30x slower, while a
run-time batch or height cost nothing. So the OW result columns are cut into blocks of a few
build-time lengths, longest first (2-d: 64, 32, 16, then one row of the tiles' vector step
where that is narrower, AVX2's 8): as many whole blocks of each as fit in the columns left, then
blocks of 16 that cover the rest (all but at most a row, which a row block covers), the last one
moved left to end at column OW (it recomputes columns of the block before it). One `scf.for`
a length runs the op once a block (one dispatch each) on the block's columns of the image, read
in place, and writes its result columns into their place in the result. Every block reads inside the image and writes
inside the result (a cut of a wider result was one more copy of the whole result). IREE copies
each block's result into place with a dispatch of its own (the slice is not contiguous), so
fewer, longer blocks cost less: the 64 x 64 conv layer of issue 19 ran 1.8x its `--dim` time
on blocks of 16, 1.3x on blocks of 64. With blocks of channels too (channel_blocks), each loop runs over the pairs, so a
block's result is copied once. A width equal to one of the block lengths runs the op once on
that build-time width, chosen by an `scf.if` (no copy: a dilated 3x3 convolution at 32 columns
1.1x its `--dim` time, 1.5x on one block); one narrower than 16 columns on 16 of a padded
image, cut. Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc.mlir.core.marks import mark
from einc.mlir.core.shapes import index_const

DYNAMIC = ir.ShapedType.get_dynamic_size()
BLOCK = 16
# The ops a run-time width slowed down (2-d: 23-33x; 1-d: 1.8x) and the lengths of their blocks
# of columns, longest first (the last is BLOCK). At 64 x 64, 1.3x the `--dim` time on blocks of
# 64, 1.6x on blocks of 32, 1.8x on blocks of 16; at 100 columns 1.25x with blocks of 32 between
# 64 and 16, 1.4-1.7x without; a 1-d one over 4296 points 0.6x on blocks of 1024, 0.8x of 256,
# 0.35-0.42x on blocks of 1024 and 64 (at 298 points 0.23x, against 0.40x without the 64).
# 3-d and depthwise convolutions ran as fast with a run-time width as with a fixed one, and
# slower on blocks of 16; so did poolings (on blocks of 64 too). A run-time count of output
# channels is cut into blocks too (channel_blocks, in the same loops). Figures:
# docs/DECISIONS.md.
# the attribute on the `scf.if` of `by_width` (block_epilogues moves an elementwise consumer
# of its result into it, then drops the attribute)
CHOICE = "einc.width_choice"
TWO_D = (64, 32, BLOCK)
BLOCKED_OPS = {"conv_2d_nchw_fchw": TWO_D, "conv_2d_nhwc_hwcf": TWO_D, "conv_2d_nhwc_fhwc": TWO_D,
               "conv_1d_ncw_fcw": (1024, 64, BLOCK)}


def applies(found, out: ir.Value) -> bool:
    """Whether `found` (a named_ops Match) slides a window of build-time size along a run-time
    width of batched images, into `out`, an identity-filled tensor."""
    return _width_axes(found, out) is not None and fill_value(out) is not None


@dataclass(frozen=True)
class Blocks:
    """`count` blocks (an index value) of `length` entries on result axis `axis`, block b from
    entry `offset(b)`; `operands(ins, b)` are the op's operands `ins` as block b reads them;
    `extent`: the entries the blocks span there (an index value) where it can exceed the
    result's, None where they stay inside it."""
    axis: int
    count: ir.Value
    length: int
    operands: Callable
    offset: Callable
    extent: Optional[ir.Value] = None


def block_lengths(op: str, row: int) -> tuple[int, ...]:
    """The lengths of `op`'s blocks of columns, longest first, for code whose vector step
    computes a row of `row` columns: BLOCKED_OPS's, then rows where a row is narrower than
    their last (AVX2's 8 columns), so that a width of whole rows runs on whole rows."""
    blocked = BLOCKED_OPS[op]
    return (*blocked, row) if row < blocked[-1] else blocked


def exact_widths(op: str, lengths: tuple) -> tuple[int, ...]:
    """The widths `by_width` runs `op` once on, at build time: its block `lengths`, and where
    their last is a row narrower than BLOCK (AVX2's 8 columns) a 2-d op's every whole count of
    rows up to its longest block (a width of several blocks ran 1.5-1.8x its `--dim` time at 40
    and 56 columns, a dispatch and a copy a block; each such width is one more dispatch built)."""
    row = lengths[-1]
    if row >= BLOCK or BLOCKED_OPS[op] != TWO_D:
        return lengths
    return tuple(sorted(set(lengths) | set(range(row, TWO_D[0] + 1, row)), reverse=True))


def by_width(found, ins: list, out: ir.Value, build: Callable, lengths: tuple) -> ir.Value:
    """`build(ins, out)` (which cuts `columns` where the width is a run-time one) chosen by the
    result's width at run time (`scf.if`s): where it is one of `exact_widths` of `lengths` (the
    op's block lengths), on a result of that build-time width (no blocks: IREE copied each block's result
    into place, up to a third of the time); where it is narrower than BLOCK, on the image
    zero-padded for BLOCK columns, cut to `out`'s (a pad is a pass over the image); else on
    blocks."""
    image_axis, out_axis, stride, reach = _width_axes(found, out)
    width = tensor.dim(out, index_const(out_axis))

    def on_image(columns: int, image: ir.Value) -> ir.Value:
        # build on a result of `columns` build-time columns, read from the columns of `image`
        # they need
        sizes = axis_sizes(out)
        sizes[out_axis] = columns
        element = ir.RankedTensorType(out.type).element_type
        image = slice_of(image, image_axis, index_const(0), (columns - 1) * stride + reach)
        return build([image, *ins[1:]], linalg.fill(fill_value(out), outs=[tensor.empty(sizes, element)]))

    def exact(length: int) -> ir.Value:
        return tensor.cast(out.type, on_image(length, ins[0]))

    def narrow() -> ir.Value:
        high = arith.muli(arith.subi(index_const(BLOCK), width), index_const(stride))
        return cut(on_image(BLOCK, zero_padded(ins[0], image_axis, high)), out, axis_sizes(out))

    cases = [(arith.cmpi(arith.CmpIPredicate.eq, width, index_const(length)), partial(exact, length))
             for length in exact_widths(found.pattern.op, lengths)]
    cases.append((arith.cmpi(arith.CmpIPredicate.ult, width, index_const(BLOCK)), narrow))
    chosen = _chosen(cases, lambda: build(ins, out), out.type)
    mark(chosen.owner, CHOICE)
    return chosen


def _chosen(cases: list, otherwise: Callable, result_type: ir.Type) -> ir.Value:
    """The value of the first of `cases` (condition, value thunk) whose condition holds, else
    `otherwise()`: nested `scf.if`s."""
    if not cases:
        return otherwise()
    (condition, value), rest = cases[0], cases[1:]
    choice = scf.IfOp(condition, [result_type], has_else=True)
    with ir.InsertionPoint(choice.then_block):
        scf.yield_([value()])
    with ir.InsertionPoint(choice.else_block):
        scf.yield_([_chosen(rest, otherwise, result_type)])
    return choice.results[0]


def columns(found, ins: list, out: ir.Value, lengths: tuple) -> list:
    """The blocks of result columns (where `applies`, on a result of at least BLOCK columns:
    `by_width`), one Blocks a loop, for each of `lengths` (longest first, the last at most
    BLOCK): `column_spans`, a block that would end past the last column moved left to end
    there (it recomputes columns of the one before it). So every block reads inside the image
    and writes inside the result."""
    image_axis, out_axis, stride, reach = _width_axes(found, out)
    width = tensor.dim(out, index_const(out_axis))
    lasts = {length: arith.subi(width, index_const(length)) for length in lengths if length <= BLOCK}
    spans = column_spans(width, lengths)

    def blocks(count: ir.Value, length: int, start: ir.Value) -> Blocks:
        def offset(block: ir.Value) -> ir.Value:
            column = arith.addi(start, arith.muli(block, index_const(length)))
            return arith.minui(column, lasts[length]) if length in lasts else column

        def operands(current: list, block: ir.Value) -> list:
            column = arith.muli(offset(block), index_const(stride))
            return [slice_of(current[0], image_axis, column, (length - 1) * stride + reach), *current[1:]]
        return Blocks(out_axis, count, length, operands, offset)
    return [blocks(*span) for span in spans]


def column_spans(width: ir.Value, lengths: tuple) -> list:
    """(count, length, first column) of the blocks of each of `lengths` over `width` columns:
    block_spans where BLOCK is the last length; where a row shorter than BLOCK follows it,
    blocks of BLOCK cover all but a rest of at most one row, and one row block covers that (each
    block costs a copy into place, so the count of blocks is kept down: at 28 columns 16 + 16
    ran faster than 16 + 8 + 8; at 40, 32 + 8 faster than 32 + 16)."""
    if lengths[-1] == BLOCK:
        return block_spans(width, lengths)[0]
    *longer, row = lengths
    spans, first = block_spans(width, longer[:-1], cover=False)
    rest = arith.subi(width, first)
    count = arith.divui(arith.addi(rest, index_const(row - 1)), index_const(BLOCK))
    spans.append((count, BLOCK, first))
    covered = arith.minui(arith.addi(first, arith.muli(count, index_const(BLOCK))), width)
    spans.append((arith.ceildivui(arith.subi(width, covered), index_const(row)), row, covered))
    return spans


def block_spans(total: ir.Value, lengths: tuple, cover: bool = True) -> tuple[list, ir.Value]:
    """(count, length, first entry) of the blocks of each of `lengths`, longest first, over
    `total` entries: as many whole blocks of each as fit in the entries left, then (`cover`)
    blocks of the last length that cover the rest; and the entries all the blocks span."""
    spans, first = [], index_const(0)
    for k, length in enumerate(lengths):
        divide = arith.ceildivui if cover and k == len(lengths) - 1 else arith.divui
        count = divide(arith.subi(total, first), index_const(length))
        spans.append((count, length, first))
        first = arith.addi(first, arith.muli(count, index_const(length)))
    return spans, first


def in_blocks(out: ir.Value, loops: list, ins: list, op: Callable) -> ir.Value:
    """`op(ins, out)` run once a combination of the blocks of each of `loops` (lists of Blocks;
    `out`, identity-filled, with each block's length on its axis), one `scf.for` a list over
    its combinations (IREE resolves the sizes of a loop's carried tensor, not those of one
    carried through two nested loops): each result is written in place into one result of the
    last loop's blocks' extents on their axes, cut to `out`'s sizes where one is wider (a copy:
    none where the blocks stay inside `out`)."""
    sizes = axis_sizes(out)
    every = list(sizes)
    wider = [b for b in loops[-1] if b.extent is not None]
    for b in wider:
        every[b.axis] = b.extent
    result = tensor.empty(every, ir.RankedTensorType(out.type).element_type)
    for blocks in loops:
        result = _loop(out, result, blocks, ins, op)
    return cut(result, out, sizes) if wider else result


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
    """(image axis, result axis, stride, reach: the input columns one result reads) for the
    last window axis of a BLOCKED_OPS op whose result has a run-time size there and whose
    window's size is known."""
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


def zero_padded(value: ir.Value, axis: int, high: ir.Value | int) -> ir.Value:
    """`value` with `high` zeros (an index value, or a number) after its end on `axis`."""
    return zeros_after(value, {axis: high})


def zeros_after(value: ir.Value, highs: dict) -> ir.Value:
    """`value` with zeros after its end on each axis of `highs`, as many as it maps the axis to
    (an index value, or a number), in one pad."""
    source = ir.RankedTensorType(value.type)
    shape = [source.get_dim_size(a) for a in range(source.rank)]
    static_high, dynamic = [0] * source.rank, []
    for axis, high in sorted(highs.items()):
        if isinstance(high, int):
            static_high[axis] = high
            shape[axis] = shape[axis] + high if shape[axis] != DYNAMIC else DYNAMIC
        else:
            static_high[axis], shape[axis] = DYNAMIC, DYNAMIC
            dynamic.append(high)
    op = tensor.PadOp(ir.RankedTensorType.get(shape, source.element_type), value, [], dynamic,
                      [0] * source.rank, static_high)
    block = op.regions[0].blocks.append(*([ir.IndexType.get()] * source.rank))
    with ir.InsertionPoint(block):
        tensor.YieldOp(arith.constant(source.element_type, 0.0))
    return op.result
