"""Reductions inside recurrence steps in vector lanes (llvm-cpu): which bodies get vectors, and
values against NumPy loops at sizes that exercise every part of the lane loop (blocks of four
vectors, single vectors, the scalar rest)."""

import numpy as np
import pytest

import einc
from tests.programs import built, source

rng = np.random.default_rng(41)

RNN = source("rnn_steps")


def run(source: str, **inputs) -> dict:
    """The sizes here are run-time sizes: one build serves every parametrization."""
    return einc.load(built(source).vmfb)(**inputs)


def rnn_numpy(W, x, transpose=False):
    h = np.zeros((len(x), W.shape[0]))
    for t in range(1, len(x)):
        h[t] = np.tanh((W.T if transpose else W).astype(np.float64) @ h[t - 1] + x[t])
    return h


def test_an_rnn_step_computes_rows_and_their_sums_in_lanes(emitted):
    text = emitted(RNN, "llvm-cpu-generic")
    assert "vector.transfer_write" in text              # eight rows of h stored at once
    assert "vector.transfer_read" in text and "vector.shuffle" in text   # rows of W, summed by a transpose
    assert "linalg.transpose" not in text               # one accumulator per vector: W is not packed


def test_vulkan_keeps_scalar_reductions(emitted):
    assert "vector." not in emitted(RNN, "vulkan-spirv")


@pytest.mark.parametrize("H", [7, 8, 37, 45, 64])
def test_rnn_matches_numpy_for_every_split_of_the_lane_loop(H):
    # 37 = one block of 32 + 5 scalar points; 45 = a block, one vector, 5 points; 7 = scalar only
    T = 12
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    x = rng.standard_normal((T, H)).astype(np.float32)
    out = run(RNN, W=W, x=x)
    np.testing.assert_allclose(out["h"], rnn_numpy(W, x), rtol=1e-5, atol=1e-5)


def test_a_column_read_sums_each_lane_in_order(emitted):
    source = RNN.replace("W[i, j]", "W[j, i]")             # h W instead of W h
    text = emitted(source)
    assert "vector.transfer_write" in text and "vector.shuffle" not in text
    H, T = 20, 6
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    x = rng.standard_normal((T, H)).astype(np.float32)
    np.testing.assert_allclose(run(source, W=W, x=x)["h"], rnn_numpy(W, x, transpose=True), rtol=1e-5, atol=1e-5)


def test_a_clause_reading_its_own_step_keeps_scalar_points(emitted):
    source = """
        let a: [f32; N];
        let s[0, j in 0..N] = a[j];
        let s[t in 1..5, 0] = s[t - 1, 0];
        let s[t in 1..5, j in 1..N] = s[t, j - 1] + s[t - 1, j];
    """
    assert emitted(source).count("vector.transfer_write") == 1    # the first row only
    a = rng.standard_normal(30).astype(np.float32)
    ref = [a]
    for _ in range(4):
        ref.append(np.cumsum(ref[-1], dtype=np.float32))
    np.testing.assert_allclose(run(source, a=a)["s"], np.array(ref), rtol=1e-5, atol=1e-5)


def test_a_guarded_integer_sum_with_the_lane_coordinate_and_a_float_max_are_exact(emitted):
    source = """
        let A: [i32; N, N];
        let v: [f32; N];
        let w: [f32; N];
        let c[0, i in 0..N] = i;
        let c[t in 1..6, i in 0..N] = sum[j](A[i, j] * c[t - 1, j] + j) where j % 3 != 1;
        let m[0, i in 0..N] = v[i];
        let m[t in 1..6, i in 0..N] = max[j](m[t - 1, j] - v[j] - w[j]) + 0.5;
    """
    text = emitted(source)
    assert "vector.reduction <add>" in text and "vector.reduction <maximumf>" in text
    N = 43
    A = rng.integers(-2, 3, (N, N)).astype(np.int32)
    v = rng.standard_normal(N).astype(np.float32)
    w = rng.standard_normal(N).astype(np.float32)
    out = run(source, A=A, v=v, w=w)
    keep = np.arange(N) % 3 != 1
    c, m = [np.arange(N)], [v]
    for _ in range(5):
        c.append((A * c[-1] + np.arange(N))[:, keep].sum(axis=1))
        m.append(np.full(N, np.max(m[-1] - v - w) + np.float32(0.5)))
    np.testing.assert_array_equal(out["c"], np.array(c))
    np.testing.assert_array_equal(out["m"], np.array(m))


