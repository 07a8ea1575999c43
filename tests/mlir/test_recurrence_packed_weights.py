"""Weights a step reads across its lanes (`W[i, j]` in a clause along i), packed once before the
step loop with their last two axes swapped, so each lane's sum runs in order in several
accumulators (recurrence_packed_weights, recurrence_lanes.sum_layout): against NumPy at sizes
that leave every part of the row (chunks of several vectors, single vectors, scalar points) and
of the sum (whole rounds of interleaved accumulators, the rest) something to do."""

import numpy as np
import pytest

import einc
from einc.mlir.recurrences import lanes as recurrence_lanes
from tests.programs import built, source
from tests.tiers import GENERIC_FULL

rng = np.random.default_rng(57)

RNN = source("rnn_steps")

# a batch of sequences, one gate of a stack of weights, a guarded sum
BATCHED = """
    let U: [f32; 2, H, H];
    let x: [f32; T, N, H];
    let h[0, n in 0..N, i in 0..H] = 0.0;
    let h[t in 1..T, n in 0..N, i in 0..H] =
        { let s = sum[j](U[1, i, j] * h[t - 1, n, j]) where j != i + 1; 0.5 * s + x[t, n, i] };
"""

LINEAR_F64 = """
    let W: [f64; H, H];
    let x: [f64; T, H];
    let h[0, i in 0..H] = 0.0 as f64;
    let h[t in 1..T, i in 0..H] = 0.5 * sum[j](W[i, j] * h[t - 1, j]) + x[t, i];
"""


def run(source: str, target: str = "llvm-cpu", dims=None, **inputs) -> dict:
    """The sizes here are run-time sizes (but one): one build serves every parametrization."""
    with einc.load(built(source, target, dims=dims).vmfb) as program:
        return program(**inputs)


