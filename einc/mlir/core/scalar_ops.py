"""Scalar `Op`s → arith/math, shared by function-level (host) and in-region (device) code.

Semantics follow the `Op` docstring: integer `div`/`rem` truncate toward zero (divsi/remsi), float
`rem` keeps the dividend's sign (remf), min/max on floats propagate NaN (minimumf/maximumf).
Integer `div`/`rem` are total (x / 0 and x % 0 are 0, MIN / -1 wraps to MIN): divsi/remsi are
undefined there and trap on x86, and `if` computes both branches (docs/DECISIONS.md).
"""
from __future__ import annotations

import math as pymath

from typing import Callable

from iree.compiler import ir
from iree.compiler.dialects import arith, math, scf

from einc.ir.nodes import Op
from einc.ir.types import BOOL, F32, DType
from einc.mlir.core import f32_math, f64_math, float_power
from einc.mlir.core.types import element_type

_F, _I = arith.CmpFPredicate, arith.CmpIPredicate

# `ne` is unordered so that NaN != x holds, as in IEEE 754; the others are ordered (false on NaN).
FLOAT_PREDICATES = {"eq": _F.OEQ, "ne": _F.UNE, "lt": _F.OLT, "le": _F.OLE, "gt": _F.OGT, "ge": _F.OGE}
INT_PREDICATES = {"eq": _I.eq, "ne": _I.ne, "lt": _I.slt, "le": _I.sle, "gt": _I.sgt, "ge": _I.sge}
# bool orders false < true: unsigned, since i1 `true` is -1 when read as signed; u8..u64 likewise
BOOL_PREDICATES = {"eq": _I.eq, "ne": _I.ne, "lt": _I.ult, "le": _I.ule, "gt": _I.ugt, "ge": _I.uge}

# math functions defined on floats; on integers the rounding ones are the identity
MATH_UNARY = ("sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos",
              "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
              "erf", "floor", "ceil", "round", "trunc")
ROUNDING = ("floor", "ceil", "round", "trunc")


def constant(dtype: DType, value) -> ir.Value:
    """A scalar constant of `dtype` (bool as i1 0/1)."""
    t = element_type(dtype)
    if dtype.is_float:
        return arith.constant(t, float(value))
    if dtype.is_bool:
        return arith.constant(t, ir.IntegerAttr.get(t, 1 if value else 0))
    value = int(value)
    if value >= 1 << (dtype.bits - 1):
        value -= 1 << dtype.bits        # signless: an unsigned value by its two's-complement bits
    return arith.constant(t, value)


