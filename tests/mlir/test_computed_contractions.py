"""Contractions that read an operand backwards (operand_views.reversed_view) or whose operands are
computed (einc/mlir/dense/computed_operands.py) are named ops: `sum[t](A[T - 1 - t, i] * B[t, j])`
reads A reversed, and `sum[t](A[.., i] * (1 - B[t, i]^2) * B[t - 1, j])` contracts its two groups
of factors, each computed once. Values match NumPy on llvm-cpu and vulkan-spirv, with run-time
sizes, and the RNN weight gradient (whose dW sum is such a contraction) matches central
differences of the loss."""
import re

import numpy as np
import pytest

import einc
from tests.tiers import GENERIC_FULL, VULKAN_FULL

SOURCE = """
use std::math::exp;
let A: [f32; T, M];
let B: [f32; T, N];
let C: [f32; T, M];
// read backwards over the whole axis, and backwards at an offset beside a forward offset
let rev[i in 0..M, j in 0..N] = sum[t in 0..T](A[T - 1 - t, i] * B[t, j]);
let shifted[i in 0..M, j in 0..N] = sum[t in 0..T - 2](A[T - 2 - t, i] * B[t + 1, j]);
// computed operands: an RNN's weight gradient, and a scale over no variable joining a group
let grad[i in 0..M, j in 0..M] = sum[t in 1..T](A[T - 1 - t, i] * (1.0 - C[t, i] * C[t, i]) * C[t - 1, j]);
let scaled[i in 0..N, j in 0..M] = sum[t in 0..T](exp(B[t, i]) * 0.5 * C[t, j]);
// not contractions: a max of products, and a product over every variable in one factor
let peak[i in 0..M, j in 0..N] = max[t in 0..T](A[T - 1 - t, i] * (1.0 - B[t, j]));
"""

NAMED = ["rev", "shifted", "grad", "scaled"]
MATMUL = re.compile(r"linalg\.(matmul|mmt4d) ")     # mmt4d: einc's register tiles on AVX-512 hosts
GENERIC_REDUCTION = re.compile(r'iterator_types = \[[^]]*"reduction"')


@pytest.mark.parametrize("output", NAMED)
def test_backward_reads_and_computed_operands_make_a_matmul(emitted, output):
    text = emitted(SOURCE, outputs=[output])
    assert MATMUL.search(text) and not GENERIC_REDUCTION.search(text)


def test_a_max_of_products_stays_a_generic(emitted):
    text = emitted(SOURCE, outputs=["peak"])
    assert not MATMUL.search(text) and GENERIC_REDUCTION.search(text)


def _references(a, b, c):
    r = a[::-1]
    return {
        "rev": r.T @ b,
        "shifted": r[1:-1].T @ b[1:-1],
        "grad": (r[1:] * (1 - c[1:] ** 2)).T @ c[:-1],
        "scaled": (np.exp(b) * 0.5).T @ c,
        "peak": np.max(r[:, :, None] * (1 - b[:, None, :]), axis=0),
    }


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_computed_contractions_match_numpy(target):
    rng = np.random.default_rng(7)
    with einc.load(einc.compile(SOURCE, target=target).vmfb) as program:
        for t, m, n in ((9, 5, 3), (40, 17, 33)):
            x = {name: rng.standard_normal((t, k)).astype(np.float32) for name, k in (("A", m), ("B", n), ("C", m))}
            got = program(**x)
            want = _references(*(x[k].astype(np.float64) for k in "ABC"))
            for name, value in want.items():
                np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} on {target} at T={t}, M={m}, N={n}")


RNN_GRADIENT = """
use std::math::tanh;
let W: [f32; H, H];
let x: [f32; T, H];
let h[0, i in 0..H] = 0.0;
let h[t in 1..T, i in 0..H] = tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i]);
let L = sum[t, i](h[t, i] * h[t, i]);
let dW = @L / @W;
"""


