"""Comparisons of index arithmetic that the indices' ranges decide (`w >= 1` with w in 0..1),
folded in a reduction's body before its kernel is planned.

IREE-10: IREE folds them too, and a reduction whose summed value then comes from no operand is
vectorized wrongly. Folded here first, the reads of a dead branch are no operands, and such
loops run as scalar loops in the region (kernels._loop_vars).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from einc.ir import affine, traversal
from einc.ir.nodes import Const, Op, Value, decided_by_a_constant

# a comparison `a OP b` holds when this Lin of (a - b) is >= 0 (integers)
_HOLDS = {"ge": lambda d: d, "gt": lambda d: d - 1, "le": lambda d: -d, "lt": lambda d: -d - 1}


def fold(lw, v: Optional[Value]) -> Optional[Value]:
    """`v` with decided comparisons as constants, and the `and`, `or` and `select` over them
    the sides they pick (einc.ir.nodes.decided_by_a_constant); nodes other than scalar
    operations are kept as they are."""
    if v is None:
        return None
    return traversal.fold(v, _scalar_operands,
                          lambda node, args: _folded(lw, node, tuple(args)) if isinstance(node, Op) else node, {})


def _scalar_operands(node: Value) -> tuple:
    return node.args if isinstance(node, Op) else ()


def _folded(lw, op: Op, args: tuple) -> Value:
    truth = _decided(op.op, args) if op.op in _HOLDS else None
    if truth is not None:
        return lw.keep(Const(np.asarray(truth)))
    picked = decided_by_a_constant(op.op, list(args))
    if picked is not None:
        return picked
    if all(a is b for a, b in zip(args, op.args)):
        return op
    return lw.keep(Op(op.op, args, op.dtype, span=op.span))


def _decided(name: str, args: tuple) -> Optional[bool]:
    a, b = (affine.affine_of(x) for x in args)
    if a is None or b is None or any(getattr(k, "extent", 0) is None for k in (a - b).keys()):
        return None
    low, high = affine.bounds(_HOLDS[name](a - b))
    if affine.surely_nonnegative(low):
        return True
    if affine.surely_negative(high):
        return False
    return None
