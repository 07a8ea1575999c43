"""f32 elementary functions (einc.mlir.core.f32_math and the generic ones of f64_math, plus those left
to IREE) within a few ulps of the correctly rounded value: NumPy's float64 result rounded to f32,
over each function's domain (tan near its poles included), on llvm-cpu and vulkan-spirv."""
import math

import numpy as np
import pytest

import einc
from tests.tiers import VULKAN_FULL

N = 4096
RNG = np.random.default_rng(7)
HALF_PI_MULTIPLES = np.float32(np.pi / 2 * RNG.integers(-2 ** 16, 2 ** 16, N // 4))   # nearest f32 to k π/2
# every f32 magnitude from 2^-3 to the largest, either sign (the Payne–Hanek reduction of f32_trig)
WHOLE_RANGE = RNG.choice([-1, 1], N) * np.exp2(RNG.uniform(-3, 128, N))
TRIG = np.concatenate([RNG.uniform(-10, 10, N // 4), RNG.uniform(-1e5, 1e5, N // 4), HALF_PI_MULTIPLES,
                       np.nextafter(HALF_PI_MULTIPLES, np.float32(np.inf)), WHOLE_RANGE,
                       [1.5708, np.pi / 2, 0.0, -0.0, np.finfo(np.float32).max, -np.finfo(np.float32).max,
                        np.pi / 4, -np.pi / 4, 2.0 ** 24, 1e22]])
LOGS = np.exp(RNG.uniform(-87, 88, N))
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan]
# function -> (NumPy reference, arguments, ulps allowed)
CASES = {
    "sin": (np.sin, TRIG, 2), "cos": (np.cos, TRIG, 2), "tan": (np.tan, TRIG, 4),
    "exp": (np.exp, RNG.uniform(-87, 88.7, N), 2), "expm1": (np.expm1, RNG.uniform(-20, 88.7, N), 2),
    "log": (np.log, np.concatenate([LOGS, 1 + RNG.uniform(-1e-3, 1e-3, N)]), 2),
    "log1p": (np.log1p, np.concatenate([RNG.uniform(-0.9999, 1, N), LOGS, -RNG.uniform(0, 1e-3, N)]), 3),
    "log10": (np.log10, LOGS, 3), "log2": (np.log2, LOGS, 2),
    "sinh": (np.sinh, np.concatenate([RNG.uniform(-89, 89, N), RNG.uniform(-1e-3, 1e-3, N)]), 3),
    "cosh": (np.cosh, RNG.uniform(-89, 89, N), 2),
    # tanh's one reduction: near where k leaves 0 (|x| = ln 2 / 4) and near its clamp at 10
    "tanh": (np.tanh, np.concatenate([RNG.uniform(-12, 12, N), RNG.uniform(-1e-3, 1e-3, N),
                                      RNG.uniform(0.17, 0.18, N), -RNG.uniform(8.5, 10.5, N)]), 3),
    "asin": (np.arcsin, np.concatenate([RNG.uniform(-1, 1, N), [1.0, -1.0, 1e-30]]), 4),
    "acos": (np.arccos, np.concatenate([RNG.uniform(-1, 1, N), [1.0, -1.0]]), 4),
    "atan": (np.arctan, RNG.uniform(-1e3, 1e3, N) * np.exp(RNG.uniform(-20, 0, N)), 3),
    "asinh": (np.arcsinh, np.concatenate([RNG.uniform(-5, 5, N), LOGS, -LOGS[:N // 2]]), 4),
    "acosh": (np.arccosh, np.concatenate([1 + RNG.uniform(0, 1, N), 1 + LOGS, [1.0]]), 4),
    "atanh": (np.arctanh, np.concatenate([RNG.uniform(-1, 1, N), RNG.uniform(-1e-4, 1e-4, N), [1.0, -1.0]]), 4),
    "erf": (np.vectorize(math.erf), RNG.uniform(-6, 6, N), 6),
}


def arguments(f):
    return np.concatenate([CASES[f][1], SPECIAL]).astype(np.float32)


# the intrinsics the std::math functions wrap, lowered by einc.mlir.core.scalar_ops
SOURCE = "".join(f"let x_{f}: [f32; {len(arguments(f))}];\nlet y_{f} = __{f}(x_{f});\n" for f in CASES)
# atan2(y, x) over the four quadrants and the axes, against np.arctan2
Y = np.concatenate([RNG.uniform(-1e3, 1e3, N), [0.0, 0.0, 1.0, -1.0, 0.0, -0.0]]).astype(np.float32)
X = np.concatenate([RNG.uniform(-1e3, 1e3, N), [1.0, -1.0, 0.0, 0.0, 0.0, -2.0]]).astype(np.float32)
SOURCE += f"let ya: [f32; {len(Y)}];\nlet xa: [f32; {len(X)}];\nlet y_atan2[i] = __atan2(ya[i], xa[i]);\n"


def expected(f, x):
    with np.errstate(all="ignore"):
        y = CASES[f][0](x.astype(np.float64))
    return np.asarray(y).astype(np.float32)


def ulps(a, b):
    """The distance in f32 steps (0 where both are NaN; +-0 are one point)."""
    def ordered(v):
        bits = v.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    d = np.abs(ordered(a) - ordered(b))
    return np.where(np.isnan(a) & np.isnan(b), 0, np.where(np.isnan(a) | np.isnan(b), 2 ** 40, d))


@pytest.fixture(scope="module", params=["llvm-cpu", VULKAN_FULL])
def results(request):
    program = einc.load(einc.compile(SOURCE, target=request.param).vmfb)
    return program(**{f"x_{f}": arguments(f) for f in CASES}, ya=Y, xa=X)


@pytest.mark.parametrize("name", list(CASES))
def test_within_a_few_ulps_of_the_correctly_rounded_value(results, name):
    x = arguments(name)
    ref = expected(name, x)
    tiny = np.abs(ref) < np.finfo(np.float32).tiny           # CPUs flush subnormal results to zero
    error = np.where(tiny & (np.abs(results[f"y_{name}"]) < np.finfo(np.float32).tiny), 0,
                     ulps(results[f"y_{name}"], ref))
    worst = int(np.argmax(error))
    assert error.max() <= CASES[name][2], \
        f"{name}({x[worst]!r}) = {results[f'y_{name}'][worst]!r}, correctly rounded {ref[worst]!r}"


def test_tan_next_to_its_pole(results):
    x = np.float32(1.5708)
    got = results["y_tan"][list(arguments("tan")).index(x)]
    assert got == np.float32(np.tan(np.float64(x))) or abs(got / np.tan(np.float64(x)) - 1) < 1e-6


def test_atan2_within_a_few_ulps_in_every_quadrant(results):
    ref = np.arctan2(Y.astype(np.float64), X.astype(np.float64)).astype(np.float32)
    error = ulps(results["y_atan2"], ref)
    worst = int(np.argmax(error))
    assert error.max() <= 4, f"atan2({Y[worst]!r}, {X[worst]!r}) = {results['y_atan2'][worst]!r}, want {ref[worst]!r}"


def test_the_exp_series_coefficients_are_the_fit_they_say():
    # f32_math._EXPM1_P: degree 4, least largest relative error of r + r² P(r), Lawson's iteration
    from einc.mlir.core.f32_math import _EXPM1_P
    half_ln2 = math.log(2) / 2
    r = np.linspace(-half_ln2, half_ln2, 4001)
    quotient = sum(r ** (n - 2) / math.factorial(n) for n in range(2, 20))     # (exp(r) - 1 - r) / r²
    rows, weights = np.vander(r, 5, increasing=True) * r[:, None], np.ones_like(r)
    for _ in range(100):
        root = np.sqrt(weights)
        fitted = np.linalg.lstsq(rows * root[:, None], root * r * quotient, rcond=None)[0]
        weights = weights * np.abs(rows @ fitted - r * quotient)
        weights /= weights.sum()
    np.testing.assert_allclose(_EXPM1_P, fitted, rtol=1e-9)
    relative = np.abs(r * r * (np.polynomial.polynomial.polyval(r, _EXPM1_P) - quotient)) / np.abs(np.expm1(r) + (r == 0))
    assert relative.max() < 1.6e-8