def test_windowed_matrix_state_sums_each_lane_in_order(emitted):
    source = """
        let A: [f32; N, N];
        let M[0, i in 0..N, j in 0..N] = if i == j { 1.0 } else { 0.0 };
        let M[t in 1..7, i in 0..N, j in 0..N] = sum[k](A[i, k] * M[t - 1, k, j]);
        let final[i, j] = M[6, i, j];
    """
    text = emitted(source, outputs=["final"])
    assert "tensor<2x?x?xf32>" in text and "vector.transfer_write" in text and "vector.shuffle" not in text
    A = (rng.standard_normal((12, 12)) * 0.4).astype(np.float32)
    out = einc.load(einc.compile(source, outputs=["final"]).vmfb)(A=A)
    np.testing.assert_allclose(out["final"], np.linalg.matrix_power(A.astype(np.float64), 6), rtol=1e-4, atol=1e-5)


def test_sums_along_the_lanes_take_several_vectors_at_once(emitted):
    # h U (U read along i): each lane's sum runs in order, four vectors of lanes per chunk
    source = RNN.replace("W[i, j]", "W[j, i]")
    assert "vector<32xf32>" in emitted(source, "llvm-cpu-generic")
    assert "vector<32xf32>" not in emitted(RNN, "llvm-cpu-generic")     # W h sums across the lanes


@pytest.mark.parametrize("H", [31, 32, 45, 77])
def test_sums_along_the_lanes_match_numpy_for_every_split_of_the_row(H):
    # 31: vectors of 8 and 7 points; 45: a chunk of 32, one vector, 5 points; 77: two chunks, 13 left
    source = RNN.replace("W[i, j]", "W[j, i]")
    T = 9
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    x = rng.standard_normal((T, H)).astype(np.float32)
    np.testing.assert_allclose(run(source, W=W, x=x)["h"], rnn_numpy(W, x, transpose=True), rtol=1e-5, atol=1e-5)


def test_an_rnn_step_stores_every_sum_of_a_row_before_its_activations(emitted):
    bare = RNN.replace("tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i])", "sum[j](W[i, j] * h[t - 1, j])")
    # one more loop over the row: the sums, stored where h[t] goes, then tanh(sum + x) in place
    assert emitted(RNN, "llvm-cpu-generic").count("vector.transfer_write") == \
        emitted(bare, "llvm-cpu-generic").count("vector.transfer_write") + 1


@pytest.mark.parametrize("H", [7, 13, 45])
def test_a_sum_read_twice_and_two_sums_in_one_step_match_numpy(H):
    # the first splits off its one sum (read twice); the second has two sums and stays one loop
    source = """
        use std::math::abs;
        let W: [f32; H, H];
        let V: [f32; H, H];
        let x: [f32; T, H];
        let h[0, i in 0..H] = 0.0;
        let h[t in 1..T, i in 0..H] = { let s = sum[j](W[i, j] * h[t - 1, j]); s / (1.0 + abs(s)) + x[t, i] };
        let g[0, i in 0..H] = 0.0;
        let g[t in 1..T, i in 0..H] = sum[j](W[i, j] * g[t - 1, j]) * 0.5 - sum[j](V[i, j] * g[t - 1, j]) * 0.25 + x[t, i];
    """
    T = 9
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    V = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    x = rng.standard_normal((T, H)).astype(np.float32)
    out = run(source, W=W, V=V, x=x)
    h, g = np.zeros((T, H)), np.zeros((T, H))
    for t in range(1, T):
        s = W.astype(np.float64) @ h[t - 1]
        h[t] = s / (1 + np.abs(s)) + x[t]
        g[t] = 0.5 * (W.astype(np.float64) @ g[t - 1]) - 0.25 * (V.astype(np.float64) @ g[t - 1]) + x[t]
    np.testing.assert_allclose(out["h"], h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["g"], g, rtol=1e-5, atol=1e-5)


def test_the_rnn_with_its_sums_split_off_matches_numpy_on_llvm_cpu_generic():
    H, T = 13, 8
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    x = rng.standard_normal((T, H)).astype(np.float32)
    out = einc.load(einc.compile(RNN, target="llvm-cpu-generic").vmfb)(W=W, x=x)
    np.testing.assert_allclose(out["h"], rnn_numpy(W, x), rtol=1e-5, atol=1e-5)
