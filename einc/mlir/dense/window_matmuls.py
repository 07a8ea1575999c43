"""A convolution as a matmul over its windows (im2col) on llvm-cpu, where its direct form is slow.

IREE 3.13 runs 1-d convolutions, and channels-first 2-d ones with a stride, at a few GFLOP/s
(Whisper's 384 -> 384 width-3 stride-2 one at 4.5) where einc's register-tiled matmuls
(cpu_matmuls) run near the vector units' peak. Such a convolution, with any stride, dilation
and padding, is then a generic copying the windows of the (padded) image out as rows
`[n OH OW, c kh kw]`, a register-tiled matmul against the filter as `[c kh kw, f]` (packed by
NumPy at build time when it is a constant), and the result `[n, OH, OW, f]` transposed to the
op's layout. Stride-1 channels-first convolutions (einc's tiles, cpu_convolutions), channels-
last 2-d ones (IREE's) and shallow ones keep the direct form, which measured as fast or faster
there. On AVX2 a channels-first one over a run-time width writes its windows straight into the
matmul's packed right operand instead (`_filter_times_packed_windows`). Figures:
docs/DECISIONS.md, Dense kernels.
"""
from __future__ import annotations

from functools import partial
from typing import Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.ir.nodes import Const
from einc.ir.types import F32
from einc.mlir.dense import cpu_matmuls, named_ops, width_blocks
from einc.mlir.dense.named_ops import Match, emit as emit_named
from einc.mlir.dense.packed_epilogues import fenced_pack_source
from einc.mlir.core.shapes import index_const
from einc.target import Target

DYNAMIC = ir.ShapedType.get_dynamic_size()
# The ops taken, with whether only when a window axis is strided: IREE 3.13's 1-d convolutions
# run at a few GFLOP/s at any stride; a channels-first 2-d one runs well on einc's tiles
# (cpu_convolutions) at stride 1, whose vector step is a row of adjacent columns, but at 5-8
# GFLOP/s with a stride; channels-last 2-d ones ran as fast as the matmul or faster (measured,
# docs/DECISIONS.md). Depthwise convolutions and poolings have no summed channels.
OPS = {"conv_1d_ncw_fcw": False, "conv_1d_nwc_wcf": False, "conv_2d_nchw_fchw": True}
# Below this summed depth (c kh kw) the copy of the windows cost what the matmul saved.
MIN_DEPTH = 64


