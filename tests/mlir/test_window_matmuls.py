"""Convolutions as a matmul over their windows on llvm-cpu (einc/mlir/dense/window_matmuls.py):
1-d convolutions in either layout and strided channels-first 2-d ones, of enough summed depth,
are the windows copied out as rows times the filter on einc's register tiles (no conv op);
stride-1 channels-first, channels-last 2-d and shallow ones stay convolutions. Every definition
matches NumPy at batch 1 and 3, with input and build-time filters, fixed and run-time widths,
in AVX-512's tiles and in AVX2's."""
import os

import numpy as np
import pytest

import einc
from einc.driver import lower
from einc.mlir.dense import cpu_matmuls

SOURCE = """
let X: [f32; B, 24, 20];
let W: [f32; 40, 24, 3];
let Xl: [f32; B, 20, 24];
let Wl: [f32; 3, 24, 40];
let I: [f32; B, 8, 9, 11];
let F: [f32; 36, 8, 3, 3];
let G: [f32; 36, 8, 4, 4];
let S: [f32; B, 24, T];
let V: [f32; 40, 2, 3];

// 1-d, Whisper's second convolution in small: stride 2, padding 1
let strided[n, f in 0..40, t in 0..10] = sum[c, k in 0..3](
    if i >= 0 && i < 20 { X[n, c, i] * W[f, c, k] } else { 0.0 } where i = 2 * t + k - 1);
// 1-d, stride 1, dilation 2; channels last, stride 2
let dilated[n, f in 0..40, t in 0..16] = sum[c, k in 0..3](X[n, c, t + 2 * k] * W[f, c, k]);
let last[n, t in 0..9, f in 0..40] = sum[k in 0..3, c](Xl[n, 2 * t + k, c] * Wl[k, c, f]);
// 2-d channels first: stride 2 with padding 1, and overlapping 4 x 4 windows of stride 3
let image[n, f in 0..36, i in 0..5, j in 0..6] = sum[c, kh in 0..3, kw in 0..3](
    if ih >= 0 && ih < 9 && iw >= 0 && iw < 11 { I[n, c, ih, iw] * F[f, c, kh, kw] } else { 0.0 }
    where ih = 2 * i + kh - 1, iw = 2 * j + kw - 1);
let windows[n, f in 0..36, i in 0..2, j in 0..3] = sum[c, kh in 0..4, kw in 0..4](
    I[n, c, 3 * i + kh, 3 * j + kw] * G[f, c, kh, kw]);
// 1-d over a run-time length T, stride 2, padding 1
let named[n, f in 0..40, t in 0..T / 2] = sum[c, k in 0..3](
    if i >= 0 && i < T { S[n, c, i] * W[f, c, k] } else { 0.0 } where i = 2 * t + k - 1);
// stay convolutions: stride 1 channels first (einc's tiles), channels-last 2-d, too shallow (c k = 6)
let plain[n, f in 0..36, i in 0..7, j in 0..9] = sum[c, kh in 0..3, kw in 0..3](
    I[n, c, i + kh, j + kw] * F[f, c, kh, kw]);
let shallow[n, f in 0..40, t in 0..9] = sum[c in 0..2, k in 0..3](X[n, c, 2 * t + k] * V[f, c, k]);
"""

MATMULS = ["strided", "dilated", "last", "image", "windows", "named"]
CONVOLUTIONS = {"plain": "linalg.conv_2d_nchw_fchw", "shallow": "linalg.conv_1d_ncw_fcw"}


@pytest.fixture(autouse=True, params=["avx512", "avx2"])
def register_tiles(monkeypatch, request):
    """einc's register tiles of each vector unit on any host (the rule needs them; the code runs
    on any x86): AVX-512's 8 x 32 and AVX2's 6 x 16."""
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: request.param)


@pytest.mark.parametrize("output", MATMULS)
def test_convolutions_of_slow_direct_forms_are_a_matmul_over_windows(emitted, output):
    text = emitted(SOURCE, outputs=[output])
    assert "linalg.mmt4d" in text and "linalg.conv" not in text


