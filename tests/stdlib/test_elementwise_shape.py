"""std::ml math/trig/comparison/logical/special/utility ops, shape, transform and indexing ops,
std::math_utils, std::io and std::lib, against NumPy."""
import math

import numpy as np
import pytest

from stdlib_harness import close, rand, run_program

SOURCE = """
use std::ml::*;
use std::math_utils as mu;
use std::io::load_npy;
use std::lib;
let a: [f32; 3, 4];
let b: [f32; 3, 4];
let d: [f64; 6];
let p: [bool; 5];
let q: [bool; 5];
let ix: [i32; 3];
let qa: [i32; 2, 3];
let qb: [i32; 3, 2];
let X: [f32; 1, 8, 2, 3];
let T: [f32; 2, 3, 4];
let Y: [f32; 2, 1, 3, 1, 2];
let add_ = add(a, b);
let sub_ = subtract(a, b);
let mul_ = multiply(a, 2.0);
let div_ = divide(a, b);
let pow_ = power(abs(a), 1.5);
let sq_ = square(d);
let neg_ = neg(a);
let rec_ = reciprocal(b);
let sgn_ = sign(a);
let mn_ = min(a, b);
let mx_ = max(a, b);
let sqrt_ = sqrt(abs(d));
let rsqrt_ = rsqrt(abs(a) + 1.0);
let exp_ = exp(d);
let log_ = log(abs(d) + 0.5);
let log1p_ = log1p(abs(a));
let expm1_ = expm1(d);
let fl_ = floor(a * 3.0);
let ce_ = ceil(a * 3.0);
let ro_ = round(d * 3.0);
let cl_ = clip(a, -0.5, 0.5);
let mod_ = mod(a, 0.7);
let fmod_ = fmod(a, 0.7);
let sin_ = sin(a);
let cos_ = cos(a);
let tan_ = tan(a * 0.5);
let tanh_ = tanh(d);
let sinh_ = sinh(d);
let cosh_ = cosh(d);
let atan2_ = atan2(a, b);
let asin_ = asin(a * 0.4);
let acos_ = acos(a * 0.4);
let atan_ = atan(a);
let asinh_ = asinh(d);
let acosh_ = acosh(abs(d) + 1.0);
let atanh_ = atanh(d * 0.4);
let erf_ = erf(a);
let nan_ = is_nan(log(a));
let inf_ = is_inf(a / (a * 0.0));
let eq_ = equal(a, b);
let gt_ = greater(a, b);
let ge_ = greater_or_equal(a, a);
let lt_ = less(a, b);
let le_ = less_or_equal(a, b);
let ne_ = not_equal(a, a);
let not_ = not(p);
let and_ = logical_and(p, q);
let or_ = logical_or(p, q);
let xor_ = logical_xor(p, q);
let lnot_ = logical_not(q);
let where_ = where(a > b, a, b);
let id_ = identity(d);
let const_ = constant(2.5);
let drop_ = dropout(a, 0.5, false);
let l2n_ = l2_normalize(a, 1e-12);
let numel_ = numel(T);
let size_ = size(a);
let cast_ = cast(a, 0.0f64);
let casti_ = cast(d * 3.0, 0i32);
let slice_ = slice(T, [0, 1], [2, 4], [1, 2], [1, 2]);
let slice0_ = slice(T, [1], [2], [0], [1]);
let cumsum_ = cumsum(a);
let qz_ = quantize_linear(a * 40.0, 0.5, 3.0);
let qz_issue = quantize_linear([0.5, -0.25], 0.01, 0.0);
let dq_ = dequantize_linear(ix, 0.25, 1);
let qmm_ = qmatmul(qa, 0.5, qb, 2.0);
let resh2 = reshape(T, [4, -1]);
let resh4 = reshape(a, [2, 1, 3, 2]);
let squ = squeeze(X, [0]);
let unsq = unsqueeze(a, [0, 3]);
let spl = split(T, [1, 1], 0);
let spl3 = split(a, [1, 2, 1], 1);
let expd = expand(d, [2, 6]);
let expd2 = expand(b[0], [3, 4]);
let shp = shape(T);
let pad2 = pad(a, [1, 0, 2, 1], 9.0);
let pad4 = pad(X, [0, 0, 1, 2, 0, 0, 0, 1], 0.0);
let d2s = depth_to_space(X, 2);
let s2d = space_to_depth(d2s, 2);
let rng = range(2, 11, 3);
let cos_shape = constant_of_shape([2, 3], 1.5);
let cat_ = concat(a, b);
let tile_ = tile(a, [2, 3]);
let tr2 = transpose(a);
let tr3 = transpose(T);
let flat_ = flatten(T);
let resh5 = reshape(T, [2, 2, 3, 1, 2]);
let resh0 = reshape(Y, [3, 0, -1]);
let squ5 = squeeze(Y, [1, 3]);
let unsq5 = unsqueeze(T, [1, 4]);
let spl_mid = split(T, [2, 1], 1);
let expd4 = expand(T, [3, 1, 3, 1]);
let pad3 = pad(T, [1, 0, 2, 0, 1, 1], -1.0);
let padi = pad(ix, [2, 1], 7);
let tile3 = tile(T, [2, 1, 3]);
let tr4 = transpose(X);
let tr5 = transpose(Y);
let cos_i = constant_of_shape([2, 1, 3], 7);
let slice_mid = slice(X, [2], [7], [1], [2]);
let gat_mid = gather(T, ix, 1);
let gat_2d = gather(T, [[0, 2], [1, 1]], 1);
let gnd3 = gather_nd(T, [[1, 2], [0, 1], [1, 0]]);
let gnd_full = gather_nd(T, [[[1, 2, 3]], [[0, 1, 0]]]);
let snd2 = scatter_nd(T, [[1, 2], [0, 0]], [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]);
let snd3 = scatter_nd(T, [[1, 2, 3], [0, 0, 0], [1, 2, 3]], [1.0, 2.0, 3.0]);
let gat0 = gather(a, ix, 0);
let gat1 = gather(a, ix, 1);
let gel = gather_elements(a, [[0, 1, 2, 0], [2, 2, 1, 0]], 0);
let gell = gather_elements(a, [[3, 0], [1, 1], [2, 0]], 1);
let sce = scatter_elements(a, [[3, 0], [1, 1], [2, 0]], [[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]], 1);
let sc0 = scatter(a, [[1, 0, 2, 1]], [[7.0, 8.0, 9.0, 6.0]], 0);
let oh = onehot(ix, 4, [0.0, 1.0]);
let gnd = gather_nd(a, [[2], [0]]);
let gnd2 = gather_nd(a, [[2, 1], [0, 3]]);
let snd = scatter_nd(a, [[2], [0]], [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]);
let mu_ = mu::clamp(mu::max(a, b), -0.5, mu::min(0.5, 1.0)) + mu::sign(a);
let npy = load_npy("weights.npy");
let lib_ = lib::relu(a) + lib::sqrt(lib::abs(a)) + lib::sum(a[0]);
"""

