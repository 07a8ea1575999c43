"""The order a piecewise tensor's clauses are written in: the program's, except that a clause
that provably shares no point with the clauses before it may go first, and does when it starts
earlier in memory (row-major). So clauses that do not overlap are written in ascending order.

IREE 3.13 turns each constant clause into a fill of a byte range and merges two fills in a row
of one value over adjacent ranges; when the second range ends where the first starts it merges
them wrongly ("'stream.async.fill' op has invalid Write access range"): `p[i in 3..6] = 6;
p[i in 1..3] = 6`. Found by the differential fuzzer (programs-0014, seed 1 program 223);
tests/fuzz/regressions/adjacent_constant_clauses_written_backwards.ein.
"""
from __future__ import annotations

from typing import Optional

from einc.ir.types import Lin


def write_order(clauses: tuple, shape: tuple) -> list:
    boxes = [_box(c.offsets, c.value.shape) for c in clauses]
    starts = [_row_major_start(box, shape) for box in boxes]
    left = list(range(len(clauses)))
    order = []
    while left:
        ready = [k for k in left if all(_disjoint(boxes[j], boxes[k]) for j in left if j < k)]
        first = min(ready, key=lambda k: (starts[k], k))
        order.append(clauses[first])
        left.remove(first)
    return order


def _box(offsets: tuple, value_shape: tuple) -> Optional[list]:
    """[(first, end)] per axis of the tensor, the clause's points; None unless all constant.
    A clause's value may have fewer axes than the tensor: leading axes of one point."""
    sizes = [Lin(1)] * (len(offsets) - len(value_shape)) + list(value_shape)
    if not all(x.is_const for x in list(offsets) + sizes):
        return None
    return [(o.const, o.const + n.const) for o, n in zip(offsets, sizes)]


def _disjoint(a: Optional[list], b: Optional[list]) -> bool:
    if a is None or b is None:
        return False
    return any(a_end <= b_first or b_end <= a_first for (a_first, a_end), (b_first, b_end) in zip(a, b))


def _row_major_start(box: Optional[list], shape: tuple) -> float:
    """The position of the clause's first point in memory; a clause with a symbolic box keeps
    its place (it overlaps every clause as far as the order knows, so none passes it)."""
    if box is None or not all(n.is_const for n in shape):
        return float("inf")
    position = 0
    for (first, _), n in zip(box, shape):
        position = position * n.const + first
    return position
