"""m ** y for a positive m to within an ulp or two, in f32 and f64.

IREE lowers math.powf to exp(y log m). log m is rounded, and exp multiplies that error by
|y log m|: up to ~200 ulps in f64 and ~130 in f32 over ordinary arguments (NumPy's pow is within
one). Here log m is carried in two floats (hi + lo, about twice the type's precision), y log m
likewise, and the result is exp(p_hi) (1 + p_lo). Exact products are Dekker's (Veltkamp's split):
an f64 math.fma is a multiply and an add on llvm-cpu-generic, not one rounding. The caller keeps IREE's
power where this does not apply (m zero, subnormal, infinite or NaN, y not finite, or a product
beyond exp's range, where the result is 0 or infinity anyway).
"""
from __future__ import annotations

import math as pymath
from decimal import Decimal, localcontext
from typing import Callable, NamedTuple

from iree.compiler import ir
from iree.compiler.dialects import arith, math

from einc.mlir.core.f64_math import cody_waite_parts, constant, element_of, shaped

_F, _I = arith.CmpFPredicate, arith.CmpIPredicate


class _Format(NamedTuple):
    mantissa_bits: int          # stored bits of the significand
    bias: int
    ln2: tuple                  # ln 2 as hi + lo, hi short enough that k * hi is exact
    series_terms: int           # 1/3 + z/5 + z^2/7 ..: z <= 0.0295, to below the type's precision
    exp_range: float            # |y log m| beyond which exp is 0 or infinite
    splitter: float             # 2^ceil(p / 2) + 1 splits a float into two halves of p / 2 bits
    split_range: float          # |y| below which splitting y cannot overflow


def _ln2_parts(hi_bits: int) -> tuple:
    with localcontext(prec=60):
        return tuple(cody_waite_parts(Decimal(2).ln(), hi_bits, 2))


# k, the exponent of m, needs 11 bits in f64 and 8 in f32
_FORMATS = {64: _Format(52, 1023, _ln2_parts(41), 12, 745.0, 2.0 ** 27 + 1, 1e290),
            32: _Format(23, 127, _ln2_parts(15), 7, 104.0, 2.0 ** 12 + 1, 1e33)}


def applies(x: ir.Value) -> bool:
    return element_of(x).width in _FORMATS


def _two_sum(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """s + e = a + b exactly, s the rounded sum (Knuth)."""
    s = arith.addf(a, b)
    bb = arith.subf(s, a)
    return s, arith.addf(arith.subf(a, arith.subf(s, bb)), arith.subf(b, bb))


def _product(a: ir.Value, b: ir.Value) -> ir.Value:
    """a b rounded once, never fused into a neighbouring add (einc.mlir.core.rounding)."""
    return math.fma(a, b, constant(-0.0, a))


def _halves(a: ir.Value, f: _Format) -> tuple[ir.Value, ir.Value]:
    c = _product(constant(f.splitter, a), a)
    high = arith.subf(c, arith.subf(c, a))
    return high, arith.subf(a, high)


def _two_product(a: ir.Value, b: ir.Value, f: _Format) -> tuple[ir.Value, ir.Value]:
    """p + e = a b exactly, p the rounded product (Dekker), for |a b| well inside the range."""
    p = _product(a, b)
    (a1, a2), (b1, b2) = _halves(a, f), _halves(b, f)
    e = arith.addf(arith.subf(_product(a1, b1), p), _product(a1, b2))
    e = arith.addf(arith.addf(e, _product(a2, b1)), _product(a2, b2))
    return p, e


def _split_exponent(m: ir.Value, f: _Format) -> tuple[ir.Value, ir.Value]:
    """(k, r) with m = 2^k r, r in [sqrt(1/2), sqrt(2)), k as a float, for a normal m > 0."""
    width = element_of(m).width
    ints = shaped(ir.IntegerType.get_signless(width), m)
    c = lambda n: constant(n, m, ir.IntegerType.get_signless(width))
    bits = arith.bitcast(ints, m)
    biased = arith.shrui(bits, c(f.mantissa_bits))
    fraction = arith.andi(bits, c((1 << f.mantissa_bits) - 1))
    r = arith.bitcast(m.type, arith.ori(fraction, c(f.bias << f.mantissa_bits)))     # [1, 2)
    high = arith.cmpf(_F.OGT, r, constant(pymath.sqrt(2.0), m))
    r = arith.select(high, arith.mulf(r, constant(0.5, m)), r)
    k = arith.sitofp(m.type, arith.subi(biased, c(f.bias)))
    return arith.select(high, arith.addf(k, constant(1.0, m)), k), r


def _log(m: ir.Value, f: _Format) -> tuple[ir.Value, ir.Value]:
    """log m as hi + lo: k ln 2 + 2 atanh(s), s = (r - 1) / (r + 1) carried in two floats
    (|s| <= 0.172), the series past 2s in one float since it is below 1% of 2s."""
    k, r = _split_exponent(m, f)
    one = constant(1.0, m)
    u = arith.subf(r, one)                                   # exact: r is within [1/2, 2]
    v_hi, v_lo = _two_sum(r, one)
    s_hi = arith.divf(u, v_hi)
    product, error = _two_product(s_hi, v_hi, f)
    s_lo = arith.divf(arith.subf(arith.subf(arith.subf(u, product), error), arith.mulf(s_hi, v_lo)), v_hi)
    z = arith.mulf(s_hi, s_hi)
    series = constant(1.0 / (2 * f.series_terms + 1), m)
    for n in reversed(range(1, f.series_terms)):
        series = math.fma(series, z, constant(1.0 / (2 * n + 1), m))
    two = constant(2.0, m)
    tail = arith.mulf(arith.mulf(two, s_hi), arith.mulf(z, series))
    hi, lo = _two_sum(arith.mulf(k, constant(f.ln2[0], m)), arith.mulf(two, s_hi))
    lo = arith.addf(lo, arith.addf(arith.addf(arith.mulf(two, s_lo), tail), arith.mulf(k, constant(f.ln2[1], m))))
    total = arith.addf(hi, lo)
    return total, arith.subf(lo, arith.subf(total, hi))


def power(m: ir.Value, y: ir.Value, fallback: ir.Value, exp: Callable[[ir.Value], ir.Value]) -> ir.Value:
    """m ** y for m >= 0 (a scalar or a vector of f32 or f64), `fallback` (IREE's power) where
    the two-float form does not apply; `exp` is the type's exponential."""
    f = _FORMATS[element_of(m).width]
    log_hi, log_lo = _log(m, f)
    p_hi, error = _two_product(y, log_hi, f)
    p_lo = arith.addf(error, arith.mulf(y, log_lo))
    e = exp(p_hi)
    accurate = math.fma(e, p_lo, e)
    smallest_normal = pymath.ldexp(1.0, 1 - f.bias)
    usable = arith.andi(arith.cmpf(_F.OGE, m, constant(smallest_normal, m)),
                        arith.cmpf(_F.OLT, m, constant(float("inf"), m)))
    usable = arith.andi(usable, arith.cmpf(_F.OLT, math.absf(p_hi), constant(f.exp_range, m)))
    usable = arith.andi(usable, arith.cmpf(_F.OLT, math.absf(y), constant(f.split_range, m)))
    return arith.select(usable, accurate, fallback)
