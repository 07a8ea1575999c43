"""Static bounds checks (E005) and the `Read.in_bounds` fact the lowering relies on.

A read whose subscripts are affine is checked over the whole iteration domain: if some point
surely leaves the array it is an error, unless the read sits under a guard or an `if` (zero
padding is written that way), in which case the lowering clamps it. A read proven inside the
array for every admissible size is marked `in_bounds`, which allows an affine indexing map; one
outside any guard is `strict`: whatever the sizes, it must stay inside (checked before a run,
passes/size_facts), never be clamped. So a strict read with affine subscripts is `in_bounds`
too, unless a length computed on the device, which no check before a run knows, bounds it:
`X[n, c, 3 * h + a]` for h in 0..P is a pooling's operand where the run checks 3 P <= H.

A range that depends on outer indices (`sum[k in 0..i]`) runs over its hull behind guards that
keep it to its real range, so its reads are clamped like guarded ones; but they happen at every
point of the real ranges, so one that surely leaves the array at such a point is an error too,
and where that depends on run-time sizes the subscripts at those points are kept on the read
(`Read.extreme_points`) for the runner to check before a run.
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir import affine, clamped
from einc.ir.nodes import IndexVar, Read, StateRead, Value
from einc.ir.types import DataSize, Lin
from einc.semantics.core import coverage


def check_reads(body: Value, guard, state, span) -> None:
    coverage.check_piecewise_reads([body], () if guard is None else (guard,), state.hull_only_reads)
    if guard is not None:
        coverage.check_piecewise_reads([guard], (), state.hull_only_reads)
    for read in _reads([body] + ([guard] if guard is not None else [])):
        hull_only = id(read) in state.hull_only_reads
        if isinstance(read, StateRead):
            if not hull_only and id(read) not in state.guarded_reads:
                _check_state_read(read)
            continue
        _check(read, hull_only or id(read) in state.guarded_reads)
        if hull_only:
            _check_in_real_ranges(read, state.hull_ranges, state.window_starts)


def _reads(roots) -> list:
    """Reads in a body, not descending into the program-level tensors they read."""
    out, seen, stack = [], set(), list(roots)
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, (Read, StateRead)):
            out.append(v)
            stack.extend(v.subs)
        elif v.rank == 0:
            stack.extend(v.operands())
    return out


def _check(read: Read, guarded: bool) -> None:
    if any(isinstance(k, IndexVar) and k.is_empty for sub in read.subs
           for k in (affine.affine_of(sub) or {}).keys()):
        read.in_bounds, read.strict = False, False      # over an empty range (`9..2`) it never runs
        return
    proven, checked = True, not guarded
    for axis, sub in enumerate(read.subs):
        lin = affine.affine_of(sub)
        if lin is None or any(getattr(k, "extent", 0) is None for k in lin.keys()):
            proven = checked = False
            continue
        lo, hi = affine.bounds(lin)
        last = read.tensor.shape[axis] - 1
        if not guarded:
            _check_range(read, axis, lo, hi, read.tensor.shape[axis])
        proven = proven and affine.surely_nonnegative(lo) and affine.surely_nonnegative(last - hi)
        checked = checked and not any(isinstance(k, DataSize) for k in (lo - last).keys() | hi.keys())
    read.in_bounds = proven or checked
    read.strict = not guarded



def _check_range(read, axis: int, lo, hi, size) -> None:
    """E005 when subscript `axis`, ranging over [lo, hi], surely leaves an axis of `size`."""
    if affine.surely_negative(lo) or affine.surely_negative(size - 1 - hi):
        bad = lo if affine.surely_negative(lo) else hi
        raise d.error(d.BOUNDS, f"read out of bounds: subscript {axis} ranges over "
                      f"[{lo!r}, {hi!r}] but the axis has size {size!r}",
                      read.span, hint=f"at the extreme point the subscript is {bad!r}; "
                      "narrow the index range or guard the read with `where`")


def _check_state_read(read: StateRead) -> None:
    """A recurrence member read at a point inside its group: the axes after the step (whose
    reads the recurrence checks itself, naming the steps) are checked as any read's."""
    for axis in range(1, len(read.subs)):
        lin, size = affine.affine_of(read.subs[axis]), read.member.shape[axis]
        if lin is None or size is None or any(getattr(k, "extent", 0) is None for k in lin.keys()):
            continue
        _check_range(read, axis, *affine.bounds(lin), size)


