"""Integer `**` wraps in its type, the same at build time (constants folded by einc) as on the
device (inputs): NumPy's integer power is the reference (docs/DECISIONS.md, "A constant must
fit its type" and "Integer powers")."""
import numpy as np
import pytest

import einc
from einc.driver import emit_program
from tests.tiers import GENERIC_FULL, VULKAN_FULL

SOURCE = """
let x: i32;
let y: i32;
let ux: u32;
let uy: u32;
let run_time = x ** y;
let run_time_unsigned = ux ** uy;
let folded = 3i32 ** 2147483647;
let folded_unsigned = 2u32 ** 2147483648u32;
let folded_odd_unsigned = 3u32 ** 4294967295u32;
let folded_wide = 2i32 ** 100;
"""
CASES = [(3, 2147483647, 2, 2147483648), (2, 100, 3, 4294967295), (-7, 31, 5, 0)]


@pytest.fixture(scope="module")
def program():
    return einc.load(einc.compile(SOURCE).vmfb)


@pytest.mark.parametrize("x, y, ux, uy", CASES)
def test_a_power_of_inputs_wraps_as_numpy_does(program, x, y, ux, uy):
    out = program(x=np.int32(x), y=np.int32(y), ux=np.uint32(ux), uy=np.uint32(uy))
    assert out["run_time"] == np.power(np.int32(x), np.int32(y))
    # an exponent with its top bit set (2^31 in u32) needs all 32 rounds of the square-and-multiply
    assert out["run_time_unsigned"] == np.power(np.uint32(ux), np.uint32(uy))


def test_a_power_of_typed_constants_folds_to_what_the_device_computes(program):
    out = program(x=np.int32(3), y=np.int32(2147483647), ux=np.uint32(2), uy=np.uint32(2147483648))
    assert out["folded"] == np.power(np.int32(3), np.int32(2147483647)) == out["run_time"]
    assert out["folded_unsigned"] == np.power(np.uint32(2), np.uint32(2147483648)) == out["run_time_unsigned"]
    assert out["folded_odd_unsigned"] == np.power(np.uint32(3), np.uint32(4294967295))
    assert out["folded_wide"] == np.power(np.int32(2), np.int32(100)) == 0




def _wrapped_power(base: int, exponent: int, dtype) -> int:
    """base ** exponent modulo 2^bits of dtype, read back in dtype (Python integers: exact)."""
    bits = np.dtype(dtype).itemsize * 8
    return int(np.array(pow(base % (1 << bits), exponent, 1 << bits), np.uint64).astype(dtype))


def test_an_integer_power_of_two_widths_keeps_the_exponents_type():
    """`v ** k` with v: i64 and k: i32 (digits in a base, found by the hold-out program
    base_convert) was E002, mismatched types: integers of two widths power as a literal base of
    another width already did, the exponent's own bits (u8 `7 ** (2^40 + 3)` is 7^3 * 7^(2^40) mod
    256), the base's type wrapping; folded constants give what the device computes."""
    w, k = [3, -2, 7, 10, 123456], [41, 63, 0, 18, 5]
    b, e = [3, 2, 255, 7, 1], [7, 9, 2, 2 ** 40 + 3, 5]
    out = einc.load(einc.compile("""
        let w: [i64; 5];
        let k: [i32; 5];
        let b: [u8; 5];
        let e: [i64; 5];
        let p[i] = w[i] ** k[i];
        let q[i] = b[i] ** e[i];
        let folded = 3i64 ** 41i32;
        let folded_narrow = 3u8 ** 7i64;
    """).vmfb)(w=np.int64(w), k=np.int32(k), b=np.uint8(b), e=np.int64(e))
    np.testing.assert_array_equal(out["p"], [_wrapped_power(x, y, np.int64) for x, y in zip(w, k)])
    np.testing.assert_array_equal(out["q"], [_wrapped_power(x, y, np.uint8) for x, y in zip(b, e)])
    assert out["p"].dtype == np.int64 and out["q"].dtype == np.uint8
    assert out["folded"] == _wrapped_power(3, 41, np.int64) and out["folded_narrow"] == _wrapped_power(3, 7, np.uint8)


