"""Integer `/` and `%` by zero (docs/DECISIONS.md): a divisor known only at run time that is 0
where the division happens fails the run with one line naming the division and the point; an
`if` computes both branches, so a division by zero in the branch not taken has no effect.
Under --unchecked-indices a division by zero is 0 (as NumPy gives) instead of undefined
behaviour, which returned INT_MIN or killed the process with SIGFPE (issue 11 item 8).
MIN / -1 wraps to MIN and MIN % -1 is 0."""
import numpy as np
import pytest

import einc
from einc.runtime import RunError
from tests.programs import built
from tests.tiers import VULKAN, VULKAN_FULL


def run_built(source, target="llvm-cpu", unchecked=True, **inputs):
    """The outputs of `source` built once per process (checked, or total with `unchecked`)."""
    with einc.load(built(source, target, unchecked_indices=unchecked).vmfb) as program:
        return program(**inputs)

DIVISORS = np.array([2, 0, 5, -1, -3, 0, 7, 1], np.int32)
DIVIDENDS = np.array([10, 10, -12, np.iinfo(np.int32).min, -7, -5, 7, 3], np.int32)


def truncated(a: int, b: int, bits: int = 32) -> tuple[int, int]:
    """Rust's truncating quotient and remainder, with the totality rule, wrapped to `bits`."""
    if b == 0:
        return 0, 0
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
    r = a - b * q
    wrap = 1 << bits
    return (q + wrap // 2) % wrap - wrap // 2, r


def references(a, b, bits=32):
    pairs = [truncated(int(x), int(y), bits) for x, y in zip(a, b)]
    return np.array([q for q, _ in pairs]), np.array([r for _, r in pairs])


PROGRAM = """
    let a: [i32; 8];
    let d: [i32; 8];
    let k: i32;
    let guarded[i] = if d[i] != 0 { 100 / d[i] } else { 0 };
    let guarded_rem[i] = if d[i] != 0 { 100 % d[i] } else { 7 };
    let q[i] = a[i] / d[i];
    let r[i] = a[i] % d[i];
    let host = if k != 0 { 10 / k } else { -1 };
    let host_taken = 10 / k + 10 % k;
    let h[0, j in 0..8] = 1000;
    let h[t in 1..3, j in 0..8] = if d[j] != 0 { h[t - 1, j] / d[j] } else { h[t - 1, j] + 1 };
    let s[0] = 100;
    let s[t in 1..8] = s[t - 1] / d[t] + s[t - 1] % d[t];
"""


def recurrence_references(d):
    h = np.full((3, 8), 1000, np.int64)
    for t in range(1, 3):
        h[t] = [truncated(int(x), int(y))[0] if y != 0 else x + 1 for x, y in zip(h[t - 1], d)]
    s = [100]
    for t in range(1, 8):
        q, r = truncated(s[-1], int(d[t]))
        s.append(q + r)
    return h, np.array(s)




@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_unchecked_division_by_zero_is_zero_and_has_no_effect_in_a_branch_not_taken(target):
    out = run_built(PROGRAM, target, a=DIVIDENDS, d=DIVISORS, k=0)
    quotients, remainders = references(DIVIDENDS, DIVISORS)
    guarded = [truncated(100, int(y))[0] for y in DIVISORS]
    guarded_rem = [truncated(100, int(y))[1] if y != 0 else 7 for y in DIVISORS]
    np.testing.assert_array_equal(out["guarded"], guarded)
    np.testing.assert_array_equal(out["guarded_rem"], guarded_rem)
    np.testing.assert_array_equal(out["q"], quotients)
    np.testing.assert_array_equal(out["r"], remainders)
    assert out["host"] == -1 and out["host_taken"] == 0
    h, s = recurrence_references(DIVISORS)
    np.testing.assert_array_equal(out["h"], h)
    np.testing.assert_array_equal(out["s"], s)


CHECKED = """let a: [i32; 8];
let d: [i32; 8];
let e: [i32; 8];
let k: i32;
let guarded[i] = if d[i] != 0 { a[i] / d[i] } else { -1 };
let q[i] = a[i] % d[i];
let host = 10 / k;
let s[0] = 100;
let s[t in 1..8] = s[t - 1] / e[t] + 1;
let by_index[i in 0..4] = 12 / (i - 2);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN])
def test_a_run_time_division_by_zero_fails_the_run_naming_the_division_and_the_point(target):
    """Checked by default: the first division (in program order) whose divisor is 0 where it is
    computed, as the index checks report; the guarded division (zero in its branch not taken)
    and nonzero divisors give NumPy's values (truncating, as Rust and C)."""
    ones = np.ones(8, np.int32)

    def fails(message, **inputs):
        with pytest.raises(RunError, match=message):
            run_built(CHECKED, target, unchecked=False, **{"a": DIVIDENDS, "d": ones, "e": ones, "k": 3} | inputs)

    fails(r"program.ein:6:12: a\[i\] % d\[i\]: integer division by zero at i = 1", d=DIVISORS)
    fails(r":7:12: 10 / k: integer division by zero$", k=0)
    fails(r":9:20: s\[t - 1\] / e\[t\]: integer division by zero at t = 5", e=np.where(np.arange(8) == 5, 0, ones))
    fails(r":10:27: 12 / \(i - 2\): integer division by zero at i = 2")


def test_a_divisor_of_indices_that_is_never_zero_runs():
    d = np.array([2, -3, 5, -1, 4, 7, 1, 9], np.int32)
    out = run_built(CHECKED.replace("(i - 2)", "(i + 2)"), unchecked=False, a=DIVIDENDS, d=d, e=d[::-1].copy(), k=3)
    np.testing.assert_array_equal(out["guarded"], references(DIVIDENDS, d)[0])
    np.testing.assert_array_equal(out["q"], references(DIVIDENDS, d)[1])
    s = [100]
    for t in range(1, 8):
        s.append(truncated(s[-1], int(d[7 - t]))[0] + 1)
    np.testing.assert_array_equal(out["s"], s)
    assert out["host"] == 3
    np.testing.assert_array_equal(out["by_index"], [truncated(12, i + 2)[0] for i in range(4)])


def test_i64_division_wraps_at_its_own_minimum():
    a = np.array([np.iinfo(np.int64).min, 9, -9, 4], np.int64)
    d = np.array([-1, 0, 2, -1], np.int64)
    out = run_built("""
        let a: [i64; 4];
        let d: [i64; 4];
        let q[i] = a[i] / d[i];
        let r[i] = a[i] % d[i];
    """, a=a, d=d)
    quotients, remainders = references(a, d, bits=64)
    np.testing.assert_array_equal(out["q"], quotients)
    np.testing.assert_array_equal(out["r"], remainders)


def test_unsigned_division_by_zero_is_zero_and_large_values_stay_unsigned():
    """u8/u32 divide with divui/remui: a zero divisor gives 0 (the same rule as signed types) and
    values above the signed maximum are not taken as negative."""
    a = np.array([200, 7, 255, 0], np.uint8)
    d = np.array([0, 2, 255, 0], np.uint8)
    big = np.array([4_000_000_000, 9, 3_000_000_000], np.uint32)
    by = np.array([3, 0, 4_000_000_000], np.uint32)
    out = run_built("""
        let a: [u8; 4];
        let d: [u8; 4];
        let big: [u32; 3];
        let by: [u32; 3];
        let q[i] = a[i] / d[i];
        let r[i] = a[i] % d[i];
        let bq[i] = big[i] / by[i];
        let br[i] = big[i] % by[i];
    """, a=a, d=d, big=big, by=by)

    def total(x, y, op):
        return np.array([op(int(p), int(q)) if q else 0 for p, q in zip(x, y)], x.dtype)
    np.testing.assert_array_equal(out["q"], total(a, d, lambda p, q: p // q))
    np.testing.assert_array_equal(out["r"], total(a, d, lambda p, q: p % q))
    np.testing.assert_array_equal(out["bq"], total(big, by, lambda p, q: p // q))
    np.testing.assert_array_equal(out["br"], total(big, by, lambda p, q: p % q))


NARROW = """let a8: [i8; 5];
let d8: [i8; 5];
let e: [i32; 5];
let a16: [i16; 5];
let a64: [i64; 5];
let au: [u8; 5];
let du: [u8; 5];
let digit[i, k in 0..4] = (a8[i] / 10 ** k) % 10;
let digit_sum[i] = sum[k](digit[i, k]);
let q8[i] = a8[i] / d8[i];
let by_power[i] = a8[i] / 2 ** e[i];
let mix[i, k in 0..3] = (a8[i] + 3 ** k) % d8[i];
let q16[i, k in 0..5] = a16[i] / 10 ** k;
let r64[i, k in 0..5] = a64[i] % 10 ** k;
let qu[i, k in 0..4] = au[i] / 2 ** k;
let ru[i] = au[i] % du[i];
let p8[i, k in 0..130] = a8[i] * 2 ** k;
"""
NARROW_INPUTS = {"a8": np.array([127, -128, -7, 45, 0], np.int8), "d8": np.array([3, -1, 2, -5, 7], np.int8),
                 "e": np.array([0, 7, 3, 1, 6], np.int32),
                 "a16": np.array([32767, -32768, 1234, -999, 5], np.int16),
                 "a64": np.array([2**62, -2**63, 123456789, -98765, 7], np.int64),
                 "au": np.array([255, 128, 7, 0, 200], np.uint8), "du": np.array([7, 255, 2, 1, 3], np.uint8)}


def test_narrow_integer_divisions_by_powers_of_an_index_or_array_match_numpy():
    """A literal base takes its context's narrow type (i8 `10 ** k`, u8 `2 ** k`) while the
    exponent keeps its own (i32): the power, the division by it and the check that its divisor
    is not 0 all build (their compare once mixed i32 and i8), and every power wraps in the
    base's type (2 ** 128 is 0 in i8, not 2 ** 0)."""
    x = NARROW_INPUTS
    out = run_built(NARROW, unchecked=False, **x)

    def wrap(values, dtype):
        """Python ints in `dtype`, by their two's-complement low bits."""
        return np.asarray(np.array(values, object) % (1 << 64), np.uint64).astype(dtype)

    def over_k(a, ks, op):
        power = wrap([10 ** k for k in ks], a.dtype)
        return wrap([[op(int(v), int(p)) for p in power] for v in a], a.dtype)

    quotient = lambda v, p: truncated(v, p, 64)[0]
    remainder = lambda v, p: truncated(v, p, 64)[1]
    digit = wrap([[remainder(int(q), 10) for q in row] for row in over_k(x["a8"], range(4), quotient)], np.int8)
    np.testing.assert_array_equal(out["digit"], digit)
    np.testing.assert_array_equal(out["digit_sum"], digit.astype(np.int64).sum(1).astype(np.int8))
    np.testing.assert_array_equal(out["q8"], wrap([quotient(int(v), int(p)) for v, p in zip(x["a8"], x["d8"])], np.int8))
    by_power = [quotient(int(v), int(wrap(2 ** int(k), np.int8))) for v, k in zip(x["a8"], x["e"])]
    np.testing.assert_array_equal(out["by_power"], wrap(by_power, np.int8))
    mix = [[remainder(int(wrap(int(v) + 3 ** k, np.int8)), int(d)) for k in range(3)] for v, d in zip(x["a8"], x["d8"])]
    np.testing.assert_array_equal(out["mix"], wrap(mix, np.int8))
    np.testing.assert_array_equal(out["q16"], over_k(x["a16"], range(5), quotient))
    np.testing.assert_array_equal(out["r64"], over_k(x["a64"], range(5), remainder))
    np.testing.assert_array_equal(out["qu"], wrap([[int(v) // 2 ** k for k in range(4)] for v in x["au"]], np.uint8))
    np.testing.assert_array_equal(out["ru"], x["au"] % x["du"])
    np.testing.assert_array_equal(out["p8"], wrap([[int(v) * 2 ** k for k in range(130)] for v in x["a8"]], np.int8))


def test_an_i8_power_that_wraps_to_zero_as_a_divisor_fails_the_run():
    """2 ** 8 is 0 in i8: the division by it fails the run with the check's error."""
    with pytest.raises(RunError, match=r"program.ein:11:19: a8\[i\] / 2 \*\* e\[i\]: integer division by zero at i = 2$"):
        run_built(NARROW, unchecked=False, **NARROW_INPUTS | {"e": np.array([0, 7, 8, 1, 6], np.int32)})