# Corners of the outer ranges tried for a read in a range that depends on them: 2 ** 4 at most.
_MAX_OUTER_INDICES = 4


def _check_in_real_ranges(read: Read, hull_ranges: dict, window_starts: dict) -> None:
    """E005 for a read in ranges that depend on outer indices when, at a corner of the outer
    indices' ranges where those ranges are not empty, an end of them puts a subscript surely
    outside the array. Affine subscripts are largest and smallest at such points; a read whose
    extreme lies elsewhere stays clamped as before. A window's offset is checked as the index it
    stands for (`window_starts`: offset -> (that index, the window's start)), whose real range
    hull_ranges holds."""
    lins = [affine.affine_of(sub) for sub in read.subs]
    if any(lin is None for lin in lins):
        return
    shift = {var: Lin.of(index) - start for var, (index, start) in window_starts.items()
             if any(var in lin.keys() for lin in lins)}
    lins = [lin.substitute(shift) for lin in lins] if shift else lins
    dependent = [k for k in dict.fromkeys(k for lin in lins for k in lin.keys()) if k in hull_ranges]
    outer = _outer_indices(dependent, hull_ranges, window_starts)
    if not dependent or outer is None:
        return
    for corner in _corners(outer):
        for point in _range_ends(dependent, hull_ranges, corner):
            _check_point(read, lins, {**corner, **point})


def _outer_indices(dependent: list, hull_ranges: dict, window_starts: dict):
    """The index variables the dependent ranges' bounds read, or None when they cannot be
    enumerated (a bound reads another dependent range or window, an extent is unknown, too many)."""
    outer = {}
    for var in dependent:
        for bound in hull_ranges[var]:
            for key in bound.keys():
                if key in hull_ranges or key in window_starts or getattr(key, "extent", 0) is None:
                    return None
                if isinstance(key, IndexVar):
                    outer[key] = None
    return list(outer) if len(outer) <= _MAX_OUTER_INDICES else None


def _corners(outer: list) -> list[dict]:
    corners = [{}]
    for var in outer:
        ends = [var.lo, var.lo + var.extent - 1]
        corners = [{**c, var: end} for c in corners for end in ends]
    return corners


def _range_ends(dependent: list, hull_ranges: dict, corner: dict) -> list[dict]:
    """Each dependent index at the first or last point of its range at `corner` (none where a
    range may be empty there)."""
    points = [{}]
    for var in dependent:
        # a min or max (einc.ir.clamped) names only sizes at a corner: its value is a size
        lo_at, hi_at = (bound.substitute(corner) for bound in hull_ranges[var])
        lo, hi = clamped.low(lo_at), clamped.high(hi_at)
        if lo is None or hi is None:
            return []
        if not affine.surely_nonnegative(hi - lo - 1):
            return []
        points = [{**p, var: end} for p in points for end in (lo, hi - 1)]
    return points


def _check_point(read: Read, lins: list, point: dict) -> None:
    for axis, lin in enumerate(lins):
        at = lin.substitute(point)
        if any(getattr(k, "extent", 0) is None for k in at.keys()):
            continue
        lo, hi = affine.bounds(at)
        # the other indices (`i` in `s[i + k]`, k in 0..l + 1) take their ends too: both are
        # subscripts read at some point of the real ranges
        read.extreme_points += ((axis, at),) if not any(isinstance(k, IndexVar) for k in at.keys()) \
            else ((axis, lo), (axis, hi))
        last = read.tensor.shape[axis] - 1
        bad = lo if affine.surely_negative(lo) else hi if affine.surely_negative(last - hi) else None
        if bad is not None:
            where = ", ".join(f"{var.name} = {value!r}" for var, value in point.items())
            raise d.error(d.BOUNDS, f"read out of bounds: subscript {axis} is {bad!r} at {where} "
                          f"but the axis has size {read.tensor.shape[axis]!r}", read.span,
                          hint="narrow the index range or guard the read with `where`")
