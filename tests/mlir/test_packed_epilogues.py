"""Elementwise consumers of a data-tiled contraction whose other operands IREE cannot pack
(einc/mlir/dense/packed_epilogues.py): a bool mask (IREE-98) and a reduction over two loops
(IREE-99). Each program failed to compile on the CPU targets; now its values are NumPy's."""
import numpy as np
import pytest

import einc
from tests.tiers import GENERIC_FULL

rng = np.random.default_rng(98)
CPU = ["llvm-cpu", GENERIC_FULL]


def run(src: str, target: str, outputs: list[str], **inputs) -> dict:
    with einc.load(einc.compile(src, target=target, outputs=outputs).vmfb) as program:
        return program(**inputs)


MASKED = {
    "matmul": ("""
        let keep: [bool; N, J];
        let A: [f32; N, C];
        let W: [f32; C, J];
        let g[n, j] = sum[c](A[n, c] * W[c, j]);
        let m[n, j] = if keep[n, j] { g[n, j] } else { 0.0 };
    """, {"keep": (5, 7), "A": (5, 6), "W": (6, 7)}, lambda A, W: A @ W),
    "batch_matmul": ("""
        let keep: [bool; 2, 8, 8];
        let A: [f32; 2, 8, 8];
        let W: [f32; 2, 8, 8];
        let g[b, n, j] = sum[c](A[b, n, c] * W[b, c, j]);
        let m[b, n, j] = if keep[b, n, j] { g[b, n, j] } else { 0.0 };
    """, {"keep": (2, 8, 8), "A": (2, 8, 8), "W": (2, 8, 8)}, lambda A, W: A @ W),
    "matvec": ("""
        let keep: [bool; 8];
        let A: [f32; 8, 8];
        let W: [f32; 8];
        let g[n] = sum[c](A[n, c] * W[c]);
        let m[n] = if keep[n] { g[n] } else { 0.0 };
    """, {"keep": (8,), "A": (8, 8), "W": (8,)}, lambda A, W: A @ W),
}


@pytest.mark.parametrize("target", CPU)
@pytest.mark.parametrize("op", list(MASKED))
def test_a_contraction_masked_by_a_bool_input(op, target):
    """IREE-98: the mask was packed beside the contraction's result with an i8 padding value
    ("'linalg.pack' op expected padding_value has 'i8' but got: 'i1'"), or loaded from the
    packed buffer as i8; the result now passes a barrier before the mask."""
    src, shapes, product = MASKED[op]
    x = {name: (rng.random(s) < 0.6) if name == "keep" else rng.standard_normal(s).astype(np.float32)
         for name, s in shapes.items()}
    got = run(src, target, ["m"], **x)["m"]
    want = np.where(x["keep"], product(x["A"].astype(np.float64), x["W"].astype(np.float64)), 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", CPU)
@pytest.mark.parametrize("combine", ["c[v, d] * b[v, d]", "c[v, d] + 2.0 * b[v, d]"])
def test_a_reduction_over_two_loops_beside_a_matmul(combine, target):
    """IREE-99 (llvm-cpu on AVX2 and AVX-512 hosts): the reduction's pack, fused into its
    dispatch, gave vectors of 8x8x8x8 ("One or more operations with large vector sizes (16384
    bytes)"; 32768 on an AVX-512 EPYC); it now passes a barrier first. On llvm-cpu-generic it
    compiled before too: there the test checks the values."""
    src = f"""
        let A: [f32; 8, 8];
        let W: [f32; 8, 8];
        let M: [f32; 8, 8];
        let G: [f32; 8, 8];
        let H: [f32; 8, 8];
        let b[v, d] = sum[t, e](A[t, e] * W[d, e] * M[v, t]);
        let c[v, d] = sum[t](G[t, v] * H[t, d]);
        let out[v, d] = {combine};
    """
    x = {name: rng.standard_normal((8, 8)).astype(np.float32) for name in "AWMGH"}
    got = run(src, target, ["out"], **x)["out"]
    d = {name: v.astype(np.float64) for name, v in x.items()}
    b = np.einsum("te,de,vt->vd", d["A"], d["W"], d["M"])
    c = d["G"].T @ d["H"]
    np.testing.assert_allclose(got, c * b if "*" in combine.split("+")[0] else c + 2 * b, rtol=1e-4, atol=1e-4)


TIED_EMBEDDINGS = """
    use std::ml::log_softmax;
    let ids: [i32; T];
    let tgt: [i32; T];
    let E: [f32; V, D];
    let W: [f32; D, D];
    let h[t, e] = sum[d](E[ids[t], d] * W[d, e]);
    let z[t, v] = sum[e](h[t, e] * E[v, e]);
    let lp = log_softmax(z);
    let L = -sum[t](lp[t, tgt[t]]) / (len(ids) as f32);
    let gE = @L / @E;
"""


@pytest.mark.parametrize("target", CPU)
def test_the_gradient_of_tied_embeddings(target):
    """E embeds the tokens and scores them (`z = h E^T`): its gradient adds the scores' matmul
    to the sum over tokens and features of the embedding's read through `ids` (IREE-99)."""
    ids, tgt = np.array([0, 2, 5, 2], np.int32), np.array([2, 5, 2, 1], np.int32)
    E, W = (rng.standard_normal(s).astype(np.float32) * 0.5 for s in ((6, 4), (4, 4)))
    got = run(TIED_EMBEDDINGS, target, ["gE"], ids=ids, tgt=tgt, E=E, W=W)["gE"]
    e, w = E.astype(np.float64), W.astype(np.float64)
    h = e[ids] @ w
    z = h @ e.T
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    dz = (p - np.eye(6)[tgt]) / len(ids)             # d L / d z
    want = dz.T @ h                                   # through the scores
    np.add.at(want, ids, dz @ e @ w.T)                # through the embedding of each token
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


DROPOUT = """
    let X: [f32; N, D];
    let keep: [bool; N, H];
    let W1: [f32; D, H];
    let W2: [f32; H, C];
    let a[n, j] = sum[d](X[n, d] * W1[d, j]);
    let h[n, j] = if keep[n, j] && a[n, j] > 0.0 { 2.0 * a[n, j] } else { 0.0 };
    let z[n, c] = sum[j](h[n, j] * W2[j, c]);
    let L = sum[n, c](z[n, c] * z[n, c]);
    let gW1 = @L / @W1;
"""


@pytest.mark.parametrize("target", CPU)
def test_the_gradient_through_a_dropout_mask(target):
    """A ReLU layer with a bool dropout mask (kept units doubled): its gradient multiplies a
    matmul's result by the mask (IREE-98)."""
    X, W1, W2 = (rng.standard_normal(s).astype(np.float32) for s in ((5, 4), (4, 6), (6, 3)))
    keep = rng.random((5, 6)) < 0.7
    got = run(DROPOUT, target, ["gW1"], X=X, keep=keep, W1=W1, W2=W2)["gW1"]
    x, w1, w2 = (v.astype(np.float64) for v in (X, W1, W2))
    a = x @ w1
    on = keep & (a > 0)
    z = np.where(on, 2 * a, 0) @ w2
    want = x.T @ np.where(on, 2 * (2 * z @ w2.T), 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
