"""f32 sin, cos and tan over the whole f32 range: Payne–Hanek argument reduction in 32-bit
integers (vulkan-spirv has neither f64 nor i64), then the generic kernels of f64_math.

|x| = m 2^(e-23) with a 24-bit integer m. x 2/π mod 4 needs only the bits of 2/π from 2^-(e-24)
on: the earlier ones give multiples of 4. A window of 96 of them, W, is picked out of eight
32-bit words by e (selects: the same code runs on lanes), and m W mod 2^96 holds the quadrant in
its top 2 bits and the fraction in the other 94 (enough for the f32 argument closest to a
multiple of π/2, whose fraction starts about 30 bits down). Arguments below π/4 are their own
remainder. Every op is elementwise, so scalars and vectors (recurrence lanes) take it alike.
"""
from __future__ import annotations

import numpy as np

from iree.compiler import ir
from iree.compiler.dialects import arith, math

from einc.mlir.core import f64_math
from einc.mlir.core.f64_math import constant, shaped

_F, _I = arith.CmpFPredicate, arith.CmpIPredicate
_WORDS = 8                   # 2/π's bits 2^-1 .. 2^-224, after a word of zeros (bits 2^31 .. 2^0)
_LOWEST_EXPONENT = -2        # |x| >= π/4 > 2^-1: e >= -1; clamped so no shift leaves 0..31
_HIGHEST_EXPONENT = 127


def _two_over_pi_words() -> list[int]:
    """floor(2/π 2^(32 (_WORDS - 1))) as _WORDS 32-bit words, most significant first (the first
    one zero), from π by Machin's formula in integers with 64 guard bits."""
    bits = 32 * (_WORDS - 1) + 64
    def arctan_inverse(n: int) -> int:          # arctan(1/n) 2^bits
        total, term, k = 0, (1 << bits) // n, 0
        while term:
            total += term // (2 * k + 1) * (-1) ** k
            term //= n * n
            k += 1
        return total
    pi = 16 * arctan_inverse(5) - 4 * arctan_inverse(239)
    value = (2 << (2 * bits)) // pi >> 64          # 2/π 2^(bits - 64)
    return [(value >> (32 * (_WORDS - 1 - k))) & 0xFFFFFFFF for k in range(_WORDS)]


_TWO_OVER_PI = _two_over_pi_words()


def _u32(value: int, like: ir.Value) -> ir.Value:
    return constant(value - (1 << 32) if value >= 1 << 31 else value, like, ir.IntegerType.get_signless(32))


def _word(index: ir.Value, offset: int) -> ir.Value:
    """Word number index + offset of _TWO_OVER_PI, for index in 0..4 (a chain of selects)."""
    candidates = _TWO_OVER_PI[offset:offset + 5]
    out = _u32(candidates[-1], index)
    for k in range(len(candidates) - 2, -1, -1):
        out = arith.select(arith.cmpi(_I.eq, index, constant(k, index)), _u32(candidates[k], index), out)
    return out


def _window(first: ir.Value, left: ir.Value, right: ir.Value, offset: int) -> ir.Value:
    """32 bits of 2/π starting `left` bits into word first + offset."""
    high = arith.shli(_word(first, offset), left)
    low = arith.shrui(_word(first, offset + 1), right)
    return arith.select(arith.cmpi(_I.eq, left, constant(0, left)), high, arith.ori(high, low))


