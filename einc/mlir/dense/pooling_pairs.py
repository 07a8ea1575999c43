"""Poolings whose last window axis takes 2 points 2 apart (a 2x2 stride-2 max pool), the image's
rows read as pairs (llvm-cpu).

IREE 3.13 runs such a pooling as a convolution: at fixed sizes 8 channels by 7 columns a vector
step, from loads of the row and shuffles; with run-time sizes one point a step (scalar), 1.3-1.7x
the fixed time; written out as strided slices (cpu_poolings) each vector step gathers 16 lanes.
Here the f32 image is read as i64 pairs instead (an f64 one as i128 pairs, which LLVM splits
into i64 lanes): a bitcast halves its last axis (no copy), each point of the other window axes
is a strided slice of that view (as in cpu_poolings), and one elementwise pass splits each pair
(its low half is the even column) and combines the points in the op's order, so values are
those of the op. IREE vectorizes that pass along the pairs with
contiguous loads. A bitcast of the rows needs an even width; a 2x2 stride-2 window over an odd
width W and an even height reads two rows at a time as W pairs instead, the second row's points
straddling two pairs (0.8x the `--dim` build's time, which runs IREE's op, where IREE's op with
run-time sizes took 1.1-1.4x it); any other odd width runs as the rules after this one would
(`cpu_poolings.as_before`), chosen by `scf.if`s over a run-time width. Over a run-time width IREE
masks every step of 16 pairs; einc's tiles instead (`scf.if`s on the result's width): rows of
fewer than LONG_ROW results 2 rows by 8 pairs a step, masked, on AVX-512 (rows of 7: 0.09 against
0.13 ms), one row of a register's pairs, the rest peeled, without its mask registers (AVX2: 0.17
against 0.30), longer ones 16 pairs a step, the rest peeled (rows of 32: 0.22 against 0.30).
Figures: docs/DECISIONS.md.
"""
from __future__ import annotations

from itertools import product
from math import prod
from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, flow, linalg, scf, tensor

from einc import host_cpu
from einc.ir.types import F32, F64
from einc.mlir.core.cpu_tiles import compilation_info
from einc.mlir.core.shapes import index_const
from einc.mlir.dense import cpu_poolings
from einc.mlir.dense.named_ops import Match, emit as emit_named
from einc.mlir.dense.width_blocks import axis_sizes, static_sizes

DYNAMIC = ir.ShapedType.get_dynamic_size()
# the floats read as pairs, by their bits: the odd column is the high half of a pair
FLOATS = {F32: 32, F64: 64}
# einc's tiles over a run-time width (2x2 max pools, one core; docs/DECISIONS.md): a workgroup
# WORKGROUP of the two axes before the columns, whole rows; a vector step for rows of fewer than
# LONG_ROW results SHORT_STEP (rows by pairs, masked) where masks are cheap, else one row of a
# register's pairs (peeled: `_short_step`); for longer rows LONG_STEP pairs (the rest peeled)
LONG_ROW, WORKGROUP, SHORT_STEP, LONG_STEP = 32, (16, 32), (2, 8), 16