A, B = rand(3, 4, seed=1), rand(3, 4, seed=2)
D = rand(6, dtype=np.float64, seed=3)
P = np.array([True, False, True, False, True])
Q = np.array([True, True, False, False, True])
IX = np.array([2, 0, 1], np.int32)
QA = np.random.default_rng(4).integers(-5, 5, (2, 3)).astype(np.int32)
QB = np.random.default_rng(5).integers(-5, 5, (3, 2)).astype(np.int32)
X = rand(1, 8, 2, 3, seed=6)
T = rand(2, 3, 4, seed=7)
Y = rand(2, 1, 3, 1, 2, seed=8)
NPY = np.arange(6, dtype=np.float32).reshape(2, 3)
a, b, d = A.astype(np.float64), B.astype(np.float64), D


@pytest.fixture(scope="module")
def out():
    return run_program(SOURCE, files={"weights.npy": NPY}, a=A, b=B, d=D, p=P, q=Q, ix=IX, qa=QA, qb=QB,
                       X=X, T=T, Y=Y)


erf = np.vectorize(math.erf)
FLOAT = {  # name -> (reference, dtype)
    "add_": (a + b, "f"), "sub_": (a - b, "f"), "mul_": (2 * a, "f"), "div_": (a / b, "f"),
    "pow_": (np.abs(a) ** 1.5, "f"), "sq_": (d * d, "d"), "neg_": (-a, "f"), "rec_": (1 / b, "f"),
    "sgn_": (np.sign(a), "f"), "mn_": (np.minimum(a, b), "f"), "mx_": (np.maximum(a, b), "f"),
    "sqrt_": (np.sqrt(np.abs(d)), "d"), "rsqrt_": (1 / np.sqrt(np.abs(a) + 1), "f"), "exp_": (np.exp(d), "d"),
    "log_": (np.log(np.abs(d) + 0.5), "d"), "log1p_": (np.log1p(np.abs(a)), "f"), "expm1_": (np.expm1(d), "d"),
    "fl_": (np.floor(3 * A), "f"), "ce_": (np.ceil(3 * A), "f"),
    "ro_": (np.sign(3 * d) * np.floor(np.abs(3 * d) + 0.5), "d"), "cl_": (np.clip(a, -0.5, 0.5), "f"),
    "mod_": (np.mod(A, np.float32(0.7)), "f"), "fmod_": (np.fmod(A, np.float32(0.7)), "f"),
    "sin_": (np.sin(a), "f"), "cos_": (np.cos(a), "f"), "tan_": (np.tan(0.5 * a), "f"),
    "tanh_": (np.tanh(d), "d"), "sinh_": (np.sinh(d), "d"), "cosh_": (np.cosh(d), "d"),
    "atan2_": (np.arctan2(a, b), "f"), "asin_": (np.arcsin(0.4 * a), "f"), "acos_": (np.arccos(0.4 * a), "f"),
    "atan_": (np.arctan(a), "f"), "asinh_": (np.arcsinh(d), "d"), "acosh_": (np.arccosh(np.abs(d) + 1), "d"),
    "atanh_": (np.arctanh(0.4 * d), "d"), "erf_": (erf(a), "f"), "where_": (np.where(a > b, a, b), "f"),
    "id_": (d, "d"), "const_": (2.5, "f"), "drop_": (a, "f"),
    "l2n_": (a / np.linalg.norm(a, axis=-1, keepdims=True), "f"), "cast_": (a, "d"),
    "cumsum_": (np.cumsum(a, -1), "f"), "dq_": ((IX - 1) * 0.25, "f"), "qmm_": (QA @ QB * 1.0, "f"),
    "mu_": (np.clip(np.maximum(a, b), -0.5, 0.5) + np.sign(a), "f"), "npy": (NPY, "f"),
    "lib_": (np.maximum(a, 0) + np.sqrt(np.abs(a)) + a[0].sum(), "f"),
}


