"""Gradients whose adjoint recurrence steps hold state-free work in fewer variables than the step
(einc.passes.step_invariant_work): a gated RNN (the gate derivatives, hoisted out of the sum over
the output column) and a dilated convolution over layers (the ReLU's test, hoisted out of the
one-hot sum over the output point), against the same models differentiated by hand in NumPy
(f64), in one build; and a step whose data-dependent read runs under a guard of the step, which
the pass leaves in place (the read past the guard is out of range: hoisting it would fail its
run-time check)."""
import numpy as np

import einc

STEPS = """
use std::math::{exp, tanh};
let x: [f32; T, B, E];
let Wx: [f32; 2, E, H];
let Wh: [f32; 2, H, H];
let u: [f32; H];
fn act(g, z) { match g { 1 => tanh(z), _ => 1.0 / (1.0 + exp(-z)) } }
let h[0, b, j in 0..H] = 0.0;
let gate[t in 1..T, g in 0..2, b, j] = act(g, sum[e](x[t, b, e] * Wx[g, e, j]) + sum[k](h[t - 1, b, k] * Wh[g, k, j]));
let h[t in 1..T, b, j] = gate[t, 0, b, j] * gate[t, 1, b, j] + (1.0 - gate[t, 0, b, j]) * h[t - 1, b, j];
let loss = sum[t, b, j](h[t, b, j] * u[j]);
let dWh = @loss / @Wh;

let y: [f32; C, N];
let K: [f32; L, C, C, 3];
let bias: [f32; L, C];
fn dil(l) { 2 ** l }
fn layer(a, l) {
    let o[c, n] = {
        let z = sum[e, k in 0..3](K[l, c, e, k] * a[e, n - k * dil(l)]) where n >= k * dil(l);
        a[c, n] + if z + bias[l, c] > 0.0 { z + bias[l, c] } else { 0.0 }
    };
    o
}
let a[0, c, n] = y[c, n];
let a[l in 1..L + 1] = layer(a[l - 1], l - 1);
let err = sum[c, n](a[L, c, n] * a[L, c, n]);
let dK = @err / @K;

let idx: [i32; M];
let w: [f32; P];
let s[0, j in 0..4] = 0.0;
let s[t in 1..T, j] = s[t - 1, j] + if t + j < 4 { exp(w[idx[t]]) } else { 0.0 };
"""


def gated_rnn_reference(x, Wx, Wh, u):
    """dWh of the gated RNN, by backpropagation through time written out."""
    x, Wx, Wh, u = (a.astype(np.float64) for a in (x, Wx, Wh, u))
    T, B, _ = x.shape
    sig = lambda z: 1 / (1 + np.exp(-z))
    h, gs = [np.zeros((B, Wh.shape[1]))], [None]
    for t in range(1, T):
        z = np.einsum("be,geh->gbh", x[t], Wx) + np.einsum("bk,gkh->gbh", h[-1], Wh)
        g = np.stack([sig(z[0]), np.tanh(z[1])]); gs.append(g)
        h.append(g[0] * g[1] + (1 - g[0]) * h[-1])
    dWh, carry = np.zeros_like(Wh), np.zeros((B, Wh.shape[1]))
    for t in range(T - 1, 0, -1):
        hb = u + carry; g = gs[t]
        dz = np.stack([hb * (g[1] - h[t - 1]) * g[0] * (1 - g[0]), hb * g[0] * (1 - g[1] ** 2)])
        dWh += np.einsum("bk,gbh->gkh", h[t - 1], dz)
        carry = hb * (1 - g[0]) + np.einsum("gbh,gkh->bk", dz, Wh)
    return dWh


def dilated_layers_reference(y, K, bias):
    """dK of the dilated convolution layers, backward written out."""
    y, K, bias = (a.astype(np.float64) for a in (y, K, bias))
    N = y.shape[1]
    shifted = lambda v, s: np.pad(v, ((0, 0), (s, 0)))[:, :N]
    a, zs = [y], []
    for l in range(len(K)):
        z = sum(K[l, :, :, k] @ shifted(a[-1], k * 2 ** l) for k in range(3)) + bias[l][:, None]
        zs.append(z); a.append(a[-1] + np.maximum(z, 0))
    da, dK = 2 * a[-1], np.zeros_like(K)
    for l in range(len(K) - 1, -1, -1):
        dz, below = da * (zs[l] > 0), da.copy()
        for k in range(3):
            d = k * 2 ** l
            dK[l, :, :, k] = dz @ shifted(a[l], d).T
            below[:, :N - d] += K[l, :, :, k].T @ dz[:, d:]
        da = below
    return dK


