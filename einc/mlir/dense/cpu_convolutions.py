"""Tile sizes for NCHW convolutions on llvm-cpu (measured: benchmarks/, the conv and CNN rows).

IREE's heuristics for `linalg.conv_2d_nchw_fchw` (2 output channels by 8 columns a step, input
channels vectorized) run 3-4x slower here than 8 output channels by a row of columns with the
window as scalar loops; the op carries that choice as its `compilation_info`. The row divides
the output's width (IREE-27: a partial row runs as scalar code, ~18x slower) and is one vector
register where the build is tuned to this CPU (16 columns with AVX-512, 8 with AVX2:
host_cpu.vector_registers; on AVX2 a row of 16, two registers a channel, ran 1.5-2x slower, one
of 14, split into 8, 4 and 2 lanes, 6-16x), up to 16 columns in whole registers of 4 on a
generic x86-64 build (SSE2).
A run-time width gets rows through blocks of 64, 32 and 16 columns and of one row where a row is
narrower (width_blocks), a run-time count of output channels loops over blocks of 8
(channel_blocks).

With one input channel IREE folds the unit axis away and runs a scalar loop nest (~9x slower),
so such a convolution, in any layout, gets a second input channel of zeros: twice the
multiplies, still 6-10x faster, and faster than im2col. Channels-last convolutions on width
blocks get tiles too (IREE's for a run-time height were 1.5x slower), and on an AVX2 host
those of a build-time width (IREE's were 2-16x slower). Targets without
`convolution_tiles` (Vulkan) and other layouts keep IREE's choices. Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc import host_cpu
from einc.mlir.core.cpu_tiles import compilation_info
from einc.mlir.dense import channel_blocks, width_blocks
from einc.mlir.dense.named_ops import Match, emit as emit_named

DYNAMIC = ir.ShapedType.get_dynamic_size()
VECTOR_CHANNELS, DISTRIBUTED_ROWS, GENERIC_ROW = 8, 4, 16
NHWC_VECTOR_COLUMNS, NHWC_DISTRIBUTED_ROWS = 8, 8


def emit(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """The convolution `found` as llvm-cpu runs it best, or None where IREE's defaults stay."""
    if not lw.target.convolution_tiles:
        return None
    channel_axes = _summed_channel_axes(found)
    one_channel = channel_axes is not None and _extent(found.operand_axes[1][channel_axes[1]]) == 1
    nchw = found.pattern.op == "conv_2d_nchw_fchw"
    blocks = width_blocks.applies(found, init)
    channels = channel_blocks.applies(found, init)
    last_fixed = not (blocks or channels or one_channel) and _tiles_fixed_channels_last(lw.target, found, init)
    if not (nchw or one_channel or blocks or channels or last_fixed):
        return None
    columns = width_blocks.BLOCK if blocks else ir.RankedTensorType(init.type).get_dim_size(2 if last_fixed else 3)
    lengths = _block_lengths(lw, found) if blocks else ()
    filter_axis = found.pattern.operands[1].split().index("f")     # every op that gets here has one
    filters = None if channels else _extent(found.operand_axes[1][filter_axis])
    tiles = lambda filters: (_nchw_tiles(filters, _row(columns, lanes, widest)) if nchw else
                             _block_tiles(found.pattern.op, filters, widest) if blocks else
                             _nhwc_block_tiles(filters, widest, _row(columns, 1, NHWC_VECTOR_COLUMNS))
                             if last_fixed else None)
    out_filters = found.pattern.out.split().index("f")
    lanes, widest = _row_limits(lw.target)

    def convolution(ins: list, out: ir.Value) -> ir.Value:
        if one_channel:
            ins = [_channel_of_zeros_added(v, axis) for v, axis in zip(ins, channel_axes)]
        result = getattr(linalg, found.pattern.op)(*ins, outs=[out], strides=found.strides,
                                                   dilations=found.dilations)
        # on channel blocks: the block's channels
        info = tiles(ir.RankedTensorType(out.type).get_dim_size(out_filters) if channels else filters)
        if info is not None:
            result.owner.attributes["compilation_info"] = info
        return result

    def in_blocks(ins: list, out: ir.Value) -> ir.Value:
        # a loop over the pairs (block of columns, block of channels), channels fastest, for
        # each length of column blocks and of channel blocks (`out`'s width may be one of
        # build-time size: width_blocks.by_width)
        if not (width_blocks.applies(found, out) or channels):
            return convolution(ins, out)
        cut = channel_blocks.channels(found, ins, out) if channels else [None]
        widths = width_blocks.columns(found, ins, out, lengths) if width_blocks.applies(found, out) else [None]
        loops = [[b for b in (w, f) if b is not None] for w in widths for f in cut]
        return width_blocks.in_blocks(out, loops, ins, convolution)

    def build(ins: list, out: ir.Value) -> ir.Value:
        return width_blocks.by_width(found, ins, out, in_blocks, lengths) if blocks else in_blocks(ins, out)
    return emit_named(lw, found, init, build=build)


