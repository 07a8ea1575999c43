"""How f32 matmuls run fastest on an AVX-512 host (measured: benchmarks/, the matmul rows).

IREE's data tiling packs a matmul's operands into 16x16 register tiles: 17 loads for 16 FMAs a
step of K, and no option chooses another tile. So einc packs the operands into REGISTER_TILE
itself (14 rows of A by 32 columns of B: 28 of the 32 vector registers accumulate, 16 loads for
28 FMAs) and runs `linalg.mmt4d` on them, which IREE vectorizes (0.83x NumPy against 0.68x at
n = 1024). IREE's mmt4d microkernel has no such tile, so llvm-cpu builds without microkernels.
Elsewhere (llvm-cpu-generic, a host without AVX-512, other element types, a static M under 14
or N under 32, an A the program computes summed over a run-time K, Vulkan) the matmul stays a
`linalg.matmul` for IREE. Figures and the tiles tried: docs/DECISIONS.md, Dense kernels.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.host_cpu import has_avx512
from einc.ir.nodes import Input
from einc.ir.types import F32
from einc.mlir.dense.named_ops import Axis, Match, emit as emit_named
from einc.target import Target

REGISTER_TILE = (14, 32)        # rows of A, columns of B
DYNAMIC = ir.ShapedType.get_dynamic_size()


def emit(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """The matmul `found` through einc's own register tiles, or None where IREE's stay."""
    if not applies(lw.target, found):
        return None
    return emit_named(lw, found, init, build=register_tiled)


def applies(target: Target, found: Match) -> bool:
    if not target.register_tiled_matmuls or found.pattern.op != "matmul" or not has_avx512():
        return False
    if any(v.read.dtype != F32 for v in found.views):
        return False
    sizes = [_extent(axis) for axis in found.out]
    if _computed_left_of_run_time_depth(found):
        return False
    return all(size is None or size >= tile for size, tile in zip(sizes, REGISTER_TILE))


def _computed_left_of_run_time_depth(found: Match) -> bool:
    """IREE-25: packs of a computed A over a run-time K fail to compile, so a matmul whose A the
    program computes and whose K is known only at run time keeps IREE's data tiling."""
    depth = [v for axis in found.operand_axes[0] for v in axis.vars if v not in _vars(found.out)]
    return not isinstance(found.views[0].read.tensor, Input) and any(not v.extent.is_const for v in depth)


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


def register_tiled(ins: list[ir.Value], out: ir.Value) -> ir.Value:
    """out[m, n] = sum[k](a[m, k] * b[k, n]) as pack, mmt4d and unpack: a packed to
    [M/14, K, 14, 1], b to [N/32, K, 32, 1] (both zero-padded), the product [M/14, N/32, 14, 32]."""
    a, b = ins
    rows, columns = REGISTER_TILE
    element = ir.RankedTensorType(out.type).element_type
    zero = arith.constant(element, 0.0)
    m, k, n = _size(a, 0), _size(a, 1), _size(b, 1)
    row_tiles, column_tiles = _tiles(m, rows), _tiles(n, columns)
    packed_a = linalg.pack(a, tensor.empty([row_tiles, k, rows, 1], element), [0, 1], [rows, 1],
                           padding_value=zero)
    packed_b = linalg.pack(b, tensor.empty([column_tiles, k, columns, 1], element), [1, 0], [columns, 1],
                           padding_value=zero, outer_dims_perm=[1, 0])
    product = linalg.fill(zero, outs=[tensor.empty([row_tiles, column_tiles, rows, columns], element)])
    product = linalg.mmt4d(packed_a, packed_b, outs=[product])
    return linalg.unpack(product, tensor.empty([m, n], element), [0, 1], [rows, columns])


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
