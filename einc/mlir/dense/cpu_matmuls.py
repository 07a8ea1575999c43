"""How f32 matmuls run fastest on an x86-64 host with AVX-512 or AVX2 (measured: benchmarks/,
the matmul rows).

IREE's data tiling packs a matmul's operands into 16x16 register tiles on AVX-512 (17 loads for
16 FMAs a step of K) and 8x8 on AVX2, and no option chooses another tile. So einc packs the
operands into its own tile (register_tile: two vectors of B's columns by 8 rows of A, 8x32 on
AVX-512, 8x16 on AVX2) and runs `linalg.mmt4d` on them,
which IREE vectorizes (0.83x NumPy against 0.68x at n = 1024 on AVX-512). IREE's mmt4d
microkernel has no such tile, so llvm-cpu builds without it. Elsewhere (llvm-cpu-generic, a
host without either unit, other element types, a static M or N under the tile, an A the program
computes summed over a run-time K, Vulkan) the matmul stays a `linalg.matmul` for IREE. Figures
and the tiles tried: docs/DECISIONS.md, Dense kernels.
"""
from __future__ import annotations

from functools import partial
from typing import Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.host_cpu import VECTOR_REGISTERS, vector_unit
from einc.ir.nodes import Const, Input
from einc.ir.types import F32
from einc.mlir.core.cpu_tiles import compilation_info
from einc.mlir.dense.named_ops import Axis, Match, emit as emit_named
from einc.target import Target

DYNAMIC = ir.ShapedType.get_dynamic_size()
# Rows of A a tile: on AVX-512 8 rather than 14 (28 accumulators), the pack of A transposes
# 8-row blocks in far fewer shuffles (256 x 256: 11 against 16-28 us), the kernel ran as fast or
# faster (287 against 299 us), and rows that are a multiple of 8 need no padded tile. On AVX2 8
# rather than the 6 its registers hold: IREE's pack microkernel has a fast path for 8 x 1 tiles
# only (the MLP's X, 1000 x 784: 0.45-0.57 against 0.93 ms), and the kernel steps 4 rows at a time.
ROWS = 8
# Workgroup and vector tiles of the two packs, over their [tiles, K] loops, on AVX-512. IREE's
# (64 by 64 workgroups, which with a build-time K become 64 by 16) read A as hundreds of strided
# rows at once; a workgroup packing one row tile of A over all of K, or one column panel of B
# over 64 rows of K, reads it row by row: the packs took 0.4-0.8 of the time (docs/DECISIONS.md).
# On AVX2 the packs carry no tiles: IREE's pack microkernels run them (einc/target.py).
PACK_TILES = {"avx512": (([1, 0], [1, 16]), ([1, 64], [1, 1]))}
# The mmt4d's workgroup (row tiles, column tiles) and block of K, blocked for the core's caches
# on AVX2 (512 KB of L2 on a Zen 3): 12 x 8 tiles over blocks of 256 keep A's block (96 rows,
# 96 KB) and B's (128 columns, 128 KB) in L2, and A's tile row in L1 across B's 8 tiles. IREE's
# own (5 x 2 tiles over all of K) reads B from L3 again for every 30 rows, which other
# processes' traffic made 1.3x slower at n = 1024 (docs/DECISIONS.md). None elsewhere: IREE's.
KERNEL_BLOCKS = {"avx2": ((12, 8), 256)}


def register_tile(unit: str) -> tuple[int, int]:
    """Rows of A and columns of B of a tile on vector unit `unit`: 8 rows by two vectors of B
    (AVX-512 8 x 32, AVX2 8 x 16)."""
    return ROWS, 2 * VECTOR_REGISTERS[unit].lanes


def kernel_step(unit: str) -> tuple[int, int]:
    """Rows and columns of the mmt4d's vector step: the tile's columns by as many of its rows
    (halved until they fit) as have two accumulators each in the registers that B's two vectors
    and A's broadcast leave (AVX-512 all 8; AVX2 4 of 8, where 6 would fit but do not divide 8)."""
    rows, columns = register_tile(unit)
    while 2 * rows + 3 > VECTOR_REGISTERS[unit].count:
        rows //= 2
    return rows, columns


