"""Matmuls whose build-time sizes a GPU target's codegen cannot tile. IREE's SPIR-V matmul
configuration picks workgroup and invocation tiles that divide the sizes exactly; where none does
(a size of 3000 or 1000, which 64 does not divide), the matmul falls back to one output an
invocation: on an H200 3000^3 ran at 1.1 TFLOP/s against 19 for 4096^3 (docs/BENCHMARKS.md,
"On an NVIDIA H200"). So the operands are padded with zeros up to the target's multiples
(`Target.matmul_size_multiples`) and the product sliced back, where that adds at most
MAX_PADDED_WORK of its work. Run-time sizes stay as they are: IREE configures no tiles for them."""
from __future__ import annotations

from functools import partial
from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import linalg, tensor

from einc.mlir.core.shapes import index_const
from einc.mlir.dense.named_ops import Match, emit as emit_named
from einc.mlir.dense.width_blocks import zeros_after

DYNAMIC = ir.ShapedType.get_dynamic_size()
# The padded product may do at most this much of the work of the one written: the fallback is
# 10-17x slower than the tiled kernel on an H200, so twice the work is still a large gain.
MAX_PADDED_WORK = 2.0
PADDED_OPS = ("matmul", "batch_matmul")


def emit(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """A matmul or batch matmul of float operands on a target that asks for padded sizes; None
    elsewhere (the named op as it is)."""
    multiples = lw.target.matmul_size_multiples
    if multiples is None or found.pattern.op not in PADDED_OPS or not all(v.read.dtype.is_float for v in found.views):
        return None
    return emit_named(lw, found, init, build=partial(padded_product, op=found.pattern.op, multiples=multiples))


def padded_product(ins: list[ir.Value], out: ir.Value, op: str, multiples: tuple[int, int, int]) -> ir.Value:
    """`op`(a, b) into `out` (identity-filled) over operands padded with zeros so that M, N and K
    are multiples of `multiples` (a size under its multiple stays), sliced back to `out`'s shape;
    the op as it is when no size needs it or padding would cost more than MAX_PADDED_WORK."""
    a, b = ins
    lead = ir.RankedTensorType(a.type).rank - 2
    m, k = ir.RankedTensorType(a.type).shape[lead:]
    n = ir.RankedTensorType(b.type).shape[-1]
    padded = padded_sizes((m, n, k), multiples)
    if padded is None:
        return getattr(linalg, op)(a, b, outs=[out])
    pm, pn, pk = padded
    a = _padded(a, lead, (pm - m, pk - k))
    b = _padded(b, lead, (pk - k, pn - n))
    product = getattr(linalg, op)(a, b, outs=[_padded(out, lead, (pm - m, pn - n))])
    shape = ir.RankedTensorType(out.type).shape
    batch = [tensor.dim(out, index_const(k)) for k, size in enumerate(shape) if size == DYNAMIC]
    return tensor.extract_slice(out.type, product, [], batch, [], [0] * len(shape), shape, [1] * len(shape))


def padded_sizes(sizes: tuple[int, int, int], multiples: tuple[int, int, int]) -> Optional[tuple[int, int, int]]:
    """(M, N, K) rounded up to `multiples`, or None when a size is of run-time length, all are
    multiples already, or the padded product would do over MAX_PADDED_WORK times the work."""
    if DYNAMIC in sizes:
        return None
    padded = tuple(s if s < q else -(-s // q) * q for s, q in zip(sizes, multiples))
    if padded == tuple(sizes) or padded[0] * padded[1] * padded[2] > MAX_PADDED_WORK * sizes[0] * sizes[1] * sizes[2]:
        return None
    return padded


def _padded(value: ir.Value, lead: int, highs: tuple[int, int]) -> ir.Value:
    """`value` with `highs` zeros after the ends of its last two axes (after `lead` batch axes)."""
    highs = {axis: high for axis, high in zip((lead, lead + 1), highs) if high}
    return zeros_after(value, highs) if highs else value
