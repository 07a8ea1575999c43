"""The range an affine read gives an index (LANGUAGE.md section 9: ranges from affine reads).

`let d[i] = v[i + 1];` over v of length 5 gives i the range 0..4: the largest range starting at
0 for which the read stays inside v at every point, over the whole range of the other indices
in the subscript (`sum[k in 0..j + 1](v[j - k])` gives j 0..5; `X[oh + kh]` with kh in 0..3
gives oh 0..H - 2; `img[2 * i + di]` with di in 0..2 gives i 0..(n - 2) / 2 + 1). A plain read
`v[i]`, when there is one, decides instead (einc.semantics.core.state); the others are then only
bounds-checked.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from einc import diagnostics as d
from einc.ir import affine
from einc.ir.types import Lin, Quotient


@dataclass
class AffineRead:
    """One axis of a read whose subscript is affine in the index being inferred."""
    sub: Lin              # the subscript
    size: Lin             # the axis it reads
    span: object
    what: str             # e.g. "v[i + 1] (axis 0 of v)"


def extent_from(var, read: AffineRead, dependent: dict) -> Optional[Lin]:
    """The largest extent of `var` (from 0) keeping `read` inside its axis; None when the read
    does not bound it (var only moves it away from the end it could leave, or another index
    in the subscript has no known range yet). `dependent`: reduction index -> (lo, hi) Lins
    for ranges that depend on outer indices (`k in 0..j + 1`)."""
    highest = _extreme(read.sub, var, dependent, upper=True)
    lowest = _extreme(read.sub, var, dependent, upper=False)
    if highest is None or lowest is None:
        return None
    limits = []
    c, rest = _split(highest, var)
    if c > 0:        # c * (E - 1) + rest <= size - 1
        limits.append(_floor_div(read.size - 1 - rest, c) + 1)
    c, rest = _split(lowest, var)
    if c < 0:        # c * (E - 1) + rest >= 0
        limits.append(_floor_div(rest, -c) + 1)
    if not limits:
        return None
    extent = smallest(limits, read.span)
    if affine.surely_nonnegative(-extent):
        raise d.error(d.SHAPE, f"no value of `{var.name}` keeps {read.what} inside the array: "
                      f"the range it allows is empty", read.span,
                      hint=f"check the offsets in the subscript, or give `{var.name}` a range")
    return extent


def smallest(extents: list, span, whats: Optional[list] = None) -> Lin:
    """The smallest of `extents` (the intersection of ranges from 0); E004 when sizes make the
    comparison undecidable."""
    best, best_k = extents[0], 0
    for k, e in enumerate(extents[1:], 1):
        if affine.surely_nonnegative(best - e):
            best, best_k = e, k
        elif not affine.surely_nonnegative(e - best):
            which = f" ({whats[best_k]} and {whats[k]})" if whats else ""
            raise d.error(d.SHAPE, f"cannot tell which read bounds the index more: {best!r} or "
                          f"{e!r}{which}", span, hint="give the index its range explicitly")
    return best


def _extreme(sub: Lin, var, dependent: dict, upper: bool) -> Optional[Lin]:
    """The largest (or smallest) value of `sub` over every index but `var`, as a Lin in var
    and sizes; None if some index has no range yet."""
    lin = sub
    for _ in range(8):                      # dependent ranges may name further indices
        others = [k for k in lin.keys() if k is not var and hasattr(k, "extent")]
        if not others:
            return lin
        key = others[0]
        high_end = (lin.terms[key] > 0) == upper
        if key.extent is not None:
            value = key.lo + key.extent - 1 if high_end else key.lo
        elif key in dependent and all(isinstance(b, Lin) for b in dependent[key]):
            lo, hi = dependent[key]
            value = hi - 1 if high_end else lo
        else:       # no range yet, or one clamped by a min or max: the read bounds nothing
            return None
        lin = lin.substitute({key: value})
    return None


def _split(lin: Lin, var) -> tuple[int, Lin]:
    c = lin.terms.get(var, 0)
    return c, lin - Lin.of(var, c)


def _floor_div(numer: Lin, c: int) -> Lin:
    if c == 1:
        return numer
    if numer.is_const:
        return Lin(numer.const // c)
    return Lin.of(Quotient(numer, c))
