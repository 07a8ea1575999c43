"""Mark reads that provably stay inside their tensor (`Read.in_bounds`), program-wide.

The front end marks the reads it builds (einc.semantics.core.bounds). Generated code (derivatives,
adjoint loops) builds new reads, often by substitution, which starts them unproven; the
lowering would then clamp each one with a `tensor.extract`, and a clamped gather inside a
reduction vectorises into very large code. This pass proves them the same way: every affine
subscript's range over its variables' ranges lies inside the axis (after the storage plan,
so reads of a recurrence's window, rewritten to slot indices, are left alone).
"""
from __future__ import annotations

from einc.ir import affine
from einc.ir.nodes import Program, Read, walk


def mark_reads_in_bounds(program: Program) -> None:
    roots = program.roots()
    for group in program.recurrences:
        roots += group.code()
    for v in walk(roots):
        if isinstance(v, Read) and not v.in_bounds:
            v.in_bounds = _proven(v)


def _proven(read: Read) -> bool:
    for axis, sub in enumerate(read.subs):
        lin = affine.affine_of(sub)
        if lin is None or any(getattr(k, "extent", 0) is None for k in lin.keys()):
            return False
        lo, hi = affine.bounds(lin)
        if not (affine.surely_nonnegative(lo) and affine.surely_nonnegative(read.tensor.shape[axis] - 1 - hi)):
            return False
    return True
