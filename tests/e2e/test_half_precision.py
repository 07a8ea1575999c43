"""f16 and bf16 (docs/LANGUAGE.md, types; docs/DECISIONS.md, half precision): stored in 16 bits,
each operation computed in f32 and rounded back once, so elementwise results equal the f32
result rounded to the half type; reductions round at every step. Inputs and outputs are NumPy
float16 and ml_dtypes.bfloat16 arrays."""
import io

import ml_dtypes
import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from einc.runtime.errors import RunError
from tests.tiers import GENERIC_FULL

HALVES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}
MANTISSA_BITS = {"f16": 10, "bf16": 7}

SOURCE = """
let X: [{t}; N];
let D: [f64; N];
let I: [i32; N];
let h = 1.5 as {t};
let affine[i in 0..N] = X[i] * h + 0.25;
let quotient[i in 0..N] = X[i] / (h + 1.0);
let square[i in 0..N] = X[i] ** 2;
let remainder[i in 0..N] = X[i] % h;
let chosen[i in 0..N] = if X[i] > h {{ X[i] }} else {{ min(X[i], -h) }};
let angle[i in 0..N] = std::math::atan2(X[i], h);
let total = sum[i in 0..N](X[i]);
let top = max[i in 0..N](X[i]);
let above[i in 0..N] = X[i] > h;
let exps[i in 0..N] = std::math::exp(X[i]);
let sines[i in 0..N] = std::math::sin(X[i]);
let roots[i in 0..N] = std::math::sqrt(std::math::abs(X[i]));
let wide[i in 0..N] = X[i] as f32;
let truncated[i in 0..N] = X[i] as i32;
let from_f64[i in 0..N] = D[i] as {t};
let from_i32[i in 0..N] = I[i] as {t};
let other[i in 0..N] = X[i] as {u};
let literal: [{t}; 3] = [1.0, 2.5, -0.125];
print(h);
"""

X = np.array([0.5, 1.25, 2.0, -3.1, 7.3, -0.01, 4.0, 1.5])
D = np.array([0.1, 1e3, -7.7, 3.3, 1e-3, 2.0, -0.5, 60000.0])
I = np.array([1, -2, 3, 255, 257, 1000, -40000, 0], np.int32)


def rounded(values, t):
    """`values` rounded once to the half type `t` (from f32, as einc computes)."""
    return np.asarray(values, np.float32).astype(HALVES[t])


