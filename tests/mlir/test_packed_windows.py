"""A strided channels-first convolution over a run-time width on AVX2's register tiles
(einc/mlir/dense/window_matmuls.py `_filter_times_packed_windows`): its windows are copied
straight into mmt4d's packed right operand (no pack of them), the filter is the left operand,
and the row is padded to whole tiles of 16 columns then cut. With the width fixed, or on
AVX-512's 8-row tiles, the windows stay the left operand, packed by `linalg.pack` as before.
Results match NumPy at widths that leave no tile, a partial one and several, with padding,
dilation and an input or a build-time filter, on every target (the others keep the convolution)."""
import os
import re

import numpy as np
import pytest

import einc
from einc.mlir.dense import cpu_matmuls

SOURCE = """
let X: [f32; B, 8, H, W];
let F: [f32; 12, 8, 3, 3];
let S: [f32; B, 24, T];
let V: [f32; 20, 24, 3];
// stride 2, padding 1 (a ResNet stage's first convolution)
let padded[n, f in 0..12, i in 0..H / 2, j in 0..W / 2] = sum[c, kh in 0..3, kw in 0..3](
    if ih >= 0 && ih < H && iw >= 0 && iw < W { X[n, c, ih, iw] * F[f, c, kh, kw] } else { 0.0 }
    where ih = 2 * i + kh - 1, iw = 2 * j + kw - 1);
// stride 2 along the rows, 3 along the columns, dilation 2 along the columns, no padding
let dilated[n, f, i, j] = sum[c, kh, kw](X[n, c, 2 * i + kh, 3 * j + 2 * kw] * F[f, c, kh, kw]);
// 1-d over a run-time length, stride 2, padding 1
let line[n, f in 0..20, t in 0..T / 2] = sum[c, k in 0..3](
    if i >= 0 && i < T { S[n, c, i] * V[f, c, k] } else { 0.0 } where i = 2 * t + k - 1);
"""
OUTPUTS = ["padded", "dilated", "line"]


def _tiles_of(unit: str, monkeypatch) -> None:
    """einc's register tiles of vector unit `unit` on any x86-64 host."""
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: unit)


def _packs(text: str) -> list[str]:
    """The inner tiles of each `linalg.pack` in `text`."""
    return re.findall(r"linalg\.pack .*inner_tiles = \[(\d+), (\d+)\]", text)


@pytest.mark.parametrize("output", OUTPUTS)
def test_avx2_run_time_width_copies_windows_into_the_packed_operand(emitted, monkeypatch, output):
    _tiles_of("avx2", monkeypatch)
    text = emitted(SOURCE, outputs=[output])
    assert "linalg.mmt4d" in text and "linalg.conv" not in text
    assert _packs(text) == [("8", "1")], "only the filter is packed (8 rows a tile)"


@pytest.mark.parametrize("unit, dims", [("avx512", None), ("avx2", {"B": 2, "H": 17, "W": 33, "T": 41})])
def test_fixed_widths_and_avx512_keep_the_windows_as_the_left_operand(emitted, monkeypatch, unit, dims):
    _tiles_of(unit, monkeypatch)
    rows = str(cpu_matmuls.register_tile(unit)[0])
    for output in OUTPUTS:
        packs = _packs(emitted(SOURCE, outputs=[output], dims=dims))
        assert (rows, "1") in packs, f"{output}: the windows are packed as the left operand"


def _conv(x, w, strides, dilations, pad):
    """Channels-first convolution of x [n, c, *space] with w [f, c, *window] (float64), zero
    padding `pad` before and after each spatial axis, as many results as fit."""
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pad, pad)] * (x.ndim - 2))
    window = w.shape[2:]
    out = [(size - (k - 1) * d - 1) // s + 1 for size, k, s, d in zip(x.shape[2:], window, strides, dilations)]
    result = 0.0
    for offset in np.ndindex(*window):
        cut = tuple(slice(o * d, o * d + s * (n - 1) + 1, s) for o, n, s, d in zip(offset, out, strides, dilations))
        result = result + np.einsum("nc...,fc->nf...", x[(slice(None), slice(None)) + cut],
                                    w[(slice(None), slice(None)) + offset].astype(np.float64))
    return result


def _references(x: dict) -> dict:
    X, F, S = x["X"], x["F"], x["S"]
    padded = _conv(X, F, (2, 2), (1, 1), 1)[:, :, :X.shape[2] // 2, :X.shape[3] // 2]
    return {"padded": padded, "dilated": _conv(X, F, (2, 3), (1, 2), 0), "line": _conv(S, x["V"], (2,), (1,), 1)[:, :, :S.shape[2] // 2]}


# widths: results under one tile of 16, exactly one, one and a rest, several and a rest
SIZES = [(1, 5, 9, 7), (2, 9, 33, 33), (3, 6, 36, 75), (1, 7, 70, 200)]


@pytest.mark.parametrize("target, unit", [("llvm-cpu", "avx2"), ("llvm-cpu", "avx512"),
                                          pytest.param("llvm-cpu-generic", None, marks=pytest.mark.full),
                                          pytest.param("vulkan-spirv", None, marks=pytest.mark.vulkan)])
def test_strided_convolutions_over_run_time_widths_match_numpy(monkeypatch, target, unit):
    if unit is not None:
        _tiles_of(unit, monkeypatch)
    with einc.load(einc.compile(SOURCE, target=target, outputs=OUTPUTS).vmfb) as program:
        for batch, height, width, length in SIZES:
            rng = np.random.default_rng(width)
            f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
            x = {"X": f(batch, 8, height, width), "F": f(12, 8, 3, 3), "S": f(batch, 24, length), "V": f(20, 24, 3)}
            got = program(**x)
            for name, want in _references(x).items():
                assert got[name].shape == want.shape, (name, width)
                np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-4 * np.abs(want).max(),
                                           err_msg=f"{name} at {batch} x {height} x {width} ({length})")


def test_a_build_time_filter_is_read_as_the_left_operand(program_file, monkeypatch):
    """The filter a layer of a stack read by load_npy: read in its own layout as [f, K]."""
    _tiles_of("avx2", monkeypatch)
    weights = np.random.default_rng(0).standard_normal((2, 12, 8, 3, 3)).astype(np.float32)
    path = program_file('use std::io::load_npy;\nlet w = load_npy("w.npy");\nlet X: [f32; B, 8, H, W];\n'
                        "let y[n, o, i, j] = sum[c, kh, kw](X[n, c, 2 * i + kh, 2 * j + kw] * w[1, o, c, kh, kw]);\n")
    np.save(os.path.join(os.path.dirname(path), "w.npy"), weights)
    x = np.random.default_rng(1).standard_normal((2, 8, 11, 41)).astype(np.float32)
    with einc.load(einc.compile(path, target="llvm-cpu", weights_threshold=None).vmfb) as program:
        got = program(X=x)["y"]
    want = _conv(x, weights[1], (2, 2), (1, 1), 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
