"""Findings of the stdlib fuzzer (fuzz/stdlib, docs/FUZZING.md), reduced: each call once
disagreed with its ONNX meaning or was refused; NumPy references, exact (these calls only move
data)."""
import einc
import numpy as np
import pytest

from stdlib_harness import run_program
from tests.programs import built
from tests.tiers import GENERIC_FULL

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


ONEHOTS = """
let I64: [i64; 2, N];
let I32: [i32; 3];
let onehot_i64 = std::ml::onehot(I64, 3, [0.0, 1.0]);
let onehot_i32 = std::ml::onehot(I32, 4, [-1.0, 2.5]);
"""


def onehot_like_onnx(indices, depth, off, on):
    counted = np.where(indices < 0, indices + depth, indices)
    return np.where(counted[..., None] == np.arange(depth), on, off)


def test_onehot_takes_i64_indices_and_counts_negative_ones_from_the_end():
    """ONNX OneHot's indices are i32 or i64 and a negative one counts from the end (-1 is the
    last class); einc compared i64 indices with its i32 class index (E002 inside the library)
    and never set a negative index's class. I64 has -5 and 4, outside -3..2: all off."""
    indices = np.array([[-1, 0, 2, -3, 4], [1, -2, -5, 0, 3]], np.int64)
    out = run_program(ONEHOTS, I64=indices, I32=I32)
    np.testing.assert_array_equal(out["onehot_i64"], onehot_like_onnx(indices, 3, 0.0, 1.0))
    np.testing.assert_array_equal(out["onehot_i32"], onehot_like_onnx(I32, 4, -1.0, 2.5))


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


# The scatters and the N-d gathers, as the stdlib campaign draws them since branch fuzz8. The
# meanings are written here from the ONNX operators, a write or read per index position.
def scatter_elements_onnx(data, indices, updates, axis):
    out = data.copy()
    for p in np.ndindex(*indices.shape):
        at = list(p)
        at[axis] = indices[p] % data.shape[axis]
        out[tuple(at)] = updates[p]
    return out


def scatter_nd_onnx(data, indices, updates):
    out = data.copy()
    for p in np.ndindex(*indices.shape[:-1]):
        out[tuple(indices[p] % data.shape[:indices.shape[-1]])] = updates[p]
    return out


SCATTERS = """
let D: [f32; 2, 3, 4];
let E: [i64; 2, 3, 2];
let UE: [f32; 2, 3, 2];
let S: [i32; 1, 2, 3];
let U: [f32; 1, 2, 3];
let G: [i64; 2, 2, 3];
let R1: [i32; 2];
let U1: [f32; 4];
let R3: [i64; 2, 2, 3];
let U3: [f32; 2, 2];
let K1: [i32; 2, 1];
let DN: [f32; N, 3];
let IK: [i32; K, 2];
let UK: [f32; K, 2];
let scatter_negative = std::ml::scatter_elements(D, E, UE, -1);
let scatter_shorter = std::ml::scatter(D, S, U, 1);
let gather_shorter = std::ml::gather_elements(D, G, -2);
let scatter_nd_rank_1 = std::ml::scatter_nd(D, R1, U1);
let scatter_nd_rank_3 = std::ml::scatter_nd(D, R3, U3);
let gather_nd_one_axis = std::ml::gather_nd(D, K1);
let scatter_nd_one_axis = std::ml::scatter_nd(D, K1, -D);
let scatter_named = std::ml::scatter_elements(DN, IK, UK, 1);
let gather_named = std::ml::gather_elements(DN, IK, 1);
"""

R = np.random.default_rng(8)
SCATTER_INPUTS = dict(
    D=D[:2], E=R.integers(-4, 4, (2, 3, 2)).astype(np.int64), UE=R.uniform(-9, 9, (2, 3, 2)).astype(np.float32),
    S=np.array([[[-1, 0, 1], [1, -2, -1]]], np.int32), U=R.uniform(-9, 9, (1, 2, 3)).astype(np.float32),
    G=R.integers(-3, 3, (2, 2, 3)).astype(np.int64), R1=np.array([-1, 2], np.int32),
    U1=R.uniform(-9, 9, 4).astype(np.float32),
    R3=np.array([[[1, -1, 3], [0, 0, -4]], [[-1, 2, 3], [1, 0, 1]]], np.int64),
    U3=R.uniform(-9, 9, (2, 2)).astype(np.float32), K1=np.array([[-1], [0]], np.int32),
    DN=R.uniform(-9, 9, (4, 3)).astype(np.float32), IK=np.array([[2, -3], [-1, 0]], np.int32),
    UK=R.uniform(-9, 9, (2, 2)).astype(np.float32))


