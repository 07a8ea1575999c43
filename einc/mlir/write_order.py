"""The order a piecewise tensor's clauses are written in: the program's, except that a clause
that provably shares no point with the clauses before it may go first, and does when it starts
earlier in memory (row-major). So clauses that do not overlap are written in ascending order.

IREE 3.13 turns each constant clause into a fill of a byte range and merges two fills in a row
of one value over adjacent ranges; when the second range ends where the first starts it merges
them wrongly ("'stream.async.fill' op has invalid Write access range"): `p[i in 3..6] = 6;
p[i in 1..3] = 6`. Found by the differential fuzzer (programs-0014, seed 1 program 223);
tests/fuzz/regressions/adjacent_constant_clauses_written_backwards.ein. Boxes may have sizes in
them (`p[i in 1..T + 1, j] = 0.9; p[0, 1] = 0.9`: IREE failed at run time, reading past a buffer,
fuzz seed 41 program 397): they are disjoint when an end surely lies before a start.
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
