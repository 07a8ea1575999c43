"""The `Compact` rule: the rows a run-time filter keeps, gathered into a tensor of run-time length.

Its operands are the candidate rows, the running count of kept rows (a recurrence over the
mask) and their number (a sum over the mask), already lowered. The number is read back to the
host once and defined as the value of the node's `DataSize`, so every size that names it
(shapes, `len`) is an `index` computed from it. Output row m is the row p where the count first exceeds m: a binary search
over the counts inside the kernel body, as a loop of fixed trip count (the counts never
decrease, and kept[p + 1] counts row p), then a `tensor.extract` of the row's element.
"""
from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc.ir.nodes import Compact
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type, index_type, is_tensor

MAX_SEARCH_STEPS = 32         # enough for any i32 extent


def compact_value(lw, v: Compact) -> ir.Value:
    kept, source, count = lw.lower(v.kept), lw.lower(v.source), lw.lower(v.count)
    rows = v.source.shape[0]
    if is_tensor(count):
        count = tensor.extract(count, [])             # the one read-back
    if v.length not in lw.sizes.dims:     # a retyped copy's (a literal's type) is its original's, lowered first
        lw.sizes.define(v.length, arith.index_cast(index_type(), count))
    steps = MAX_SEARCH_STEPS if not rows.is_const else max(1, rows.const.bit_length())
    init = lw.sizes.empty(v.shape, element_type(v.dtype))
    identity = ir.AffineMap.get_identity(v.rank)
    op = linalg.GenericOp_([], [init], [identity], [linalg.IteratorType.parallel] * v.rank)
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        out_row = linalg.IndexOp(0).result
        row = _row_of(kept, out_row, lw.sizes.index(rows), steps)
        within = [linalg.IndexOp(k).result for k in range(1, v.rank)]
        linalg.YieldOp([tensor.extract(source, [row] + within)])
    return op.result


def _row_of(kept: ir.Value, m: ir.Value, rows: ir.Value, steps: int) -> ir.Value:
    """The row that output m comes from: q - 1 for the smallest q in [1, rows] with kept[q] > m
    (binary search; kept never decreases)."""
    target = arith.index_cast(ir.IntegerType.get_signless(32), m)
    loop = scf.ForOp(index_const(0), index_const(steps), index_const(1), [index_const(1), rows])
    with ir.InsertionPoint(loop.body):
        lo, hi = loop.inner_iter_args
        mid = arith.divui(arith.addi(lo, hi), index_const(2))
        above = arith.cmpi(arith.CmpIPredicate.sgt, tensor.extract(kept, [mid]), target)
        scf.yield_([arith.select(above, lo, arith.addi(mid, index_const(1))),
                    arith.select(above, mid, hi)])
    last = arith.maxsi(arith.subi(rows, index_const(1)), index_const(0))
    return arith.minsi(arith.subi(loop.results[0], index_const(1)), last)

