"""f32 elementary functions as f32 arithmetic, the same on every target.

IREE-39: IREE's own f32 approximations are off by tens to hundreds of ulps in places. Vulkan
has no f64 to compute in, so these are f32 algorithms: arguments reduced exactly (Cody–Waite),
cancellations rewritten away (expm1, log1p) and squares kept finite; within a few ulps of
NumPy (sin/cos/tan while |x| < 1e5, f64_math.PRECISION). sin, cos, tan, asin, acos, atan and
atan2 are f64_math's generic functions; sqrt, erf and log2 are left to IREE (1-5 ulps).

Each function takes and returns an f32 `ir.Value` and must be called under an insertion point.
"""
from __future__ import annotations

import math as pymath
from typing import Callable

from iree.compiler import ir
from iree.compiler.dialects import arith, math

from einc.mlir.core import f32_trig, f64_math
from einc.mlir.core.f64_math import horner, shaped

_F = arith.CmpFPredicate
_LN2_HI = 0.693145751953125            # ln 2 in 16 bits: k * _LN2_HI is exact for |k| < 2^8
_LN2_LO = pymath.log(2) - _LN2_HI
_HALF_LN2 = pymath.log(2) / 2
_ATANH = [1 / (2 * n + 1) for n in range(7)]                 # atanh(s) = s (1 + z/3 + z²/5 + ..)
_LARGE = 2.0 ** 12                     # past it, sqrt(x² ± 1) is |x| in f32


def _c(value: float, like: ir.Value) -> ir.Value:
    return f64_math.constant(value, like)


def _i32(value: int, like: ir.Value) -> ir.Value:
    return f64_math.constant(value, like, ir.IntegerType.get_signless(32))


def _power_of_two(k: ir.Value) -> ir.Value:
    """2^k for an i32 k in the normal range [-126, 127], from its exponent bits."""
    return arith.bitcast(shaped(ir.F32Type.get(), k), arith.shli(arith.addi(k, _i32(127, k)), _i32(23, k)))


def _nan_through(x: ir.Value, value: ir.Value) -> ir.Value:
    """NaN where x is NaN (the reductions turn NaN into an integer, which is undefined)."""
    return arith.select(arith.cmpf(_F.UNO, x, x), x, value)


