"""std::math helpers and constants (f32 and f64), the integer helpers (i32 and i64), and the
remaining quantized, ROI-pooling and numerics functions, against NumPy and closed forms."""
import math

import numpy as np
import pytest

from stdlib_harness import close, rand, run_program

CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau, "phi": (1 + 5 ** 0.5) / 2, "sqrt2": 2 ** 0.5,
             "sqrt3": 3 ** 0.5, "ln2": math.log(2), "ln10": math.log(10), "log2e": 1 / math.log(2),
             "log10e": 1 / math.log(10)}
F32_LIMITS = {"epsilon": np.finfo(np.float32).eps, "max_float": np.finfo(np.float32).max,
              "min_float": np.finfo(np.float32).tiny}

SOURCE = """
use std::math::*;
use std::math::constants;
use std::ml::{qconv, qlinear, max_roi_pool};
use std::numerics::{euler_linear, gradient_descent_2d_from};
let x: [f32; 2, 3];
let d: [f64; 4];
let ia: i32;
let ib: i32;
let la: i64;
let lb: i64;
let Xq: [i32; 1, 2, 5, 5];
let Wq: [i32; 3, 2, 3, 3];
let xq: [i32; 2, 4];
let wq: [i32; 4, 3];
let R: [f32; 1, 2, 6, 7];
let rois: [f32; 2, 5];
let A: [f64; 3, 3];
let A2: [f64; 2, 2];
let b2: [f64; 2];
let rad_f = deg_to_rad(x * 90.0);
let deg_d = rad_to_deg(d);
let pow_f = pow(abs(x), 2.5);
let pow_d = pow(d, 3);
let trunc_d = trunc(d * 3.0);
let ln_d = ln(abs(d));
let log10_f = log10(abs(x));
let log2_f = log2(abs(x));
let cmin_f = clamp_min(x, -0.5);
let cmax_d = clamp_max(d, 0.25);
let sat_f = saturate(x);
let sat_d = saturate(d);
let gcd_i = gcd(ia, ib);
let lcm_i = lcm(ia, ib);
let gcd_l = gcd(la, lb);
let lcm_l = lcm(la, lb);
let fact_i = factorial(6);
let fact_l = factorial(15i64);
let inf_f = infinity();
let inf_d: f64 = infinity();
let nan_f = nan();
let epsilon_f = epsilon();
let max_float_f = max_float();
let min_float_f = min_float();
""" + "".join(f"let {c}_f = {c}();\nlet {c}_d: f64 = {c}();\n" for c in CONSTANTS) + """
let qc = qconv(Xq, 0.5, Wq, 0.25, [0.5, -1.0, 0.0], [1, 2], [1, 1, 0, 1], [1, 1], 1);
let ql = qlinear(xq, 0.5, wq, 0.125, [1.0, 2.0, 3.0]);
let roi = max_roi_pool(R, rois, [2, 3], 0.5);
let traj = euler_linear([1.0f64, -1.0, 0.5], A, 0.1, 5, 3);
let gd_from = gradient_descent_2d_from([1.0f64, 1.0], A2, b2, 0.1, 30);
"""

RNG = np.random.default_rng(11)
INPUTS = dict(x=rand(2, 3), d=rand(4, dtype=np.float64, seed=1), ia=np.int32(84), ib=np.int32(-36),
              la=np.int64(2 ** 40 * 3), lb=np.int64(2 ** 35 * 9),
              Xq=RNG.integers(-8, 8, (1, 2, 5, 5)).astype(np.int32),
              Wq=RNG.integers(-4, 4, (3, 2, 3, 3)).astype(np.int32),
              xq=RNG.integers(-8, 8, (2, 4)).astype(np.int32), wq=RNG.integers(-8, 8, (4, 3)).astype(np.int32),
              R=rand(1, 2, 6, 7, seed=2),
              rois=np.array([[0, 0, 0, 10, 8], [0, 4, 2, 13, 11]], np.float32),
              A=RNG.uniform(-1, 1, (3, 3)), A2=np.array([[3.0, 1.0], [1.0, 2.0]]), b2=np.array([1.0, -1.0]))
