"""Affine view of index arithmetic: a scalar IR value as a `Lin` over index variables and sizes.

Subscripts such as `i + r`, `2 * i + 1` or `N - 1 - i` are affine; `idx[i]` or `i * j` are not.
Bounds checks and the lowering's choice of indexing maps both ask this question.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from einc.ir.nodes import Const, IndexRef, Op, Size, Value
from einc.ir.traversal import fold
from einc.ir.types import DataSize, Lin, Quotient, SizeOp, Sym


def affine_of(v: Value) -> Optional[Lin]:
    """The value as const + sum(coeff * key) with IndexVar/Sym keys, or None if not affine.
    Folded without recursion: a subscript may be a chain of thousands of terms."""
    return fold(v, _affine_parts, _affine, {})


def _affine_parts(v: Value) -> tuple:
    return v.args if isinstance(v, Op) and v.dtype.is_int and v.op in _AFFINE_OPS else ()


def _affine(v: Value, args: list) -> Optional[Lin]:
    """The affine form of `v`, given those of its operands when it is an Op."""
    if isinstance(v, Op):
        return _op(v, args) if args else None
    rule = _RULES.get(type(v))
    return rule(v) if rule else None


def _const(v: Const) -> Optional[Lin]:
    if v.array.ndim == 0 and np.issubdtype(v.array.dtype, np.integer):
        return Lin(int(v.array))
    return None


_AFFINE_OPS = ("add", "sub", "mul", "neg", "div", "rem", "min", "max")


def _op(v: Op, args: list) -> Optional[Lin]:
    """An integer Op of _AFFINE_OPS over operands of affine forms `args` (None: not affine)."""
    if v.op == "div":
        return _quotient(*args)
    if v.op == "rem":
        return _remainder(*args)
    if any(a is None for a in args):
        return None
    if v.op == "add":
        return args[0] + args[1]
    if v.op == "sub":
        return args[0] - args[1]
    if v.op == "neg":
        return -args[0]
    if v.op in ("min", "max"):
        return decided_extremum(v.op, *args) or size_op(v.op, *args)
    a, b = args
    if a.is_const:
        return b.scale(a.const)
    if b.is_const:
        return a.scale(b.const)
    return size_op("mul", a, b)


def size_op(op: str, a: Lin, b: Lin) -> Optional[Lin]:
    """`op` of two sizes as one key (B * C, min(N, 4)), nested ones of the same op flattened
    and a product's constant factors taken out of it. None when an operand names an index or
    a length computed from data (the checks before a run do not know those)."""
    if not (_sizes_only(a) and _sizes_only(b)):
        return None
    coeff, args = 1, []
    for x in (a, b):
        key, c = _single_term(x)
        if op == "mul" and key is not None:
            coeff, x = coeff * c, Lin.of(key)
            c = 1
        args += list(key.args) if isinstance(key, SizeOp) and key.op == op and c == 1 else [x]
    return Lin.of(SizeOp(op, tuple(args)), coeff)


def _single_term(lin: Lin) -> tuple:
    """(key, coeff) when `lin` is coeff * key, else (None, 0)."""
    if lin.const == 0 and len(lin.terms) == 1:
        return next(iter(lin.terms.items()))
    return None, 0


def _sizes_only(lin: Lin) -> bool:
    return not any(hasattr(k, "extent") or isinstance(k, DataSize) for k in lin.keys())


def decided_extremum(op: str, a: Lin, b: Lin) -> Optional[Lin]:
    """min(a, b) or max(a, b) where every admissible size decides which it is (`min(8, 5)`,
    `max(N, N - 1)`), else None (einc.ir.clamped keeps the others)."""
    diff = b - a if op == "min" else a - b
    if any(hasattr(k, "extent") for k in diff.keys()):
        return None
    return a if surely_nonnegative(diff) else b if surely_nonnegative(-diff) else None


def _quotient(numer: Optional[Lin], denom: Optional[Lin]) -> Optional[Lin]:
    """A size divided by a positive constant; an index expression divided by one, or by another
    constant only where the quotient is one number over the variables' ranges (`o / 16` for o in
    0..16 is 0: the channel group of a convolution with one group), else that is not affine."""
    if numer is None or denom is None or not denom.is_const or denom.const <= 0:
        return None
    if denom.const == 1:
        return numer            # whole numbers divided by one, whatever their sign
    if any(hasattr(k, "extent") for k in numer.keys()):
        return _constant_quotient(numer, denom.const)
    if numer.is_const:
        return Lin(numer.const // denom.const) if numer.const >= 0 else None
    return Lin.of(Quotient(numer, denom.const))


def _remainder(numer: Optional[Lin], denom: Optional[Lin]) -> Optional[Lin]:
    """`x % k` where x / k is one number q over the ranges (`j % N` for j in 0..N): x - k q."""
    if numer is None or denom is None or not denom.is_const or denom.const <= 0:
        return None
    if not any(hasattr(k, "extent") for k in numer.keys()):
        return None
    quotient = _constant_quotient(numer, denom.const)
    return None if quotient is None else numer - quotient.scale(denom.const)


def _constant_quotient(numer: Lin, denom: int) -> Optional[Lin]:
    if any(getattr(k, "extent", 0) is None for k in numer.keys()):
        return None
    lo, hi = bounds(numer)
    if not (lo.is_const and hi.is_const) or not 0 <= lo.const <= hi.const:
        return None             # integer division truncates: floor and truncation agree from 0 up
    first, last = lo.const // denom, hi.const // denom
    return Lin(first) if first == last else None


def periodic_of(v: Value) -> Optional[tuple]:
    """A subscript `x % n` (n an affine size, x not negative) as a key equal for equal values:
    ("lin", a) where the value is the affine a over the indices' ranges, else ("mod", a, n) with
    the value a mod n. A remainder by n inside x is congruent to its own numerator, so a wrap
    applied twice is one (`((i + 1) % N + N - 1) % N` is i). A dividend that may be negative
    (`(i - 1) % N`, which `%` leaves negative at i = 0) gives None."""
    if not (isinstance(v, Op) and v.op == "rem"):
        return None
    n = affine_of(v.args[1])
    found = None if n is None else _congruent(v.args[0], n)
    if found is None or not _not_negative(found[1], n):
        return None
    a = found[0]
    a = Lin(a.const % n.const if n.is_const and n.const > 0 else a.const,
            {k: c for k, c in a.terms.items() if not (n.terms == {k: 1} and n.const == 0)})
    lo, hi = bounds(a)
    if lo.is_const and lo.const >= 0 and (n - hi).is_const and (n - hi).const >= 1:
        return ("lin", a)
    return ("mod", a, n)


def _congruent(v: Value, n: Lin) -> Optional[tuple]:
    """(an affine form congruent to `v` modulo n, the least value of v) with the remainders by n
    of non-negative dividends inside v (at least 0 each) taken as their numerators; None where
    v is no sum of such remainders and an affine part whose index ranges are known."""
    if isinstance(v, Op) and v.dtype.is_int and v.op == "rem" and affine_of(v.args[1]) == n:
        inner = _congruent(v.args[0], n)
        return None if inner is None or not _not_negative(inner[1], n) else (inner[0], Lin(0))
    if isinstance(v, Op) and v.dtype.is_int and v.op == "add":
        a, b = (_congruent(x, n) for x in v.args)
        return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])
    if isinstance(v, Op) and v.dtype.is_int and v.op == "sub":
        a, b = _congruent(v.args[0], n), affine_of(v.args[1])
        return None if a is None or b is None or not _ranged(b) else (a[0] - b, a[1] - bounds(b)[1])
    lin = affine_of(v)
    return None if lin is None or not _ranged(lin) else (lin, bounds(lin)[0])


def _ranged(lin: Lin) -> bool:
    return all(getattr(k, "extent", 0) is not None for k in lin.keys())


def _not_negative(lo: Lin, n: Lin) -> bool:
    """Whether a dividend's least value over the index ranges, in sizes, is at least 0 for every
    size where it matters: an input dim is at least 1 (a length computed from data at least 0),
    and a divisor n that is one dim leaves 0 at n = 1 however `%` rounds, so n counts from 2
    (`(i + N - 2) % N`)."""
    def least(k):
        return 2 if n.terms == {k: 1} and n.const == 0 else 0 if isinstance(k, DataSize) else 1
    return (all(c > 0 and isinstance(k, Sym) for k, c in lo.terms.items())
            and lo.const + sum(c * least(k) for k, c in lo.terms.items()) >= 0)


_RULES = {
    Const: _const,
    Size: lambda v: v.lin,
    IndexRef: lambda v: Lin.of(v.var),
}


def bounds(lin: Lin) -> tuple[Lin, Lin]:
    """Smallest and largest value of `lin` over the ranges of its index variables, as Lins in
    sizes only (each variable's extent must be known)."""
    lo, hi = Lin(lin.const), Lin(lin.const)
    for key, c in lin.terms.items():
        if hasattr(key, "extent"):
            first, last = key.lo, key.lo + key.extent - 1
            lo = lo + (first if c > 0 else last).scale(c)
            hi = hi + (last if c > 0 else first).scale(c)
        else:
            lo, hi = lo + Lin.of(key, c), hi + Lin.of(key, c)
    return lo, hi


def surely_nonnegative(lin: Lin) -> bool:
    """True when `lin` >= 0 for every admissible size. Sizes are unbounded above, at least 1
    for an input dim and at least 0 for a quotient or a size computed from data, so this holds
    exactly when no coefficient is negative and the value at those minima is >= 0. A min or a
    max of sizes is split into its arguments: rest + c min(a, b) >= 0 for c > 0 when both
    rest + c a and rest + c b are, for c < 0 when one is (the reverse for a max)."""
    lin = _negative_quotients_replaced(lin)
    extremum = next((k for k in lin.terms if isinstance(k, SizeOp) and k.op != "mul"), None)
    if extremum is not None:
        coeff = lin.terms[extremum]
        rest = lin - Lin.of(extremum, coeff)
        cases = [surely_nonnegative(rest + arg.scale(coeff)) for arg in extremum.args]
        return all(cases) if (extremum.op == "min") == (coeff > 0) else any(cases)
    low = _least_of(lin)
    return low is not None and low >= 0


def _least(key) -> Optional[int]:
    """The smallest value a size key takes: 1 for an input dim, 0 for a quotient or a length
    computed from data; for a product, min or max that of its arguments' smallest values
    (None where an argument may be negative, or for a product, where one is unbounded below)."""
    if isinstance(key, (Quotient, DataSize)):
        return 0
    if not isinstance(key, SizeOp):
        return 1
    lows = [_least_of(arg) for arg in key.args]
    if None in lows or any(low < 0 for low in lows):
        return None
    return min(lows) if key.op == "min" else max(lows) if key.op == "max" else math.prod(lows)


def _least_of(lin: Lin) -> Optional[int]:
    terms = lin.terms.items()
    lows = [_least(k) for k, _ in terms]
    if None in lows or any(c < 0 for _, c in terms):
        return None
    return lin.const + sum(c * low for (_, c), low in zip(terms, lows))


def _negative_quotients_replaced(lin: Lin) -> Lin:
    """A positive multiple of a lower bound of `lin` without quotients of negative coefficient:
    d floor(n / d) <= n, so for c < 0, d (rest + c floor(n / d)) >= d rest + c n. This proves
    `2 * i + 1 < H` for i < H / 2 (a stride-2 window over a run-time size)."""
    while (q := next((k for k, c in lin.terms.items() if isinstance(k, Quotient) and c < 0), None)) is not None:
        coeff = lin.terms[q]
        lin = lin.scale(q.denom) - Lin.of(q, coeff * q.denom) + q.numer.scale(coeff)
    return lin


def surely_negative(lin: Lin) -> bool:
    """True when `lin` < 0 for every admissible size."""
    return surely_nonnegative(-lin - 1)


def subscript_in_bounds(sub: Value, size: Lin) -> bool:
    """Whether an affine subscript stays in [0, size) at every point of its variables' ranges
    for every admissible size (False when it is not affine or a range is still unknown)."""
    lin = affine_of(sub)
    if lin is None or any(getattr(k, "extent", 0) is None for k in lin.keys()):
        return False
    lo, hi = bounds(lin)
    return surely_nonnegative(lo) and surely_nonnegative(size - 1 - hi)


def decided(cond: Value) -> Optional[bool]:
    """The value of a condition that every point of its index variables' ranges decides alike for
    every admissible size (`i < 0` for i in 0..1 is false; `&&`, `||` and `!` of such), else None."""
    return fold(cond, _logical_parts, _decided, {})


def _logical_parts(v: Value) -> tuple:
    return v.args if isinstance(v, Op) and v.op in _LOGICAL else ()


def _decided(v: Value, args: list) -> Optional[bool]:
    if not isinstance(v, Op):
        return None
    if v.op in _LOGICAL:
        return _LOGICAL[v.op](args)
    return _compared(v) if v.op in _DECIDED else None


def _compared(cond: Op) -> Optional[bool]:
    a, b = (affine_of(arg) for arg in cond.args)
    if a is None or b is None:
        return None
    diff = a - b
    if any(getattr(k, "extent", 0) is None for k in diff.keys()):
        return None
    lo, hi = bounds(diff)
    always, never = _DECIDED[cond.op](lo, hi)
    return True if always else False if never else None


_LOGICAL = {
    "and": lambda args: False if False in args else True if all(a is True for a in args) else None,
    "or": lambda args: True if True in args else False if all(a is False for a in args) else None,
    "not": lambda args: None if args[0] is None else not args[0],
}
# comparison of a - b with 0, given its bounds lo..hi -> (true everywhere, false everywhere)
_DECIDED = {
    "lt": lambda lo, hi: (surely_negative(hi), surely_nonnegative(lo)),
    "le": lambda lo, hi: (surely_nonnegative(-hi), surely_nonnegative(lo - 1)),
    "gt": lambda lo, hi: (surely_nonnegative(lo - 1), surely_nonnegative(-hi)),
    "ge": lambda lo, hi: (surely_nonnegative(lo), surely_negative(hi)),
    "eq": lambda lo, hi: (surely_nonnegative(lo) and surely_nonnegative(-hi),
                          surely_negative(hi) or surely_nonnegative(lo - 1)),
    "ne": lambda lo, hi: (surely_negative(hi) or surely_nonnegative(lo - 1),
                          surely_nonnegative(lo) and surely_nonnegative(-hi)),
}
