"""f64 elementary functions as plain arithmetic, for the llvm-cpu backend.

IREE 3.13 turns `math.sin` (and cos, tan, asin, acos, atan, atan2, erf, log2, tanh) on f64 into
calls to libm, which it does not link into a dispatch: the build fails with "undefined symbol:
sin". These expansions use only arith ops plus math.exp/expm1/log/sqrt/copysign/absf, which IREE
does lower on f64. Accuracy, checked against NumPy in tests/mlir/test_f64_math.py: a few ulps;
sin/cos/tan reduce their argument with a three-part π/2 (119 bits), exact for |x| < 1.6e6.

Each function takes and returns an f64 `ir.Value` and must be called under an insertion point.
"""
from __future__ import annotations

import math as pymath
from decimal import Decimal, localcontext
from typing import Callable

from iree.compiler import ir
from iree.compiler.dialects import arith, math

_F, _I = arith.CmpFPredicate, arith.CmpIPredicate


def _split(value: Decimal, bits: int, parts: int) -> list[float]:
    """`value` as a sum of `parts` doubles, all but the last with only `bits` significant bits,
    so that k * part is exact for |k| < 2^(53 - bits) (Cody–Waite reduction)."""
    out = []
    for _ in range(parts - 1):
        mantissa, exponent = pymath.frexp(float(value))
        part = pymath.ldexp(pymath.trunc(mantissa * 2 ** bits) / 2 ** bits, exponent)
        out.append(part)
        value -= Decimal(part)
    return out + [float(value)]


def _pi_constants() -> tuple:
    """(π/2 in three Cody–Waite parts, 2/π, π) from 70 digits of π, in a local decimal context."""
    with localcontext(prec=70):
        pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640")
        return _split(pi / 2, 33, 3), float(2 / pi), float(pi)


_HALF_PI, _TWO_OVER_PI, _PI = _pi_constants()
_SIN = [(-1) ** n / pymath.factorial(2 * n + 1) for n in range(1, 10)]   # r + r z (s1 + z (s2 + ..))
_COS = [(-1) ** n / pymath.factorial(2 * n) for n in range(1, 10)]       # 1 + z (c1 + z (c2 + ..))
_ATAN = [(-1) ** n / (2 * n + 1) for n in range(1, 22)]                    # |t| <= tan(pi/8)
_ERF_SERIES = [(-1) ** n / (pymath.factorial(n) * (2 * n + 1)) for n in range(34)]
_ERF_SPLIT = 2.0          # series below, continued fraction for erfc above (both < 1e-15)
_ERFC_DEPTH = 50


def _f64() -> ir.Type:
    return ir.F64Type.get()


def _c(value: float) -> ir.Value:
    return arith.constant(_f64(), float(value))


def _horner(z: ir.Value, coefficients: list[float]) -> ir.Value:
    """c0 + z (c1 + z (c2 + ..))."""
    acc = _c(coefficients[-1])
    for coefficient in reversed(coefficients[:-1]):
        acc = arith.addf(arith.mulf(acc, z), _c(coefficient))
    return acc