def weights(*shape, dtype=np.float32) -> np.ndarray:
    return (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(dtype)


@pytest.fixture(params=["avx512", "avx2"])
def unit(request, monkeypatch):
    """The host's vector unit as the sum layout sees it (the MLIR only: nothing is compiled)."""
    monkeypatch.setattr(recurrence_lanes, "vector_unit", lambda: request.param)
    return request.param


def test_an_rnn_step_reads_packed_weights_along_its_lanes(emitted, unit):
    text = emitted(RNN, "llvm-cpu")
    assert text.count("linalg.transpose") == 1          # once, before the step loop's dispatch
    assert "vector.shuffle" not in text                 # no transpose tree of partial sums
    assert "vector<64xf32>" in text                     # eight vectors of lanes per chunk


def test_a_step_streaming_its_matrices_reads_them_packed_on_avx512_only(emitted, unit):
    # a GRU's three matrices, read in alternating order (recurrence_alternate): on a Zen 3 the
    # packed copies' strips of each row were slower from L3 than the rows read whole
    assert emitted(source("gru"), "llvm-cpu").count("linalg.transpose") == (3 if unit == "avx512" else 0)


def test_sums_along_weights_as_they_are_take_four_vectors_on_avx2(emitted, unit):
    # an LSTM's U[q, j, i] runs along its lanes unpacked: 8 vectors at once were slower on a Zen 3
    text = emitted(source("lstm"), "llvm-cpu")
    assert ("vector<64xf32>" in text) == (unit == "avx512")
    assert ("vector<32xf32>" in text) == (unit == "avx2")


def test_only_the_sums_that_read_a_packed_copy_take_its_chains(emitted, unit):
    # the RNN gradient's forward step reads W packed, its adjoint step W[i, j] along j as it is:
    # on AVX2 the adjoint's sums keep 4 vectors (with 8 the gradient ran 2x slower on a Zen 3)
    text = emitted(source("rnn_gradient"), "llvm-cpu")
    assert text.count("linalg.transpose") == 1
    assert "vector<64xf32>" in text
    assert ("vector<32xf32>" in text) == (unit == "avx2")


def test_the_portable_target_keeps_the_weights_as_they_are(emitted):
    assert "linalg.transpose" not in emitted(RNN, "llvm-cpu-generic")


@pytest.mark.parametrize("H, dims", [(5, None), (8, None), (61, None), (64, None), (77, None), (139, None),
                                     (77, {"H": 77})])
def test_rnn_matches_numpy(H, dims):
    # 61: vectors of 8 and 5 points; 77: a chunk of 64 (or 32), a vector, 5 points and a sum of
    # 19 rounds of 4 and 1 more; 139: two chunks of 64, a vector, 3 points
    T = 7
    W, x = weights(H, H), rng.standard_normal((T, H)).astype(np.float32)
    h = np.zeros((T, H))
    for t in range(1, T):
        h[t] = np.tanh(W.astype(np.float64) @ h[t - 1] + x[t])
    np.testing.assert_allclose(run(RNN, dims=dims, W=W, x=x)["h"], h, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("N, H", [(1, 9), (3, 45), (4, 8), (9, 66)])
def test_a_batched_step_with_a_gate_of_stacked_weights_and_a_guard_matches_numpy(N, H):
    # N = 9: two tiles of 4 rows and one row alone (AVX-512); 66: a chunk of 64 and 2 points
    T = 6
    U, x = weights(2, H, H), rng.standard_normal((T, N, H)).astype(np.float32)
    mask = np.ones((H, H))
    for i in range(H - 1):
        mask[i, i + 1] = 0.0                            # the guard j != i + 1
    h = np.zeros((T, N, H))
    for t in range(1, T):
        h[t] = 0.5 * h[t - 1] @ (U[1].astype(np.float64) * mask).T + x[t]
    np.testing.assert_allclose(run(BATCHED, U=U, x=x)["h"], h, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_an_f64_step_matches_numpy(target):
    H, T = 37, 8                                        # f64: vectors of 4
    W, x = weights(H, H, dtype=np.float64), rng.standard_normal((T, H))
    h = np.zeros((T, H))
    for t in range(1, T):
        h[t] = 0.5 * W @ h[t - 1] + x[t]
    np.testing.assert_allclose(run(LINEAR_F64, target, W=W, x=x)["h"], h, rtol=1e-12, atol=1e-12)


def test_a_rank_one_read_at_a_computed_index_in_lanes_matches_numpy():
    # x2[j % 3] reads across the lanes and has no packed copy (no last two axes to swap)
    source = """
        let x1: [f32; T];
        let x2: [f32; 5];
        let r[0, j in 0..T] = x1[j];
        let r[t in 1..4, j in 0..T] = 0.5 * r[t - 1, j] + x2[j % 3];
    """
    x1, x2 = rng.standard_normal(11).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    r = [x1.astype(np.float64)]
    for _ in range(3):
        r.append(0.5 * r[-1] + x2[np.arange(11) % 3])
    np.testing.assert_allclose(run(source, x1=x1, x2=x2)["r"], np.array(r), rtol=1e-6, atol=1e-6)


# the step loop of z runs h's loop in its body and packs W there; c's loop, after it, packs its own
PACKED_IN_A_STEP = """
    let W: [f64; H, H];
    let b: [f64; H];
    fn run(x0) {
        let h[0] = x0;
        let h[k in 1..4, i in 0..H] = 0.5 * sum[j](W[i, j] * h[k - 1, j]);
        h[3]
    }
    let z[0] = b;
    let z[t in 1..3] = z[t - 1] + run(z[t - 1]);
    let c[t in 0..3] = run(z[t]);
"""


def test_a_copy_packed_inside_a_step_loop_is_not_read_after_it():
    W, b = weights(5, 5, dtype=np.float64), rng.standard_normal(5)
    def run_np(x):
        for _ in range(3):
            x = 0.5 * W @ x
        return x
    z = [b]
    for _ in range(2):
        z.append(z[-1] + run_np(z[-1]))
    out = run(PACKED_IN_A_STEP, W=W, b=b)
    np.testing.assert_allclose(out["z"], np.array(z), rtol=1e-12)
    np.testing.assert_allclose(out["c"], np.array([run_np(v) for v in z]), rtol=1e-12)
