"""A float to a float power is within two ulps of NumPy's in f32 and f64 (docs/DECISIONS.md,
"Float powers"): IREE's exp(y log x) was off by up to ~130 ulps in f32 and ~200 in f64, since
exp multiplies log's rounding by |y log x|; einc carries log x in two floats."""
import numpy as np
import pytest

import einc
from tests.tiers import GENERIC_FULL

SOURCE = """
let x: [{t}; N];
let e: [{t}; N];
let p[i] = x[i] ** e[i];
let h[0] = 0.0;
let h[s in 1..N] = h[s - 1] * 0.0 + x[s] ** e[s];
"""


def _ulps(got, exact, dtype):
    """|got - exact| in units of the last place of exact rounded to dtype."""
    spacing = np.spacing(np.abs(exact.astype(dtype))).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


def _arguments(dtype, n=4000):
    rng = np.random.default_rng(7)
    x = np.exp(rng.uniform(-7, 7, n))                       # 1e-3 .. 1e3
    e = rng.uniform(-12, 12, n)                              # results 1e-36 .. 1e36
    x[:6], e[:6] = [2.0, 3.0, 10.0, 0.5, 7.0, 1.5], [3.0, 2.0, 10.0, -2.0, 0.5, 40.0]
    return x.astype(dtype), e.astype(dtype)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_float_power_is_within_two_ulps(target, dtype):
    """Against the power of the same arguments in f64 (f32) or in NumPy's f64 pow, whose own
    error is below an ulp; elementwise (a dense kernel) and in a recurrence's step."""
    x, e = _arguments(dtype)
    name = np.dtype(dtype).name.replace("float", "f")
    out = einc.load(einc.compile(SOURCE.format(t=name), target=target).vmfb)(x=x, e=e)
    exact = np.power(x.astype(np.float64), e.astype(np.float64))
    assert _ulps(out["p"], exact, dtype).max() <= 2.0
    assert _ulps(out["h"][1:], exact[1:], dtype).max() <= 2.0
    assert out["p"][0] == 8.0 and out["p"][1] == 9.0 and out["p"][2] == 1e10


EDGES = """
let x: [f64; 12];
let e: [f64; 12];
let p[i in 0..12] = x[i] ** e[i];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_powers_at_the_edges_of_the_range_are_c_pow(target):
    """Zero, infinite and NaN operands, results past the largest or below the smallest normal
    double, and a subnormal base (read as zero: einc's CPU runtime flushes subnormals)."""
    x = np.array([0.0, 0.0, np.inf, np.inf, np.nan, 2.0, 2.0, 10.0, 0.5, 1e-300, 5e-324, 3.0])
    e = np.array([2.0, -1.0, 0.5, -2.0, 2.0, np.nan, 1100.0, -400.0, np.inf, 1.5, 0.5, -np.inf])
    out = einc.load(einc.compile(EDGES, target=target).vmfb)(x=x, e=e)
    expected = np.power(x, e)
    expected[10] = 0.0                                      # flushed to zero before the power
    np.testing.assert_array_equal(out["p"], expected)