def emit(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """The matmul `found` through einc's own register tiles, or None where IREE's stay. A
    right operand known at build time (a layer's weights) is packed then, by NumPy: IREE packs
    a constant read from the parameter archive at every call."""
    unit = host_unit(lw.target)
    if unit is None or not applies(unit, found):
        return None
    right = _constant_right(found)
    if right is None:
        return emit_named(lw, found, init, build=partial(register_tiled, unit=unit))
    packed = lw.lower(lw.keep(Const(register_tile_layout(right, unit), found.views[1].read.tensor.span)))
    return emit_named(lw, found, init, build=partial(register_tiled, unit=unit, packed_right=True),
                      given={1: packed})


def host_unit(target: Target) -> Optional[str]:
    """The vector unit einc's register tiles are chosen for, None where IREE's stay."""
    return vector_unit() if target.register_tiled_matmuls else None


def applies(unit: str, found: Match) -> bool:
    if found.pattern.op != "matmul" or any(v.read.dtype != F32 for v in found.views):
        return False
    sizes = [_extent(axis) for axis in found.out]
    if _computed_left_of_run_time_depth(found):
        return False
    return all(size is None or size >= tile for size, tile in zip(sizes, register_tile(unit)))


def _computed_left_of_run_time_depth(found: Match) -> bool:
    """IREE-25: packs of a computed A over a run-time K fail to compile, so a matmul whose A the
    program computes and whose K is known only at run time keeps IREE's data tiling."""
    depth = [v for axis in found.operand_axes[0] for v in axis.vars if v not in _vars(found.out)]
    return not isinstance(found.views[0].read.tensor, Input) and any(not v.extent.is_const for v in depth)


def _constant_right(found: Match) -> Optional[np.ndarray]:
    """B[k, n] when the right operand reads a build-time array (or a slice of one at
    build-time subscripts) at one bare variable per axis."""
    view, axes = found.views[1], found.operand_axes[1]
    tensor = view.read.tensor
    if not isinstance(tensor, Const) or any(len(a.vars) != 1 or a.stride for a in axes):
        return None
    if view.keep or view.pad_lo or view.splits or view.windows or view.order or view.merges:
        return None
    if any(at is not None and not at.is_const for at in view.fixed):
        return None
    index = tuple(slice(None) if at is None else at.const for at in view.fixed)
    matrix = tensor.array[index] if view.fixed else tensor.array
    perm = found.perms[1] if found.perms else None
    return matrix if perm is None else matrix.transpose(perm)


def register_tile_layout(b: np.ndarray, unit: str) -> np.ndarray:
    """b [K, N] as linalg.pack lays it out for mmt4d on `unit`: [N/32, K, 32, 1] on AVX-512, the
    last tile zero-padded."""
    k, n = b.shape
    columns = register_tile(unit)[1]
    padded = np.zeros((k, -(-n // columns) * columns), b.dtype)
    padded[:, :n] = b
    return np.ascontiguousarray(padded.reshape(k, -1, columns).transpose(1, 0, 2)[..., None])


def _vars(axes: list) -> set:
    return {v for axis in axes for v in axis.vars}


def _extent(axis: Axis) -> Optional[int]:
    """A result axis's static length (a run's product), or None when a size is a run-time dim."""
    length = 1
    for v in axis.vars:
        if not v.extent.is_const:
            return None
        length *= v.extent.const
    return length


def register_tiled(ins: list[ir.Value], out: ir.Value, unit: str, packed_right: bool = False) -> ir.Value:
    """out[m, n] = sum[k](a[m, k] * b[k, n]) as pack, mmt4d and unpack: on AVX-512 a packed to
    [M/8, K, 8, 1], b to [N/32, K, 32, 1] (both zero-padded; b given so with `packed_right`),
    the product [M/8, N/32, 8, 32] (register_tile)."""
    a, b = ins
    rows, columns = register_tile(unit)
    left_tiles, right_tiles = PACK_TILES.get(unit, (None, None))
    element = ir.RankedTensorType(out.type).element_type
    zero = arith.constant(element, 0.0)
    m, k, n = _size(a, 0), _size(a, 1), _size(out, 1)
    row_tiles, column_tiles = _tiles(m, rows), _tiles(n, columns)
    packed_a = linalg.pack(a, tensor.empty([row_tiles, k, rows, 1], element), [0, 1], [rows, 1],
                           padding_value=zero)
    if not _computed_by_linalg(a):
        packed_a = _tiled(packed_a, left_tiles)
    packed_b = b if packed_right else _tiled(linalg.pack(
        b, tensor.empty([column_tiles, k, columns, 1], element), [1, 0], [columns, 1],
        padding_value=zero, outer_dims_perm=[1, 0]), right_tiles)
    product = linalg.fill(zero, outs=[tensor.empty([row_tiles, column_tiles, rows, columns], element)])
    product = _blocked(linalg.mmt4d(packed_a, packed_b, outs=[product]), KERNEL_BLOCKS.get(unit), kernel_step(unit))
    return linalg.unpack(product, tensor.empty([m, n], element), [0, 1], [rows, columns])


def _blocked(product: ir.Value, blocks: Optional[tuple[tuple[int, int], int]], step: tuple[int, int]) -> ir.Value:
    """The mmt4d computing `product` carrying its workgroup of (row tiles, column tiles) and
    its block of K (none: IREE's), its vector step `step` (rows, columns) a step of K."""
    if blocks is None:
        return product
    (row_tiles, column_tiles), depth = blocks
    product.owner.attributes["compilation_info"] = compilation_info(
        {"distribution": [row_tiles, column_tiles, 0, 0, 0, 0], "cache_reduction": [0, 0, depth, 0, 0, 0],
         "vector_common_parallel": [1, 1, 0, *step, 0], "vector_reduction": [0, 0, 1, 0, 0, 1]}, "Mmt4dTilingExpert")
    return product


_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


def _computed_by_linalg(value: ir.Value) -> bool:
    """Whether a linalg op computes `value`: IREE fuses it into the pack's dispatch, where a row
    tile over all of K vectorizes the producer at rows x K (14 x 768 was over its 32 KB limit)."""
    owner = value.owner
    while not isinstance(owner, ir.Block) and owner.name in _RESHAPES:
        owner = owner.operands[0].owner
    return not isinstance(owner, ir.Block) and owner.name.startswith("linalg.")


def _tiled(pack: ir.Value, tiles: Optional[tuple[list[int], list[int]]]) -> ir.Value:
    """`pack` carrying its workgroup and vector tiles for IREE's data-tiling pipeline (none: as
    it is)."""
    if tiles is None:
        return pack
    distribution, vector = tiles
    pack.owner.attributes["compilation_info"] = compilation_info(
        {"distribution": distribution, "vector_common_parallel": vector}, "DataTiling")
    return pack


def _size(value: ir.Value, axis: int):
    """An axis's length as tensor.empty takes it: the int, or the tensor's dim when dynamic."""
    size = ir.RankedTensorType(value.type).get_dim_size(axis)
    return tensor.dim(value, _index(axis)) if size == DYNAMIC else size


def _tiles(size, tile: int):
    """How many tiles of `tile` cover `size` (the last one padded)."""
    if isinstance(size, int):
        return -(-size // tile)
    return arith.ceildivui(size, _index(tile))


def _index(n: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), n)