def blocks(lw, found: Match, init: ir.Value) -> tuple[str, ...]:
    """What `emit` cuts into blocks of build-time size, in words (for `einc build --explain`)."""
    if not lw.target.convolution_tiles:
        return ()
    words = []
    if channel_blocks.applies(found, init):
        words.append(f"{' and '.join(str(length) for length in channel_blocks.lengths(found))} output channels")
    if width_blocks.applies(found, init):
        *longer, last = [str(length) for length in _block_lengths(lw, found)]
        words.append(f"{', '.join(longer)} and {last} columns")
    return tuple(words)


def _block_lengths(lw, found: Match) -> tuple[int, ...]:
    """The lengths of the blocks of columns `found` runs on over a run-time width: whole rows of
    the vector step the blocks' tiles take (width_blocks.block_lengths)."""
    return width_blocks.block_lengths(found.pattern.op, _row(width_blocks.BLOCK, *_row_limits(lw.target)))


def fast_letters(lw, found: Match) -> frozenset:
    """The axes of `found` (pattern letters) whose run-time size costs nothing on this target: a
    2-d convolution's summed input channels (measured as fast as fixed, docs/DECISIONS.md)."""
    if lw.target.convolution_tiles and found.pattern.op.startswith("conv_2d_"):
        return frozenset({"c"})
    return frozenset()


# A 3-d convolution with one channel ran faster as IREE has it (4.4 ms against 6.8 padded, a
# batch of 8 16^3 volumes into 8 channels); 1-d ones as 2-d ones (18.7 ms against 9.3 padded).
PADDED_CHANNEL_OPS = ("conv_1d_", "conv_2d_")


def _summed_channel_axes(found: Match) -> Optional[tuple]:
    """The axis of the summed channel `c` in the image and in the filter of a 1-d or 2-d
    convolution (None for depthwise ones, whose channel is a result axis, and other ops)."""
    pattern = found.pattern
    if not pattern.op.startswith(PADDED_CHANNEL_OPS) or len(pattern.operands) != 2 or "c" in pattern.out.split():
        return None
    tokens = [operand.split() for operand in pattern.operands]
    return tuple(t.index("c") for t in tokens) if all("c" in t for t in tokens) else None


def _extent(axis) -> Optional[int]:
    """A plain axis's length when known at build time."""
    size = axis.vars[0].extent
    return size.const if len(axis.vars) == 1 and not axis.stride and size.is_const else None


def _row_limits(target) -> tuple[int, int]:
    """(f32 lanes of a vector register, the widest row of columns) of `target`'s code: on a
    build tuned to this CPU a row of one register (AVX2's 16 registers cannot hold 8 channels by
    two of them); on a generic x86-64 one (SSE2, 4 lanes) rows of up to GENERIC_ROW columns
    (the conv layer of benchmarks/: 17.5 GFLOP/s with rows of 16, 13.6 with rows of 4)."""
    lanes = host_cpu.vector_registers(target.tuned_to_host).lanes
    return lanes, lanes if target.tuned_to_host else max(lanes, GENERIC_ROW)


def _row(columns: int, lanes: int, widest: int) -> int:
    """The row of result columns a vector step computes: the widest divisor of the width of
    at most `widest` columns that is whole registers of `lanes`, else the widest of at most
    `lanes` (one partial register: a row of 14 on AVX2 split into 8, 4 and 2 lanes ran 7-16x
    slower than one of 7). A run-time width gets `widest`; an empty one, never run, 1."""
    if columns == DYNAMIC:
        return widest
    if columns < 1:
        return 1
    whole = [d for d in range(lanes, min(columns, widest) + 1, lanes) if columns % d == 0]
    return max(whole or [d for d in range(1, min(columns, lanes) + 1) if columns % d == 0])


