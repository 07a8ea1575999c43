"""Channels-last 2-d convolutions of build-time width on a build tuned to an AVX2 host carry
einc's tiles (einc/mlir/dense/cpu_convolutions.py `_tiles_fixed_channels_last`): a workgroup
8 output rows, a vector step up to 8 output channels by a count of columns that divides the
width (IREE's own ran 2x slower at stride 1 and 6-16x at stride 2 on a Zen 3). AVX-512 hosts and
llvm-cpu-generic keep IREE's tiles. Results match NumPy at widths of no such divisor but 1,
one of 7 and of 8, with stride, padding and dilation, on every target."""
import re

import numpy as np
import pytest

import einc
from einc import host_cpu
from tests.tiers import GENERIC_FULL, VULKAN_FULL

SOURCE = """
let X: [f32; B, H, W, 8];
let K: [f32; 3, 3, 8, 12];
// stride 2, padding 1 (a ResNet stage's first convolution)
let strided[n, i in 0..H / 2, j in 0..W / 2, f] = sum[kh, kw, c](
    if ih >= 0 && ih < H && iw >= 0 && iw < W { X[n, ih, iw, c] * K[kh, kw, c, f] } else { 0.0 }
    where ih = 2 * i + kh - 1, iw = 2 * j + kw - 1);
// stride 1, dilation 2
let dilated[n, i, j, f] = sum[kh, kw, c](X[n, i + 2 * kh, j + 2 * kw, c] * K[kh, kw, c, f]);
"""
OUTPUTS = ["strided", "dilated"]
# (B, H, W): result widths 13 / 22 (no divisor up to 8 but 1 / 2), 7 / 10, 8 / 12
SIZES = [(2, 10, 26), (1, 9, 14), (3, 16, 16)]


def _on(unit, monkeypatch) -> None:
    monkeypatch.setattr(host_cpu, "vector_unit", lambda: unit)


def _vector_tiles(text: str) -> list[str]:
    return re.findall(r"vector_common_parallel = \[1, 1, (\d+), (\d+), 0, 0, 0\]", text)


@pytest.mark.parametrize("output, columns", [("strided", "1"), ("dilated", "2")])
def test_an_avx2_build_tiles_a_fixed_channels_last_convolution(emitted, monkeypatch, output, columns):
    _on("avx2", monkeypatch)
    text = emitted(SOURCE, outputs=[output], dims={"B": 2, "H": 10, "W": 26})
    assert "linalg.conv_2d_nhwc_hwcf" in text and _vector_tiles(text) == [(columns, "8")]


@pytest.mark.parametrize("unit, target", [("avx512", "llvm-cpu"), ("avx2", "llvm-cpu-generic")])
def test_avx512_and_generic_builds_keep_iree_tiles(emitted, monkeypatch, unit, target):
    _on(unit, monkeypatch)
    text = emitted(SOURCE, target=target, outputs=OUTPUTS, dims={"B": 2, "H": 10, "W": 26})
    assert "linalg.conv_2d_nhwc_hwcf" in text and "compilation_info" not in text


def _reference(x: np.ndarray, k: np.ndarray, stride: int, dilation: int, pad: int, out: tuple) -> np.ndarray:
    x = np.pad(x.astype(np.float64), [(0, 0), (pad, pad), (pad, pad), (0, 0)])
    result = 0.0
    for kh, kw in np.ndindex(3, 3):
        rows = slice(kh * dilation, kh * dilation + stride * (out[0] - 1) + 1, stride)
        cols = slice(kw * dilation, kw * dilation + stride * (out[1] - 1) + 1, stride)
        result = result + np.einsum("nhwc,cf->nhwf", x[:, rows, cols], k[kh, kw].astype(np.float64))
    return result


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
@pytest.mark.parametrize("batch, height, width", SIZES)
def test_fixed_channels_last_convolutions_match_numpy(monkeypatch, target, batch, height, width):
    _on("avx2", monkeypatch)
    dims = {"B": batch, "H": height, "W": width}
    rng = np.random.default_rng(width)
    x = rng.standard_normal((batch, height, width, 8)).astype(np.float32)
    k = rng.standard_normal((3, 3, 8, 12)).astype(np.float32)
    want = {"strided": _reference(x, k, 2, 1, 1, (height // 2, width // 2)),
            "dilated": _reference(x, k, 1, 2, 0, (height - 4, width - 4))}
    with einc.load(einc.compile(SOURCE, target=target, outputs=OUTPUTS, dims=dims).vmfb) as program:
        got = program(X=x, K=k)
    for name in OUTPUTS:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4 * np.abs(want[name]).max(),
                                   err_msg=f"{name} at {dims} on {target}")
