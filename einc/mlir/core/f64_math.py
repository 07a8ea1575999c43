"""f64 elementary functions as plain arithmetic, for the llvm-cpu backend.

IREE-22: f64 `math.sin` and its kin, and `arith.remf`, become libm calls that a dispatch cannot
link. These expansions use only arith ops plus math.exp/expm1/log/sqrt/copysign/absf/ctlz, which
IREE lowers on f64 (`fmod` also a loop). fmod is exact; the others are a few ulps from NumPy
(sin/cos/tan exact for |x| < 1.6e6). sin, cos, tan, asin, acos, atan and atan2 are generic over
the float type: f32_math uses them with the f32 `PRECISION` (sin, cos and tan with f32_trig's
argument reduction). Each function takes and returns an f64 (or f32) `ir.Value` under an insertion point.
"""
from __future__ import annotations

import math as pymath
from decimal import Decimal, localcontext
from typing import Callable, NamedTuple

from iree.compiler import ir
from iree.compiler.dialects import arith, math, scf, vector

_F, _I = arith.CmpFPredicate, arith.CmpIPredicate


def cody_waite_parts(value: Decimal, bits: int, parts: int) -> list[float]:
    """`value` as a sum of `parts` doubles, all but the last with only `bits` significant bits,
    so that k * part is exact for |k| < 2^(53 - bits) (Cody–Waite reduction)."""
    out = []
    for _ in range(parts - 1):
        mantissa, exponent = pymath.frexp(float(value))
        part = pymath.ldexp(pymath.trunc(mantissa * 2 ** bits) / 2 ** bits, exponent)
        out.append(part)
        value -= Decimal(part)
    return out + [float(value)]


def _pi_constants(bits: int, parts: int) -> tuple:
    """(π/2 in Cody–Waite parts, 2/π, π) from 70 digits of π, in a local decimal context."""
    with localcontext(prec=70):
        pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640")
        return cody_waite_parts(pi / 2, bits, parts), float(2 / pi), float(pi)


class Precision(NamedTuple):
    """What the generic functions need of a float type: π/2 in parts of few bits (k * part is
    exact while |k| < 2^(mantissa - bits)), the integer width of k, and series lengths."""
    half_pi: list
    k_bits: int
    sin_terms: int          # r + r z (s1 + z (s2 + ..)), |r| <= π/4
    cos_terms: int          # 1 + z (c1 + z (c2 + ..))
    atan_terms: int         # |t| <= tan(π/8)


_, _TWO_OVER_PI, _PI = _pi_constants(33, 3)
# f32 reduces its arguments in einc.mlir.core.f32_trig (Payne–Hanek, every f32), not here
PRECISION = {64: Precision(_pi_constants(33, 3)[0], 64, 9, 9, 21), 32: Precision([], 32, 5, 6, 10)}
_SIN = [(-1) ** n / pymath.factorial(2 * n + 1) for n in range(1, 10)]
_COS = [(-1) ** n / pymath.factorial(2 * n) for n in range(1, 10)]
_ATAN = [(-1) ** n / (2 * n + 1) for n in range(1, 22)]
_ERF_SERIES = [(-1) ** n / (pymath.factorial(n) * (2 * n + 1)) for n in range(34)]
_ERF_SPLIT = 2.0          # series below, continued fraction for erfc above (both < 1e-15)
_ERFC_DEPTH = 50


def _f64() -> ir.Type:
    return ir.F64Type.get()


def shaped(element: ir.Type, like: ir.Value) -> ir.Type:
    """`element`, or a vector of it when `like` is a vector (recurrence lanes)."""
    return ir.VectorType.get(like.type.shape, element) if isinstance(like.type, ir.VectorType) else element


def element_of(like: ir.Value) -> ir.Type:
    return like.type.element_type if isinstance(like.type, ir.VectorType) else like.type