def _nchw_tiles(channels, row: int) -> ir.Attribute:
    """Loops (n, f, oh, ow, c, kh, kw): a workgroup takes DISTRIBUTED_ROWS output rows of one
    image, all channels and columns; a vector step VECTOR_CHANNELS channels by a row."""
    f = VECTOR_CHANNELS if channels is None else min(channels, VECTOR_CHANNELS)
    levels = {"distribution": [1, 0, DISTRIBUTED_ROWS, 0, 0, 0, 0],
              "vector_common_parallel": [1, f, 1, row, 0, 0, 0],
              "vector_reduction": [0, 0, 0, 0, 1, 1, 1]}
    return _compilation_info(levels)


def _tiles_fixed_channels_last(target, found: Match, init: ir.Value) -> bool:
    """Whether a channels-last 2-d convolution (into `init`) of build-time width gets einc's
    tiles: on a build tuned to an AVX2 host, where IREE's own ran 2x slower at stride 1 and
    6-16x at stride 2 (a ResNet stage's 64 -> 64 at 28 x 28; docs/DECISIONS.md); AVX-512 hosts
    (not measured) and generic builds keep IREE's."""
    return found.pattern.op.startswith("conv_2d_nhwc_") and target.tuned_to_host \
        and host_cpu.vector_unit() == "avx2" and ir.RankedTensorType(init.type).get_dim_size(2) != DYNAMIC


def _nhwc_block_tiles(channels, widest: int, columns: int = NHWC_VECTOR_COLUMNS) -> ir.Attribute:
    """Loops (n, oh, ow, f, kh, kw, c) of a channels-last convolution on width blocks (or of a
    build-time width, `columns` dividing it): IREE tiles it as at fixed sizes (8 columns by up
    to `widest` channels a vector step) only when the height is known, and by 2 columns
    otherwise, 1.5x slower (docs/DECISIONS.md)."""
    f = widest if channels is None else min(channels, widest)
    return _compilation_info({"distribution": [1, NHWC_DISTRIBUTED_ROWS, 0, 0, 0, 0, 0],
                              "vector_common_parallel": [1, 1, columns, f, 0, 0, 0],
                              "vector_reduction": [0, 0, 0, 0, 1, 1, 1]})


def _block_tiles(op: str, channels, widest: int) -> ir.Attribute:
    """einc's tiles for a convolution on width blocks other than an NCHW one (which has its own
    at every size): a channels-last 2-d one or a 1-d one."""
    return (_nhwc_block_tiles(channels, widest) if op.startswith("conv_2d_nhwc_")
            else _ncw_block_tiles(channels, widest))


def _ncw_block_tiles(channels, widest: int) -> ir.Attribute:
    """Loops (n, f, ow, c, k) of a 1-d convolution on width blocks: a workgroup takes
    VECTOR_CHANNELS output channels of one row, a vector step those channels by `widest`
    columns, input channels and taps one at a time (IREE's own tiles ran 2.4x slower)."""
    f = VECTOR_CHANNELS if channels is None else min(channels, VECTOR_CHANNELS)
    return _compilation_info({"distribution": [1, VECTOR_CHANNELS, 0, 0, 0],
                              "vector_common_parallel": [1, f, widest, 0, 0],
                              "vector_reduction": [0, 0, 0, 1, 1]})


def _compilation_info(levels: dict) -> ir.Attribute:
    """The convolution pipeline with these tile sizes per level."""
    return compilation_info(levels, "ConvTileAndDecomposeExpert")


def _channel_of_zeros_added(value: ir.Value, axis: int) -> ir.Value:
    """An image or filter with one channel on `axis`, padded with a second channel of zeros."""
    source = ir.RankedTensorType(value.type)
    shape = [source.get_dim_size(a) for a in range(source.rank)]
    shape[axis] = 2
    high = [1 if a == axis else 0 for a in range(source.rank)]
    op = tensor.PadOp(ir.RankedTensorType.get(shape, source.element_type), value, [], [], [0] * source.rank, high)
    block = op.regions[0].blocks.append(*([ir.IndexType.get()] * source.rank))
    with ir.InsertionPoint(block):
        tensor.YieldOp(arith.constant(source.element_type, 0.0))
    return op.result
