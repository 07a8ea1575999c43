"""The points a recurrence's clauses read must be points some clause defines (LANGUAGE.md
section 10: a point no clause covers is a diagnostic; thesis 2.2.1: grouping the base clauses
with the recurrent one lets the compiler check that `fib[n - 1]` and `fib[n - 2]` exist).

A read `s[t - 1, j + 1]` in a clause covers a box: the clause's box (its step and index
ranges, narrowed by the comparisons of the guards and `if`s around the read) shifted by the
read's offsets. Where part of that box, inside the member's array, lies in no clause's box the
read is E005, as a read before an array's start is (section 9). Every bound is a linear form
in sizes; the check runs only where the build can order them all. A read whose subscripts past
the step's it cannot follow (`s[t - 1, 3 - k]`) is checked along the steps only: a step at which
no clause defines any point. A read it cannot judge (a data-dependent subscript or guard, bounds
of unknown order) runs, and a point no clause defines reads 0 there.
"""
from __future__ import annotations

from typing import Optional

from einc.ir import affine, boxes
from einc.ir.nodes import IndexRef, IndexVar, RecClause, StateRead
from einc.ir.types import Lin
from einc.semantics.core import coverage


def check_clause(clause: RecClause, members: list, step: IndexVar) -> None:
    """E005 when a read in `clause` (whose step index is `step`) of a member of `members`
    reads a point of it that no clause of that member defines."""
    box = _clause_box(clause, step)
    if box is None:
        return
    roots = [clause.body] + ([clause.guard] if clause.guard is not None else [])
    for read, guards, inner in coverage.guarded_reads(roots, StateRead):
        if read.member in members and all(v.extent is not None for v in inner):
            ranges = {**box, **{v: (v.lo, v.lo + v.extent - 1) for v in inner}}
            _check_read(read, boxes.narrowed(ranges, guards + _guard(clause)))


def _guard(clause: RecClause) -> tuple:
    return () if clause.guard is None else (clause.guard,)


def _check_read(read: StateRead, box: Optional[dict]) -> None:
    if box is None:
        return
    read_box = boxes.read_box(read.subs, box)
    if read_box is None:
        _check_steps_read(read, box)
        return
    piece = _uncovered(read, read_box)
    if piece is not None:
        coverage.report(read.member.name, piece, read, _start_guard(read, box))


def _check_steps_read(read: StateRead, box: dict) -> None:
    """A read whose other subscripts the box check cannot follow (`s[t - 1, 3 - k]`,
    `s[t - 1, k / 2]`) is still E005 where a step it reads is one at which no clause defines
    any point."""
    steps = boxes.read_box(read.subs[:1], box)
    sizes = read.member.shape
    if steps is None or any(size is None for size in sizes):
        return
    targets = [t[:1] for t in (_clause_box(c, None) for c in read.member.clauses) if t is not None]
    try:
        piece = boxes.uncovered_slice(steps, [(Lin(0), sizes[0] - 1)], targets)
    except boxes.Undecided:
        return
    if piece is not None:
        whole_rows = [(Lin(0), size - 1) for size in sizes[1:]]
        # the hint's clause names its other axes as the reading clause does
        axes = [v for v in box if isinstance(v, IndexVar)][1:len(sizes)]
        named = read if len(axes) < len(sizes) - 1 else \
            StateRead(read.member, (read.subs[0],) + tuple(IndexRef(v) for v in axes), span=read.span)
        coverage.report(read.member.name, piece + whole_rows, named, None)


def _uncovered(read: StateRead, read_box: list) -> Optional[tuple]:
    """A box of points of `read_box` in the read member's array that none of its clauses
    defines, None when there is none or when the build cannot tell."""
    targets = [_clause_box(c, None) for c in read.member.clauses]
    if any(t is not None and len(t) != len(read_box) for t in targets):
        return None
    targets = [t for t in targets if t is not None]
    array = [(Lin(0), size - 1) for size in read.member.shape[:len(read_box)]]
    if len(array) != len(read_box) or any(size is None for size in read.member.shape[:len(read_box)]):
        return None
    try:
        return boxes.uncovered_slice(read_box, array, targets)
    except boxes.Undecided:
        return None


def _clause_box(clause: RecClause, step: Optional[IndexVar]):
    """[(first, last)] per axis of the clause's points (keyed by its index variables when
    `step` names the step's), or None while a range is unknown or when one is empty at every
    size (it defines nothing)."""
    if any(v.extent is None for v in clause.vars):
        return None
    ranges = [(clause.t_lo, clause.t_hi - 1)] + [(v.lo, v.lo + v.extent - 1) for v in clause.vars]
    if any(affine.surely_negative(hi - lo) for lo, hi in ranges):
        return None
    if step is None:
        return ranges
    return dict(zip((step,) + tuple(clause.vars), ranges))


def _start_guard(read: StateRead, box: dict) -> Optional[str]:
    """`j > 1` when reading from the next value of an index on leaves no point undefined (a
    read `D[i, j - 1]` over j in 1..N, at its first j), else None."""
    for sub in reversed(read.subs):
        lin = affine.affine_of(sub)
        var = next((k for k in lin.keys() if isinstance(k, IndexVar)), None)
        if var is None:
            continue
        later = {**box, var: (box[var][0] + 1, box[var][1])}
        if affine.surely_negative(later[var][1] - later[var][0]):
            continue
        read_box = boxes.read_box(read.subs, later)
        if read_box is not None and _uncovered(read, read_box) is None:
            return f"{var.name} > {box[var][0]!r}"
    return None