@pytest.mark.full
def test_scatters_and_nd_gathers_follow_onnx():
    """ScatterElements with negative indices (an index error in einc: its scatters took indices
    in range), indices and updates shorter than the data on the other axes too (E004, as
    GatherElements' shorter indices), also over named dims; ScatterND with index rows of rank 1
    or 3 (E004: it took [U, k] only); GatherND and ScatterND with rows of one entry on 3-d data
    (E004: the merged axis came back in the wrong place)."""
    i = SCATTER_INPUTS
    out = run_program(SCATTERS, **i)
    d = i["D"]
    want = {
        "scatter_negative": scatter_elements_onnx(d, i["E"], i["UE"], 2),
        "scatter_shorter": scatter_elements_onnx(d, i["S"], i["U"], 1),
        "gather_shorter": np.take_along_axis(d[:, :, :3], i["G"] % 3, axis=1),
        "scatter_nd_rank_1": scatter_nd_onnx(d, i["R1"], i["U1"]),
        "scatter_nd_rank_3": scatter_nd_onnx(d, i["R3"], i["U3"]),
        "gather_nd_one_axis": d[i["K1"][:, 0]],
        "scatter_nd_one_axis": scatter_nd_onnx(d, i["K1"], -d),
        "scatter_named": scatter_elements_onnx(i["DN"], i["IK"], i["UK"], 1),
        "gather_named": np.take_along_axis(i["DN"][:2], i["IK"] % 3, axis=1),
    }
    for name, value in want.items():
        assert out[name].dtype == np.float32, name
        np.testing.assert_array_equal(out[name], value, err_msg=name)


MVN = """
let V: [f64; N];
let X: [f32; N, N, M, 2];
let mvn_vector = std::ml::mean_variance_normalization(V, [0]);
let mvn_all = std::ml::mean_variance_normalization(X, [0, 1, 2, 3]);
let mvn_some = std::ml::mean_variance_normalization(X, [1, 3]);
"""


