"""Scalar arithmetic, literal typing, casts, comparisons and logic (LANGUAGE.md section 2)."""
import numpy as np
import pytest

import einc
from tests.programs import built
from tests.tiers import GENERIC_FULL, VULKAN_FULL


def test_literals_take_the_type_of_their_context(run):
    out = run("""
        let a = 1.5 * 2.0;
        let b: f64 = 3.14;
        let c = 7 / 2;
        let d = -7 % 3;
        let e = 2.0 ** 3;
        let f = 3.9 as i32;
        let g = (2 ** 10) as f64 * b;
    """)
    assert out["a"].dtype == np.float32 and out["a"] == np.float32(3.0)
    assert out["b"].dtype == np.float64 and out["b"] == 3.14
    assert out["c"].dtype == np.int32 and out["c"] == 3          # truncates toward zero
    assert out["d"] == -1                                        # sign of the dividend
    assert out["e"] == np.float32(8.0)
    assert out["f"] == 3
    assert out["g"].dtype == np.float64 and out["g"] == 1024 * 3.14


def test_folded_literal_expressions_keep_the_precision_of_their_context(run):
    out = run("""
        use std::math::{exp, sqrt};
        let a: f64 = exp(0.5);
        let b: f64 = 0.1 + 0.2;
        let c = sqrt(2.0);
    """)
    assert out["a"].dtype == np.float64 and out["a"] == np.exp(0.5)
    assert out["b"] == 0.1 + 0.2
    assert out["c"].dtype == np.float32 and out["c"] == np.float32(np.sqrt(2.0))


def test_array_literal_rows_of_literals_take_the_dtype_of_a_typed_row(run):
    out = run("""
        let dt: f64;
        let F = [[1.0, dt], [0.0, 1.0]];
    """, dt=0.25)
    assert out["F"].dtype == np.float64
    np.testing.assert_array_equal(out["F"], [[1.0, 0.25], [0.0, 1.0]])


def test_untyped_float_expressions_fold_in_f64_before_taking_a_type(run):
    out = run("""
        let x: f64;
        let h: f64 = 0.1 * 0.3;
        let s = 0.1 * 0.3;
        let y = x * (0.1 + 0.2);
        let t = 1.0 / 3.0;
        let z = x * [1.0, 0.1][1];
        let n = ((3 as f64) * 1.5) as i32;
        let r[i in 0..n] = i;
    """, x=np.float64(3.0))
    assert out["z"] == 3.0 * 0.1                       # a literal array's element stays untyped
    np.testing.assert_array_equal(out["r"], [0, 1, 2, 3])   # casts of constants fold: n is a size
    assert out["h"].dtype == np.float64 and out["h"] == 0.1 * 0.3     # not the f32 product widened
    assert out["s"].dtype == np.float32 and out["s"] == np.float32(0.1 * 0.3)
    assert out["y"] == 3.0 * (0.1 + 0.2)
    assert out["t"] == np.float32(1.0) / np.float32(3.0)


INT_MEETS_FLOAT = """
    use std::math::{sqrt, pow, exp};
    let x: f32;
    let d: f64;
    let v: [i32; 3];
    let F: [f32; 2, 2];
    assert(2.0 ** 3.0 == 8, "an int literal compares with a float");
    let cast_row = ([2, 4] as [f32]) == [2, 4];
    let rows = F == [[35, 45], [1, 2]];
    let rows_reversed = [[35, 45], [1, 2]] == F;
    let shifted = F + 1;
    let y = x * 2 + 1;
    let yd = d / 3;
    let mixed = 1 + 1.5;
    let root_literal = 2 ** 0.5;
    let roots = sqrt(v);
    let powers = pow(v, 0.5);
    let power_op = v ** 0.5;
    let roots_of_literals = sqrt([4, 9, 16]);
    let e = exp([0, 1]);
    let sixteen = sqrt(16);
    let with_f64 = [1, 2] * d;
    let tenths = [0.1, 0.2] * d;
    let chosen = if F > 1.8 { [[1.0, 2.0], [3.0, 4.0]] } else { F };
    let flag: bool;
    let pick = if flag { 1 } else { 2.5 };
"""


