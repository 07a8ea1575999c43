"""Static bounds checks (E005) and the `Read.in_bounds` fact the lowering relies on.

A read whose subscripts are affine is checked over the whole iteration domain: if some point
surely leaves the array it is an error, unless the read sits under a guard or an `if` (zero
padding is written that way), in which case the lowering clamps it. A read proven inside the
array for every admissible size is marked `in_bounds`, which allows an affine indexing map; one
outside any guard is `strict`: whatever the sizes, it must stay inside (checked before a run,
passes/size_facts), never be clamped.
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir import affine
from einc.ir.nodes import IndexVar, Read, Value


def check_reads(body: Value, guard, state, span) -> None:
    for read in _reads([body] + ([guard] if guard is not None else [])):
        _check(read, id(read) in state.guarded_reads)


def _reads(roots) -> list:
    """Reads in a body, not descending into the program-level tensors they read."""
    out, seen, stack = [], set(), list(roots)
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, Read):
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
    proven = True
    for axis, sub in enumerate(read.subs):
        lin = affine.affine_of(sub)
        if lin is None or any(getattr(k, "extent", 0) is None for k in lin.keys()):
            proven = False
            continue
        lo, hi = affine.bounds(lin)
        last = read.tensor.shape[axis] - 1
        if not guarded and (affine.surely_negative(lo) or affine.surely_negative(last - hi)):
            bad = lo if affine.surely_negative(lo) else hi
            raise d.error(d.BOUNDS, f"read out of bounds: subscript {axis} ranges over "
                          f"[{lo!r}, {hi!r}] but the axis has size {read.tensor.shape[axis]!r}",
                          read.span, hint=f"at the extreme point the subscript is {bad!r}; "
                          "narrow the index range or guard the read with `where`")
        proven = proven and affine.surely_nonnegative(lo) and affine.surely_nonnegative(last - hi)
    read.in_bounds = proven
    read.strict = not guarded