def ulps(got, want, t):
    """|got - want| in units of the last place of the half type at `want`."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    exponent = np.floor(np.log2(np.maximum(np.abs(want), 2.0 ** -14)))
    return np.abs(got - want) / 2.0 ** (exponent - MANTISSA_BITS[t])


@pytest.fixture(scope="module", params=[pytest.param((t, target), id=f"{t}-{target}",
                                                     marks=[pytest.mark.full] if target != "llvm-cpu" else [])
                                        for t in HALVES for target in ("llvm-cpu", "llvm-cpu-generic")])
def case(request):
    t, target = request.param
    u = "bf16" if t == "f16" else "f16"
    program = einc.load(einc.compile(SOURCE.format(t=t, u=u), target=target).vmfb)
    x = X.astype(np.float32).astype(HALVES[t])
    out = io.StringIO()
    result = program.run({"X": x, "D": D, "I": I}, stdout=out)
    return t, u, x, result, out.getvalue(), program


def test_outputs_have_the_half_dtype(case):
    t, _, _, result, _, _ = case
    for name in ("h", "affine", "total", "top", "exps", "from_f64", "literal"):
        assert np.asarray(result[name]).dtype == np.dtype(HALVES[t]), name


def test_arithmetic_is_the_f32_result_rounded_once_per_operation(case):
    t, _, x, result, _, _ = case
    xf = x.astype(np.float32)
    product = rounded(xf * np.float32(1.5), t).astype(np.float32)
    np.testing.assert_array_equal(result["affine"], rounded(product + np.float32(0.25), t))
    np.testing.assert_array_equal(result["quotient"], rounded(xf / np.float32(2.5), t))
    np.testing.assert_array_equal(result["square"], rounded(xf * xf, t))
    np.testing.assert_array_equal(result["remainder"], rounded(np.fmod(xf, np.float32(1.5)), t))
    np.testing.assert_array_equal(result["chosen"], np.where(xf > 1.5, x, np.minimum(x, -x.dtype.type(1.5))))
    np.testing.assert_array_equal(result["above"], xf > 1.5)
    assert float(result["top"]) == float(xf.max())


def test_sum_rounds_at_each_step(case):
    # eight terms, each addition rounded: at most 8 half-ulps of the largest partial sum (|x| summed)
    t, _, x, result, _, _ = case
    xf = x.astype(np.float64)
    bound = 8 * np.abs(xf).sum() * 2.0 ** -(MANTISSA_BITS[t] + 1)
    assert abs(float(result["total"]) - xf.sum()) <= bound


def test_math_functions_within_one_ulp_of_the_exact_value(case):
    t, _, x, result, _, _ = case
    xf = x.astype(np.float64)
    for name, want in (("exps", np.exp(xf)), ("sines", np.sin(xf)), ("roots", np.sqrt(np.abs(xf))),
                       ("angle", np.arctan2(xf, 1.5))):
        assert ulps(result[name], want, t).max() <= 1.0, name


def test_conversions(case):
    t, u, x, result, _, _ = case
    np.testing.assert_array_equal(result["wide"], x.astype(np.float32))
    np.testing.assert_array_equal(result["truncated"], np.trunc(x.astype(np.float32)).astype(np.int32))
    np.testing.assert_array_equal(result["other"], x.astype(np.float32).astype(HALVES[u]))
    np.testing.assert_array_equal(result["from_i32"], rounded(I, t))     # every value here below 2^24
    # f64 -> f32 -> half rounds twice: within one ulp of the once-rounded value
    assert ulps(result["from_f64"], D.astype(HALVES[t]), t).max() <= 1.0


def test_literals_typed_by_annotation_and_printing(case):
    t, _, _, result, printed, _ = case
    np.testing.assert_array_equal(result["literal"], np.array([1.0, 2.5, -0.125], HALVES[t]))
    assert float(result["h"]) == 1.5
    assert printed.strip() == "1.5"


def test_an_input_of_another_dtype_is_a_one_line_error(case):
    t, _, _, _, _, program = case
    with pytest.raises(RunError) as err:
        program.run({"X": X.astype(np.float32), "D": D, "I": I})
    assert str(err.value) == f"input X: expected {np.dtype(HALVES[t]).name}, got float32"


@pytest.mark.parametrize("t", HALVES)
def test_vulkan_refuses_half_types_with_e011(t):
    with pytest.raises(CompileError) as err:
        einc.compile(f"let X: [{t}; 4];\nlet y[i in 0..4] = X[i] * 2.0;\n", target="vulkan-spirv")
    assert "E011" in str(err.value) and f"{t} is not supported on vulkan-spirv" in str(err.value)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
@pytest.mark.parametrize("t", HALVES)
def test_rounding_from_f32_matches_numpy_on_ties_and_special_values(t, target):
    bf16_tie = np.array([0x3F808000, 0x3F818000, 0xBF808000, 0x7F7FFFFF, 0x00008000], np.uint32).view(np.float32)
    f = np.concatenate([bf16_tie, np.float32([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520.0, 7e4, np.inf, -np.inf,
                                              np.nan, 1e-8, -0.0, 3.0e38])])
    program = einc.load(einc.compile(f"let F: [f32; N];\nlet h[i in 0..N] = F[i] as {t};\n", target=target).vmfb)
    got = np.asarray(program(F=f)["h"])
    with np.errstate(over="ignore"):        # 7e4 and 3e38 overflow f16 to inf, as einc does
        want = f.astype(HALVES[t])
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


RECURRENCE = """
let X: [{t}; N];
let s: {t};
let run[0] = X[0];
let run[k in 1..N] = run[k - 1] * 0.5 + X[k];
let acc[0] = 0.0 as {t};
let acc[k in 1..6] = acc[k - 1] + s;
let grad = @sum[i in 0..N](X[i] * X[i]) / @X;
print("s = {{s}}");
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
@pytest.mark.parametrize("t", HALVES)
def test_scalar_inputs_recurrences_and_derivatives(t, target):
    program = einc.load(einc.compile(RECURRENCE.format(t=t), target=target).vmfb)
    x = X.astype(np.float32).astype(HALVES[t])
    out = io.StringIO()
    result = program.run({"X": x, "s": 0.3}, stdout=out)
    s = np.asarray(0.3, HALVES[t])[()]
    assert out.getvalue().strip() == "s = " + str(s)     # NumPy's (ml_dtypes') text of the scalar
    run, acc = [x[0]], [np.asarray(0, HALVES[t])]
    for k in range(1, len(x)):       # each step: product and sum each rounded once from f32
        run.append(rounded(np.float32(rounded(np.float32(run[-1]) * np.float32(0.5), t)) + np.float32(x[k]), t))
    for _ in range(1, 6):
        acc.append(rounded(np.float32(acc[-1]) + np.float32(s), t))
    np.testing.assert_array_equal(result["run"], np.array(run, HALVES[t]))
    np.testing.assert_array_equal(result["acc"], np.array(acc, HALVES[t]))
    np.testing.assert_array_equal(result["grad"], rounded(2 * x.astype(np.float32), t))
    with pytest.raises(RunError, match=f"^input s: expected {np.dtype(HALVES[t]).name}, got float32$"):
        program.run({"X": x, "s": np.float32(0.3)})


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
@pytest.mark.parametrize("t", HALVES)
def test_a_reduction_inside_a_recurrence(t, target):
    # the step's sum may run in vector lanes; every term and partial sum is rounded to the half
    # type, so allow one half-ulp per operation of the largest value (40 products, 40 sums, 2 more)
    source = f"let X: [{t}; T, K];\nlet s[0] = 0.0 as {t};\n" \
             "let s[k in 1..T] = s[k - 1] * 0.5 + sum[j in 0..K](X[k, j] * X[k, j]);\n"
    x = np.random.default_rng(1).uniform(-1, 1, (6, 40)).astype(HALVES[t])
    got = np.asarray(einc.load(einc.compile(source, target=target).vmfb)(X=x)["s"], np.float64)
    wide, want = x.astype(np.float64), [0.0]
    for k in range(1, 6):
        want.append(want[-1] * 0.5 + (wide[k] ** 2).sum())
    bound = 82 * np.max(want) * 2.0 ** -(MANTISSA_BITS[t] + 1)
    assert np.abs(got - np.array(want)).max() <= bound


