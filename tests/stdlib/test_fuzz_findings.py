"""Findings of the stdlib fuzzer (fuzz/stdlib, docs/FUZZING.md), reduced: each call once
disagreed with its ONNX meaning or was refused; NumPy references, exact (these calls only move
data)."""
import einc
import numpy as np

from stdlib_harness import run_program
from tests.programs import built

GATHERS = """
let D: [f32; 5, 3, 4];
let I64: [i64; 2, N];
let I32: [i32; 3];
let E: [i64; 5, 3, 2];
let gather_i64 = std::ml::gather(D, I64, 1);
let gather_negative_axis = std::ml::gather(D, I32, -1);
let gather_both = std::ml::gather(D, I64, -2);
let gather_elements_negative_axis = std::ml::gather_elements(D, E, -1);
let gather_rank_1 = std::ml::gather(D[0, 0], I32, -1);
"""

SPLITS = """
let D: [f32; 5, 3, 4];
let split_1 = std::ml::split(D, [4], 2);
let split_4 = std::ml::split(D, [1, 2, 1, 1], 0);
let split_negative_axis = std::ml::split(D, [1, 2], -2);
"""

RNG = np.random.default_rng(5)
D = RNG.uniform(-1, 1, (5, 3, 4)).astype(np.float32)
I64 = np.array([[-1, 0, 2, -3], [1, 1, -2, 0]], np.int64)
I32 = np.array([-4, 3, 0], np.int32)
E = RNG.integers(-4, 4, (5, 3, 2)).astype(np.int64)


def test_gathers_take_i64_indices_and_negative_axes_as_onnx():
    """ONNX Gather's indices are i32 or i64, and its axis may count from the end; einc added
    an i32 axis size to i64 indices (E002) and read `data.shape[axis]` with the negative axis
    (E005)."""
    out = run_program(GATHERS, D=D, I64=I64, I32=I32, E=E)
    np.testing.assert_array_equal(out["gather_i64"], np.take(D, I64 % 3, axis=1))
    np.testing.assert_array_equal(out["gather_negative_axis"], np.take(D, I32 % 4, axis=-1))
    np.testing.assert_array_equal(out["gather_both"], np.take(D, I64 % 3, axis=-2))
    np.testing.assert_array_equal(out["gather_elements_negative_axis"], np.take_along_axis(D, E % 4, axis=-1))
    np.testing.assert_array_equal(out["gather_rank_1"], np.take(D[0, 0], I32 % 4))
    assert out["gather_i64"].dtype == np.float32


def test_split_into_one_to_six_parts_along_any_axis_as_onnx():
    """ONNX Split takes any number of parts and a negative axis; einc's took 2 or 3 (one part
    was E005, an index past the sizes) and no negative axis."""
    out = run_program(SPLITS, D=D)
    for name, sizes, axis in (("split_1", [4], 2), ("split_4", [1, 2, 1, 1], 0), ("split_negative_axis", [1, 2], -2)):
        parts = np.split(D, np.cumsum(sizes)[:-1], axis=axis)
        assert sorted(k for k in out if k.startswith(name + ".")) == [f"{name}.{k}" for k in range(len(sizes))]
        for k, part in enumerate(parts):
            np.testing.assert_array_equal(out[f"{name}.{k}"], part)


SIGNS = """
let F64: [f64; 5];
let I32: [i32; 4];
let sign_f64 = std::math::sign(F64);
let sign_i32 = std::math::sign(I32);
let sign_ml = std::ml::sign(F64);
"""


def test_sign_keeps_the_type_of_its_argument():
    """std::math::sign of f64 was f32 (its 1.0 and -1.0 untyped) and of integers E002."""
    f64 = np.array([-2.5, 0.0, 1e-300, -1e-300, 7.0])
    i32 = np.array([-3, 0, 5, -1], np.int32)
    out = run_program(SIGNS, F64=f64, I32=i32)
    for name in ("sign_f64", "sign_ml"):
        assert out[name].dtype == np.float64, name
        np.testing.assert_array_equal(out[name], np.sign(f64))
    assert out["sign_i32"].dtype == np.int32
    np.testing.assert_array_equal(out["sign_i32"], np.sign(i32))


NAMED_DIMS = """
let X: [f32; N, C, H];
let flat = std::ml::flatten(X);
let sliced = std::ml::slice(X, [1, -2], [100, -1], [2, 1], [1, 2]);
let backwards = std::ml::slice(X, [-1], [-100], [0], [-2]);
"""


def test_slice_and_flatten_over_named_dims():
    """Over named dims flatten's size is the product C * H and slice's the clamps of its ends to
    the axis: both were E004 (a range bound must be affine in the sizes); now they are sizes
    computed at run time. One build, three sets of sizes (the last slices an axis to nothing)."""
    module = einc.load(built(NAMED_DIMS).vmfb)
    for shape in ((3, 4, 5), (2, 2, 1), (1, 1, 2)):
        x = np.random.default_rng(sum(shape)).uniform(-1, 1, shape).astype(np.float32)
        out = module(X=x)
        np.testing.assert_array_equal(out["flat"], x.reshape(shape[0], -1))
        np.testing.assert_array_equal(out["sliced"], x[:, -2:-1:2, 1:100])
        np.testing.assert_array_equal(out["backwards"], x[::-2])
