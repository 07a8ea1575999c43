"""Einlang sources measured on the GPU: each (name, source or .ein path, extra `einc build` arguments)."""
MATMUL = """
let A: [f32; M, K];
let B: [f32; K, N];
let C[i, j] = sum[k](A[i, k] * B[k, j]);
"""
CONV = """
let X: [f32; B, 8, H, W];
let K: [f32; 16, 8, 5, 5];
let Y[n, o in 0..16, h in 0..H, w in 0..W] = sum[c in 0..8, kh in 0..5, kw in 0..5](
    if ih >= 0 && ih < H && iw >= 0 && iw < W { X[n, c, ih, iw] * K[o, c, kh, kw] } else { 0.0 }
    where ih = h + kh - 2, iw = w + kw - 2);
"""
RNN_BATCH = """
use std::math::tanh;
let W: [f32; H, H];
let x: [f32; T, B, H];
let h[0, b in 0..B, i in 0..H] = 0.0;
let h[t in 1..T, b in 0..B, i in 0..H] = tanh(sum[j](W[i, j] * h[t - 1, b, j]) + x[t, b, i]);
let final[b, i] = h[T - 1, b, i];
"""
CASES = [
    ("matmul_named", MATMUL, None),
    ("matmul_fixed", MATMUL, ["--dim", "M=4096", "--dim", "K=4096", "--dim", "N=4096"]),
    ("conv_named", CONV, None),
    ("conv_fixed", CONV, ["--dim", "B=64", "--dim", "H=128", "--dim", "W=128"]),
    ("cnn_named", "examples/mnist/cnn.ein", ["--output", "logits"]),
    ("cnn_fixed", "examples/mnist/cnn.ein", ["--output", "logits", "--dim", "B=8192"]),
    ("rnn_batch64", RNN_BATCH, ["--dim", "T=1000", "--dim", "B=64", "--dim", "H=64"]),
]