def constant(value, like: ir.Value, element: ir.Type | None = None) -> ir.Value:
    """`value` as `like`'s element type (or `element`), in like's shape: a scalar or a splat."""
    element = element or element_of(like)
    attr = ir.FloatAttr.get(element, float(value)) if isinstance(element, ir.FloatType) \
        else ir.IntegerAttr.get(element, int(value))
    t = shaped(element, like)
    return arith.constant(t, ir.DenseElementsAttr.get_splat(t, attr) if t != element else attr)


def _c(value: float, like: ir.Value | None = None) -> ir.Value:
    """A constant of `like`'s float type (f64 without one)."""
    return arith.constant(_f64(), float(value)) if like is None else constant(value, like)


def precision(x: ir.Value) -> Precision:
    return PRECISION[element_of(x).width]


def horner(z: ir.Value, coefficients: list[float]) -> ir.Value:
    """c0 + z (c1 + z (c2 + ..)) in z's type."""
    acc = _c(coefficients[-1], z)
    for coefficient in reversed(coefficients[:-1]):
        acc = arith.addf(arith.mulf(acc, z), _c(coefficient, z))
    return acc


def _reduce_half_pi(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(r, q): x = k π/2 + r with |r| <= π/4, and q = k mod 4 (an integer), for an f64 x
    (sin, cos and tan take f32_trig's reduction for f32)."""
    p = precision(x)
    assert p.half_pi, "f32 arguments are reduced by einc.mlir.core.f32_trig"
    index = ir.IntegerType.get_signless(p.k_bits)
    scaled = arith.mulf(x, _c(_TWO_OVER_PI, x))
    k = arith.fptosi(shaped(index, x), arith.addf(scaled, math.copysign(_c(0.5, x), scaled)))
    kf = arith.sitofp(x.type, k)
    r = x
    for part in p.half_pi:
        r = arith.subf(r, arith.mulf(kf, _c(part, x)))
    return r, arith.andi(k, constant(3, x, index))


def _sin_cos_kernels(r: ir.Value) -> tuple[ir.Value, ir.Value]:
    p = precision(r)
    z = arith.mulf(r, r)
    sin_r = arith.addf(r, arith.mulf(arith.mulf(r, z), horner(z, _SIN[:p.sin_terms])))
    cos_r = arith.addf(_c(1.0, r), arith.mulf(z, horner(z, _COS[:p.cos_terms])))
    return sin_r, cos_r


def _quadrant(q: ir.Value, n: int) -> ir.Value:
    return arith.cmpi(_I.eq, q, constant(n, q))


def _by_quadrant(q: ir.Value, values: list[ir.Value]) -> ir.Value:
    """values[q] for q in 0..3."""
    low = arith.select(_quadrant(q, 0), values[0], values[1])
    high = arith.select(_quadrant(q, 2), values[2], values[3])
    return arith.select(arith.cmpi(_I.ult, q, constant(2, q)), low, high)


def _nan_at_infinity(x: ir.Value, value: ir.Value) -> ir.Value:
    """NaN for x = ±inf, whose reduction is undefined (an out-of-range float to int)."""
    infinite = arith.cmpf(_F.OEQ, math.absf(x), _c(float("inf"), x))
    return arith.select(infinite, _c(float("nan"), x), value)


def sin(x: ir.Value, reduce=None) -> ir.Value:
    r, q = (reduce or _reduce_half_pi)(x)
    s, c = _sin_cos_kernels(r)
    return _nan_at_infinity(x, _by_quadrant(q, [s, c, arith.negf(s), arith.negf(c)]))


def cos(x: ir.Value, reduce=None) -> ir.Value:
    r, q = (reduce or _reduce_half_pi)(x)
    s, c = _sin_cos_kernels(r)
    return _nan_at_infinity(x, _by_quadrant(q, [c, arith.negf(s), arith.negf(c), s]))


def tan(x: ir.Value, reduce=None) -> ir.Value:
    r, q = (reduce or _reduce_half_pi)(x)
    s, c = _sin_cos_kernels(r)
    odd = arith.trunci(shaped(ir.IntegerType.get_signless(1), q), q)
    return _nan_at_infinity(x, arith.select(odd, arith.negf(arith.divf(c, s)), arith.divf(s, c)))


def atan(x: ir.Value) -> ir.Value:
    """Reduced twice: |x| > 1 by atan(a) = π/2 - atan(1/a), then a > tan(π/8) by
    atan(a) = π/4 + atan((a - 1) / (a + 1)), leaving a series argument below 0.4143."""
    a = math.absf(x)
    one = _c(1.0, x)
    inverted = arith.cmpf(_F.OGT, a, one)
    a = arith.select(inverted, arith.divf(one, a), a)
    shifted = arith.cmpf(_F.OGT, a, _c(pymath.sqrt(2.0) - 1.0, x))
    t = arith.select(shifted, arith.divf(arith.subf(a, one), arith.addf(a, one)), a)
    z = arith.mulf(t, t)
    series = arith.addf(t, arith.mulf(arith.mulf(t, z), horner(z, _ATAN[:precision(x).atan_terms])))
    angle = arith.select(shifted, arith.addf(_c(_PI / 4, x), series), series)
    angle = arith.select(inverted, arith.subf(_c(_PI / 2, x), angle), angle)
    return math.copysign(angle, x)


def asin(x: ir.Value) -> ir.Value:
    """atan(x / sqrt(1 - x²)); ±1 divides by zero into atan(±inf) = ±π/2, |x| > 1 is NaN."""
    one = _c(1.0, x)
    return atan(arith.divf(x, math.sqrt(arith.mulf(arith.subf(one, x), arith.addf(one, x)))))


def acos(x: ir.Value) -> ir.Value:
    """2 atan(sqrt((1 - x) / (1 + x))): 0 at 1, π at -1 (through atan(inf))."""
    one = _c(1.0, x)
    half_angle = atan(math.sqrt(arith.divf(arith.subf(one, x), arith.addf(one, x))))
    return arith.mulf(_c(2.0, x), half_angle)


def atan2(y: ir.Value, x: ir.Value) -> ir.Value:
    """atan(y / x) moved to the quadrant of (x, y); on the y axis ±π/2, at the origin 0."""
    base = atan(arith.divf(y, x))
    zero = _c(0.0, x)
    left = arith.cmpf(_F.OLT, x, zero)
    angle = arith.select(left, arith.addf(base, math.copysign(_c(_PI, x), y)), base)
    on_y_axis = arith.cmpf(_F.OEQ, x, zero)
    axis_angle = arith.select(arith.cmpf(_F.OEQ, y, zero), zero, math.copysign(_c(_PI / 2, x), y))
    return arith.select(on_y_axis, axis_angle, angle)


def erf(x: ir.Value) -> ir.Value:
    """The Maclaurin series for |x| < 2; above, 1 - erfc with erfc's continued fraction
    exp(-x²)/√π / (x + (1/2)/(x + 1/(x + (3/2)/(x + ..)))), evaluated from a fixed depth."""
    a = math.absf(x)
    z = arith.mulf(a, a)
    series = arith.mulf(arith.mulf(_c(2 / pymath.sqrt(pymath.pi)), a), horner(z, _ERF_SERIES))
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


def trunc(x: ir.Value) -> ir.Value:
    """x rounded toward zero by way of an integer of its width, where |x| is below 2^(mantissa
    bits) (a larger float, an infinity or a NaN has no fraction and is x itself); the sign is
    x's (trunc(-0.5) is -0.0). IREE-75: llvm-cpu-generic leaves math.trunc to libm's truncf or
    trunc, which a dispatch cannot link. Generic over the float type."""
    width = element_of(x).width
    whole = arith.sitofp(shaped(element_of(x), x), arith.fptosi(shaped(ir.IntegerType.get_signless(width), x), x))
    small = arith.cmpf(_F.OLT, math.absf(x), constant(2.0 ** {32: 23, 64: 52}[width], x))
    return arith.select(small, math.copysign(whole, x), x)


def ceil(x: ir.Value) -> ir.Value:
    """x rounded up: its truncation, plus 1 where that fell below x (ceil(-0.5) keeps trunc's
    -0.0; an infinity or NaN is x). IREE-81: llvm-cpu-generic leaves f64 math.ceil to libm's
    ceil, which a dispatch cannot link."""
    whole = trunc(x)
    return arith.select(arith.cmpf(_F.OLT, whole, x), arith.addf(whole, _c(1.0, x)), whole)


def fmod(x: ir.Value, y: ir.Value) -> ir.Value:
    """C's fmod (x - trunc(x / y) y with x's sign), exactly. IREE-22 again: f64 `arith.remf` by
    anything but a power of two is a libm call a dispatch cannot link. |x| is reduced by the
    largest |y| 2^k not above it until below |y|; each subtraction is exact (Sterbenz) and k
    falls every step, so at most as many steps as x's and y's exponents differ by (2,098)."""
    ax, ay = math.absf(x), math.absf(y)
    inf = _c(float("inf"), x)
    reducible = arith.andi(arith.cmpf(_F.OLT, ax, inf), arith.cmpf(_F.OGT, ay, _c(0.0, x)))
    going = lambda r: arith.andi(reducible, arith.cmpf(_F.OGE, r, ay))   # per lane
    loop = scf.WhileOp([ax.type], [ax])
    test, step = loop.before.blocks.append(ax.type), loop.after.blocks.append(ax.type)
    with ir.InsertionPoint(test):
        r = test.arguments[0]
        scf.condition(_any(going(r)), [r])
    with ir.InsertionPoint(step):
        r = step.arguments[0]
        scf.yield_([arith.select(going(r), arith.subf(r, _largest_scaled_below(ay, r)), r)])
    result = math.copysign(loop.results[0], x)
    # x inf or NaN, y 0 or NaN: NaN; y ±inf: x (the loop left |x|, whose sign copysign restored)
    nan = arith.ori(arith.cmpf(_F.UNO, x, y), arith.cmpf(_F.OEQ, ax, inf))
    nan = arith.ori(nan, arith.cmpf(_F.OEQ, ay, _c(0.0, x)))
    return arith.select(nan, _c(float("nan"), x), result)


def _any(flags: ir.Value) -> ir.Value:
    """Whether any lane of `flags` is set (a scalar flag is its own answer)."""
    if not isinstance(flags.type, ir.VectorType):
        return flags
    return vector.reduction(ir.IntegerType.get_signless(1), vector.CombiningKind.OR, flags)


def _largest_scaled_below(a: ir.Value, r: ir.Value) -> ir.Value:
    """The largest a 2^k (k >= 0) not above r, for finite 0 < a <= r: a scaled to r's exponent,
    halved if that passed r. Scaling upward by powers of two is exact."""
    c = lambda n: constant(n, r, ir.IntegerType.get_signless(64))
    k = arith.subi(_exponent(r), _exponent(a))
    scaled = a
    for _ in range(3):                      # k <= 2,097: three factors of at most 2^1000
        step = arith.minsi(k, c(1000))
        power = arith.bitcast(r.type, arith.shli(arith.addi(step, c(1023)), c(52)))
        scaled, k = arith.mulf(scaled, power), arith.subi(k, step)
    return arith.select(arith.cmpf(_F.OGT, scaled, r), arith.mulf(scaled, _c(0.5, r)), scaled)


def _exponent(v: ir.Value) -> ir.Value:
    """floor(log2 v) of a finite v > 0 as an i64, subnormals included."""
    c = lambda n: constant(n, v, ir.IntegerType.get_signless(64))
    bits = arith.bitcast(shaped(ir.IntegerType.get_signless(64), v), v)
    biased = arith.shrui(bits, c(52))
    subnormal = arith.subi(arith.subi(c(63), math.ctlz(bits)), c(1074))
    return arith.select(arith.cmpi(_I.eq, biased, c(0)), subnormal, arith.subi(biased, c(1023)))


UNARY: dict[str, Callable[[ir.Value], ir.Value]] = {
    "sin": sin, "cos": cos, "tan": tan, "asin": asin, "acos": acos, "atan": atan,
    "erf": erf, "log2": log2, "tanh": tanh, "trunc": trunc, "ceil": ceil,
}
