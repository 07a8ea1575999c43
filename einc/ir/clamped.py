"""Range bounds clamped with `min` and `max`: `sum[j in max(0, i - 1)..min(N, i + 2)]`.

Such a bound is a `Clamp`: the min or max of affine forms (or of other clamps). A reduction
range that depends on outer indices runs over its hull behind guards that keep each point to
its own range (semantics.forms.definitions); `low` and `high` give the hull's ends as Lins in
sizes, as affine.bounds does for an affine bound.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional, Union

from einc.ir import affine
from einc.ir.nodes import Op, Value
from einc.ir.types import Lin


@dataclass(frozen=True)
class Clamp:
    op: str            # "min" or "max"
    args: tuple        # Lins and Clamps, at least two

    def keys(self):
        return dict.fromkeys(k for a in self.args for k in a.keys()).keys()

    def substitute(self, mapping: dict) -> "Bound":
        return extremum(self.op, [a.substitute(mapping) for a in self.args])

    def __add__(self, other: "Lin | int") -> "Clamp":
        # min(a, b) + c is min(a + c, b + c)
        return Clamp(self.op, tuple(a + other for a in self.args))

    def __sub__(self, other: "Lin | int") -> "Clamp":
        return self + (-other)

    def __repr__(self) -> str:
        return f"{self.op}({', '.join(map(repr, self.args))})"


Bound = Union[Lin, Clamp]
_OTHER = {"min": "max", "max": "min"}


def extremum(op: str, args: list) -> Bound:
    """min or max of `args`, without those that surely do not decide it (`max(i, i - 1)` is i).
    Only differences free of index variables are compared."""
    flat = [x for a in args for x in (a.args if isinstance(a, Clamp) and a.op == op else (a,))]
    kept: list = []
    for a in flat:
        if any(_surely_beats(op, b, a) for b in kept):
            continue
        kept = [b for b in kept if not _surely_beats(op, a, b)] + [a]
    return kept[0] if len(kept) == 1 else Clamp(op, tuple(kept))


def _surely_beats(op: str, a: Bound, b: Bound) -> bool:
    """Whether `a` is never beaten by `b` in `op` (a <= b for min) for every admissible size."""
    return isinstance(a, Lin) and isinstance(b, Lin) and affine.decided_extremum(op, a, b) is a


def clamp_of(v: Value) -> Optional[Bound]:
    """The value as an affine form or a min/max of such (sums and constant multiples of them
    distributed), or None."""
    lin = affine.affine_of(v)
    if lin is not None or not (isinstance(v, Op) and v.dtype.is_int):
        return lin
    if v.op in ("min", "max"):
        args = [clamp_of(a) for a in v.args]
        return None if None in args else extremum(v.op, args)
    if v.op in ("add", "sub"):
        a, b = (clamp_of(x) for x in v.args)
        if a is None or b is None or (isinstance(a, Clamp) and isinstance(b, Clamp)):
            return None
        if v.op == "sub":
            b = scaled(b, -1)
        return a + b if isinstance(a, Clamp) else b + a
    if v.op == "neg":
        a = clamp_of(v.args[0])
        return None if a is None else scaled(a, -1)
    if v.op == "mul":
        a, b = (clamp_of(x) for x in v.args)
        if isinstance(a, Lin) and a.is_const and b is not None:
            return scaled(b, a.const)
        if isinstance(b, Lin) and b.is_const and a is not None:
            return scaled(a, b.const)
    return None


def scaled(bound: Bound, k: int) -> Bound:
    """k * bound: a negative k turns a min into a max (-min(a, b) is max(-a, -b))."""
    if isinstance(bound, Lin):
        return bound.scale(k)
    return extremum(bound.op if k >= 0 else _OTHER[bound.op], [scaled(a, k) for a in bound.args])


def low(bound: Bound) -> Optional[Lin]:
    """A Lin in sizes at most `bound` at every point of its index variables' ranges (their
    extents known): the smallest value for an affine bound; for a max the largest of its
    arguments' lows, for a min the smallest (a min or max of sizes where the sizes leave their
    order open); None where that would need a length computed from data."""
    return _end(bound, upper=False)


def high(bound: Bound) -> Optional[Lin]:
    """A Lin in sizes at least `bound` everywhere (see `low`)."""
    return _end(bound, upper=True)


def _end(bound: Bound, upper: bool) -> Optional[Lin]:
    if isinstance(bound, Lin):
        return affine.bounds(bound)[1 if upper else 0]
    ends = [_end(a, upper) for a in bound.args]
    # a max is at least each argument's low: any of those is a lower end, the largest the
    # tightest; an upper end of a max must be at least every argument's high (the reverse for
    # a min), so in both cases the ends combine by the bound's own op
    loose = (bound.op == "min") == upper
    if loose:
        ends = [e for e in ends if e is not None]
        if not ends:
            return None
    elif None in ends:
        return None
    best = extremum(bound.op, ends)
    if isinstance(best, Lin):
        return best
    # ends the sizes leave unordered: their min or max as a size computed at run time, or where
    # that cannot be (a length computed from data), any one of them if any one will do
    combined = functools.reduce(lambda a, b: a if a is None else affine.size_op(bound.op, a, b), best.args)
    return best.args[0] if combined is None and loose else combined
