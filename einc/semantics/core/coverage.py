"""A read of a point no clause of a definition defines is E005 (LANGUAGE.md section 10: a
point no clause covers is a diagnostic, at build time when decidable; section 9: a point an
array does not have is E005, never a silent value).

The points a read reaches are a box: the ranges of the indices in its subscripts, cut by the
comparisons that hold where it runs (the `where` guards of its clause and of the reductions
around it, the tests of the `if` branches it is in, except where both branches make it, and
the left sides of the `&&` / `||` it is right of), shifted by its offsets (einc.ir.boxes). Part
of that box that no clause's box holds is reported, named as a slice (`u[0, 1..6]`). A read the build cannot judge (a subscript or guard through data, bounds
of unknown order) runs and reads 0 there. Recurrences read their members the same way
(einc.semantics.forms.recurrence_coverage).
"""
from __future__ import annotations

from typing import Optional

from einc import diagnostics as d
from einc.ir import affine, boxes
from einc.ir.step_reach import branches
from einc.ir.nodes import Generic, IndexVar, Piecewise, Read, RecValue, Reduce, StateRead
from einc.ir.types import Lin


def check_piecewise_reads(roots: list, guards: tuple, skipped: set) -> None:
    """E005 for a read under `roots` (where `guards` hold) of a piecewise definition at a point
    none of its clauses defines; reads whose id is in `skipped` are not judged."""
    for read, inner_guards, _ in guarded_reads(roots, Read, guards, into_tensors=False):
        if isinstance(read.tensor, Piecewise) and read.tensor.name and id(read) not in skipped:
            _check(read, inner_guards)


def guarded_reads(roots: list, kind: type, guards: tuple = (), into_tensors: bool = True) -> list:
    """(read, guards, indices) for each read of `kind` under `roots`: the conditions that hold
    where it runs and the indices of the tensors computed around it (a recurrence step's).
    Without `into_tensors` the walk stays in the scalar body, as the bounds checks do."""
    out, seen = [], set()
    stack = [(r, guards, ()) for r in roots]
    while stack:
        v, held, inner = stack.pop()
        key = (id(v), tuple(map(id, held)), tuple(map(id, inner)))
        if key in seen or isinstance(v, RecValue) or (not into_tensors and v.rank and not isinstance(v, Read)):
            continue
        seen.add(key)
        if isinstance(v, kind):
            out.append((v, held, inner))
        if isinstance(v, (Reduce, Generic)) and v.guard is not None:
            held = held + (v.guard,)
        if isinstance(v, Generic):
            inner = inner + tuple(v.vars)
        if (branched := branches(v)) is not None:
            stack += [(o, held + extra, inner) for o, extra in branched]
            if v.op == "select":
                stack += [(shared, held, inner) for shared in _computed_by_both(v.args[1], v.args[2])]
        elif isinstance(v, Read) and not into_tensors:
            stack.extend((s, held, inner) for s in v.subs)
        else:
            stack.extend((o, held, inner) for o in v.operands())
    return out


WALK_LIMIT = 4000        # nodes a branch is walked through to find what both branches compute


def _computed_by_both(a, b) -> list:
    """The largest parts of the two branches of an `if` that each computes whatever the tests
    inside it are (a lambda's argument `blend(s[t - 1] + x, ..)` used by both of its body's
    branches): they run whichever branch is taken, so their reads are judged without the `if`'s
    test."""
    in_a = _always_computed(a)
    found, stack, seen = [], [b], set()
    while stack and in_a:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if id(v) in in_a or (isinstance(v, (Read, StateRead)) and _read_key(v) in in_a):
            found.append(v)
        else:
            stack.extend(_unconditional_operands(v))
    return found


def _always_computed(v) -> set:
    """The ids of the nodes `v` computes whatever its tests, and the keys of its reads (none
    past WALK_LIMIT nodes)."""
    seen, stack = set(), [v]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.update((id(node), _read_key(node)) if isinstance(node, (Read, StateRead)) else (id(node),))
            stack.extend(_unconditional_operands(node))
            if len(seen) > 2 * WALK_LIMIT:
                return set()
    return seen


def _read_key(v):
    """A read written again (`if c { s[t - 1] * 2.0 } else { s[t - 1] }`) is the same read:
    its array and its affine subscripts; None for other nodes."""
    if not isinstance(v, (Read, StateRead)):
        return None
    subs = tuple(affine.affine_of(sub) for sub in v.subs)
    if any(sub is None for sub in subs):
        return None
    return ("read", id(v.member if isinstance(v, StateRead) else v.tensor)) + subs


def _unconditional_operands(v) -> tuple:
    """The operands `v` computes whenever it is computed: an `if`'s test, not its branches (the
    left side of `&&` too, not its right); a reduction's or a tensor's body runs under its own
    ranges, so it stays whole."""
    if (branched := branches(v)) is not None:
        return tuple(o for o, held in branched if not held)
    if isinstance(v, (Reduce, Generic, RecValue)):
        return ()
    if isinstance(v, (Read, StateRead)):
        return tuple(v.subs)
    return v.operands()


def _check(read: Read, guards: tuple) -> None:
    index_vars = {k for sub in read.subs for k in (affine.affine_of(sub) or Lin(0)).keys() if isinstance(k, IndexVar)}
    if any(v.extent is None for v in index_vars):
        return
    box = boxes.narrowed({v: boxes.full_range(v) for v in index_vars}, guards)
    reached = None if box is None else boxes.read_box(read.subs, box)
    if reached is None:
        return
    piece = _uncovered(read.tensor, reached)
    if piece is not None:
        report(read.tensor.name, piece, read, None)


def _uncovered(p: Piecewise, reached: list) -> Optional[list]:
    """Points of `reached` in `p` that no clause of `p` defines, None when there are none or
    the build cannot tell. A guarded clause counts as its whole box: its own gaps are the
    clause set's check (einc.semantics.forms.guarded_clauses)."""
    if len(p.shape) != len(reached) or any(s is None for s in p.shape):
        return None
    targets = []
    for c in p.clauses:
        if any(v.extent is None for v in c.value.vars):
            return None
        targets.append([(off, off + v.extent - 1) for off, v in zip(c.offsets, c.value.vars)])
    try:
        return boxes.uncovered_slice(reached, [(Lin(0), s - 1) for s in p.shape], targets)
    except boxes.Undecided:
        return None


def report(name: str, piece: list, read, start_guard: Optional[str]) -> None:
    """E005 at `read` naming the points `piece` of `name` that no clause defines, with a hint:
    the clause that would define them (a recurrence's base case), or the start guard that
    skips them (`t > 1`)."""
    text, head = boxes.slice_text(name, piece, read.subs)
    those = "that point" if all(lo == hi for lo, hi in piece) else "those points"
    case = "a base case " if start_guard is not None or isinstance(read, StateRead) else ""
    hint = f"give {those} a clause, e.g. {case}`let {head} = ..;`"
    if start_guard is not None:
        hint += f", or read it under a start guard `if {start_guard} {{ .. }} else {{ .. }}`"
    raise d.error(d.BOUNDS, f"`{text}` is read here, but no clause of `{name}` defines {those}",
                  read.span, hint=hint)