FLOAT_POWERS = """
let x: [f32; 6];
let n: [i32; 6];
let p[i in 0..6] = x[i] ** n[i];
let table[i in 0..6, k in 0..4] = x[i] ** k;
let h[0] = 1.0;
let h[t in 1..6] = 0.5 * h[t - 1] + x[t] ** n[t];
"""
WIDE_AND_HALF = """
let xd: [f64; 6];
let xh: [f16; 6];
let pd[i in 0..6] = xd[i] ** n[i];
let ph[i in 0..6] = xh[i] ** n[i];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
def test_a_negative_float_to_a_run_time_integer_power(target):
    """IREE-73: IREE's own lowering of a float to an integer power was NaN for every negative
    base, even to the power 0; einc multiplies it out. NumPy's power of the exponent as a float
    is the reference (rtol 1e-6 in f32, 1e-14 in f64, 2e-3 in f16). vulkan-spirv has no f64
    and no f16."""
    cpu = target != "vulkan-spirv"
    x = np.array([-1.5, 2.0, -0.5, -3.0, 0.75, -1.0], np.float32)
    n = np.array([2, 3, -3, 5, -2, 0], np.int32)
    inputs = dict(x=x, n=n, **(dict(xd=x.astype(np.float64) / 3, xh=x.astype(np.float16)) if cpu else {}))
    out = einc.load(einc.compile(FLOAT_POWERS + (WIDE_AND_HALF if cpu else ""), target=target).vmfb)(**inputs)
    np.testing.assert_allclose(out["p"], np.power(x, n.astype(np.float32)), rtol=1e-6)
    np.testing.assert_allclose(out["table"], np.power(x[:, None], np.arange(4, dtype=np.float32)), rtol=1e-6)
    h = [1.0]
    for t in range(1, 6):
        h.append(0.5 * h[-1] + float(x[t]) ** int(n[t]))
    np.testing.assert_allclose(out["h"], h, rtol=1e-5)
    if cpu:
        np.testing.assert_allclose(out["pd"], np.power(x.astype(np.float64) / 3, n.astype(np.float64)), rtol=1e-14)
        np.testing.assert_allclose(out["ph"].astype(np.float32), np.power(x, n.astype(np.float32)), rtol=2e-3)


FLOAT_EXPONENTS = """
let x: [f32; 10];
let e: [f32; 10];
let s: f32;
let t: f32;
let p[i in 0..10] = x[i] ** e[i];
let q = s ** t;
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
def test_a_float_power_of_a_negative_base_or_of_zero_is_c_pow(target):
    """IREE-74: IREE's power was exp(y log x), NaN for every negative base and for 0 ** 0.
    NumPy's power (C's pow) is the reference: odd integer powers keep the sign, a negative base
    to a power that is no integer is NaN, x ** 0 and 1 ** y are 1 (rtol 1e-6)."""
    x = np.array([-1.5, -0.5, 0.0, 0.0, -2.0, 2.0, 1.0, -1.0, -8.0, np.nan], np.float32)
    e = np.array([2.0, 3.0, 0.0, 2.5, -3.0, 0.5, np.nan, np.inf, 1 / 3, 0.0], np.float32)
    program = einc.load(einc.compile(FLOAT_EXPONENTS, target=target).vmfb)
    for s, t in [(-2.0, 3.0), (0.0, 0.0), (-4.0, 0.5)]:
        out = program(x=x, e=e, s=np.float32(s), t=np.float32(t))
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(out["p"], np.power(x, e), rtol=1e-6)
            np.testing.assert_allclose(out["q"], np.power(np.float32(s), np.float32(t)), rtol=1e-6)


def test_a_sum_of_powers_to_the_constant_0_counts_every_term():
    """IREE-264: a reduction whose body, once IREE folds it, reads no element was summed once;
    `x[k] ** 0` is 1 for every x (NaN and 0 included), built as that constant."""
    x = np.array([1.5, np.nan, 0.0, -2.0], np.float32)
    n = np.array([0, -3, 7], np.int32)
    out = einc.load(einc.compile("""
        let x: [f32; 4];
        let n: [i32; 3];
        let s = sum[k](x[k] ** 0);
        let c[i in 0..2] = sum[k](n[k] ** 0 + i);
    """)).run({"x": x, "n": n})
    assert out["s"] == np.sum(np.power(x, 0))
    np.testing.assert_array_equal(out["c"], [np.sum(np.power(n, 0) + i) for i in range(2)])


def test_a_power_of_two_base_is_a_shift_and_wraps_as_numpy_does():
    """A constant base 2^b (`2 ** j`, `4u8 ** k`, `8i64 ** k`) lowers to a shift, not to the loop
    over the exponent's bits: that loop ran once per point of a reduction reading `2 ** (s - 1)`
    (a suffix array's doubling step, 12x the rest's time). Past the type's width the power is 0,
    as the wrapping product is, and a negative exponent gives 0 as for other bases."""
    source = """
let k: [i32; 9];
let k8: [i8; 9];
let u[n] = 2 ** k[n];
let a[n] = 4u8 ** k[n];
let b[n] = 8i64 ** k8[n];
let c[n] = 2u32 ** (k[n] as u32);
"""
    k = np.array([0, 1, 7, 15, 30, 31, 32, 70, -3], np.int32)
    out = einc.load(einc.compile(source).vmfb)(k=k, k8=k.astype(np.int8))
    want = lambda base, dtype, ks: [0 if e < 0 else _wrapped_power(base, int(e), dtype) for e in ks]
    np.testing.assert_array_equal(out["u"], want(2, np.int32, k))
    np.testing.assert_array_equal(out["a"], want(4, np.uint8, k))
    np.testing.assert_array_equal(out["b"], want(8, np.int64, k.astype(np.int8)))
    np.testing.assert_array_equal(out["c"], want(2, np.uint32, k.astype(np.uint32)))


@pytest.mark.parametrize("base, loops", [("2", False), ("3", True)])
def test_only_a_power_of_two_base_skips_the_loop(tmp_path, base, loops):
    path = tmp_path / "p.ein"
    path.write_text(f"let k: [i32; 4];\nlet u[n] = {base} ** k[n];\n")
    assert ("scf.for" in emit_program(str(path), "mlir")) == loops
