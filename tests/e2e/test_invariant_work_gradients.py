"""Gradients whose adjoint bodies hold work invariant in some of their loops (einc.passes.
invariant_work): a tanh layer run as a recurrence over a gathered embedding, against the same
model differentiated by hand in NumPy (f64). `@L / @Wh` hoists the layer's derivative out of the
sum over the steps, `@L / @Emb` regroups the sum masked by `tokens[t - 1, b] == v`."""
import numpy as np

RNN = """
use std::math::{exp, tanh};
let tokens: [i32; T, B];
let Emb: [f32; V, E];
let Wx: [f32; E, H];
let Wh: [f32; H, H];
let u: [f32; H];
let h[0, b, j in 0..H] = 0.0;
let h[t in 1..T, b, j] = tanh(sum[e](Emb[tokens[t - 1, b], e] * Wx[e, j]) + sum[k](h[t - 1, b, k] * Wh[k, j]))
    / (1.0 + exp(-h[t - 1, b, j]));
let loss = sum[t, b, j](h[t, b, j] * u[j]);
let dEmb = @loss / @Emb;
let dWh = @loss / @Wh;
let dWx = @loss / @Wx;
"""


def rnn_reference(tokens, Emb, Wx, Wh, u):
    """loss, dEmb, dWh and dWx of RNN, by backpropagation through time written out."""
    Emb, Wx, Wh, u = (a.astype(np.float64) for a in (Emb, Wx, Wh, u))
    T, B = tokens.shape
    h, pre = np.zeros((T, B, Wh.shape[0])), {}
    for t in range(1, T):
        pre[t] = Emb[tokens[t - 1]] @ Wx + h[t - 1] @ Wh
        h[t] = np.tanh(pre[t]) / (1 + np.exp(-h[t - 1]))
    hb = np.broadcast_to(u, h.shape).copy()
    dEmb, dWh, dWx = np.zeros_like(Emb), np.zeros_like(Wh), np.zeros_like(Wx)
    for t in range(T - 1, 0, -1):
        s, th = 1 / (1 + np.exp(-h[t - 1])), np.tanh(pre[t])
        dpre = hb[t] * s * (1 - th * th)
        hb[t - 1] += dpre @ Wh.T + hb[t] * th * s * (1 - s)
        dWh += h[t - 1].T @ dpre
        dWx += Emb[tokens[t - 1]].T @ dpre
        np.add.at(dEmb, tokens[t - 1], dpre @ Wx.T)
    return (h * u).sum(), dEmb, dWh, dWx


def test_gradients_through_a_gathered_embedding_and_a_tanh_recurrence_match_numpy(run):
    rng = np.random.default_rng(7)
    T, B, V, E, H = 6, 3, 9, 4, 5
    inputs = dict(tokens=rng.integers(0, V, (T, B)).astype(np.int32),
                  Emb=rng.normal(0, 0.5, (V, E)).astype(np.float32), Wx=rng.normal(0, 0.5, (E, H)).astype(np.float32),
                  Wh=rng.normal(0, 0.5, (H, H)).astype(np.float32), u=rng.normal(0, 1, H).astype(np.float32))
    got = run(RNN, outputs=["loss", "dEmb", "dWh", "dWx"], **inputs)
    loss, dEmb, dWh, dWx = rnn_reference(**inputs)
    np.testing.assert_allclose(got["loss"], loss, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["dEmb"], dEmb, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["dWh"], dWh, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["dWx"], dWx, rtol=1e-4, atol=1e-5)
