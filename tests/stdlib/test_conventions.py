"""The standard-library conventions users expect from NumPy and ONNX (docs/STDLIB.md): round
halves to even, integer floor modulo, negative gather indices, Cast by type name, Slice with a
negative step, np.tile's single count, and QuantizeLinear's integer, saturated result feeding a
quantized dense layer. One program per target, every output against NumPy; the inputs are run
time values, so nothing is folded at build time (the `*_lit` outputs check the folding too)."""
import numpy as np
import pytest

from stdlib_harness import close, run_program
from tests.tiers import VULKAN_FULL

SOURCE = """
use std::math::{round, mod, abs, gcd, lcm};
use std::ml::{gather, gather_elements, gather_nd, cast, slice, tile, quantize_linear, dequantize_linear, qlinear, qmatmul, relu};
use std::ml::round as ml_round;
let F: [f32; 10];
let IA: [i32; 8];
let IB: [i32; 8];
let M: [f32; 3, 4];
let V: [f32; 6];
let IX: [i32; 2, 2];
let x: [f32; 4, 16];
let W: [f32; 16, 8];
let b: [f32; 8];
let round_ = round(F);
let round_ml = ml_round(F);
let round_lit = [round(2.5), round(-0.5), round(0.5), round(-1.5)];
let mod_lit = mod(-7, 3);
let mod_point[i] = mod(IA[i], IB[i]);
let mod_whole = mod(IA, IB);
let mod_scalar = mod(IA, -3);
let gcd_point[i] = gcd(IA[i], IB[i]);
let lcm_point[i] = lcm(IA[i], IB[i]);
let gather_lit = gather(M, [-1, 0], 0);
let gather_run = gather(M, IX, 1);
let gather_el = gather_elements(M, [[-1, 0, 1, -3]], 0);
let gather_nd_ = gather_nd(M, [[-1, -1], [0, -4]]);
let cast_i32 = cast(M, "int32");
let cast_f = cast(cast_i32, "float");
let cast_u8 = cast(abs(M), "uint8");
let cast_i8 = cast(M, "int8");
let cast_bool = cast(M, "bool");
let slice_rev = slice(V, [4], [0], [0], [-1]);
let slice_rev2 = slice(M, [-1, 10], [-4, 0], [0, -1], [-1, -3]);
let slice_end = slice(V, [-4], [1000], [0], [2]);
let tile_one = tile(M, 2);
let tile_short = tile(M, [3]);
let tile_long = tile(M, [2, 1, 2]);
let q_i8 = quantize_linear(F * 60.0, 0.5, 0i8);
let q_u8 = quantize_linear(F * 60.0, 0.5, 128u8);
let q_i32 = quantize_linear(F * 60.0, 0.5, 3);
let q_float = quantize_linear(F * 60.0, 0.5, 3.0);
let q_lit = quantize_linear([100.0, -100.0, 0.5], 0.5, 0i8);
let dq = dequantize_linear(q_u8, 0.5, 128u8);
let w_scale = max[i, j](abs(W[i, j])) / 127.0;
let x_scale = max[i, j](abs(x[i, j])) / 127.0;
let Wq = quantize_linear(W, w_scale, 0i8);
let xq = quantize_linear(x, x_scale, 0i8);
let dense_f32_i8 = relu(qlinear(x, 1.0, Wq, w_scale, b));
let dense_i8_i8 = relu(qlinear(xq, x_scale, Wq, w_scale, b));
let qmm = qmatmul(xq, x_scale, Wq, w_scale);
"""

RNG = np.random.default_rng(21)
INPUTS = dict(F=np.array([2.5, -0.5, 0.5, 1.5, -2.5, 3.49, -3.51, 0.0, 7.0, -1e-3], np.float32),
              IA=np.array([7, -7, 12, 0, 9, -15, -8, 5], np.int32),
              IB=np.array([3, 3, -5, 4, 6, 10, -3, -5], np.int32),
              M=RNG.uniform(-9, 9, (3, 4)).astype(np.float32),
              V=np.arange(6, dtype=np.float32) * 1.5,
              IX=np.array([[-1, 0], [2, -3]], np.int32),
              x=RNG.uniform(-1, 1, (4, 16)).astype(np.float32),
              W=RNG.uniform(-0.5, 0.5, (16, 8)).astype(np.float32),
              b=RNG.uniform(-0.2, 0.2, 8).astype(np.float32))
F, M, V = INPUTS["F"], INPUTS["M"], INPUTS["V"]
TARGETS = ["llvm-cpu", VULKAN_FULL]


@pytest.fixture(scope="module", params=TARGETS)
def out(request):
    return run_program(SOURCE, target=request.param, **INPUTS)


def quantize(v, scale, zero, dtype):
    """ONNX QuantizeLinear in NumPy: halves to even, saturated to `dtype`; f32 arithmetic."""
    info = np.iinfo(dtype)
    q = np.round(np.asarray(v, np.float32) / np.float32(scale)) + np.float32(zero)
    return np.clip(q, info.min, info.max).astype(dtype)


def test_round_halves_to_even_as_numpy(out):
    for name in ("round_", "round_ml"):
        np.testing.assert_array_equal(out[name], np.round(F))
        assert np.array_equal(np.signbit(out[name]), np.signbit(np.round(F)))     # round(-0.5) is -0.0
    np.testing.assert_array_equal(out["round_lit"], np.round([2.5, -0.5, 0.5, -1.5]).astype(np.float32))
    assert np.signbit(out["round_lit"][1])