F = {k: np.asarray(v, np.float64) for k, v in INPUTS.items()}


@pytest.fixture(scope="module")
def out():
    return run_program(SOURCE, **INPUTS)


def test_elementwise_helpers_f32_and_f64(out):
    x, d = F["x"], F["d"]
    close(out["rad_f"], np.deg2rad(x * 90))
    close(out["deg_d"], np.rad2deg(d), np.float64)
    close(out["pow_f"], np.abs(x) ** 2.5)
    close(out["pow_d"], d ** 3, np.float64)
    close(out["trunc_d"], np.trunc(d * 3), np.float64)
    close(out["ln_d"], np.log(np.abs(d)), np.float64)
    close(out["log10_f"], np.log10(np.abs(x)))
    close(out["log2_f"], np.log2(np.abs(x)))    # f64 log2 is E011 on llvm-cpu (einc.passes.target_support)
    close(out["cmin_f"], np.maximum(x, -0.5))
    close(out["cmax_d"], np.minimum(d, 0.25), np.float64)
    close(out["sat_f"], np.clip(x, 0, 1))
    close(out["sat_d"], np.clip(d, 0, 1), np.float64)


def test_integer_helpers_i32_and_i64(out):
    assert out["gcd_i"].dtype == np.int32 and out["gcd_i"] == math.gcd(84, -36)
    assert out["lcm_i"] == math.lcm(84, 36)
    assert out["gcd_l"].dtype == np.int64 and out["gcd_l"] == math.gcd(2 ** 40 * 3, 2 ** 35 * 9)
    assert out["lcm_l"] == math.lcm(2 ** 40 * 3, 2 ** 35 * 9)
    assert out["fact_i"] == 720 and out["fact_l"].dtype == np.int64 and out["fact_l"] == math.factorial(15)


def test_constants_in_both_float_types(out):
    for name, value in CONSTANTS.items():
        assert out[f"{name}_f"].dtype == np.float32 and out[f"{name}_f"] == np.float32(value), name
        assert out[f"{name}_d"].dtype == np.float64 and out[f"{name}_d"] == pytest.approx(value, rel=1e-15), name
    for name, value in F32_LIMITS.items():
        assert out[f"{name}_f"] == value, name
    assert np.isposinf(out["inf_f"]) and out["inf_d"].dtype == np.float64 and np.isposinf(out["inf_d"])
    assert np.isnan(out["nan_f"])


def conv_ref(x, w, b, strides, pads):
    xp = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    oh = (xp.shape[2] - w.shape[2]) // strides[0] + 1
    ow = (xp.shape[3] - w.shape[3]) // strides[1] + 1
    y = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * strides[0]:i * strides[0] + w.shape[2], j * strides[1]:j * strides[1] + w.shape[3]]
            y[:, :, i, j] = np.einsum("nchw,mchw->nm", patch, w)
    return y + b[None, :, None, None]


def test_quantized_conv_and_linear(out):
    ref = conv_ref(F["Xq"] * 0.5, F["Wq"] * 0.25, np.array([0.5, -1, 0]), [1, 2], [1, 1, 0, 1])
    close(out["qc"], ref, atol=1e-5)
    close(out["ql"], (F["xq"] @ F["wq"]) * 0.0625 + np.array([1.0, 2, 3]))


def roi_pool_ref(x, rois, pooled, scale):
    """ONNX MaxRoiPool: integer region from the scaled corners, split into pooled bins."""
    ph_n, pw_n = pooled
    y = np.zeros((len(rois), x.shape[1], ph_n, pw_n))
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        x1, y1, x2, y2 = (int(np.round(v * scale)) for v in (x1, y1, x2, y2))
        bh, bw = max(y2 - y1 + 1, 1) / ph_n, max(x2 - x1 + 1, 1) / pw_n
        for ph in range(ph_n):
            for pw in range(pw_n):
                hs = min(max(int(np.floor(ph * bh)) + y1, 0), x.shape[2])
                he = min(max(int(np.ceil((ph + 1) * bh)) + y1, 0), x.shape[2])
                ws = min(max(int(np.floor(pw * bw)) + x1, 0), x.shape[3])
                we = min(max(int(np.ceil((pw + 1) * bw)) + x1, 0), x.shape[3])
                if hs < he and ws < we:
                    y[r, :, ph, pw] = x[int(b), :, hs:he, ws:we].max((1, 2))
    return y


