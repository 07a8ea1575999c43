"""The row of result columns a vector step of an NCHW convolution computes on the CPU
(einc/mlir/dense/cpu_convolutions.py), from the vector registers of the code's CPU
(einc/host_cpu.vector_registers): one register on a build tuned to this CPU (16 columns with
AVX-512, 8 with AVX2), whole registers of 4 up to 16 columns on a generic one, a divisor of the
width either way; an AVX-512 host's tiles are those it had before the registers were asked.
Every width of a row of its own matches NumPy on each target."""
import re

import numpy as np
import pytest

from numpy_windows import strided_windows

import einc
from einc import host_cpu
from tests.tiers import GENERIC_FULL, VULKAN_FULL

AVX512 = {"flags": "sse2 avx avx2 fma avx512f avx512bw"}
AVX2 = {"flags": "sse2 avx avx2 fma"}
SSE2 = {"flags": "sse2 sse4_2"}
ARM64 = {"Features": "fp asimd"}

CONV = """
let X: [f32; 2, 3, 9, W];
let K: [f32; 9, 3, 5, 5];
let y[n, o, h in 0..9, w in 0..W] = sum[c, kh, kw](
    if ih >= 0 && ih < 9 && iw >= 0 && iw < W { X[n, c, ih, iw] * K[o, c, kh, kw] } else { 0.0 }
    where ih = h + kh - 2, iw = w + kw - 2);
"""
CNN = """
let X: [f32; B, 1, 28, 28];
let W1: [f32; 8, 1, 5, 5];
let W2: [f32; 16, 8, 5, 5];
let c1[n, o, h in 0..28, w in 0..28] = sum[c, kh, kw](
    if ih >= 0 && ih < 28 && iw >= 0 && iw < 28 { X[n, c, ih, iw] * W1[o, c, kh, kw] } else { 0.0 }
    where ih = h + kh - 2, iw = w + kw - 2);
let p1[n, o, h in 0..14, w in 0..14] = max[dh in 0..2, dw in 0..2](c1[n, o, 2 * h + dh, 2 * w + dw]);
let c2[n, o, h in 0..14, w in 0..14] = sum[c, kh, kw](
    if ih >= 0 && ih < 14 && iw >= 0 && iw < 14 { p1[n, c, ih, iw] * W2[o, c, kh, kw] } else { 0.0 }
    where ih = h + kh - 2, iw = w + kw - 2);
"""
TILES = re.compile(r"vector_common_parallel = \[1, (\d+), 1, (\d+), 0, 0, 0\]")


@pytest.mark.parametrize("fields, tuned, lanes, count, masks", [
    (AVX512, True, 16, 32, True), (AVX2, True, 8, 16, False), (SSE2, True, 4, 16, False), (ARM64, True, 4, 32, False),
    (AVX512, False, 4, 16, False), (AVX2, False, 4, 16, False), (ARM64, False, 4, 32, False), ({}, True, 4, 16, False)])
def test_vector_registers_by_cpu_and_build(monkeypatch, fields, tuned, lanes, count, masks):
    monkeypatch.setattr(host_cpu, "cpuinfo_fields", lambda: fields)
    assert host_cpu.vector_registers(tuned) == host_cpu.VectorRegisters(lanes, count, masks)


def _rows(emitted, monkeypatch, fields: dict, target: str, source: str, outputs: list, dims=None) -> list:
    monkeypatch.setattr(host_cpu, "cpuinfo_fields", lambda: fields)
    text = emitted(source, target, outputs, dims)
    return [(int(f), int(row)) for f, row in TILES.findall(text)]


def test_an_avx512_host_keeps_its_tiles(emitted, monkeypatch):
    """The MNIST CNN's convolutions (28 and 14 columns) on AVX-512: one attribute, rows of 14, as
    before; the whole attribute is unchanged too."""
    monkeypatch.setattr(host_cpu, "cpuinfo_fields", lambda: AVX512)
    text = emitted(CNN, "llvm-cpu", ["c2"], {"B": 100})
    assert ("#iree_cpu.lowering_config<distribution = [1, 0, 4, 0, 0, 0, 0], vector_common_parallel = "
            "[1, 8, 1, 14, 0, 0, 0], vector_reduction = [0, 0, 0, 0, 1, 1, 1]>") in text
    assert text.count("compilation_info = #compilation") == 2
    widths = {w: _rows(emitted, monkeypatch, AVX512, "llvm-cpu", CONV, ["y"], {"W": w}) for w in (64, 40, 13)}
    assert widths == {64: [(8, 16)], 40: [(8, 10)], 13: [(8, 13)]}


@pytest.mark.parametrize("fields, target, rows", [
    (AVX2, "llvm-cpu", {28: 7, 14: 7, 64: 8, 40: 8, 12: 6, 13: 1}),
    (AVX2, "llvm-cpu-generic", {28: 4, 14: 2, 64: 16, 40: 8, 12: 12, 13: 1}),
    (AVX512, "llvm-cpu-generic", {28: 4, 14: 2, 64: 16, 40: 8, 12: 12, 13: 1}),
])
def test_rows_fit_the_vector_registers(emitted, monkeypatch, fields, target, rows):
    for width, row in rows.items():
        assert _rows(emitted, monkeypatch, fields, target, CONV, ["y"], {"W": width}) == [(8, row)], width


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
def test_every_row_matches_numpy(target):
    """Widths of rows of whole registers, of part of one and of one column, and 9 output channels
    (a step of 8 and one of 1)."""
    rng = np.random.default_rng(1909)
    for width in (28, 14, 12, 13, 40):
        x = {"X": rng.standard_normal((2, 3, 9, width)).astype(np.float32),
             "K": rng.standard_normal((9, 3, 5, 5)).astype(np.float32)}
        with einc.load(einc.compile(CONV, target=target, outputs=["y"], dims={"W": width}).vmfb) as program:
            got = program(**x)["y"]
        image = np.pad(x["X"].astype(np.float64), ((0, 0), (0, 0), (2, 2), (2, 2)))
        want = np.einsum("nchwij,ocij->nohw", strided_windows(image, (5, 5), (2, 3)), x["K"].astype(np.float64))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=f"width {width}")
