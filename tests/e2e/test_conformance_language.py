"""The language as /work/shared/LANGUAGE.md states it, checked statement by statement as a peer's
test suite would: each program's values against NumPy, each mistake against its diagnostic."""
import numpy as np
import pytest

from einc.driver import check_program

# Section 2: integer `/` truncates toward zero and `%` takes the dividend's sign; `**` is
# right-associative and binds looser than prefix `-`; `as` truncates; `||` is looser than `&&`,
# which is looser than comparisons; integers wrap at their width; `i32 ** i32` is an integer.
OPERATORS = """
let p: [i32; 6];
let q: [i32; 6];
let f: [f32; 4];
let big: i32;
let div[i] = p[i] / q[i];
let rem[i] = p[i] % q[i];
let frem[i] = f[i] % 1.5;
let right = 2 ** 3 ** q[5];
let neg_sq[i] = -f[i] ** 2;
let trunc[i] = f[i] as i32;
let logic[i] = p[i] > 0 && q[i] > 0 || p[i] == 0;
let prec[i] = p[i] + q[i] * 3 - p[i] / 2 % 3;
let wrap = big + 1;
let wide = (big as i64) * 4;
let lit: f64 = 2.5;
let ctx = lit * 2 + 1;
let ub: [i32; 5];
let ue: [i32; 5];
let ipow[i] = ub[i] ** ue[i];
let unit_folded = (-1) ** -3;
"""


def test_operators_match_numpy(run):
    p = np.array([7, -7, 7, -7, 0, 9], np.int32)
    q = np.array([2, 2, -2, -2, 3, 2], np.int32)
    f = np.array([-3.9, 3.9, 0.25, -2.0], np.float32)
    ub = np.array([1, -1, -1, 3, -2], np.int32)
    ue = np.array([-5, -1, -2, -1, 3], np.int32)
    out = run(OPERATORS, p=p, q=q, f=f, big=np.int32(2**31 - 1), ub=ub, ue=ue)
    np.testing.assert_array_equal(out["div"], toward_zero(p, q))
    np.testing.assert_array_equal(out["rem"], np.fmod(p, q))
    np.testing.assert_array_equal(out["frem"], np.fmod(f, np.float32(1.5)))
    assert out["right"] == 2 ** (3 ** 2)
    np.testing.assert_array_equal(out["neg_sq"], (-f) ** 2)
    np.testing.assert_array_equal(out["trunc"], np.trunc(f).astype(np.int32))
    np.testing.assert_array_equal(out["logic"], ((p > 0) & (q > 0)) | (p == 0))
    np.testing.assert_array_equal(out["prec"], p + q * 3 - np.fmod(toward_zero(p, 2), 3))
    assert out["wrap"] == np.int32(-2**31) and out["wrap"].dtype == np.int32
    assert out["wide"] == 4 * (2**31 - 1) and out["wide"].dtype == np.int64
    assert out["ctx"] == 6.0 and out["ctx"].dtype == np.float64
    # an integer to a negative power is 1 / base^-n truncated toward zero, as `/` is: ±1 for a
    # base of ±1 (it was 0), 0 for a larger base
    np.testing.assert_array_equal(out["ipow"], np.trunc(ub.astype(np.float64) ** ue).astype(np.int32))
    assert out["unit_folded"] == -1


def toward_zero(a, b):
    """a / b rounded toward zero, as Rust and C divide integers (NumPy's // floors)."""
    return (np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)).astype(np.int32)


# Section 3: a reduction's range may depend on an outer index (`sum[k in 0..i + 1](..)`); the
# outer index's range is then inferred through it, as from any affine read (section 9): the
# largest range keeping x[k] in bounds for every k is 0..len(x). Empty reductions give their
# identities, also over an axis empty at run time.
SCANS = """
let x: [f32; ?];
let m: [f64; R, C];
let running[i] = sum[k in 0..i + 1](x[k]);
let inclusive[i] = sum[k in 0..=i](x[k]);
let row_scan[r, j] = max[k in 0..j + 1](m[r, k]);
let tail[i] = prod[k in i..C](m[0, k]) + 0.0 * m[0, i];
let empty_sum = sum[i](x[i]);
let empty_max = max[i](x[i]);
let empty_min = min[i](x[i]);
let empty_all = all[i](x[i] > 0.0);
let empty_any = any[i](x[i] > 0.0);
"""