@pytest.mark.parametrize("output", sorted(CONVOLUTIONS))
def test_fast_or_shallow_convolutions_stay_convolutions(emitted, output):
    text = emitted(SOURCE, outputs=[output])
    assert CONVOLUTIONS[output] + " " in text and "linalg.mmt4d" not in text


def test_other_targets_keep_the_convolution(emitted):
    for target in ("llvm-cpu-generic", "vulkan-spirv"):
        assert "linalg.conv_1d_ncw_fcw" in emitted(SOURCE, target=target, outputs=["strided"])


def _conv(x, w, stride, dilation, pad, out):
    """Channels-first convolution of x [n, c, *space] with w [f, c, *window], zero padding
    `pad` on every side, `out` output points a spatial axis (float64)."""
    space = x.ndim - 2
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pad, pad)] * space)
    result = 0.0
    for offset in np.ndindex(*w.shape[2:]):
        cut = tuple(slice(o * dilation, o * dilation + stride * (size - 1) + 1, stride)
                    for o, size in zip(offset, out))
        result = result + np.einsum("nc...,fc->nf...", x[(slice(None), slice(None)) + cut],
                                    w[(slice(None), slice(None)) + offset])
    return result


def _references(x):
    X, I = x["X"], x["I"]
    last = _conv(x["Xl"].transpose(0, 2, 1), x["Wl"].transpose(2, 1, 0), 2, 1, 0, (9,)).transpose(0, 2, 1)
    return {"strided": _conv(X, x["W"], 2, 1, 1, (10,)), "dilated": _conv(X, x["W"], 1, 2, 0, (16,)),
            "last": last, "image": _conv(I, x["F"], 2, 1, 1, (5, 6)), "windows": _conv(I, x["G"], 3, 1, 0, (2, 3)),
            "named": _conv(x["S"], x["W"], 2, 1, 1, (x["S"].shape[2] // 2,)),
            "plain": _conv(I, x["F"], 1, 1, 0, (7, 9)), "shallow": _conv(X[:, :2], x["V"], 2, 1, 0, (9,))}


def _inputs(batch, length):
    rng = np.random.default_rng(batch)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return {"X": f(batch, 24, 20), "W": f(40, 24, 3), "Xl": f(batch, 20, 24), "Wl": f(3, 24, 40),
            "I": f(batch, 8, 9, 11), "F": f(36, 8, 3, 3), "G": f(36, 8, 4, 4), "S": f(batch, 24, length),
            "V": f(40, 2, 3)}


def test_window_matmuls_match_numpy():
    with einc.load(einc.compile(SOURCE, target="llvm-cpu").vmfb) as program:
        for batch, length in ((1, 30), (3, 17)):
            x = _inputs(batch, length)
            got = program(**x)
            wrong = [name for name, want in _references(x).items() if got[name].shape != want.shape
                     or not np.allclose(got[name], want, rtol=1e-4, atol=1e-4 * np.abs(want).max())]
            assert not wrong, f"batch {batch}, T = {length}: {wrong} differ from NumPy"


def test_build_time_filters_are_packed_at_build_time(program_file):
    """Whisper's stride-2 convolution in small, its filter a layer of a stack read by load_npy:
    packed by NumPy, so the module packs only the windows."""
    weights = np.random.default_rng(0).standard_normal((2, 48, 32, 3)).astype(np.float32)
    path = program_file('use std::io::load_npy;\nlet w = load_npy("w.npy");\nlet X: [f32; B, 32, 40];\n'
                        "let y[n, o in 0..48, t in 0..20] = sum[c, k in 0..3](\n"
                        "    if i >= 0 && i < 40 { X[n, c, i] * w[1, o, c, k] } else { 0.0 }\n"
                        "    where i = 2 * t + k - 1);\n")
    np.save(os.path.join(os.path.dirname(path), "w.npy"), weights)
    text = str(lower(path, "llvm-cpu", ["y"]))
    assert "linalg.mmt4d" in text and text.count("linalg.pack") == 1
    x = np.random.default_rng(1).standard_normal((2, 32, 40)).astype(np.float32)
    with einc.load(einc.compile(path, target="llvm-cpu", weights_threshold=None).vmfb) as program:
        got = program(X=x)["y"]
    want = _conv(x, weights[1], 2, 1, 1, (20,))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