def _rnn_loss(w, x):
    h, loss = np.zeros(w.shape[0]), 0.0
    for t in range(1, len(x)):
        h = np.tanh(w @ h + x[t])
        loss += h @ h
    return loss


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_rnn_weight_gradient_matches_central_differences(emitted, target):
    assert MATMUL.search(emitted(RNN_GRADIENT, target, ["dW"]))
    rng = np.random.default_rng(3)
    w = (0.4 * rng.standard_normal((6, 6))).astype(np.float32)
    x = rng.standard_normal((25, 6)).astype(np.float32)
    with einc.load(einc.compile(RNN_GRADIENT, target=target, outputs=["dW"]).vmfb) as program:
        got = program(W=w, x=x)["dW"]
    w64, x64, eps = w.astype(np.float64), x.astype(np.float64), 1e-6
    want = np.zeros_like(w64)
    for i, j in np.ndindex(*w.shape):
        step = np.zeros_like(w64)
        step[i, j] = eps
        want[i, j] = (_rnn_loss(w64 + step, x64) - _rnn_loss(w64 - step, x64)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


REVERSED_CHAIN = """
let x: [f32; B, N1];
let w1: [f32; N1, N1];
let w2: [f32; N1, N1];
let h[i, j] = sum[k](x[i, k] * w1[k, N1 - 1 - j]);
let y[i, j] = sum[k](h[i, k] * w2[N1 - 1 - k, j]);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
def test_a_matmul_chain_over_operands_read_backwards_matches_numpy(target):
    """Both operands reversed along a run-time dim (the dense fuzzer): IREE-43's
    `affine.delinearize_index` error on both CPU targets until the reversed copy passed a barrier."""
    rng = np.random.default_rng(3)
    with einc.load(einc.compile(REVERSED_CHAIN, target=target).vmfb) as program:
        for b, n in ((3, 5), (7, 16)):
            x, w1, w2 = (rng.standard_normal(shape).astype(np.float32) for shape in ((b, n), (n, n), (n, n)))
            got = program(x=x, w1=w1, w2=w2)
            h = x.astype(np.float64) @ w1[:, ::-1]
            np.testing.assert_allclose(got["h"], h, rtol=1e-4, atol=1e-4, err_msg=f"h at B={b}, N1={n}")
            np.testing.assert_allclose(got["y"], h @ w2[::-1], rtol=1e-4, atol=1e-4, err_msg=f"y at B={b}, N1={n}")


BROADCAST_PRODUCTS = {   # IREE-212: a matvec's (vecmat's) result spread along a run-time axis
    "matvec, rows": ("sum[c](W[d, c] * v[c])", "let out[t in 0..T, d] = m[d] * 0.5;", lambda W, v, x: np.tile(W @ v * 0.5, (5, 1))),
    "matvec, columns": ("sum[c](W[d, c] * v[c])", "let out[d, t in 0..T] = m[d] / (T as f32);", lambda W, v, x: np.tile(W @ v / 5, (5, 1)).T),
    "vecmat": ("sum[c](v[c] * W2[c, d])", "let out[t in 0..T, d] = m[d] * 0.5;", lambda W, v, x: np.tile(v @ W.T * 0.5, (5, 1))),
}


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
@pytest.mark.parametrize("case", BROADCAST_PRODUCTS)
def test_a_vector_product_broadcast_along_a_run_time_axis_matches_numpy(target, case):
    """The product's result, read only by a kernel spreading it along T (no output of its own),
    failed to compile on the CPU targets: "exceeded stack allocation limit" (IREE-212)."""
    product, spread, expect = BROADCAST_PRODUCTS[case]
    source = f"""
        let x: [f32; T];
        let W: [f32; D, C];
        let W2: [f32; C, D];
        let v: [f32; C];
        let m[d] = {product};
        {spread}
    """
    rng = np.random.default_rng(12)
    W = rng.standard_normal((6, 9)).astype(np.float32)
    v = rng.standard_normal(9).astype(np.float32)
    x = np.zeros(5, np.float32)
    device = "vulkan" if target == "vulkan-spirv" else None
    run = einc.load(einc.compile(source, target=target, outputs=["out"]).vmfb, device=device)
    out = run(x=x, W=W, W2=np.ascontiguousarray(W.T), v=v)["out"]
    np.testing.assert_allclose(out, expect(W.astype(np.float64), v, x), rtol=1e-5, atol=1e-5)   # f32 dots of 9


def test_an_embedding_table_gradient_through_a_dense_layer_matches_numpy():
    """The gradient of a loss of the mean embedding through a dense layer spreads a matvec's
    result over the tokens (T at run time): IREE-212's form inside a derivative."""
    source = """
        let ids: [i32; T];
        let table: [f32; V, D];
        let Wd: [f32; D, C];
        let emb[t, d] = table[ids[t], d];
        let pooled[d] = sum[t](emb[t, d]) / (T as f32);
        let logits[c] = sum[d](pooled[d] * Wd[d, c]);
        let loss = sum[c](logits[c] * logits[c]);
        let dtable = @loss / @table;
    """
    rng = np.random.default_rng(30)
    ids = np.int32([3, 1, 3, 0, 5, 3])
    table = rng.standard_normal((7, 4)).astype(np.float32)
    Wd = rng.standard_normal((4, 3)).astype(np.float32)
    out = einc.load(einc.compile(source, outputs=["dtable"]).vmfb)(ids=ids, table=table, Wd=Wd)
    logits = table.astype(np.float64)[ids].mean(0) @ Wd
    expected = np.zeros((7, 4))
    for i in ids:
        expected[i] += Wd @ (2 * logits) / len(ids)
    np.testing.assert_allclose(out["dtable"], expected, rtol=1e-5, atol=1e-6)   # f32, a few products