# Function-level scalar code runs in IREE's VM, which cannot lower these; such ops run as 0-d
# kernels on the device instead.
VM_MISSING_MATH = ("tan", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh", "trunc")


def runs_on_host(op: Op) -> bool:
    operand = op.args[0].dtype
    if op.op in VM_MISSING_MATH or operand.is_half or op.dtype.is_half:
        return False                # the VM has no 16-bit floats
    if op.op in _EXPANSIONS.get(operand.name, {}) or (operand.is_float and op.op == "atan2"):
        return False                # the expansions use bit casts and i64 the VM may not have
    if op.op == "pow":
        return False                # IREE-73, -74: einc's powers use ops the VM lacks (trunc, a loop)
    if op.op == "rem" and operand.name == "f64":
        return False                # f64_math.fmod: a loop, bit casts and copysign
    if op.op == "cast" and operand.is_float and op.dtype.is_int:
        return False                # the VM's f32 -> i32 rounds to nearest (2.7 as i32 gave 3)
    if op.op == "cast":
        widening = operand.name == "f32" and op.dtype.name == "f64"
        touches_f64 = "f64" in (operand.name, op.dtype.name)
        return not (touches_f64 and not widening) and not (operand.is_bool and op.dtype.is_float)
    return True


def apply(op: Op, args: list[ir.Value]) -> ir.Value:
    """The MLIR value of `op` applied to already-lowered scalar `args`."""
    operand = op.args[0].dtype
    if op.op == "cast":
        return cast(args[0], operand, op.dtype)
    if op.op == "select":
        return arith.select(*args)
    if operand.is_half:
        return in_f32(operand, lambda *wide: _apply_wide(op, F32, wide), op.dtype.is_half)(*args)
    return _apply_wide(op, operand, args)


def in_f32(dtype: DType, fn: Callable, rounded: bool = True) -> Callable:
    """`fn` on values of the half type `dtype` computed in f32, its result rounded back to
    `dtype` (not a bool's): IREE has no 16-bit float math and bf16 arithmetic on the CPU, and
    f32 holds every product, sum and quotient of two halves closely enough that rounding it
    once gives the correctly rounded half (docs/DECISIONS.md)."""
    half = element_type(dtype)

    def wide(*args):
        result = fn(*(arith.extf(f64_math.shaped(ir.F32Type.get(), a), a)
                      if f64_math.element_of(a) == half else a for a in args))
        return round_to_half(result, dtype) if rounded else result
    return wide


def round_to_half(x: ir.Value, dtype: DType) -> ir.Value:
    """An f32 value rounded to the nearest f16 or bf16, ties to even. IREE-44: for a CPU without
    AVX512-BF16 llvm-cpu leaves f32 -> bf16 to `__truncsfbf2`, which it does not link, so bf16 is
    rounded here on the bits: add 0x7fff plus the lowest kept bit, keep the high half (a NaN
    stays a NaN)."""
    half = f64_math.shaped(element_type(dtype), x)
    if dtype.name == "f16":
        return arith.truncf(half, x)
    i32, i16 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(16)
    c = lambda value, element: f64_math.constant(value, x, element)
    bits = arith.bitcast(f64_math.shaped(i32, x), x)
    lowest_kept = arith.andi(arith.shrui(bits, c(16, i32)), c(1, i32))
    rounded = arith.shrui(arith.addi(bits, arith.addi(lowest_kept, c(0x7FFF, i32))), c(16, i32))
    nan = arith.cmpf(_F.UNO, x, x)
    high = arith.select(nan, c(0x7FC0, i32), rounded)
    return arith.bitcast(half, arith.trunci(f64_math.shaped(i16, x), high))


def _apply_wide(op: Op, operand: DType, args) -> ir.Value:
    if op.op == "pow":      # an integer exponent keeps its own type, which may not be the base's
        return _pow(operand, op.args[1].dtype, *args)
    if op.op in FLOAT_PREDICATES:
        return compare(op.op, operand, *args)
    if op.op in MATH_UNARY:
        return _math_unary(op.op, operand, args[0])
    return _RULES[op.op](operand, *args)


def compare(name: str, dtype: DType, a: ir.Value, b: ir.Value) -> ir.Value:
    if dtype.is_float:
        return arith.cmpf(FLOAT_PREDICATES[name], a, b)
    table = BOOL_PREDICATES if dtype.is_bool or dtype.is_unsigned else INT_PREDICATES
    return arith.cmpi(table[name], a, b)


def cast(x: ir.Value, src: DType, dst: DType) -> ir.Value:
    if src == dst:
        return x
    out = element_type(dst)
    if dst.is_bool:
        return compare("ne", src, x, constant(src, 0))
    if src.is_bool:
        return arith.extui(out, x) if dst.is_int else arith.uitofp(out, x)
    if src.is_half or dst.is_half:
        return _cast_through_f32(x, src, dst)
    if src.is_float and dst.is_float:
        return arith.extf(out, x) if dst.bits > src.bits else arith.truncf(out, x)
    if src.is_int and dst.is_int:
        # wider: extended by the source's signedness; narrower: the low bits (wraps, as NumPy)
        if dst.bits == src.bits:
            return x
        if dst.bits < src.bits:
            return arith.trunci(out, x)
        return arith.extui(out, x) if src.is_unsigned else arith.extsi(out, x)
    if dst.is_float:
        return arith.uitofp(out, x) if src.is_unsigned else arith.sitofp(out, x)
    return arith.fptoui(out, x) if dst.is_unsigned else arith.fptosi(out, x)


def _cast_through_f32(x: ir.Value, src: DType, dst: DType) -> ir.Value:
    """A conversion to or from a half type by way of f32, which holds every half exactly: f64
    to half rounds twice, as does an integer past 2^24 to bf16 (docs/DECISIONS.md)."""
    if src.is_half:
        return cast(arith.extf(f64_math.shaped(ir.F32Type.get(), x), x), F32, dst)
    return round_to_half(cast(x, src, F32), dst)


def _math_unary(name: str, dtype: DType, x: ir.Value) -> ir.Value:
    if not dtype.is_float and name in ROUNDING:
        return x
    if name == "log10":
        # IREE's llvm-cpu backend leaves math.log10 as a call to libm's log10f, which it does not link
        return arith.mulf(_math_unary("log", dtype, x), constant(dtype, 1 / pymath.log(10)))
    expansion = _EXPANSIONS.get(dtype.name, {}).get(name)
    return expansion(x) if expansion else getattr(math, name)(x)


# einc's own float functions, by type: f64 ones IREE cannot link, f32 ones IREE gets wrong
_EXPANSIONS = {"f64": f64_math.UNARY, "f32": f32_math.UNARY}


def _atan2(dtype: DType, y: ir.Value, x: ir.Value) -> ir.Value:
    return f64_math.atan2(y, x)         # generic over the float type


def _by_kind(on_float: Callable, on_int: Callable, on_unsigned: Callable | None = None) -> Callable:
    """The op for the operand type: float, signed integer, or unsigned integer and bool
    (`on_unsigned`, where it differs from the signed op)."""
    def rule(dtype: DType, *args):
        if dtype.is_float:
            return on_float(*args)
        return (on_unsigned or on_int)(*args) if dtype.is_bool or dtype.is_unsigned else on_int(*args)
    return rule


def _neg(dtype: DType, x: ir.Value) -> ir.Value:
    return arith.negf(x) if dtype.is_float else arith.subi(constant(dtype, 0), x)


def _not(dtype: DType, x: ir.Value) -> ir.Value:
    return arith.xori(x, constant(dtype, True))


def _isnan(dtype: DType, x: ir.Value) -> ir.Value:
    if not dtype.is_float:
        return constant(BOOL, False)
    return arith.cmpf(_F.UNO, x, x)


def _isinf(dtype: DType, x: ir.Value) -> ir.Value:
    if not dtype.is_float:
        return constant(BOOL, False)
    return arith.cmpf(_F.OEQ, math.absf(x), constant(dtype, float("inf")))


def is_power_loop(v) -> bool:
    """Whether `v` lowers to a loop over its exponent's bits: a power with an integer exponent."""
    return isinstance(v, Op) and v.op == "pow" and v.args[1].dtype.is_int


def _pow(dtype: DType, exponent_dtype: DType, base: ir.Value, exponent: ir.Value) -> ir.Value:
    if dtype.is_float:
        if exponent_dtype.is_int:
            return _float_power(dtype, base, exponent)
        return _powf(dtype, base, exponent)
    return _integer_power(dtype, exponent_dtype, base, exponent)


def _powf(dtype: DType, x: ir.Value, y: ir.Value) -> ir.Value:
    """x ** y as C's pow defines it. IREE-74: IREE lowers math.powf to exp(y log x), NaN for
    every negative base and for 0 ** 0, so IREE's power is taken of |x| only: its sign is x's
    for an odd integer y, a negative x to a power that is no integer is NaN, and x ** 0, 1 ** y
    and (-1) ** inf are 1."""
    magnitude = math.absf(x)
    power = math.powf(magnitude, y)
    if float_power.applies(magnitude):
        power = float_power.power(magnitude, y, power, lambda v: _math_unary("exp", dtype, v))
    integral = arith.cmpf(_F.OEQ, _math_unary("trunc", dtype, y), y)
    # y / 2 is exact; arith.remf is not used since it is a libm call on llvm-cpu-generic in f64
    half = arith.mulf(y, constant(dtype, 0.5))
    odd = arith.andi(integral, arith.cmpf(_F.ONE, _math_unary("trunc", dtype, half), half))
    power = arith.select(odd, math.copysign(power, x), power)
    no_power = arith.andi(arith.cmpf(_F.OLT, x, constant(dtype, 0.0)), arith.xori(integral, constant(BOOL, True)))
    power = arith.select(no_power, constant(dtype, float("nan")), power)
    one = arith.ori(arith.cmpf(_F.OEQ, y, constant(dtype, 0.0)), arith.cmpf(_F.OEQ, x, constant(dtype, 1.0)))
    unit_to_inf = arith.andi(arith.cmpf(_F.OEQ, magnitude, constant(dtype, 1.0)),
                             arith.cmpf(_F.OEQ, math.absf(y), constant(dtype, float("inf"))))
    return arith.select(arith.ori(one, unit_to_inf), constant(dtype, 1.0), power)


def _float_power(dtype: DType, base: ir.Value, exponent: ir.Value) -> ir.Value:
    """A float to a signed integer power, as math.fpowi defines it: square-and-multiply over the
    bits of |n|, and 1 / that for a negative n. IREE-73: IREE lowers math.fpowi to a power
    that is NaN for every negative base (`x ** k` with x = -1.5 and k = 0, 2 or 3)."""
    zero = arith.constant(exponent.type, 0)
    negative = arith.cmpi(_I.slt, exponent, zero)
    magnitude = arith.select(negative, arith.subi(zero, exponent), exponent)   # -2^31 read unsigned
    one = constant(dtype, 1.0)
    result = _square_and_multiply(one, base, magnitude, ir.IntegerType(exponent.type).width, arith.mulf)
    return arith.select(negative, arith.divf(one, result), result)


def _integer_power(dtype: DType, exponent_dtype: DType, base: ir.Value, exponent: ir.Value) -> ir.Value:
    """Square-and-multiply over the exponent's bits (IREE cannot lower math.ipowi with a
    variable exponent). A negative exponent gives the truncated value of 1 / base^-n: 0 for
    |base| > 1 (and for 0), and base^-n itself for a base of 1 or -1 (the loop's value: the
    low bits of n and of -n have the same parity).
    An unsigned exponent has one bit more to go through than a non-negative signed one. The
    exponent's type is its own: a literal base takes a narrower context's type (`n[i] / 10 ** k`
    with n i8) while the index k stays i32, and every one of k's bits counts."""
    shifted = _power_of_two(base, exponent)
    if shifted is not None:
        return shifted
    bits = exponent_dtype.bits if exponent_dtype.is_unsigned else exponent_dtype.bits - 1
    result = _square_and_multiply(constant(dtype, 1), base, exponent, bits, arith.muli)
    if exponent_dtype.is_unsigned:
        return result
    negative = arith.cmpi(_I.slt, exponent, constant(exponent_dtype, 0))
    unit = arith.cmpi(_I.eq, base, constant(dtype, 1))
    if not dtype.is_unsigned:
        unit = arith.ori(unit, arith.cmpi(_I.eq, base, constant(dtype, -1)))
    return arith.select(negative, arith.select(unit, result, constant(dtype, 0)), result)


def _power_of_two(base: ir.Value, exponent: ir.Value) -> ir.Value | None:
    """A constant base 2^b to an integer power as a shift, 1 << b e, without the loop over the
    exponent's bits (`2 ** j` of a bitmask or `2 ** (s - 1)` of a doubling step, read per point
    of a reduction: the loop ran there once per point, 12x the time of the rest of a suffix
    array's ranking). As _integer_power: 0 where b e reaches the type's width (the wrapping
    product is) and for a negative e (read unsigned, it is past the limit too). None for
    another base."""
    b = _log2_of_constant(base)
    if b is None:
        return None
    width, e_width = ir.IntegerType(base.type).width, ir.IntegerType(exponent.type).width
    below = arith.cmpi(_I.ult, exponent, arith.constant(exponent.type, -(-width // b)))
    e = arith.select(below, exponent, arith.constant(exponent.type, 0))
    if e_width > width:
        e = arith.trunci(base.type, e)
    elif e_width < width:
        e = arith.extui(base.type, e)
    power = arith.shli(arith.constant(base.type, 1), arith.muli(e, arith.constant(base.type, b)))
    return arith.select(below, power, arith.constant(base.type, 0))


def _log2_of_constant(value: ir.Value) -> int | None:
    """b where `value` is the scalar integer constant 2^b, b >= 1."""
    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or owner.operation.name != "arith.constant" \
            or not isinstance(value.type, ir.IntegerType):
        return None
    attr = owner.operation.attributes["value"]
    v = ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None
    return v.bit_length() - 1 if v is not None and v > 1 and v & (v - 1) == 0 else None


def _square_and_multiply(one: ir.Value, base: ir.Value, exponent: ir.Value, bits: int, mul) -> ir.Value:
    """base ** exponent over the low `bits` bits of `exponent`, read unsigned: a loop of `bits`
    steps, each multiplying in the power of the bit it reads and squaring it."""
    index = ir.IndexType.get()
    loop = scf.ForOp(arith.constant(index, 0), arith.constant(index, bits), arith.constant(index, 1),
                     [one, base, exponent])
    with ir.InsertionPoint(loop.body):
        result, power, rest = loop.inner_iter_args
        odd = arith.trunci(ir.IntegerType.get_signless(1), rest)
        result = arith.select(odd, mul(result, power), result)
        scf.yield_([result, mul(power, power), arith.shrui(rest, arith.constant(exponent.type, 1))])
    return loop.results[0]


def _div(dtype: DType, a: ir.Value, b: ir.Value) -> ir.Value:
    if dtype.is_float:
        return arith.divf(a, b)
    by_zero, by_minus_one, safe = _safe_divisor(dtype, b)
    if _unsigned(dtype):
        quotient = arith.divui(a, safe)
    else:
        quotient = arith.select(by_minus_one, arith.subi(_splat(dtype, 0, a), a), arith.divsi(a, safe))
    return arith.select(by_zero, _splat(dtype, 0, a), quotient)


def _rem(dtype: DType, a: ir.Value, b: ir.Value) -> ir.Value:
    if dtype.is_float:
        return f64_math.fmod(a, b) if dtype.name == "f64" else arith.remf(a, b)
    by_zero, _, safe = _safe_divisor(dtype, b)
    if _unsigned(dtype):
        return arith.select(by_zero, _splat(dtype, 0, a), arith.remui(a, safe))
    return arith.remsi(a, safe)      # x % 1 is 0, as x % 0 and x % -1 are


def _unsigned(dtype: DType) -> bool:
    return dtype.is_bool or dtype.is_unsigned


def _safe_divisor(dtype: DType, b: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(b == 0, b == -1, b with the divisors divsi/divui are undefined or overflow on replaced by
    1): b == 0 always, b == -1 for signed types (MIN / -1 overflows)."""
    by_zero = arith.cmpi(_I.eq, b, _splat(dtype, 0, b))
    if _unsigned(dtype):
        return by_zero, None, arith.select(by_zero, _splat(dtype, 1, b), b)
    by_minus_one = arith.cmpi(_I.eq, b, _splat(dtype, -1, b))
    return by_zero, by_minus_one, arith.select(arith.ori(by_zero, by_minus_one), _splat(dtype, 1, b), b)


def _splat(dtype: DType, value, like: ir.Value) -> ir.Value:
    """A constant of `like`'s type: a scalar, or a vector (recurrence lanes) of equal elements."""
    if isinstance(like.type, ir.VectorType):
        return arith.constant(like.type, ir.DenseElementsAttr.get_splat(
            like.type, ir.IntegerAttr.get(element_type(dtype), value)))
    return constant(dtype, value)


_RULES: dict[str, Callable] = {
    "neg": _neg,
    "not": _not,
    "abs": _by_kind(math.absf, math.absi, lambda x: x),
    "isnan": _isnan,
    "isinf": _isinf,
    "add": _by_kind(arith.addf, arith.addi),
    "sub": _by_kind(arith.subf, arith.subi),
    "mul": _by_kind(arith.mulf, arith.muli),
    "div": _div,
    "rem": _rem,
    "min": _by_kind(arith.minimumf, arith.minsi, arith.minui),
    "max": _by_kind(arith.maximumf, arith.maxsi, arith.maxui),
    "atan2": _atan2,
    "and": lambda dtype, a, b: arith.andi(a, b),
    "or": lambda dtype, a, b: arith.ori(a, b),
}