def _wide_product(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(low, high) 32-bit words of the unsigned 64-bit a b, from 16-bit halves with plain muli,
    addi and shrui: arith.mului_extended fails to lower on n-d vectors on llvm-cpu (IREE-47) and
    vulkan-spirv has no i64 to widen into."""
    sixteen, mask = constant(16, a), constant(0xFFFF, a)
    a_low, a_high = arith.andi(a, mask), arith.shrui(a, sixteen)
    b_low, b_high = arith.andi(b, mask), arith.shrui(b, sixteen)
    low_low, low_high = arith.muli(a_low, b_low), arith.muli(a_low, b_high)
    high_low, high_high = arith.muli(a_high, b_low), arith.muli(a_high, b_high)
    # the carry word of the middle: three terms below 2^16 each, so no overflow
    middle = arith.addi(arith.addi(arith.shrui(low_low, sixteen), arith.andi(low_high, mask)),
                        arith.andi(high_low, mask))
    high = arith.addi(arith.addi(high_high, arith.shrui(low_high, sixteen)),
                      arith.addi(arith.shrui(high_low, sixteen), arith.shrui(middle, sixteen)))
    return arith.muli(a, b), high


def _product_mod_2_96(m: ir.Value, w: list) -> tuple[ir.Value, ir.Value]:
    """The top two words of m (w0 2^64 + w1 2^32 + w2) mod 2^96, for a 24-bit m. The high word
    of m w2 comes from an f32 product, a unit or two off: 2^-61 in the fraction, far below what
    its f32 conversion keeps (the bits are 2^-94 .. 2^-31 of the quadrant count)."""
    f32 = shaped(ir.F32Type.get(), m)
    eight = constant(8, m)
    estimate = arith.mulf(arith.mulf(arith.sitofp(f32, m), arith.sitofp(f32, arith.shrui(w[2], eight))),
                          constant(2.0 ** -24, arith.sitofp(f32, m)))
    low1, high1 = _wide_product(m, w[1])
    p1 = arith.addi(arith.fptosi(m.type, estimate), low1)
    carry = arith.extui(m.type, arith.cmpi(_I.ult, p1, low1))
    return arith.addi(arith.addi(high1, arith.muli(m, w[0])), carry), p1


def _large_reduction(a: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(r, q) for a = |x| >= π/4: a = (4n + q) π/2 + r, |r| <= π/4 (f32 r, i32 q in 0..3)."""
    i32 = shaped(ir.IntegerType.get_signless(32), a)
    bits = arith.bitcast(i32, a)
    m = arith.ori(arith.andi(bits, constant(0x7FFFFF, bits)), constant(0x800000, bits))
    e = arith.subi(arith.shrui(bits, constant(23, bits)), constant(127, bits))
    e = arith.maxsi(arith.minsi(e, constant(_HIGHEST_EXPONENT, e)), constant(_LOWEST_EXPONENT, e))
    # the window starts at bit 2^-(e - 24): `left` bits into word (e + 7) / 32
    start = arith.addi(e, constant(7, e))
    first, left = arith.shrui(start, constant(5, e)), arith.andi(start, constant(31, e))
    right = arith.subi(constant(32, e), left)
    p2, p1 = _product_mod_2_96(m, [_window(first, left, right, k) for k in range(3)])
    # the fraction, signed (from -1/2), in two words; a negative one rounds the quadrant up
    two, thirty = constant(2, e), constant(30, e)
    high = arith.ori(arith.shli(p2, two), arith.shrui(p1, thirty))
    low = arith.shli(p1, two)
    negative = arith.cmpi(_I.slt, high, constant(0, e))
    q = arith.andi(arith.addi(arith.shrui(p2, thirty), arith.extui(i32, negative)), constant(3, e))
    return _times_half_pi(high, low), q


def _times_half_pi(high: ir.Value, low: ir.Value) -> ir.Value:
    """(high 2^-32 + low 2^-64) π/2 in f32, high signed and low unsigned. high's top 24 bits
    convert exactly and their product with π/2's head is kept exact by an FMA, so r is rounded
    about once."""
    f32 = shaped(ir.F32Type.get(), high)
    top = arith.sitofp(f32, arith.andi(high, constant(-256, high)))
    rest = arith.sitofp(f32, arith.ori(arith.shli(arith.andi(high, constant(255, high)), constant(23, high)),
                                       arith.shrui(low, constant(9, high))))
    top, rest = arith.mulf(top, constant(2.0 ** -32, top)), arith.mulf(rest, constant(2.0 ** -55, top))
    head, tail = constant(_HALF_PI_HEAD, top), constant(_HALF_PI_TAIL, top)
    product = arith.mulf(top, head)
    error = math.fma(top, head, arith.negf(product))
    return arith.addf(product, arith.addf(error, arith.addf(arith.mulf(top, tail), arith.mulf(rest, head))))


_HALF_PI_HEAD = float(np.float32(np.pi / 2))
_HALF_PI_TAIL = float(np.float32(np.pi / 2 - _HALF_PI_HEAD))


def reduce_half_pi(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(r, q): x = k π/2 + r with |r| <= π/4 and q = k mod 4 (r NaN for a NaN x; ±inf is the
    caller's, f64_math._nan_at_infinity)."""
    r, q = _large_reduction(math.absf(x))
    negative = arith.cmpf(_F.OLT, x, constant(0.0, x))
    r = arith.select(negative, arith.negf(r), r)
    q = arith.select(negative, arith.andi(arith.subi(constant(0, q), q), constant(3, q)), q)
    # below π/4 (-0 and NaN included: unordered) x is its own remainder
    own = arith.cmpf(_F.ULT, math.absf(x), constant(0.7853981633974483, x))
    return arith.select(own, x, r), arith.select(own, constant(0, q), q)


def sin(x: ir.Value) -> ir.Value:
    return f64_math.sin(x, reduce_half_pi)


def cos(x: ir.Value) -> ir.Value:
    return f64_math.cos(x, reduce_half_pi)


def tan(x: ir.Value) -> ir.Value:
    return f64_math.tan(x, reduce_half_pi)