def emit(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """The convolution `found` as a register-tiled matmul over its windows, or None where the
    convolution stays."""
    unit = cpu_matmuls.host_unit(lw.target)
    if unit is None or not applies(found):
        return None
    if _packs_windows_itself(found, lw.target, unit):
        return emit_named(lw, found, init, build=partial(_filter_times_packed_windows, found, unit))
    weights = _constant_filter(found)
    if weights is None:
        return emit_named(lw, found, init, build=partial(_windows_times_filter, found, unit))
    packed = cpu_matmuls.register_tile_layout(weights, unit)
    packed = lw.lower(lw.keep(Const(packed, found.views[1].read.tensor.span)))
    return emit_named(lw, found, init, build=partial(_windows_times_filter, found, unit, packed=packed),
                      given={1: packed})


def form(lw, found: Match) -> str:
    """The form `emit` gave `found` (named_ops.FORMS), for `einc build --explain`."""
    packed = _packs_windows_itself(found, lw.target, cpu_matmuls.host_unit(lw.target))
    return named_ops.PACKED_WINDOWS if packed else named_ops.WINDOWS_MATMUL


def applies(found: Match) -> bool:
    """An f32 convolution of OPS (strided where it must be) whose filter's sizes are known at
    build time, with a depth of at least MIN_DEPTH (on a host with einc's register tiles)."""
    op = found.pattern.op
    if op not in OPS:
        return False
    if OPS[op] and all(stride == 1 for stride in found.strides):
        return False
    if any(v.read.dtype != F32 for v in found.views):
        return False
    sizes = _filter_sizes(found)
    return sizes is not None and int(np.prod([sizes[k] for k in _depth_letters(found.pattern)])) >= MIN_DEPTH


def _packs_windows_itself(found: Match, target: Target, unit: str) -> bool:
    """Whether `found` runs as the filter times its windows copied straight into the packed
    right operand (`_filter_times_packed_windows`): a channels-first convolution over a run-time
    width, where the windows' copy cannot fuse into the pack of the left operand (IREE-145's
    barrier, packed_epilogues `fenced_pack_source`: AVX2). There the two passes over a run-time
    width ran 2-2.8x the `--dim` time; with the sizes fixed, or on AVX-512 (the copy fused into
    the pack), the windows stay the left operand."""
    out = found.pattern.out.split()
    width = found.out[-1]
    return out[1] == "f" and out[-1] != "f" and fenced_pack_source(target, [cpu_matmuls.register_tile(unit)[0], 1]) \
        and not all(v.extent.is_const for v in width.vars)


def _filter_sizes(found: Match) -> Optional[dict]:
    """The extent of each letter of the filter (channels and window offsets), None when one is
    known only at run time (the batch and the output's extent may be)."""
    sizes = {}
    for letter, axis in zip(found.pattern.operands[1].split(), found.operand_axes[1]):
        extent = axis.vars[0].extent
        if not extent.is_const:
            return None
        sizes[letter] = extent.const
    return sizes


def _depth_letters(pattern) -> list[str]:
    """The filter's summed letters in its order (c and the window offsets): the matmul's K."""
    return [letter for letter in pattern.operands[1].split() if letter != "f"]


def _constant_filter(found: Match) -> Optional[np.ndarray]:
    """The filter as the matmul's right operand [K, f] when it is a build-time array (or a layer
    of a stack at build-time subscripts) read whole."""
    view = found.views[1]
    if not isinstance(view.read.tensor, Const) or view.keep or view.pad_lo or view.splits \
            or view.windows or view.order or view.merges or view.reverse:
        return None
    if any(at is not None and not at.is_const for at in view.fixed):
        return None
    if found.perms and found.perms[1] is not None:
        return None
    index = tuple(slice(None) if at is None else at.const for at in view.fixed)
    array = view.read.tensor.array[index] if view.fixed else view.read.tensor.array
    letters = found.pattern.operands[1].split()
    depth = _depth_letters(found.pattern)
    matrix = array.transpose([letters.index(letter) for letter in depth] + [letters.index("f")])
    return np.ascontiguousarray(matrix.reshape(-1, matrix.shape[-1]), dtype=np.float32)


def _windows_times_filter(found: Match, unit: str, ins: list, out: ir.Value,
                          packed: Optional[ir.Value] = None) -> ir.Value:
    """out (the op's layout) = the windows of ins[0] as rows [n OH OW, K] times the filter as
    [K, f] (ins[1] in the op's layout, or `packed` in the register tiles of vector unit `unit`)."""
    image, filters = ins
    pattern = found.pattern
    element = ir.RankedTensorType(out.type).element_type
    out_letters = pattern.out.split()
    rows = [letter for letter in out_letters if letter != "f"]
    depth = _depth_letters(pattern)
    windows = _windows(found, image, out, rows, depth)
    left = _collapsed(windows, [list(range(len(rows))), list(range(len(rows), len(rows) + len(depth)))])
    if packed is None:
        filter_letters = pattern.operands[1].split()
        perm = [filter_letters.index(letter) for letter in depth + ["f"]]
        right = _collapsed(_transposed(filters, perm), [list(range(len(depth))), [len(depth)]])
    else:
        right = packed
    f = ir.RankedTensorType(out.type).get_dim_size(out_letters.index("f"))
    m = ir.RankedTensorType(left.type).get_dim_size(0)
    sizes = [tensor.dim(left, index_const(0)) if m == DYNAMIC else m, f]
    product = cpu_matmuls.register_tiled([left, right], tensor.empty(sizes, element), unit,
                                         packed_right=packed is not None)
    # [n OH OW, f] -> [n, OH, OW, f] -> the op's layout
    shape = [_dim(out, out_letters.index(letter)) for letter in rows] + [f]
    static = [s if isinstance(s, int) else DYNAMIC for s in shape]
    expanded = tensor.expand_shape(ir.RankedTensorType.get(static, element), product,
                                   [list(range(len(rows))), [len(rows)]],
                                   [s for s in shape if not isinstance(s, int)], static)
    order = rows + ["f"]
    return _transposed(expanded, [order.index(letter) for letter in out_letters])


def _windows(found: Match, image: ir.Value, out: ir.Value, rows: list[str], depth: list[str]) -> ir.Value:
    """The windows of `image` as a tensor [rows.., depth..]: a copy whose image map reads a
    window axis `y+p` at `stride * y + dilation * p` (the op's strides and dilations)."""
    letters = rows + depth
    dim = {letter: ir.AffineDimExpr.get(k) for k, letter in enumerate(letters)}
    reads = _window_reads(found, dim, lambda y: dim[y])
    out_letters, sizes = found.pattern.out.split(), _filter_sizes(found)
    shape = [_dim(out, out_letters.index(letter)) for letter in rows] + [sizes[letter] for letter in depth]
    return _copy(image, reads, shape)


def _window_reads(found: Match, dim: dict, at) -> list:
    """The image map's results: a window axis `y+p` read at `stride * at(y) + dilation * p`
    (the op's strides and dilations), any other axis at its own letter."""
    windows = iter(zip(found.strides, found.dilations))
    reads = []
    for token in found.pattern.operands[0].split():
        if "+" in token:
            y, p = token.split("+")
            stride, dilation = next(windows)
            reads.append(at(y) * stride + dim[p] * dilation)
        else:
            reads.append(dim[token])
    return reads


def _copy(image: ir.Value, reads: list, shape: list) -> ir.Value:
    """A tensor of `shape` whose point is `image` read at `reads` (maps of its dims)."""
    element = ir.RankedTensorType(image.type).element_type
    maps = [ir.AffineMap.get(len(shape), 0, reads), ir.AffineMap.get_identity(len(shape))]
    op = linalg.GenericOp_([image], [tensor.empty(shape, element)], maps,
                           [linalg.IteratorType.parallel] * len(shape))
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])
    return op.result