def test_max_roi_pool(out):
    close(out["roi"], roi_pool_ref(F["R"], F["rois"], (2, 3), 0.5))


def test_euler_linear_trajectory(out):
    u = np.array([1.0, -1, 0.5])
    states = [u]
    for _ in range(5):
        states.append(states[-1] + 0.1 * F["A"] @ states[-1])
    close(out["traj"], np.stack(states), np.float64)


def test_gradient_descent_from_a_start(out):
    x = np.array([1.0, 1.0])
    for _ in range(30):
        x = x - 0.1 * (F["A2"] @ x - F["b2"])
    close(out["gd_from"], x, np.float64)


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_trunc_and_round_build_and_agree_on_every_cpu_target(target, dtype):
    """IREE-75: llvm-cpu-generic left math.trunc (which `round` uses too) to libm's truncf or
    trunc, which it does not link: an internal error. NumPy's trunc and round are the reference,
    exactly, a negative zero and values past 2^23 or 2^52, infinities and NaN included."""
    import einc
    name = "f32" if dtype == np.float32 else "f64"
    source = f"use std::math::*;\nlet x: [{name}; 9];\nlet t = trunc(x);\nlet r = round(x);\n"
    x = np.array([-0.5, 2.5, -2.5, 1e20, -7.99, 9007199254740993.0, np.nan, -np.inf, 3.5], dtype)
    out = einc.load(einc.compile(source, target=target).vmfb)(x=x)
    np.testing.assert_array_equal(out["t"], np.trunc(x))
    np.testing.assert_array_equal(out["r"], np.round(x))
    assert np.signbit(out["t"][0])


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floor_and_ceil_build_and_agree_on_every_cpu_target(target, dtype):
    """IREE-81: llvm-cpu-generic left f64 math.ceil to libm's ceil, which it does not link (an
    internal error). NumPy's floor and ceil are the reference, exactly, signed zeros included."""
    import einc
    name = "f32" if dtype == np.float32 else "f64"
    source = f"use std::math::*;\nlet x: [{name}; 10];\nlet f = floor(x);\nlet c = ceil(x);\n"
    x = np.array([-0.5, 2.5, -2.5, 1e20, -7.99, 7.01, 9007199254740993.0, np.nan, -np.inf, 0.0], dtype)
    out = einc.load(einc.compile(source, target=target).vmfb)(x=x)
    np.testing.assert_array_equal(out["f"], np.floor(x))
    np.testing.assert_array_equal(out["c"], np.ceil(x))
    assert np.signbit(out["c"][0]) and not np.signbit(out["f"][9])


def test_factorial_of_a_run_time_value_wraps_as_numpy_products_do():
    """factorial(n) of an input (a scalar and each element of an i64 array) was E004, its range
    `1..n + 1` being computed from data. NumPy's wrapping products are the reference: 13! in i32,
    21! and 30! in i64, and 70!, whose 2^67 makes it 0; 0! and a negative n are 1."""
    source = """
        use std::math::factorial;
        let n: i32;
        let k: [i64; 7];
        let f = factorial(n);
        let g[i] = factorial(k[i]);
    """
    k = np.array([0, 5, 20, 21, 30, 70, -3], np.int64)
    out = run_program(source, n=np.int32(13), k=k)

    def wrapped(v, dtype):
        with np.errstate(over="ignore"):
            return np.prod(np.arange(1, max(v, 0) + 1, dtype=dtype), dtype=dtype)
    assert out["f"].dtype == np.int32 and out["f"] == wrapped(13, np.int32)
    np.testing.assert_array_equal(out["g"], [wrapped(v, np.int64) for v in k])