def test_integer_mod_is_floor_modulo_in_integers(out):
    ia, ib = INPUTS["IA"], INPUTS["IB"]
    assert out["mod_lit"].dtype == np.int32 and out["mod_lit"] == np.mod(-7, 3)
    for name, expected in (("mod_point", np.mod(ia, ib)), ("mod_whole", np.mod(ia, ib)), ("mod_scalar", np.mod(ia, -3))):
        assert out[name].dtype == np.int32
        np.testing.assert_array_equal(out[name], expected)


def test_gcd_and_lcm_point_by_point_on_integer_arrays(out):
    ia, ib = INPUTS["IA"], INPUTS["IB"]
    np.testing.assert_array_equal(out["gcd_point"], np.gcd(ia, ib))
    np.testing.assert_array_equal(out["lcm_point"], np.lcm(ia, ib))
    assert out["gcd_point"].dtype == out["lcm_point"].dtype == np.int32


def test_gather_counts_negative_indices_from_the_end(out):
    close(out["gather_lit"], M[[-1, 0]], rtol=0, atol=0)
    close(out["gather_run"], np.take(M, INPUTS["IX"], axis=1), rtol=0, atol=0)
    close(out["gather_el"], np.take_along_axis(M, np.array([[-1, 0, 1, -3]]) % 3, axis=0), rtol=0, atol=0)
    close(out["gather_nd_"], np.array([M[-1, -1], M[0, -4]]), rtol=0, atol=0)


def test_cast_with_an_onnx_type_name(out):
    for name, dtype, data in (("cast_i32", np.int32, M), ("cast_u8", np.uint8, np.abs(M)), ("cast_i8", np.int8, M),
                              ("cast_bool", np.bool_, M)):
        assert out[name].dtype == dtype, name
        np.testing.assert_array_equal(out[name], data.astype(dtype))        # truncation, as NumPy's astype
    close(out["cast_f"], M.astype(np.int32).astype(np.float32), rtol=0, atol=0)


def test_slice_with_negative_steps_and_ends_as_numpy(out):
    close(out["slice_rev"], V[4:0:-1], rtol=0, atol=0)
    close(out["slice_rev2"], M[-1:-4:-1, 10:0:-3], rtol=0, atol=0)
    close(out["slice_end"], V[-4:1000:2], rtol=0, atol=0)


def test_tile_counts_go_with_the_last_axes_as_np_tile(out):
    for name, reps in (("tile_one", 2), ("tile_short", [3]), ("tile_long", [2, 1, 2])):
        close(out[name], np.tile(M, reps), rtol=0, atol=0)


def test_quantize_linear_has_the_zero_points_type_and_saturates(out):
    v = F * np.float32(60)
    for name, zero, dtype in (("q_i8", 0, np.int8), ("q_u8", 128, np.uint8), ("q_i32", 3, np.int32)):
        assert out[name].dtype == dtype, name
        np.testing.assert_array_equal(out[name], quantize(v, 0.5, zero, dtype))
    close(out["q_float"], np.round(v / np.float32(0.5)) + 3, rtol=0, atol=0)     # floats, unsaturated
    np.testing.assert_array_equal(out["q_lit"], np.array([127, -128, 1], np.int8))
    assert out["q_lit"].dtype == np.int8
    close(out["dq"], (quantize(v, 0.5, 128, np.uint8).astype(np.float32) - 128) * 0.5, rtol=0, atol=0)


def test_quantized_dense_layer_with_i8_weights_matches_numpy(out):
    x, W, b = INPUTS["x"], INPUTS["W"], INPUTS["b"]
    w_scale = np.abs(W).max() / np.float32(127)
    x_scale = np.abs(x).max() / np.float32(127)
    Wq, xq = quantize(W, w_scale, 0, np.int8), quantize(x, x_scale, 0, np.int8)
    # the quantized integers may differ by one where x / scale lands within an ulp of a half
    assert np.abs(out["Wq"].astype(np.int32) - Wq).max() <= 1 and np.mean(out["Wq"] == Wq) > 0.99
    Wq, xq = out["Wq"].astype(np.float64), out["xq"].astype(np.float64)        # the layer on einc's integers
    ref_f32_i8 = np.maximum(x.astype(np.float64) @ Wq * w_scale + b, 0)
    ref_i8_i8 = xq @ Wq * (np.float64(x_scale) * w_scale)
    close(out["dense_f32_i8"], ref_f32_i8, atol=1e-5)
    close(out["qmm"], ref_i8_i8, atol=1e-5)
    close(out["dense_i8_i8"], np.maximum(ref_i8_i8 + b, 0), atol=1e-5)
    # and the quantized layer is the float layer up to the quantization error
    close(out["dense_f32_i8"], np.maximum(x @ W + b, 0), rtol=0, atol=16 * 0.5 * float(w_scale))


def test_f64_limits_beside_the_f32_ones():
    out = run_program("use std::math::*;\nlet eps = epsilon_f64();\nlet big = max_float_f64();\n"
                      "let small = min_float_f64();\nlet eps32 = epsilon();\n")
    info = np.finfo(np.float64)
    assert out["eps"].dtype == np.float64 and out["eps"] == info.eps
    assert out["big"] == info.max and out["small"] == info.tiny
    assert out["eps32"].dtype == np.float32 and out["eps32"] == np.finfo(np.float32).eps
