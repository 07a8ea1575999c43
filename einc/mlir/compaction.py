"""The `Compact` rule: the rows a run-time filter keeps, gathered into a tensor of run-time length.

Its operands are the candidate rows and the running count of kept rows (a recurrence over the
mask, already lowered). The length is the last count, read back to the host once and defined as
the value of the node's `DataSize`, so every size that names it (shapes, `len`) is an `index`
computed from it. Output row m is the row p where the count first exceeds m: a binary search
over the counts inside the kernel body, as a loop of fixed trip count (the counts never
decrease), then a `tensor.extract` of the row's element.
"""
from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc.ir.nodes import Compact
from einc.mlir.shapes import index_const
from einc.mlir.types import element_type, index_type

MAX_SEARCH_STEPS = 32         # enough for any i32 extent


def compact_value(lw, v: Compact) -> ir.Value:
    kept, source = lw.lower(v.kept), lw.lower(v.source)
    rows = v.source.shape[0]
    count = _length(lw, kept, rows)
    lw.sizes.define(v.length, count)
    steps = MAX_SEARCH_STEPS if not rows.is_const else max(1, rows.const.bit_length())
    init = lw.sizes.empty(v.shape, element_type(v.dtype))
    identity = ir.AffineMap.get_identity(v.rank)
    op = linalg.GenericOp_([], [init], [identity], [linalg.IteratorType.parallel] * v.rank)
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        out_row = linalg.IndexOp(0).result
        row = _first_count_above(kept, out_row, lw.sizes.index(rows), steps)
        within = [linalg.IndexOp(k).result for k in range(1, v.rank)]
        linalg.YieldOp([tensor.extract(source, [row] + within)])
    return op.result


def _length(lw, kept: ir.Value, rows) -> ir.Value:
    """The last running count as a host `index` (0 when there are no rows)."""
    n = lw.sizes.index(rows)
    last = arith.maxsi(arith.subi(n, index_const(1)), index_const(0))
    count = arith.index_cast(index_type(), tensor.extract(kept, [last]))
    if rows.is_const:
        return count
    empty = arith.cmpi(arith.CmpIPredicate.eq, n, index_const(0))
    return arith.select(empty, index_const(0), count)


def _first_count_above(kept: ir.Value, m: ir.Value, rows: ir.Value, steps: int) -> ir.Value:
    """The smallest p in [0, rows) with kept[p] > m (binary search; kept never decreases)."""
    target = arith.index_cast(ir.IntegerType.get_signless(32), m)
    loop = scf.ForOp(index_const(0), index_const(steps), index_const(1),
                     [index_const(0), arith.subi(rows, index_const(1))])
    with ir.InsertionPoint(loop.body):
        lo, hi = loop.inner_iter_args
        mid = arith.divui(arith.addi(lo, hi), index_const(2))
        above = arith.cmpi(arith.CmpIPredicate.sgt, tensor.extract(kept, [mid]), target)
        scf.yield_([arith.select(above, lo, arith.addi(mid, index_const(1))),
                    arith.select(above, mid, hi)])
    return arith.minsi(loop.results[0], arith.maxsi(arith.subi(rows, index_const(1)), index_const(0)))