def emit(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """The pooling `found` over pairs of its image's columns, or None where it is not such a
    pooling."""
    window = _window(lw, found)
    if window is None:
        return None
    return emit_named(lw, found, init, build=lambda ins, out: _pooled(lw, found, window, ins, out))


def _window(lw, found: Match) -> Optional[list[int]]:
    """The window's sizes where `found` is a pooling of f32 or f64 whose last axis is windowed by 2
    points 2 apart, of at most cpu_poolings.WINDOW_POSITIONS points, on a target that writes
    poolings out; else None."""
    if not lw.target.unrolled_poolings or not found.pattern.op.startswith("pooling_") or found.mask is not None:
        return None
    if found.views[0].read.dtype not in FLOATS or found.operand_axes[0][-1].stride != 2 or found.dilations[-1] != 1:
        return None
    window = [a.vars[1].extent for a in found.operand_axes[0] if a.stride]
    if not all(w.is_const for w in window) or window[-1].const != 2:
        return None
    sizes = [w.const for w in window]
    return sizes if prod(sizes) <= cpu_poolings.WINDOW_POSITIONS else None


def _pooled(lw, found: Match, window: list[int], ins: list, out: ir.Value) -> ir.Value:
    """`out` computed from the image `ins[0]` over its pairs where its width is even, over pairs
    of two rows where it is odd, the window 2x2 with a stride of 2 and the height even (on
    IREE's tiles at a build-time width, else on einc's for short or long rows); any other odd
    width as the rules after this one would."""
    image = ins[0]
    last = ir.RankedTensorType(image.type).rank - 1
    width = ir.RankedTensorType(image.type).get_dim_size(last)
    pairs = lambda tiles=None: _over_pairs(found, window, image, out, tiles)
    row_pairs = lambda tiles=None: _over_row_pairs(found, image, out, tiles)
    before = lambda: cpu_poolings.as_before(lw, found, ins, out)

    def odd(form: Callable) -> Callable:
        if not _two_by_two(found, window):
            return before
        return lambda: _if_even(image, last - 1, out.type, form, before)
    if width != DYNAMIC:
        return pairs() if width % 2 == 0 else odd(row_pairs)()
    long_rows = arith.cmpi(arith.CmpIPredicate.sge, tensor.dim(out, index_const(last)), index_const(LONG_ROW))
    rank = last + 1
    short_step, masked = _short_step(lw.target)
    on_tiles = lambda form: lambda: _either(long_rows, out.type, lambda: form(_tiles(rank, [LONG_STEP], True)),
                                            lambda: form(_tiles(rank, short_step, not masked)))
    return _if_even(image, last, out.type, on_tiles(pairs), odd(on_tiles(row_pairs)))


def _two_by_two(found: Match, window: list[int]) -> bool:
    """Whether `found`'s window is 2x2 over its last two axes, 2 apart on each, undilated."""
    return window == [2, 2] and list(found.strides[-2:]) == [2, 2] and all(d == 1 for d in found.dilations)


def _if_even(image: ir.Value, axis: int, result_type: ir.Type, then: Callable, otherwise: Callable) -> ir.Value:
    """`then()` where `image`'s size on `axis` is even, else `otherwise()`: chosen at build time
    where the size is known, else by an `scf.if`."""
    size = ir.RankedTensorType(image.type).get_dim_size(axis)
    if size != DYNAMIC:
        return then() if size % 2 == 0 else otherwise()
    odd = arith.andi(tensor.dim(image, index_const(axis)), index_const(1))
    return _either(arith.cmpi(arith.CmpIPredicate.eq, odd, index_const(0)), result_type, then, otherwise)


def _short_step(target) -> tuple[list[int], bool]:
    """The vector step (rows by pairs) of rows of fewer than LONG_ROW results on `target`'s
    code, and whether it is masked: SHORT_STEP where masks are cheap (AVX-512), else one row
    of the pairs one register holds, the rest peeled (AVX2: rows of 7 results 0.17 against 0.30
    ms masked)."""
    registers = host_cpu.vector_registers(target.tuned_to_host)
    return (list(SHORT_STEP), True) if registers.masks else ([1, registers.lanes // 2], False)   # a pair: 2 lanes


def _tiles(rank: int, step: list[int], peeled: bool) -> ir.Attribute:
    """einc's tiles for a pass of `rank` axes (a pooling has at least 3), `step` its last axes'."""
    levels = {"distribution": [1] * (rank - 3) + list(WORKGROUP) + [0],
              "vector_common_parallel": [1] * (rank - len(step)) + step}
    return compilation_info(levels, "DoubleTilingExpert", peeled=peeled)


def _either(condition: ir.Value, result_type: ir.Type, then: Callable, otherwise: Callable) -> ir.Value:
    """`then()` where `condition` holds at run time, else `otherwise()` (an `scf.if`)."""
    choice = scf.IfOp(condition, [result_type], has_else=True)
    with ir.InsertionPoint(choice.then_block):
        scf.yield_([then()])
    with ir.InsertionPoint(choice.else_block):
        scf.yield_([otherwise()])
    return choice.results[0]


def _over_pairs(found: Match, window: list[int], image: ir.Value, out: ir.Value,
                tiles: Optional[ir.Attribute]) -> ir.Value:
    """One elementwise pass over the integer view of `image`'s pairs (on `tiles`, or IREE's where
    None): per point of the window in the op's order (the last axis fastest: the pair's low
    half, then its high one) combined."""
    pairs = _pairs(image)
    windowed = [k for k, a in enumerate(found.operand_axes[0]) if a.stride]
    sizes = axis_sizes(out)
    slices = [_shifted(pairs, sizes, windowed[:-1], found, position)
              for position in product(*(range(size) for size in window[:-1]))]
    return _combined(found, slices, out, tiles, lambda *pairs: [half for pair in pairs for half in _halves(pair)])


def _combined(found: Match, slices: list, out: ir.Value, tiles: Optional[ir.Attribute], points: Callable) -> ir.Value:
    """`out` as one elementwise pass over `slices` (integer pairs, each shaped as `out`):
    `points(*pairs)`, the window's points in the op's order, combined by the op's combiner."""
    out_type = ir.RankedTensorType(out.type)
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(out_type.rank))
    op = linalg.GenericOp([out.type], slices, [out], ir.ArrayAttr.get([identity] * (len(slices) + 1)),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * out_type.rank))
    block = op.regions[0].blocks.append(*[ir.RankedTensorType(s.type).element_type for s in slices],
                                        out_type.element_type)
    combine = cpu_poolings.COMBINERS[found.pattern.kind]
    with ir.InsertionPoint(block):
        values = points(*list(block.arguments)[:len(slices)])
        acc = values[0]
        for value in values[1:]:
            acc = combine(acc, value)
        linalg.YieldOp([acc])
    if tiles is not None:
        op.attributes["compilation_info"] = tiles
    return op.result


def _over_row_pairs(found: Match, image: ir.Value, out: ir.Value, tiles: Optional[ir.Attribute]) -> ir.Value:
    """A 2x2 stride-2 window over an image of even height and odd width W: its rows two by two
    as W integer pairs (the same bytes); a result's top points are pair w's halves, its bottom
    ones the high half of pair (W - 1) / 2 + w and the low half of the next (on `tiles`, or
    IREE's where None), combined in the op's order."""
    sizes = axis_sizes(image)
    two_rows = sizes[:-2] + [_halved(sizes[-2]), sizes[-1]]
    pairs = _bitcast(image, sizes, two_rows)
    out_sizes = axis_sizes(out)
    half = _halved(sizes[-1])
    after = half + 1 if isinstance(half, int) else arith.addi(half, index_const(1))
    top, left, right = [_from_column(pairs, out_sizes, column) for column in (0, half, after)]
    return _combined(found, [top, left, right], out, tiles,
                     lambda top, left, right: _halves(top) + [_halves(left)[1], _halves(right)[0]])


def _from_column(pairs: ir.Value, sizes: list, column) -> ir.Value:
    """The pairs of a result of `sizes` from `column` (an int or an index value) of each row."""
    rank = len(sizes)
    offsets = [0] * (rank - 1) + [column]
    result = ir.RankedTensorType.get(static_sizes(sizes), ir.RankedTensorType(pairs.type).element_type)
    dynamic = lambda values: [v for v in values if not isinstance(v, int)]
    return tensor.extract_slice(result, pairs, dynamic(offsets), dynamic(sizes), [], static_sizes(offsets),
                                static_sizes(sizes), [1] * rank)


def _halved(size):
    """Half of `size` (an int, or an index value), rounded down."""
    return size // 2 if isinstance(size, int) else arith.divui(size, index_const(2))


def _pairs(image: ir.Value) -> ir.Value:
    """`image` (f32 or f64, even width) as integer pairs of its columns (i64, i128): the same bytes,
    no copy."""
    sizes = axis_sizes(image)
    return _bitcast(image, sizes, sizes[:-1] + [_halved(sizes[-1])])


def _bitcast(image: ir.Value, sizes: list, pair_sizes: list) -> ir.Value:
    """`image` (of `sizes`) as integer pairs of its floats, shaped `pair_sizes`: the same bytes."""
    bits = ir.FloatType(ir.RankedTensorType(image.type).element_type).width
    result = ir.RankedTensorType.get(static_sizes(pair_sizes), ir.IntegerType.get_signless(2 * bits))
    dynamic = lambda ss: [s for s in ss if not isinstance(s, int)]
    return flow.tensor_bitcast(result, image, dynamic(sizes), dynamic(pair_sizes))


def _halves(pair: ir.Value) -> list[ir.Value]:
    """The two floats of an integer pair: the even column (low half), then the odd one."""
    bits = ir.IntegerType(pair.type).width // 2
    half_type, float_type = ir.IntegerType.get_signless(bits), ir.F32Type.get() if bits == 32 else ir.F64Type.get()
    high = arith.shrui(pair, arith.constant(pair.type, bits))
    return [arith.bitcast(float_type, arith.trunci(half_type, half)) for half in (pair, high)]


def _shifted(pairs: ir.Value, sizes: list, windowed: list[int], found: Match, position: tuple) -> ir.Value:
    """The pairs that window `position` (over the window axes but the last) reads for each point
    of a result of `sizes`: offset by the position times the dilation, every stride-th point."""
    rank = len(sizes)
    offsets, strides = [0] * rank, [1] * rank
    for k, p, stride, dilation in zip(windowed, position, found.strides, found.dilations):
        offsets[k], strides[k] = p * dilation, stride
    result = ir.RankedTensorType.get(static_sizes(sizes), ir.RankedTensorType(pairs.type).element_type)
    return tensor.extract_slice(result, pairs, [], [s for s in sizes if not isinstance(s, int)], [],
                                offsets, static_sizes(sizes), strides)