def _reduce_ln2(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(r, k): x = k ln 2 + r with |r| <= ln 2 / 2 (give or take an ulp of x / ln 2, where k
    may round either way) and k an i32, for |x| < 2^8 ln 2. k ln2_hi is exact, so x minus it
    rounds once; the ln2_lo term is one FMA, rounded once instead of twice, and so is k's
    scaling (two operations fewer: ~3% of the RNN H = 64 step when its tanh reduced here). Not
    the exact subtraction as an FMA too: on vulkan-spirv (lavapipe) exp(72) was then 67 ulps off."""
    k = math.floor(math.fma(x, _c(1 / pymath.log(2), x), _c(0.5, x)))
    r = math.fma(k, _c(-_LN2_LO, x), arith.subf(x, arith.mulf(k, _c(_LN2_HI, x))))
    return r, arith.fptosi(shaped(ir.IntegerType.get_signless(32), x), k)


def _expm1_small(r: ir.Value) -> ir.Value:
    """exp(r) - 1 for |r| <= ln 2 / 2: r + r² P(r), no cancellation, P by Horner's rule in
    FMAs (math.fma, one rounding on every target): half the operations of a multiply and an
    add (the RNN H = 64 step, tanh: ~10% less time)."""
    acc = _c(_EXPM1_P[-1], r)
    for coefficient in reversed(_EXPM1_P[:-1]):
        acc = math.fma(acc, r, _c(coefficient, r))
    return math.fma(arith.mulf(r, r), acc, r)


# P(r) = (exp(r) - 1 - r) / r² for |r| <= ln 2 / 2 as the polynomial of degree 4 (from its
# constant) with the least largest error r (P - poly) of exp(r) - 1 relatively: within 1.6e-8,
# where the series needs degree 6 (7e-10). Fitted by Lawson's iteration, least squares reweighted
# by each point's error (tests/mlir/test_f32_math.py fits them again). Each degree is one FMA
# of a tanh or an exp, whose FMAs share the ports with an RNN step's matrix-vector product (the
# H = 64 step ~4% faster with 2 fewer); tanh, exp, expm1, sinh and cosh stay within their ulps.
_EXPM1_P = [0.5000000061911944, 0.16666543032223433, 0.041666282104051336, 0.008366578782658443,
            0.001394644547891154]


def exp(x: ir.Value) -> ir.Value:
    """2^k exp(r), the power of two in two halves so that neither leaves the normal range;
    below -104 the result is 0, above 88.8 inf (the argument is clamped for k's sake)."""
    clamped = arith.minimumf(arith.maximumf(x, _c(-104.0, x)), _c(89.0, x))
    r, k = _reduce_ln2(clamped)
    half = arith.shrsi(k, _i32(1, x))
    value = arith.addf(_c(1.0, x), _expm1_small(r))
    value = arith.mulf(arith.mulf(value, _power_of_two(half)), _power_of_two(arith.subi(k, half)))
    return _nan_through(x, arith.select(arith.cmpf(_F.OGT, x, _c(89.0, x)), _c(float("inf"), x), value))


def expm1(x: ir.Value) -> ir.Value:
    """The series near 0; else (2^k - 1) + 2^k expm1(r), both terms exact in f32 while |k| <= 24,
    so one rounding; past |x| = 16, exp(x) - 1."""
    r, k = _reduce_ln2(arith.minimumf(arith.maximumf(x, _c(-16.0, x)), _c(16.0, x)))
    scale = _power_of_two(k)
    middle = arith.addf(arith.subf(scale, _c(1.0, x)), arith.mulf(scale, _expm1_small(r)))
    a = math.absf(x)
    value = arith.select(arith.cmpf(_F.OLE, a, _c(_HALF_LN2, x)), _expm1_small(x), middle)
    return _nan_through(x, arith.select(arith.cmpf(_F.OGT, a, _c(16.0, x)), arith.subf(exp(x), _c(1.0, x)), value))


def _square_of_half_exp(a: ir.Value) -> ir.Value:
    """exp(a) / 2 for a past 88, where exp(a) alone overflows: exp(a/2) (exp(a/2) / 2)."""
    h = exp(arith.mulf(a, _c(0.5, a)))
    return arith.mulf(arith.mulf(h, _c(0.5, a)), h)


def sinh(x: ir.Value) -> ir.Value:
    """(e + e / (e + 1)) / 2 with e = expm1(|x|): no cancellation near 0."""
    a = math.absf(x)
    e = expm1(a)
    value = arith.mulf(_c(0.5, x), arith.addf(e, arith.divf(e, arith.addf(e, _c(1.0, x)))))
    value = arith.select(arith.cmpf(_F.OGT, a, _c(88.0, x)), _square_of_half_exp(a), value)
    return math.copysign(value, x)


def cosh(x: ir.Value) -> ir.Value:
    a = math.absf(x)
    e = exp(a)
    value = arith.mulf(_c(0.5, x), arith.addf(e, arith.divf(_c(1.0, x), e)))
    return arith.select(arith.cmpf(_F.OGT, a, _c(88.0, x)), _square_of_half_exp(a), value)


def tanh(x: ir.Value) -> ir.Value:
    """e / (e + 2) with e = expm1(2|x|), |x| clamped to 10 (past 9.1 tanh is ±1 in f32). On
    [0, 20] one reduction serves every argument: k is 0 up to ln 2 / 2, where the formula is
    the series itself, and at most 29 above, where 2^k - 1 rounds by under 2^-23 of e. This
    skips expm1's separate series and exp branches, two thirds of tanh's work (an RNN step's
    tanh cost more than its matrix-vector product). With k <= 29 the reduction is one FMA by
    ln 2 rounded to f32 (off by 1.9e-9, so r by at most 5.5e-8, where e is past 2^28 and tanh
    rounds to 1 from that far): one multiply and one subtraction fewer than `_reduce_ln2`'s,
    which exp needs up to k = 128 (the RNN H = 64 step ~3% faster; tanh's worst error unchanged
    over 6 M arguments, 2 ulps on llvm-cpu and 3 on vulkan-spirv)."""
    a = arith.mulf(arith.minimumf(math.absf(x), _c(10.0, x)), _c(2.0, x))
    whole = math.floor(math.fma(a, _c(1 / pymath.log(2), x), _c(0.5, x)))
    r = math.fma(whole, _c(-pymath.log(2), x), a)
    scale = _power_of_two(arith.fptosi(shaped(ir.IntegerType.get_signless(32), x), whole))
    e = arith.addf(arith.subf(scale, _c(1.0, x)), arith.mulf(scale, _expm1_small(r)))
    return _nan_through(x, math.copysign(arith.divf(e, arith.addf(e, _c(2.0, x))), x))


def _log_near_one(f: ir.Value) -> ir.Value:
    """log(1 + f) for 1 + f in [sqrt(1/2), sqrt(2)]: 2 atanh(s) with s = f / (2 + f), a short odd
    series (|s| < 0.172)."""
    s = arith.divf(f, arith.addf(_c(2.0, f), f))
    return arith.mulf(arith.mulf(_c(2.0, f), s), horner(arith.mulf(s, s), _ATANH))


def log(x: ir.Value) -> ir.Value:
    """e ln 2 + log(m) for x = m 2^e with m in [sqrt(1/2), sqrt(2)), m - 1 exact: accurate also
    near 1, where Vulkan's log is not. Zero, subnormals, negatives, inf and NaN take math.log's
    answer."""
    i32 = ir.IntegerType.get_signless(32)
    bits = arith.bitcast(shaped(i32, x), x)
    exponent = arith.subi(arith.andi(arith.shrui(bits, _i32(23, x)), _i32(0xFF, x)), _i32(127, x))
    m = arith.bitcast(x.type, arith.ori(arith.andi(bits, _i32((1 << 23) - 1, x)), _i32(127 << 23, x)))
    high = arith.cmpf(_F.OGT, m, _c(pymath.sqrt(2.0), x))
    m = arith.select(high, arith.mulf(m, _c(0.5, x)), m)
    e = arith.sitofp(x.type, arith.select(high, arith.addi(exponent, _i32(1, x)), exponent))
    log_m = _log_near_one(arith.subf(m, _c(1.0, x)))
    finite = arith.addf(arith.mulf(e, _c(_LN2_HI, x)), arith.addf(arith.mulf(e, _c(_LN2_LO, x)), log_m))
    special = arith.ori(arith.cmpf(_F.ULT, x, _c(2.0 ** -126, x)), arith.cmpf(_F.OEQ, x, _c(float("inf"), x)))
    return arith.select(special, math.log(x), finite)


def log1p(x: ir.Value) -> ir.Value:
    """The series on x itself where 1 + x is within [sqrt(1/2), sqrt(2)], so 1 + x is never
    rounded there; farther out, log(1 + x), whose rounding is then small against the result.
    (Goldberg's log(u) x / (u - 1) is no use: Vulkan drivers may simplify (1 + x) - 1 to x.)"""
    near = arith.andi(arith.cmpf(_F.OGE, x, _c(pymath.sqrt(0.5) - 1.0, x)),
                      arith.cmpf(_F.OLE, x, _c(pymath.sqrt(2.0) - 1.0, x)))
    value = arith.select(near, _log_near_one(x), log(arith.addf(_c(1.0, x), x)))
    # x itself below 2^-24 (x / (2 + x) of the smallest normals is subnormal, flushed to 0)
    return arith.select(arith.cmpf(_F.OLT, math.absf(x), _c(2.0 ** -24, x)), x, value)


def _log_of_double(a: ir.Value) -> ir.Value:
    """log(2a) without forming 2a, which may overflow."""
    return arith.addf(log(a), _c(pymath.log(2), a))


def asinh(x: ir.Value) -> ir.Value:
    """log1p(a + a² / (1 + sqrt(1 + a²))) for a = |x| (= log(a + sqrt(a² + 1)) without the
    cancellation near 0); log(2a) past 2^12."""
    a = math.absf(x)
    one = _c(1.0, x)
    square = arith.mulf(a, a)
    value = log1p(arith.addf(a, arith.divf(square, arith.addf(one, math.sqrt(arith.addf(one, square))))))
    value = arith.select(arith.cmpf(_F.OGT, a, _c(_LARGE, x)), _log_of_double(a), value)
    return math.copysign(value, x)


def acosh(x: ir.Value) -> ir.Value:
    """log1p(t + sqrt(2t + t²)) with t = x - 1 (exact) below 2; log(x + sqrt(x² - 1)) up to
    2^12, log(2x) past it; below 1, NaN (the square root of a negative)."""
    t = arith.subf(x, _c(1.0, x))
    near_one = log1p(arith.addf(t, math.sqrt(arith.addf(arith.mulf(_c(2.0, x), t), arith.mulf(t, t)))))
    middle = log(arith.addf(x, math.sqrt(arith.subf(arith.mulf(x, x), _c(1.0, x)))))
    value = arith.select(arith.cmpf(_F.OLT, x, _c(2.0, x)), near_one, middle)
    return arith.select(arith.cmpf(_F.OGT, x, _c(_LARGE, x)), _log_of_double(x), value)


def atanh(x: ir.Value) -> ir.Value:
    """log1p(2a / (1 - a)) / 2 for a = |x|: accurate near 0, ±inf at ±1, NaN past."""
    a = math.absf(x)
    value = arith.mulf(_c(0.5, x), log1p(arith.divf(arith.mulf(_c(2.0, x), a), arith.subf(_c(1.0, x), a))))
    return math.copysign(value, x)


UNARY: dict[str, Callable[[ir.Value], ir.Value]] = {
    "sin": f32_trig.sin, "cos": f32_trig.cos, "tan": f32_trig.tan, "asin": f64_math.asin,
    "acos": f64_math.acos, "atan": f64_math.atan, "exp": exp, "expm1": expm1, "sinh": sinh,
    "cosh": cosh, "tanh": tanh, "log": log, "log1p": log1p, "asinh": asinh, "acosh": acosh, "atanh": atanh,
    "trunc": f64_math.trunc,
}
