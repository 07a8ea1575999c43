"""The order a piecewise tensor's clauses are written in: the program's, except that a clause
that provably shares no point with the clauses before it may go first, and does when it starts
earlier in memory (row-major). So clauses that do not overlap are written in ascending order.

IREE-12: IREE merges two fills of one value over adjacent byte ranges wrongly when the second
ends where the first starts; in memory order that never happens. Boxes may have sizes in them:
they are disjoint when an end surely lies before a start.
"""
from __future__ import annotations

from einc.ir.affine import surely_nonnegative
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


def _box(offsets: tuple, value_shape: tuple) -> list:
    """[(first, end)] per axis of the tensor, the clause's points, as linear forms of sizes.
    A clause's value may have fewer axes than the tensor: leading axes of one point."""
    sizes = [Lin(1)] * (len(offsets) - len(value_shape)) + list(value_shape)
    return [(o, o + n) for o, n in zip(offsets, sizes)]


def _disjoint(a: list, b: list) -> bool:
    return any(surely_nonnegative(b_first - a_end) or surely_nonnegative(a_first - b_end)
               for (a_first, a_end), (b_first, b_end) in zip(a, b))


def _row_major_start(box: list, shape: tuple) -> float:
    """The position of the clause's first point in memory (the first axis's size does not
    enter it); a clause whose start depends on sizes keeps its place."""
    if not all(first.is_const for first, _ in box) or not all(n.is_const for n in shape[1:]):
        return float("inf")
    position = 0
    for (first, _), n in zip(box, (Lin(1),) + tuple(shape[1:])):
        position = position * n.const + first.const
    return position