def test_gradients_through_steps_with_state_free_work_match_numpy(run):
    rng = np.random.default_rng(11)
    T, B, E, H, C, N, L, M = 7, 3, 4, 6, 5, 16, 3, 9
    idx = rng.integers(0, 5, M).astype(np.int32)
    idx[4:] = 99                        # read at no step: `t + j < 4` holds only for t < 4
    inputs = dict(x=rng.normal(0, 1, (T, B, E)).astype(np.float32), Wx=rng.normal(0, 0.5, (2, E, H)).astype(np.float32),
                  Wh=rng.normal(0, 0.5, (2, H, H)).astype(np.float32), u=rng.normal(0, 1, H).astype(np.float32),
                  y=rng.normal(0, 1, (C, N)).astype(np.float32), K=rng.normal(0, 0.3, (L, C, C, 3)).astype(np.float32),
                  bias=rng.normal(0, 0.1, (L, C)).astype(np.float32), idx=idx,
                  w=rng.normal(0, 1, 5).astype(np.float32))
    got = run(STEPS, outputs=["dWh", "dK", "s"], **inputs)
    np.testing.assert_allclose(got["dWh"], gated_rnn_reference(inputs["x"], inputs["Wx"], inputs["Wh"], inputs["u"]),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["dK"], dilated_layers_reference(inputs["y"], inputs["K"], inputs["bias"]),
                               rtol=1e-4, atol=1e-4)
    terms = np.array([[np.exp(np.float64(inputs["w"][idx[t]])) if t > 0 and t + j < 4 else 0.0 for j in range(4)]
                      for t in range(T)])
    np.testing.assert_allclose(got["s"], np.cumsum(terms, axis=0), rtol=1e-5)


def test_hoisted_work_runs_over_its_clauses_steps_only():
    """A start clause's `sum[i](x1[i, t])` at t = 0 (x1 has 3 columns, the group 9 steps), and
    later clauses' work over steps 1..3 and 3..9: each hoisted tensor runs over its clause's
    steps. Over every step of the group the start clause's read was E005 ("touches indices 0 to
    8 of axis 1"; fuzz seed 42002 program 70)."""
    rng = np.random.default_rng(0)
    x1, w, x0 = rng.standard_normal((3, 9)), rng.standard_normal(4), rng.standard_normal((3, 3))
    out = einc.load(einc.compile("""use std::math::*;
        let x1: [f64; 3, 9];
        let w: [f64; 4];
        let x0: [f64; 3, 3];
        let s[t in 0..1, j in 0..4] = sum[i in 0..3](x0[i, t]);
        let s[t in 1..9, j in 0..4] = s[t - 1, j] * 0.5;
        let r6[t in 0..1, j in 0..4] = sum[i in 0..3](x1[i, t]);
        let r6[t in 1..3, j in 0..4] = r6[t - 1, j] * 0.5 + sum[i in 0..3](tanh(x1[i, t] * 2.0));
        let r6[t in 3..9, j in 0..4] = r6[t - 1, j] * 0.25 + w[j] * sum[i in 0..3](exp(x1[i, t - 1]) / (1.0 + x1[i, t] * x1[i, t]));
    """))(x1=x1, w=w, x0=x0)
    r = np.zeros((9, 4))
    r[0] = x1[:, 0].sum()
    for t in range(1, 3):
        r[t] = r[t - 1] * 0.5 + np.tanh(x1[:, t] * 2).sum()
    for t in range(3, 9):
        r[t] = r[t - 1] * 0.25 + w * (np.exp(x1[:, t - 1]) / (1 + x1[:, t] ** 2)).sum()
    np.testing.assert_allclose(out["r6"], r, rtol=1e-13)
    np.testing.assert_allclose(out["s"], x0[:, 0].sum() * 0.5 ** np.arange(9)[:, None] * np.ones(4), rtol=1e-13)