@pytest.mark.parametrize("name", sorted(FLOAT))
def test_elementwise_and_utility(out, name):
    ref, kind = FLOAT[name]
    close(out[name], ref, np.float32 if kind == "f" else np.float64)


def test_predicates_comparisons_and_logic(out):
    with np.errstate(all="ignore"):
        expected = {"nan_": np.isnan(np.log(A)), "inf_": np.isinf(A / (A * 0))}
    expected.update(eq_=A == B, gt_=A > B, ge_=A >= A, lt_=A < B, le_=A <= B, ne_=A != A, not_=~P,
                    and_=P & Q, or_=P | Q, xor_=P ^ Q, lnot_=~Q)
    for name, ref in expected.items():
        assert out[name].dtype == np.bool_, name
        np.testing.assert_array_equal(out[name], ref, err_msg=name)


def test_integer_results(out):
    assert out["numel_"] == 24 and out["size_"] == 12
    np.testing.assert_array_equal(out["casti_"], np.trunc(3 * D).astype(np.int32))


def test_quantize_linear_gives_integers_in_floats_with_a_float_zero_point(out):
    # a float zero point: round(x / scale) + zero point in floats, unclamped (integer zero points:
    # test_conventions.py)
    q = np.round((40 * A).astype(np.float32) / np.float32(0.5)) + 3      # np.round: half to even
    close(out["qz_"], q)
    close(out["qz_issue"], [50.0, -25.0])


def test_slice(out):
    close(out["slice_"], T[:, 0:2, 1:4:2])
    close(out["slice0_"], T[1:2])


def test_shape_ops(out):
    close(out["resh2"], T.reshape(4, -1))
    close(out["resh4"], A.reshape(2, 1, 3, 2))
    close(out["squ"], X[0])
    close(out["unsq"], A[None, :, :, None])
    close(out["spl.0"], T[:1])
    close(out["spl.1"], T[1:])
    for k, (lo, hi) in enumerate([(0, 1), (1, 3), (3, 4)]):
        close(out[f"spl3.{k}"], A[:, lo:hi])
    close(out["expd"], np.broadcast_to(D, (2, 6)), np.float64)
    close(out["expd2"], np.broadcast_to(B[0], (3, 4)))
    np.testing.assert_array_equal(out["shp"], [2, 3, 4])