F_VALUES = np.array([[35.0, 45.0], [1.5, 2.0]], np.float32)
V_VALUES = np.array([1, 2, 3], np.int32)


@pytest.fixture(scope="module")
def int_meets_float():
    program = einc.load(einc.compile(INT_MEETS_FLOAT).vmfb)
    return program(x=np.float32(1.5), d=np.float64(1.0), v=V_VALUES, F=F_VALUES, flag=np.bool_(False))


def test_int_literals_take_a_float_type_from_their_context(int_meets_float):
    out, f = int_meets_float, F_VALUES
    assert out["cast_row"].tolist() == [True, True]
    assert out["rows"].tolist() == [[True, True], [False, True]] == out["rows_reversed"].tolist()
    np.testing.assert_array_equal(out["shifted"], f + 1)
    assert out["y"].dtype == np.float32 and out["y"] == 4.0
    assert out["yd"].dtype == np.float64 and out["yd"] == 1.0 / 3.0
    assert out["mixed"] == 2.5 and out["root_literal"] == np.float32(np.sqrt(2.0))
    assert out["with_f64"].dtype == np.float64 and out["with_f64"].tolist() == [1.0, 2.0]
    assert out["pick"].dtype == np.float32 and out["pick"] == 2.5    # chosen at run time
    # a literal array takes the dtype of its typed partner (it was made f32 first: E002)
    assert out["tenths"].dtype == np.float64 and out["tenths"].tolist() == [0.1, 0.2]
    assert out["chosen"].tolist() == [[1.0, 2.0], [1.5, 4.0]]


def test_sqrt_pow_and_friends_of_integer_arrays_compute_in_f32(int_meets_float):
    out, v = int_meets_float, V_VALUES
    for name in ("roots", "powers", "power_op"):
        assert out[name].dtype == np.float32
        np.testing.assert_allclose(out[name], np.sqrt(v.astype(np.float32)), rtol=1e-6)
    np.testing.assert_array_equal(out["roots_of_literals"], [2.0, 3.0, 4.0])
    np.testing.assert_allclose(out["e"], [1.0, np.e], rtol=1e-6)
    assert out["sixteen"] == 4.0


def test_remainder_takes_the_sign_of_the_dividend_at_build_time_and_on_the_device(run):
    out = run("""
        let k: i32;
        let folded = (-9) % 4;
        let on_device = k % 4;
        let quotient = k / 4;
    """, k=np.int32(-9))
    assert out["folded"] == -1 and out["on_device"] == -1 and out["quotient"] == -2


def _normal_f64(rng, n: int) -> np.ndarray:
    """Signed f64 values over most of the normal exponent range (einc's CPU runtime flushes
    subnormals to zero, as IREE's workers do)."""
    return rng.standard_normal(n) * 10.0 ** rng.integers(-290, 290, n)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_an_f64_remainder_is_c_fmod_to_the_last_bit(run, target):
    """f64 `%` by anything but a power of two was a libm call IREE could not link (an internal
    error at build time). Its expansion must be exact: np.fmod's result, bit for bit, also where
    x / y is far beyond 2^53, and C's special cases (inf, NaN, zero divisor, infinite divisor)."""
    rng = np.random.default_rng(5)
    special_x = [0.0, -0.0, 5.0, -5.0, np.inf, -np.inf, np.nan, 1e308, 7.0, -7.0, 2.5, 6.5]
    special_y = [1.0, 1.0, 0.0, np.inf, 2.0, 3.0, 1.0, 3e-300, -np.inf, np.nan, 0.5, -0.0]
    x = np.concatenate([_normal_f64(rng, 3000), special_x])
    y = np.concatenate([_normal_f64(rng, 3000), special_y])
    out = run("""
        let x: [f64; N];
        let y: [f64; N];
        let r[i] = x[i] % y[i];
        let by_constant[i] = x[i] % 0.7;
    """, target, x=x, y=y)
    with np.errstate(invalid="ignore"):
        expected, by_constant = np.fmod(x, y), np.fmod(x, 0.7)
    np.testing.assert_array_equal(out["r"], expected)
    signed = ~np.isnan(expected)                   # a NaN's sign means nothing
    np.testing.assert_array_equal(np.signbit(out["r"][signed]), np.signbit(expected[signed]))
    np.testing.assert_array_equal(out["by_constant"], by_constant)