def test_mean_variance_normalization_over_named_dims():
    """ONNX MeanVarianceNormalization over axes of run-time size was E004 (its statistics were
    broadcast with `expand`, which compares sizes with 1 at build time)."""
    v = np.random.default_rng(1).uniform(-2, 2, 4)
    x = np.random.default_rng(2).uniform(-2, 2, (4, 4, 3, 2)).astype(np.float32)
    out = run_program(MVN, V=v, X=x)

    def mvn(a, axes):
        a = a.astype(np.float64)
        centred = a - a.mean(axis=axes, keepdims=True)
        return centred / np.sqrt((centred ** 2).mean(axis=axes, keepdims=True) + 1e-9)
    np.testing.assert_allclose(out["mvn_vector"], mvn(v, (0,)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out["mvn_all"], mvn(x, (0, 1, 2, 3)), rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(out["mvn_some"], mvn(x, (1, 3)), rtol=2e-5, atol=2e-5)
    assert out["mvn_vector"].dtype == np.float64 and out["mvn_all"].dtype == np.float32


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


MERGED_AXES = """
let A: [f32; M, N];
let B: [f32; P, Q];
let D: [f32; R, S, T];
let I: [i64; K, 2];
let k = std::ml::kron(A, B);
let g = std::ml::gather_nd(D, I);
"""


def test_kron_and_gather_nd_over_named_dims():
    """Their merged sizes are products of run-time sizes (M * P, and the rows of I): both were
    E004 (a range bound must be affine in the sizes) before products of sizes were sizes."""
    rng = np.random.default_rng(3)
    module = einc.load(built(MERGED_AXES).vmfb)
    for m, n, r in ((2, 3, 3), (1, 4, 2)):
        a, b = rng.uniform(-1, 1, (m, n)).astype(np.float32), rng.uniform(-1, 1, (n, m + 2)).astype(np.float32)
        d = rng.uniform(-1, 1, (r, 4, 5)).astype(np.float32)
        i = np.stack([rng.integers(0, r, 6), rng.integers(-4, 4, 6)], axis=1).astype(np.int64)
        out = module(A=a, B=b, D=d, I=i)
        np.testing.assert_array_equal(out["k"], np.kron(a, b))
        np.testing.assert_array_equal(out["g"], d[i[:, 0], i[:, 1]])


STRIDED_THEN_BACKWARDS = """
let X: [f32; 4, 1, 5];
let y = std::ml::slice(X, [-3, -1], [1000, -5], [-3, -1], [2, -2]);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_slice_with_a_step_and_then_a_negative_step(target):
    """A step of 2 on one axis, then -2 on another, of a fixed-size tensor failed to compile on
    the CPU targets (IREE-105: the second slice gathers from the first's strided window)."""
    x = np.random.default_rng(6).uniform(-1, 1, (4, 1, 5)).astype(np.float32)
    out = run_program(STRIDED_THEN_BACKWARDS, target=target, X=x)
    np.testing.assert_array_equal(out["y"], x[-3:1000:2, :, -1:-5:-2])


SCATTER_ND_NAMED = """
let D: [f32; R, S, T];
let I1: [i32; L, 1];
let U1: [f32; L, S, T];
let I2: [i64; K, 2];
let U2: [f32; K, T];
let I3: [i64; 2, J, 3];
let U3: [f32; 2, J];
let one = std::ml::scatter_nd(D, I1, U1);
let two = std::ml::scatter_nd(D, I2, U2);
let three = std::ml::scatter_nd(D, I3, U3);
"""


@pytest.mark.full
def test_scatter_nd_over_named_dims():
    """ScatterND merges the axes its index rows address into one and splits them back after the
    writes; over named dims the split (a reshape, whose sizes were quotients of sizes) was E004.
    One build, index rows of 1, 2 and 3 entries (negative ones, duplicates), two sets of sizes."""
    rng = np.random.default_rng(9)
    module = einc.load(built(SCATTER_ND_NAMED).vmfb)
    for r, s, t in ((3, 2, 4), (1, 3, 2)):
        d = rng.uniform(-1, 1, (r, s, t)).astype(np.float32)
        i1 = rng.integers(-r, r, (4, 1)).astype(np.int32)
        i2 = np.stack([rng.integers(-r, r, 5), rng.integers(-s, s, 5)], axis=1).astype(np.int64)
        i3 = np.stack([rng.integers(-n, n, (2, 3)) for n in (r, s, t)], axis=-1).astype(np.int64)
        u1, u2, u3 = (rng.uniform(-9, 9, shape).astype(np.float32) for shape in ((4, s, t), (5, t), (2, 3)))
        out = module(D=d, I1=i1, U1=u1, I2=i2, U2=u2, I3=i3, U3=u3)
        np.testing.assert_array_equal(out["one"], scatter_nd_onnx(d, i1, u1))
        np.testing.assert_array_equal(out["two"], scatter_nd_onnx(d, i2, u2))
        np.testing.assert_array_equal(out["three"], scatter_nd_onnx(d, i3, u3))


def test_cholesky_of_a_two_by_two_matrix():
    """Stdlib seed 5 program 26: std::ml::cholesky of a 2 x 2 input was E007 "`L` is read only
    at steps ahead": in its `j < i` branch `sum[k in 0..j](L[i, k] * L[j, k])` runs only at
    i = 1, j = 0, an empty range, so the read's bounds contradict each other and no point makes
    it. NumPy's factor is the reference; a 1 x 1 and a 3 x 3 input around it."""
    source = """
        let A2: [f64; 2, 2];
        let A1: [f64; 1, 1];
        let A3: [f64; 3, 3];
        let L2 = std::ml::cholesky(A2);
        let L1 = std::ml::cholesky(A1);
        let L3 = std::ml::cholesky(A3);
    """
    rng = np.random.default_rng(26)
    spd = {n: (lambda m: m @ m.T + n * np.eye(n))(rng.uniform(-1, 1, (n, n))) for n in (1, 2, 3)}
    out = run_program(source, A1=spd[1], A2=spd[2], A3=spd[3])
    for n in (1, 2, 3):
        np.testing.assert_allclose(out[f"L{n}"], np.linalg.cholesky(spd[n]), rtol=1e-12, atol=1e-12)
