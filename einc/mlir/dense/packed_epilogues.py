"""Operands IREE cannot pack beside a data-tiled contraction's result, kept out of its dispatch,
and producers of a packed operand kept out of the pack's.

CPU data tiling fuses an elementwise consumer of a matmul (batch matmul, matvec, vecmat) into
the contraction's dispatch, in its packed layout, and packs the consumer's other operands to
match. Two kinds of operand fail to compile there:

IREE-98: an i1 tensor (a bool input read as a mask: `if keep[n, j] { g[n, j] } else { 0.0 }`
with `g` a matmul): its pack is built with an i8 padding value and fails to verify, or its
load from the packed buffer does. The contraction's result passes a barrier (`fence`) before
such a consumer, which then runs in a dispatch of its own.
IREE-99: llvm-cpu, on AVX2 and AVX-512 hosts alike: a reduction over two or more loops (`sum[t,
e](..)`, the gradient of an embedding read through data) beside a matmul's result, whose pack
IREE fuses into the reduction's dispatch: its vectors reach 16 KiB (AVX2, 8x8x8x8 elements)
or 32 KiB (AVX-512), past IREE's limit. Since einc.passes.invariant_work sums a guarded
reduction's unguarded loops first, that gradient is a one-loop reduction of a matmul's result,
which fails the same way: a one-loop reduction is kept out too, unless it reads the matmul's
result (a row's mean of it, as layer norm takes, is computed after it anyway). The reduction
passes a barrier before the consumer (as IREE-53's beside a batch matmul), which still fuses
into the matmul's dispatch.
IREE-268: llvm-cpu, an operand read at a fixed position along one of its axes (a row of a
matrix, map `(d0) -> (0, d0)`: `pred[t] - x[0, t]` with `pred` a vecmat) beside a matvec's or
vecmat's result: the consumer's loop stays undistributed in the contraction's dispatch and fails
to compile ("write affecting operations on global resources are restricted to workgroup
distributed contexts"). The contraction's result passes a barrier before such a consumer.
IREE-145: IREE fuses a `linalg.pack` into the dispatch of the elementwise op computing its
source (with that op's producers: the previous matmul's unpack, a bias, GELU) and vectorizes
it all at the pack's inner tile: with AVX2's register tiles (cpu_matmuls) vectors of 6 x 1
floats, 6-9x slower than apart, and of 8 x 1 still 1.4-1.6x (docs/IREE_DEFECTS.md). Such a
pack's source passes a barrier for AVX2's left operands, and wherever a tile is not a power of
two; AVX-512's 8-row packs keep the fusion.
"""
from __future__ import annotations

from iree.compiler import ir

from einc.mlir.core.dispatch_captures import fence
from einc.mlir.dense.cpu_matmuls import host_unit, register_tile
from einc.mlir.dense.generic_reads import generics, input_count, is_elementwise, iterators, source
from einc.target import Target

CONTRACTIONS = ("linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat")


def fence_unpackable_epilogue_operands(target: Target, module: ir.Module) -> None:
    """Put the barriers of IREE-98, IREE-99 and IREE-268 (as far as `target` has them) before
    each elementwise consumer of a contraction's result."""
    masks = target.has_defect("IREE-98")
    wide_reductions = target.has_defect("IREE-99")
    fixed_reads = target.has_defect("IREE-268")
    for consumer in generics(module, elementwise_only=True):
        inputs = list(consumer.operands)[:input_count(consumer)]
        sources = [source(v) for v in inputs]
        contractions = [k for k, s in enumerate(sources) if s is not None and s.name in CONTRACTIONS]
        if not contractions:
            continue
        if masks and any(_is_bool(v) for v in inputs):
            _fence_operands(target, consumer, contractions)
        elif fixed_reads and _reads_at_a_fixed_position(consumer) and any(
                sources[k].name in ("linalg.matvec", "linalg.vecmat") for k in contractions):
            _fence_operands(target, consumer, contractions)
        elif wide_reductions and any(sources[k].name == "linalg.matmul" for k in contractions):
            products = [inputs[k] for k in contractions]
            _fence_operands(target, consumer, [k for k, s in enumerate(sources) if _reduction_loops(s) >= 2 or (
                _reduction_loops(s) == 1 and not _reads_any(s, products))])


def _fence_operands(target: Target, consumer, positions: list[int]) -> None:
    """`consumer` reading each operand at `positions` through a barrier (one per value)."""
    fenced: dict = {}
    with ir.InsertionPoint(consumer):
        for k in positions:
            value = consumer.operands[k]
            if value not in fenced:
                fenced[value] = fence(target, value)
            consumer.operands[k] = fenced[value]


def _reads_at_a_fixed_position(consumer) -> bool:
    """Whether an input's indexing map has a constant result (`(d0) -> (0, d0)`)."""
    maps = list(ir.ArrayAttr(consumer.attributes["indexing_maps"]))[:input_count(consumer)]
    return any(isinstance(r, ir.AffineConstantExpr) for m in maps for r in ir.AffineMapAttr(m).value.results)


def _is_bool(value: ir.Value) -> bool:
    kind = value.type
    return isinstance(kind, ir.RankedTensorType) and str(kind.element_type) == "i1"


def _reads_any(op, values: list, depth: int = 8) -> bool:
    """Whether `op` reads one of `values`, directly or through the ops computing its operands (up
    to `depth` ops back): a row's mean of a matmul's result is no reduction beside it."""
    todo, seen = [(op, 0)], set()        # operations hash and compare by the op they stand for
    while todo:
        current, level = todo.pop()
        for operand in current.operands:
            if any(operand == value for value in values):
                return True
            owner = operand.owner
            if level < depth and not isinstance(owner, ir.Block) and owner not in seen:
                seen.add(owner)
                todo.append((owner, level + 1))
    return False


def _reduction_loops(op) -> int:
    if op is None or op.name != "linalg.generic":
        return 0
    return sum("reduction" in it for it in iterators(op))


def fence_odd_tiled_pack_sources(target: Target, module: ir.Module) -> None:
    """IREE-145: a barrier before each pack whose source an elementwise `linalg.generic`
    computes, where `fenced_pack_source` says so for its inner tiles."""
    for pack in _packs(module):
        producer = source(pack.operands[0])
        if producer is None or producer.name != "linalg.generic" or not is_elementwise(producer):
            continue
        if not fenced_pack_source(target, ir.DenseI64ArrayAttr(pack.attributes["static_inner_tiles"])):
            continue
        with ir.InsertionPoint(pack):
            pack.operands[0] = fence(target, pack.operands[0])


def fenced_pack_source(target: Target, inner_tiles) -> bool:
    """IREE-145: whether an elementwise producer of a pack of `inner_tiles` is kept out of the
    pack's dispatch: where a tile is not a power of two, and on an AVX2 host for the packs of
    a left operand (8 x 1: 1.4-1.6x slower fused, as the 6 x 1 tiles before; its right
    operands' packs of 16 x 1 were never fenced)."""
    unit = host_unit(target)
    left_on_avx2 = unit == "avx2" and list(inner_tiles) == [register_tile(unit)[0], 1]
    return left_on_avx2 or not all(_power_of_two(t) for t in inner_tiles)


def _packs(module: ir.Module) -> list:
    found: list = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.pack":
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return found


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0