def _reduce_half_pi(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(r, q): x = k π/2 + r with |r| <= π/4, and q = k mod 4 (an i64)."""
    i64 = ir.IntegerType.get_signless(64)
    scaled = arith.mulf(x, _c(_TWO_OVER_PI))
    k = arith.fptosi(i64, arith.addf(scaled, math.copysign(_c(0.5), scaled)))
    kf = arith.sitofp(_f64(), k)
    r = x
    for part in _HALF_PI:
        r = arith.subf(r, arith.mulf(kf, _c(part)))
    return r, arith.andi(k, arith.constant(i64, 3))


def _sin_cos_kernels(r: ir.Value) -> tuple[ir.Value, ir.Value]:
    z = arith.mulf(r, r)
    sin_r = arith.addf(r, arith.mulf(arith.mulf(r, z), _horner(z, _SIN)))
    cos_r = arith.addf(_c(1.0), arith.mulf(z, _horner(z, _COS)))
    return sin_r, cos_r


def _quadrant(q: ir.Value, n: int) -> ir.Value:
    return arith.cmpi(_I.eq, q, arith.constant(q.type, n))


def _by_quadrant(q: ir.Value, values: list[ir.Value]) -> ir.Value:
    """values[q] for q in 0..3."""
    low = arith.select(_quadrant(q, 0), values[0], values[1])
    high = arith.select(_quadrant(q, 2), values[2], values[3])
    return arith.select(arith.cmpi(_I.ult, q, arith.constant(q.type, 2)), low, high)


def sin(x: ir.Value) -> ir.Value:
    r, q = _reduce_half_pi(x)
    s, c = _sin_cos_kernels(r)
    return _by_quadrant(q, [s, c, arith.negf(s), arith.negf(c)])


def cos(x: ir.Value) -> ir.Value:
    r, q = _reduce_half_pi(x)
    s, c = _sin_cos_kernels(r)
    return _by_quadrant(q, [c, arith.negf(s), arith.negf(c), s])


def tan(x: ir.Value) -> ir.Value:
    r, q = _reduce_half_pi(x)
    s, c = _sin_cos_kernels(r)
    odd = arith.trunci(ir.IntegerType.get_signless(1), q)
    return arith.select(odd, arith.negf(arith.divf(c, s)), arith.divf(s, c))


def atan(x: ir.Value) -> ir.Value:
    """Reduced twice: |x| > 1 by atan(a) = π/2 - atan(1/a), then a > tan(π/8) by
    atan(a) = π/4 + atan((a - 1) / (a + 1)), leaving a series argument below 0.4143."""
    a = math.absf(x)
    inverted = arith.cmpf(_F.OGT, a, _c(1.0))
    a = arith.select(inverted, arith.divf(_c(1.0), a), a)
    shifted = arith.cmpf(_F.OGT, a, _c(pymath.sqrt(2.0) - 1.0))
    t = arith.select(shifted, arith.divf(arith.subf(a, _c(1.0)), arith.addf(a, _c(1.0))), a)
    z = arith.mulf(t, t)
    series = arith.addf(t, arith.mulf(arith.mulf(t, z), _horner(z, _ATAN)))
    angle = arith.select(shifted, arith.addf(_c(_PI / 4), series), series)
    angle = arith.select(inverted, arith.subf(_c(_PI / 2), angle), angle)
    return math.copysign(angle, x)


def asin(x: ir.Value) -> ir.Value:
    """atan(x / sqrt(1 - x²)); ±1 divides by zero into atan(±inf) = ±π/2, |x| > 1 is NaN."""
    one = _c(1.0)
    return atan(arith.divf(x, math.sqrt(arith.mulf(arith.subf(one, x), arith.addf(one, x)))))


def acos(x: ir.Value) -> ir.Value:
    """2 atan(sqrt((1 - x) / (1 + x))): 0 at 1, π at -1 (through atan(inf))."""
    one = _c(1.0)
    half_angle = atan(math.sqrt(arith.divf(arith.subf(one, x), arith.addf(one, x))))
    return arith.mulf(_c(2.0), half_angle)


def atan2(y: ir.Value, x: ir.Value) -> ir.Value:
    """atan(y / x) moved to the quadrant of (x, y); on the y axis ±π/2, at the origin 0."""
    base = atan(arith.divf(y, x))
    left = arith.cmpf(_F.OLT, x, _c(0.0))
    angle = arith.select(left, arith.addf(base, math.copysign(_c(_PI), y)), base)
    on_y_axis = arith.cmpf(_F.OEQ, x, _c(0.0))
    axis_angle = arith.select(arith.cmpf(_F.OEQ, y, _c(0.0)), _c(0.0), math.copysign(_c(_PI / 2), y))
    return arith.select(on_y_axis, axis_angle, angle)


def erf(x: ir.Value) -> ir.Value:
    """The Maclaurin series for |x| < 2; above, 1 - erfc with erfc's continued fraction
    exp(-x²)/√π / (x + (1/2)/(x + 1/(x + (3/2)/(x + ..)))), evaluated from a fixed depth."""
    a = math.absf(x)
    z = arith.mulf(a, a)
    series = arith.mulf(arith.mulf(_c(2 / pymath.sqrt(pymath.pi)), a), _horner(z, _ERF_SERIES))
    fraction = a
    for k in range(_ERFC_DEPTH, 0, -1):
        fraction = arith.addf(a, arith.divf(_c(k / 2), fraction))
    erfc = arith.divf(arith.mulf(math.exp(arith.negf(z)), _c(1 / pymath.sqrt(pymath.pi))), fraction)
    small = arith.cmpf(_F.OLT, a, _c(_ERF_SPLIT))
    value = arith.select(small, series, arith.subf(_c(1.0), erfc))
    return math.copysign(value, x)


def log2(x: ir.Value) -> ir.Value:
    """The binary exponent plus log2 of the mantissa in [1, 2), so powers of two are exact.
    Zero, subnormals (IREE's CPU code flushes them to zero anyway), negatives, inf and NaN take
    log's answer."""
    i64 = ir.IntegerType.get_signless(64)
    bits = arith.bitcast(i64, x)
    biased = arith.andi(arith.shrui(bits, arith.constant(i64, 52)), arith.constant(i64, 0x7FF))
    exponent = arith.sitofp(_f64(), arith.subi(biased, arith.constant(i64, 1023)))
    mantissa_bits = arith.ori(arith.andi(bits, arith.constant(i64, (1 << 52) - 1)),
                              arith.constant(i64, 1023 << 52))
    mantissa = arith.bitcast(_f64(), mantissa_bits)
    finite = arith.addf(exponent, arith.mulf(math.log(mantissa), _c(1 / pymath.log(2))))
    # ULT is true for NaN too
    special = arith.ori(arith.cmpf(_F.ULT, x, _c(2.0 ** -1022)), arith.cmpf(_F.OEQ, x, _c(float("inf"))))
    return arith.select(special, arith.mulf(math.log(x), _c(1 / pymath.log(2))), finite)


def tanh(x: ir.Value) -> ir.Value:
    """expm1(2x) / (expm1(2x) + 2), accurate near 0; past |x| = 20 tanh is ±1 in f64."""
    e = math.expm1(arith.mulf(x, _c(2.0)))
    ratio = arith.divf(e, arith.addf(e, _c(2.0)))
    large = arith.cmpf(_F.OGT, math.absf(x), _c(20.0))
    return arith.select(large, math.copysign(_c(1.0), x), ratio)


UNARY: dict[str, Callable[[ir.Value], ir.Value]] = {
    "sin": sin, "cos": cos, "tan": tan, "asin": asin, "acos": acos, "atan": atan,
    "erf": erf, "log2": log2, "tanh": tanh,
}