@pytest.mark.parametrize("t", HALVES)
def test_a_recurrence_no_base_clause_types_takes_the_half_type_of_its_step(t):
    # r[0]'s untyped literal does not type r, so its type is guessed; the half types are among
    # the guesses (found by the differential fuzzer: E002 "mismatched types f32 and f16")
    source = f"use std::math::tanh;\nlet x: [{t}; 6];\nlet r[0] = 0;\nlet r[t in 1..6] = tanh(r[t - 1] + (x[t] + t as {t}));\n"
    x = np.linspace(-1, 1, 6).astype(HALVES[t])
    got = einc.load(einc.compile(source).vmfb)(x=x)["r"]
    assert got.dtype == HALVES[t]
    want = [np.asarray(0, HALVES[t])]
    for k in range(1, 6):                # each operation in f32, rounded once (tanh within an ulp)
        inner = rounded(np.float32(x[k]) + np.float32(k), t)
        want.append(rounded(np.tanh(np.float32(rounded(np.float32(want[-1]) + np.float32(inner), t))), t))
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=2.0 ** -MANTISSA_BITS[t])


@pytest.mark.parametrize("t", HALVES)
def test_the_gradient_of_a_half_copy_is_summed_in_f32_and_rounded_once(t):
    # mixed precision: f32 weights read through a half copy; the copy's cotangent sums 200 terms,
    # in f32 then rounded once (summed in the half type, each term and partial sum rounded, it
    # was many ulps off, a wrong training step)
    source = f"let X: [{t}; 200, 4];\nlet K: [f32; 4];\nlet Kh = K as [{t}];\n" \
             "let y[b] = sum[i]((X[b, i] as f32) * (Kh[i] as f32));\n" \
             "let L = sum[b](y[b] * y[b]);\nlet g = @L / @K;\n"
    rg = np.random.default_rng(3)
    x, k = rg.uniform(0, 1, (200, 4)).astype(HALVES[t]), rg.uniform(0.5, 1, 4).astype(np.float32)
    got = np.asarray(einc.load(einc.compile(source).vmfb)(X=x, K=k)["g"], np.float64)
    wide = x.astype(np.float64)
    exact = 2 * (wide @ k.astype(HALVES[t]).astype(np.float64)) @ wide
    assert np.abs(got - exact).max() <= np.abs(exact).max() * 2.0 ** -MANTISSA_BITS[t]