def test_an_f64_remainder_of_scalar_inputs_runs_as_a_kernel_not_in_the_vm(run):
    """Scalar code of a program runs in IREE's VM, which lacks the loop and bit casts of the
    exact remainder: it must run on the device (it was "failed to legalize math.copysign")."""
    out = run("""
        let a: f64;
        let b: f64;
        let r = a % b;
        let s = a % 0.75;
    """, a=np.float64(1e17 + 8), b=np.float64(-0.3))
    assert out["r"] == np.fmod(1e17 + 8, -0.3) and out["s"] == np.fmod(1e17 + 8, 0.75)


NAN_AND_INFINITIES = """
    let x: f32;
    let y: f32;
    let same = x == x;
    let differs = x != x;
    let at_most = x <= x;
    let at_least = x >= x;
    let above = x >= y;
    let below = y >= x;
    let by_zero = x * 0.0;
    let zero_by = 0.0 * x;
    let zero_over = 0.0 / x;
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
@pytest.mark.parametrize("x", [np.nan, np.inf, -np.inf, -2.0])
def test_scalar_comparisons_and_products_follow_ieee_for_nan_and_infinities(run, target, x):
    # IREE-102: scalar code runs in IREE's VM, which folded `x == x` to true, `x * 0.0` and
    # `0.0 / x` to 0, and computed `x >= y` as !(x < y): each was wrong for NaN (found writing
    # the tests of LANGUAGE.md's comparisons: `x != x` is the NaN test)
    x, y = np.float32(x), np.float32(1.0)
    out = run(NAN_AND_INFINITIES, target, device="vulkan" if target == "vulkan-spirv" else None, x=x, y=y)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = dict(same=x == x, differs=x != x, at_most=x <= x, at_least=x >= x, above=x >= y,
                        below=y >= x, by_zero=x * np.float32(0), zero_by=np.float32(0) * x,
                        zero_over=np.float32(0) / x)
    for name, value in expected.items():
        np.testing.assert_array_equal(out[name], value, err_msg=name)
        if value.dtype == np.float32 and not np.isnan(value):      # -2 * 0 is -0
            assert np.signbit(out[name]) == np.signbit(value), name


def test_an_f64_remainder_inside_a_recurrence_over_independent_lanes(run):
    """A phase wrapped into [0, 2 pi) every step, for 64 independent oscillators (a batch axis
    no step reads across, which the CPU runs in vector lanes)."""
    rng = np.random.default_rng(6)
    omega = rng.uniform(0.1, 3.0, 64)
    out = run("""
        let omega: [f64; B];
        let phase[0, b in 0..B] = 0.0;
        let phase[t in 1..200, b] = (phase[t - 1, b] + omega[b]) % 6.283185307179586;
    """, omega=omega)
    expected = np.zeros((200, 64))
    for t in range(1, 200):
        expected[t] = np.fmod(expected[t - 1] + omega, 6.283185307179586)
    np.testing.assert_array_equal(out["phase"], expected)


def test_arithmetic_on_inputs_runs_in_their_precision(run):
    x, k = np.float64(0.1), np.int32(-7)
    out = run("""
        let x: f64;
        let k: i32;
        let y = (1.0 - x) * x ** 0.5 + x ** 2;
        let q = k / 2;
        let r = k % 2;
        let m = if x > 0.05 { x * 10.0 } else { -x };
        let flag = x > 0.0 && k < 0 || false;
        let z = -(x as f32);
    """, x=x, k=k)
    np.testing.assert_allclose(out["y"], (1.0 - x) * x ** 0.5 + x ** 2, rtol=1e-15)
    assert out["q"] == -3 and out["r"] == -1
    assert out["m"] == x * 10.0
    assert out["flag"] == True  # noqa: E712
    assert out["z"].dtype == np.float32 and out["z"] == -np.float32(x)


@pytest.mark.parametrize("k, expected", [(0, 10.0), (1, 20.0), (5, -1.0)])
def test_match_with_literal_wildcard_and_binding_arms(k, expected):
    out = einc.load(built("""
        let k: i32;
        let v = match k { 0 => 10.0, 1 => 20.0, n if n > 100 => 0.0, _ => -1.0 };
    """).vmfb)(k=np.int32(k))            # k is an input: one build serves every arm
    assert out["v"] == np.float32(expected)


def test_a_negative_literal_pattern_matches_its_value(run):
    # the pattern `-1` holds -1; it was negated a second time and never matched
    out = run("""
        let k: i32;
        let v = match k { -1 => 10, _ => 20 };
        let c = match -1 { -1 => 10, _ => 20 };
    """, k=np.int32(-1))
    assert out["v"] == 10 and out["c"] == 10


def test_match_on_an_array_applies_point_by_point(run):
    # LANGUAGE.md section 6: `match`, like `if`, works elementwise (it failed MLIR verification)
    x = np.array([1.0, 2.0, 7.0], np.float64)
    out = run("let x: [f64; 3];\nlet v = match x { 1.0 => 10.0, w if w > 5.0 => w, _ => -1.0 };\n", x=x)
    np.testing.assert_array_equal(out["v"], np.where(x == 1.0, 10.0, np.where(x > 5.0, x, -1.0)))


def test_blocks_tuples_and_destructuring(run):
    out = run("""
        let x: f32;
        let t = { let a = x * 2.0; let b = a + 1.0; (a, b) };
        let (p, q) = t;
        let s = t.0 + t.1;
    """, x=np.float32(1.5))
    assert out["p"] == 3.0 and out["q"] == 4.0 and out["s"] == 7.0


def test_an_untyped_literal_array_read_at_run_time_points_takes_the_float_type_it_meets(run):
    # `F[i, a]` at indices of a definition made F in its default f32, so an f64 partner was E002;
    # it now takes f64 from its exact literal values (0.1 is f64's 0.1, not f32's widened)
    z = np.array([0.7, 1.3])
    out = run("""
        let z: [f64; 2];
        let F = [[1.0, 0.1], [0.0, 1.0]];
        let y[i in 0..2] = sum[a](F[i, a] * z[a]);
        let w[i in 0..2] = F[i, 1] * 0.3 - F[i, 0] + z[i];
        let alone[i in 0..2] = F[i, 1] * 2.0;
    """, z=z)
    F = np.array([[1.0, 0.1], [0.0, 1.0]])
    assert out["y"].dtype == np.float64 and out["w"].dtype == np.float64
    np.testing.assert_allclose(out["y"], F @ z, rtol=1e-15)
    np.testing.assert_allclose(out["w"], F[:, 1] * 0.3 - F[:, 0] + z, rtol=1e-15)
    assert out["alone"].dtype == np.float32          # nothing asks for another type


def test_a_cast_types_an_untyped_literal_also_through_the_names_that_carry_it(run):
    out = run("""
        fn same(a) { a }
        let direct = 0.3 as f64;
        let through_a_block = { let v = 0.3; v } as f64;
        let through_a_call = same(0.3) as f64;
        let typed_first = { let v = 0.3f32; v } as f64;
    """)
    for name in ("direct", "through_a_block", "through_a_call"):
        assert out[name].dtype == np.float64 and out[name] == 0.3, name
    assert out["typed_first"] == np.float64(np.float32(0.3))


def test_casts_folded_at_build_time_outside_the_target_type_print_no_warning(run, recwarn):
    """`1e300f64 as f32` is inf (IEEE), and `1e10 as i32` is out of range (its value is the
    CPU's); folding them let NumPy's RuntimeWarning ("overflow/invalid value encountered in
    cast") reach the user (mutants seed 9105)."""
    out = run("""
        let wide = 1e300f64 as f32;
        let big = 1e10 as i32;
        let fine = -2.75 as i32;
    """)
    assert out["wide"] == np.float32(np.inf) and out["wide"].dtype == np.float32
    assert out["big"].dtype == np.int32 and out["fine"] == -2
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