def test_shape_ops_on_higher_ranks_and_middle_axes(out):
    close(out["resh5"], T.reshape(2, 2, 3, 1, 2))
    close(out["resh0"], Y.reshape(3, 1, -1))                   # 0 keeps the input's size
    close(out["squ5"], Y[:, 0, :, 0])
    close(out["unsq5"], T[:, None, :, :, None])
    close(out["spl_mid.0"], T[:, :2])
    close(out["spl_mid.1"], T[:, 2:])
    close(out["expd4"], T * np.ones((3, 1, 3, 1), np.float32))
    close(out["slice_mid"], X[:, 2:7:2])
    close(out["gat_mid"], T[:, IX])
    close(out["gat_2d"], np.take(T, [[0, 2], [1, 1]], axis=1))


def test_gather_nd_and_scatter_nd_with_longer_index_rows(out):
    close(out["gnd3"], T[[1, 0, 1], [2, 1, 0]])
    close(out["gnd_full"], np.array([[T[1, 2, 3]], [T[0, 1, 0]]]))
    ref = T.copy()
    ref[1, 2], ref[0, 0] = [1.0, 2, 3, 4], [5.0, 6, 7, 8]
    close(out["snd2"], ref)
    ref = T.copy()
    ref[0, 0, 0], ref[1, 2, 3] = 2.0, 3.0                   # the later of two updates to [1, 2, 3] wins
    close(out["snd3"], ref)


def test_transform_ops(out):
    close(out["pad2"], np.pad(A, [(1, 2), (0, 1)], constant_values=9.0))
    close(out["pad4"], np.pad(X, [(0, 0), (0, 0), (1, 0), (2, 1)]))
    n, c, h, w = X.shape
    d2s = X.reshape(n, 2, 2, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // 4, h * 2, w * 2)
    close(out["d2s"], d2s)
    close(out["s2d"], X)            # DCR depth_to_space and space_to_depth are inverses
    np.testing.assert_array_equal(out["rng"], np.arange(2, 11, 3))
    close(out["cos_shape"], np.full((2, 3), 1.5))
    close(out["cat_"], np.concatenate([A, B]))
    close(out["tile_"], np.tile(A, (2, 3)))
    close(out["tr2"], A.T)
    close(out["tr3"], T.transpose())
    close(out["flat_"], T.reshape(2, -1))


def test_transform_ops_on_any_rank(out):
    close(out["pad3"], np.pad(T, [(1, 0), (0, 1), (2, 1)], constant_values=-1.0))
    np.testing.assert_array_equal(out["padi"], np.pad(IX, (2, 1), constant_values=7))
    close(out["tile3"], np.tile(T, (2, 1, 3)))
    close(out["tr4"], X.transpose())
    close(out["tr5"], Y.transpose())
    assert out["cos_i"].dtype == np.int32
    np.testing.assert_array_equal(out["cos_i"], np.full((2, 1, 3), 7))


def test_indexing_ops(out):
    close(out["gat0"], A[IX])
    close(out["gat1"], A[:, IX])
    close(out["gel"], np.take_along_axis(A, np.array([[0, 1, 2, 0], [2, 2, 1, 0]]), 0))
    gi = np.array([[3, 0], [1, 1], [2, 0]])
    close(out["gell"], np.take_along_axis(A, gi, 1))
    sce = A.copy()
    np.put_along_axis(sce, gi, np.array([[10.0, 20], [30, 40], [50, 60]], np.float32), 1)
    sce[1, 1] = 40.0                                            # the later duplicate wins
    close(out["sce"], sce)
    sc0 = A.copy()
    sc0[[1, 0, 2, 1], [0, 1, 2, 3]] = [7.0, 8, 9, 6]
    close(out["sc0"], sc0)
    close(out["oh"], np.eye(4)[IX])
    close(out["gnd"], A[[2, 0]])
    close(out["gnd2"], A[[2, 0], [1, 3]])
    snd = A.copy()
    snd[[2, 0]] = [[1.0, 2, 3, 4], [5, 6, 7, 8]]
    close(out["snd"], snd)


def test_expand_to_a_named_size():
    """expand(bias, [R, C]) with R a named dim compared R with 1 and so chose at run time between
    two shapes, an E004 inside the library (found by the hold-out program scatter_gather_ops):
    an axis of length 1 now always takes the size asked for, a literal 1 included."""
    out = run_program("use std::ml::expand;\nlet M: [f32; R, C];\nlet b: [f32; C];\nlet c: [f32; R, 1];\n"
                      "let y = M + expand(b, [R, C]);\nlet z = expand(c, [R, C]);\nlet same = expand(b, [1, C]);\n",
                      M=A, b=A[0], c=A[:, :1])
    close(out["y"], A + A[0])
    close(out["z"], np.broadcast_to(A[:, :1], A.shape))
    close(out["same"], A[:1])
