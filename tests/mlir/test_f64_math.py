"""f64 sin, cos, tan, asin, acos, atan, atan2, erf, log2 and tanh on llvm-cpu (einc.mlir.core.f64_math:
IREE cannot link libm for them) against NumPy and Python's math.erf."""
import math

import numpy as np
import pytest

import einc

SOURCE = """
use std::math::{sin, cos, tan, asin, acos, atan, atan2, erf, log2, tanh};
let x: [f64; N];
let u: [f64; M];
let p: [f64; P];
let s = sin(x);
let c = cos(x);
let t = tan(x);
let at = atan(x);
let th = tanh(x);
let e = erf(x);
let a2[i] = atan2(x[i], x[N - 1 - i]);
let as = asin(u);
let ac = acos(u);
let l2 = log2(p);
"""

ULP_TOL = 4e-16      # absolute, for results of magnitude <= ~1 (a couple of ulps)


@pytest.fixture(scope="module")
def results():
    x = np.concatenate([np.linspace(-30.0, 30.0, 2001), [0.0, -0.0, 1e-300, 1e5 + 0.3, -123456.789,
                                                         math.pi / 2, math.pi, 2.0, -2.0, 6.5, 40.0]])
    u = np.concatenate([np.linspace(-1.0, 1.0, 801), [1e-12, -1e-12, 0.999999999]])
    # no subnormals: IREE's CPU code flushes them to zero
    p = np.array([1.0, 2.0, 8.0, 1024.0, 2.0 ** -1022, 2.0 ** 1000, 3.0, 0.1, 1e300, 0.0, -1.0, np.inf, np.nan])
    program = einc.load(einc.compile(SOURCE).vmfb)
    return {"x": x, "u": u, "p": p}, program(x=x, u=u, p=p)


@pytest.mark.parametrize("name, reference", [
    ("s", np.sin), ("c", np.cos), ("at", np.arctan), ("th", np.tanh),
    ("e", np.vectorize(math.erf)),
])
def test_functions_of_x_are_within_a_few_ulps(results, name, reference):
    inputs, out = results
    np.testing.assert_allclose(out[name], reference(inputs["x"]), rtol=ULP_TOL, atol=ULP_TOL)


def test_tan_relative_error_is_a_few_ulps(results):
    inputs, out = results
    np.testing.assert_allclose(out["t"], np.tan(inputs["x"]), rtol=2e-15)


def test_atan2_covers_every_quadrant_and_the_axes(results):
    inputs, out = results
    x = inputs["x"]
    np.testing.assert_allclose(out["a2"], np.arctan2(x, x[::-1]), rtol=ULP_TOL, atol=ULP_TOL)


def test_asin_and_acos_on_the_closed_interval(results):
    inputs, out = results
    np.testing.assert_allclose(out["as"], np.arcsin(inputs["u"]), rtol=ULP_TOL, atol=ULP_TOL)
    np.testing.assert_allclose(out["ac"], np.arccos(inputs["u"]), rtol=ULP_TOL, atol=ULP_TOL)


def test_log2_is_exact_on_powers_of_two_and_handles_zero_negatives_inf_and_nan(results):
    inputs, out = results
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.log2(inputs["p"])
    assert list(out["l2"][:6]) == [0.0, 1.0, 3.0, 10.0, -1022.0, 1000.0]
    np.testing.assert_allclose(out["l2"], expected, rtol=ULP_TOL)   # NaN/inf positions must agree too