def _collapsed(value: ir.Value, groups: list[list[int]]) -> ir.Value:
    source = ir.RankedTensorType(value.type)
    dims = []
    for group in groups:
        sizes = [source.get_dim_size(d) for d in group]
        dims.append(DYNAMIC if DYNAMIC in sizes else int(np.prod(sizes)))
    return tensor.collapse_shape(ir.RankedTensorType.get(dims, source.element_type), value, groups)


def _transposed(value: ir.Value, perm: list[int]) -> ir.Value:
    if perm == list(range(len(perm))):
        return value
    source = ir.RankedTensorType(value.type)
    init = tensor.empty([_dim(value, k) for k in perm], source.element_type)
    return linalg.transpose(value, outs=[init], permutation=perm).results[0]


def _dim(value: ir.Value, axis: int):
    size = ir.RankedTensorType(value.type).get_dim_size(axis)
    return tensor.dim(value, index_const(axis)) if size == DYNAMIC else size


def _filter_times_packed_windows(found: Match, unit: str, ins: list, out: ir.Value) -> ir.Value:
    """out (channels first) = the filter as [f, K] times the windows of ins[0] written
    straight into mmt4d's packed right operand [tiles, K, columns, 1] (one pass, no pack of
    them), a tile `columns` adjacent results of one row, the row padded to whole tiles (the
    image zero-padded to match); the product [f, rows..] cut to the row's length and
    transposed to the op's layout."""
    image, filters = ins
    pattern = found.pattern
    element = ir.RankedTensorType(out.type).element_type
    out_letters = pattern.out.split()
    rows = [letter for letter in out_letters if letter != "f"]
    depth = _depth_letters(pattern)
    columns = cpu_matmuls.register_tile(unit)[1]
    width = _dim(out, len(out_letters) - 1)
    tiles = arith.ceildivui(width, index_const(columns))
    padded = arith.muli(tiles, index_const(columns))
    packed = _packed_windows(found, _covering(found, image, padded), out, rows, depth, tiles, columns)
    left = _collapsed(filters, [[0], list(range(1, 1 + len(depth)))])
    f = ir.RankedTensorType(out.type).get_dim_size(out_letters.index("f"))
    leading = [_dim(out, out_letters.index(letter)) for letter in rows[:-1]]
    count = padded
    for size in leading:
        count = arith.muli(count, index_const(size) if isinstance(size, int) else size)
    product = cpu_matmuls.register_tiled([left, packed], tensor.empty([f, count], element), unit,
                                         packed_right=True)
    shape = [f, *leading, padded]
    static = width_blocks.static_sizes(shape)
    expanded = tensor.expand_shape(ir.RankedTensorType.get(static, element), product,
                                   [[0], list(range(1, len(shape)))], [s for s in shape if not isinstance(s, int)],
                                   static)
    cut = width_blocks.cut(expanded, tensor.empty([f, *leading, width], element), [f, *leading, width])
    order = ["f"] + rows
    return _transposed(cut, [order.index(letter) for letter in out_letters])


def _covering(found: Match, image: ir.Value, padded: ir.Value) -> ir.Value:
    """`image` zero-padded on its last axis to reach the last window of `padded` results."""
    axis = ir.RankedTensorType(image.type).rank - 1
    dilation = found.dilations[-1]
    reach = (_filter_sizes(found)[_depth_letters(found.pattern)[-1]] - 1) * dilation + 1
    last = arith.muli(arith.subi(padded, index_const(1)), index_const(found.strides[-1]))
    have = _dim(image, axis)
    have = index_const(have) if isinstance(have, int) else have
    need = arith.maxui(arith.addi(last, index_const(reach)), have)
    return width_blocks.zero_padded(image, axis, arith.subi(need, have))


def _packed_windows(found: Match, image: ir.Value, out: ir.Value, rows: list[str], depth: list[str],
                    tiles: ir.Value, columns: int) -> ir.Value:
    """The windows as mmt4d's packed right operand: a copy [rows.. (the last as `tiles`),
    depth.., columns, 1] whose read of a window axis `y+p` is at `stride * y + dilation * p`,
    y of the last one `tile * columns + column`; collapsed to [tiles of rows, K, columns, 1]."""
    letters = rows + depth + ["column", "unit"]
    dim = {letter: ir.AffineDimExpr.get(k) for k, letter in enumerate(letters)}
    reads = _window_reads(found, dim, lambda y: dim[y] * columns + dim["column"] if y == rows[-1] else dim[y])
    out_letters, sizes = found.pattern.out.split(), _filter_sizes(found)
    shape = [_dim(out, out_letters.index(letter)) for letter in rows[:-1]] + [tiles] + \
        [sizes[letter] for letter in depth] + [columns, 1]
    n, k = len(rows), len(depth)
    return _collapsed(_copy(image, reads, shape), [list(range(n)), list(range(n, n + k)), [n + k], [n + k + 1]])