@pytest.mark.parametrize("n", [5, 0])
def test_running_reductions_infer_the_outer_range(run, n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    m = np.random.default_rng(1).standard_normal((3, 4))
    out = run(SCANS, x=x, m=m)
    np.testing.assert_allclose(out["running"], np.cumsum(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out["inclusive"], np.cumsum(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out["row_scan"], np.maximum.accumulate(m, axis=1))
    np.testing.assert_allclose(out["tail"], np.cumprod(m[0, ::-1])[::-1])
    assert out["running"].shape == (n,)
    if n == 0:
        assert (out["empty_sum"], out["empty_max"], out["empty_min"]) == (0.0, -np.inf, np.inf)
        assert out["empty_all"] and not out["empty_any"]


# Section 6: functions may recurse when the recursion ends on build-time arguments; a recursion
# 999 calls deep builds (the limit was 64), over build-time values and over run-time ones.
RECURSION = """
let x: f32;
fn total(n) { if n <= 0 { 0 } else { n + total(n - 1) } }
fn power(v, n) { if n == 0 { 1.0 } else { v * power(v, n - 1) } }
fn count(xs) { match xs { [] => 0, [_, ..rest] => 1 + count(rest) } }
let t = total(999);
let p = power(x, 600);
let c = count([v * 2 | v in 0..300]);
"""


def test_deep_recursion_builds_and_matches_numpy(run):
    out = run(RECURSION, x=np.float32(1.0005))
    assert out["t"] == 999 * 1000 // 2
    np.testing.assert_allclose(out["p"], np.prod(np.full(600, 1.0005, np.float32)), rtol=1e-5)
    assert out["c"] == 300


def test_a_recursion_that_never_ends_is_e011(diagnose):
    diag, text = diagnose("fn f(n) { f(n + 1) }\nlet y = f(0);\n")
    assert diag.code == "E011" and "recursion" in diag.message
    assert "let y = f(0);" in text and "Traceback" not in text


@pytest.mark.parametrize("source, arm", [
    ("let n: i32;\nlet a = match n { 0 => 1, 1..=5 => 2 };\n", "..=-1"),
    ("let n: i32;\nlet a = match n { ..=0 => 1, 1..=5 => 2 };\n", "6.."),
    ("let n: i32;\nlet b: bool;\nlet a = match (n, b) { (_, true) => 1, (0, false) => 2 };\n", "(..=-1, false)"),
])
def test_a_missing_match_arm_is_hinted_as_a_pattern_that_parses(diagnose, tmp_path, source, arm):
    # the message names the case as rustc does (`i32::MIN..=-1`); the hint's arm must be writable
    diag, _ = diagnose(source)
    assert diag.span is not None and diag.span.line >= 1
    assert diag.code == "E002" and diag.hint == f"add an arm for `{arm}`, or `_ => ..` as the last arm"
    fixed = source.replace(" };", f", {arm} => 0, _ => 3 }};")     # the hinted arm parses
    path = tmp_path / "fixed.ein"
    path.write_text(fixed)
    check_program(str(path))


# Section 10: f16 is NumPy's float16 (bf16 through ml_dtypes). NumPy reduces float16 in f32 and
# rounds once; rounded at every step, 5,000 terms of 0.1 summed to 256, not 500. The program's
# sums all do so: indexed, the prelude's `sum`, a filtered comprehension's, einsum's.
HALF_SUMS = """
use std::ml::einsum;
let h: [f16; ?];
let b: [bf16; ?];
let indexed = sum[i](h[i]);
let squares = sum[i](h[i] * h[i]);
let prelude = sum(h);
let kept = sum([v | v in h, v > 0.0]);
let contracted = einsum("i,i->", [h, h]);
let total_b = sum[i](b[i]);
"""


def test_half_sums_accumulate_as_numpy_does(run):
    import ml_dtypes
    h = np.full(5000, 0.1, np.float16)
    b = np.full(5000, 0.1, ml_dtypes.bfloat16)
    out = run(HALF_SUMS, h=h, b=b)
    assert out["indexed"].dtype == np.float16 and out["indexed"] == h.sum() == np.float16(500)
    assert out["prelude"] == out["kept"] == h.sum()
    assert out["squares"] == (h * h).sum() and out["contracted"] == (h * h).sum()
    want_b = b.astype(np.float32).sum(dtype=np.float32).astype(ml_dtypes.bfloat16)
    assert out["total_b"].dtype == ml_dtypes.bfloat16 and out["total_b"] == want_b
