"""Independent NumPy references of the transformer examples (examples/transformer), in float64
from the float32 weights that examples/transformer/make_weights.py makes. They never call einc.
`xp` and `dtype` let benchmarks/transformers.py run the same network in float32 with NumPy and
under JAX `jit` (jax.numpy)."""
from __future__ import annotations

import math

import numpy as np
from scipy.special import erf as scipy_erf


def layer_norm(x, g, b, eps, xp=np):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / xp.sqrt(var + eps) * g + b


def gelu_tanh(x, xp=np):
    return 0.5 * x * (1 + xp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))


def gelu(x, xp=np):
    if xp is np:
        erf = scipy_erf
    else:
        from jax.scipy.special import erf
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def attention(qkv, heads, xp=np):
    n, s, three_d = qkv.shape
    D = three_d // 3
    q, k, v = (qkv[..., i * D:(i + 1) * D].reshape(n, s, heads, D // heads).transpose(0, 2, 1, 3)
               for i in range(3))
    score = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D // heads)
    p = xp.exp(score - score.max(-1, keepdims=True))
    ctx = (p / p.sum(-1, keepdims=True)) @ v                     # [n, heads, s, E]
    return ctx.transpose(0, 2, 1, 3).reshape(n, s, D)


def block(x, w, l, heads, eps, act, xp=np):
    h = layer_norm(x, w["ln1_g"][l], w["ln1_b"][l], eps, xp)
    a = x + attention(h @ w["w_qkv"][l] + w["b_qkv"][l], heads, xp) @ w["w_out"][l] + w["b_out"][l]
    h = layer_norm(a, w["ln2_g"][l], w["ln2_b"][l], eps, xp)
    return a + act(h @ w["w_up"][l] + w["b_up"][l], xp) @ w["w_down"][l] + w["b_down"][l]


def deit(images, weights, blocks, xp=np, dtype=np.float64):
    """Logits [n, 1000] of DeiT-tiny for images [n, 3, H, W]."""
    w = {k: v.astype(dtype) for k, v in weights.items()}
    n, _, H, W = images.shape
    patches = images.astype(dtype).reshape(n, 3, H // 16, 16, W // 16, 16)
    rows = patches.transpose(0, 2, 4, 1, 3, 5).reshape(n, -1, 3 * 16 * 16)   # [n, patch, c kh kw]
    P = rows @ w["patch_w"].reshape(192, -1).T + w["patch_b"]
    x = xp.concatenate([xp.broadcast_to(w["cls"], (n, 1, 192)), P], axis=1) + w["pos"]
    for l in range(blocks):
        x = block(x, w, l, 3, 1e-6, gelu_tanh, xp)
    return layer_norm(x[:, 0], w["norm_g"], w["norm_b"], 1e-6, xp) @ w["head_w"] + w["head_b"]


def conv1d(x, W, b, stride, xp=np):
    """Width-3 convolution with padding 1 of x [n, c, T] by W [o, c, 3]."""
    T = x.shape[2]
    xp_ = xp.pad(x, ((0, 0), (0, 0), (1, 1)))
    out_len = (T - 1) // stride + 1
    taps = [xp_[:, :, k:k + stride * (out_len - 1) + 1:stride] for k in range(3)]
    return sum(xp.einsum("oc,nct->not", W[:, :, k], taps[k]) for k in range(3)) + b[:, None]


def whisper(mel, weights, blocks, xp=np, dtype=np.float64):
    """Encoder states [n, T / 2, 384] of the Whisper-tiny encoder for mel [n, 80, T]."""
    w = {k: v.astype(dtype) for k, v in weights.items()}
    c1 = gelu(conv1d(mel.astype(dtype), w["conv1_w"], w["conv1_b"], 1, xp), xp)
    c2 = gelu(conv1d(c1, w["conv2_w"], w["conv2_b"], 2, xp), xp)
    x = c2.transpose(0, 2, 1) + w["pos"]
    for l in range(blocks):
        x = block(x, w, l, 6, 1e-5, gelu, xp)
    return layer_norm(x, w["post_g"], w["post_b"], 1e-5, xp)
