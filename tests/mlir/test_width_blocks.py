"""Convolutions over a run-time width (einc/mlir/width_blocks): on llvm-cpu the 2-d ones run on
blocks of 64 columns, then blocks of 16 for the rest, with a build-time width; every form matches
NumPy at widths that are not a multiple of either block, narrower than one block, of exactly one
wide block, and of one column, with run-time batch and height; other forms and targets keep the
op as it is."""
import re

import numpy as np
import pytest

from numpy_windows import strided_windows

import einc
from einc import host_cpu
from tests.tiers import VULKAN_FULL, by_tier

SOURCE = """
let X: [f32; N, 3, H, W];
let X1: [f32; N, 1, H, W];
let Xh: [f32; N, H, W, 3];
let Xd: [f32; N, 3, W];
let Xv: [f32; N, 2, 3, H, W];
let K: [f32; 4, 3, 5, 5];
let K3: [f32; 4, 3, 3, 3];
let K1: [f32; 4, 1, 3, 3];
let Kh: [f32; 3, 3, 3, 4];
let Kd: [f32; 4, 3, 3];
let Kw: [f32; 3, 3, 3];
let Kv: [f32; 4, 2, 2, 3, 3];

let padded[n, o, h in 0..H, w in 0..W] = sum[c, kh, kw](
    if ih >= 0 && ih < H && iw >= 0 && iw < W { X[n, c, ih, iw] * K[o, c, kh, kw] } else { 0.0 }
    where ih = h + kh - 2, iw = w + kw - 2);
let strided[n, o, h, w] = sum[c, kh, kw](X[n, c, 2 * h + kh, 2 * w + kw] * K3[o, c, kh, kw]);
let dilated[n, o, h, w] = sum[c, kh, kw](X[n, c, h + 2 * kh, w + 2 * kw] * K3[o, c, kh, kw]);
let one_channel[n, o, h, w] = sum[c, kh, kw](X1[n, c, h + kh, w + kw] * K1[o, c, kh, kw]);
let nhwc[n, h, w, o] = sum[kh, kw, c](Xh[n, h + kh, w + kw, c] * Kh[kh, kw, c, o]);
let ncw[n, o, x] = sum[c, k](Xd[n, c, x + k] * Kd[o, c, k]);
let depthwise[n, c, h, w] = sum[kh, kw](X[n, c, h + kh, w + kw] * Kw[c, kh, kw]);
let volume[n, o, d, h, w] = sum[c, kd, kh, kw](Xv[n, c, d + kd, h + kh, w + kw] * Kv[o, c, kd, kh, kw]);
let pool[n, c, h in 0..H / 2, w in 0..W / 2] = max[a in 0..2, b in 0..2](X[n, c, 2 * h + a, 2 * w + b]);
"""
AVX512 = {"flags": "avx avx2 fma avx512f"}
OUTPUTS = ["padded", "strided", "dilated", "one_channel", "nhwc", "ncw", "depthwise", "volume", "pool"]
# the forms the sweep builds: a padded, a strided, a channels-last and a 1-d one in the fast tier
SWEPT = by_tier(["padded", "strided", "nhwc", "ncw"], OUTPUTS)
rng = np.random.default_rng(19)


def _references(x: dict, names=OUTPUTS) -> dict:
    x = {k: v.astype(np.float64) for k, v in x.items()}
    conv = lambda image, kernel, **kw: np.einsum("nchwij,ocij->nohw", strided_windows(image, kernel.shape[2:], (2, 3), **kw),
                                                 kernel)
    references = {
        "padded": lambda: conv(np.pad(x["X"], ((0, 0), (0, 0), (2, 2), (2, 2))), x["K"]),
        "strided": lambda: conv(x["X"], x["K3"], stride=2),
        "dilated": lambda: conv(x["X"], x["K3"], dilation=2),
        "one_channel": lambda: conv(x["X1"], x["K1"]),
        "nhwc": lambda: np.einsum("nhwcij,ijco->nhwo", strided_windows(x["Xh"], (3, 3), (1, 2)), x["Kh"]),
        "ncw": lambda: np.einsum("ncxk,ock->nox", strided_windows(x["Xd"], (3,), (2,)), x["Kd"]),
        "depthwise": lambda: np.einsum("nchwij,cij->nchw", strided_windows(x["X"], (3, 3), (2, 3)), x["Kw"]),
        "volume": lambda: np.einsum("ncdhwijk,ocijk->nodhw", strided_windows(x["Xv"], (2, 3, 3), (2, 3, 4)), x["Kv"]),
        "pool": lambda: strided_windows(x["X"], (2, 2), (2, 3), stride=2).max(axis=(4, 5)),
    }
    return {name: references[name]() for name in names}


def _inputs(n: int, h: int, w: int) -> dict:
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return {"X": f(n, 3, h, w), "X1": f(n, 1, h, w), "Xh": f(n, h, w, 3), "Xd": f(n, 3, w), "Xv": f(n, 2, 3, h, w),
            "K": f(4, 3, 5, 5), "K3": f(4, 3, 3, 3), "K1": f(4, 1, 3, 3), "Kh": f(3, 3, 3, 4), "Kd": f(4, 3, 3),
            "Kw": f(3, 3, 3), "Kv": f(4, 2, 2, 3, 3)}


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("llvm-cpu-generic", marks=pytest.mark.full), VULKAN_FULL])
def test_every_convolution_matches_numpy_at_widths_off_the_block(target):
    """Widths 37 (35-37 results: two blocks of 16 and a part), 21 (one block and a part), 5
    (narrower than a block; one result for the dilated window), 64 (one wide block, or 62 results:
    four of 16), 150 (two wide blocks and two of 16; 74 strided results: one wide and one of 16),
    16 and 17 (one block of 16 exactly, or a second one moved left over the first; 14 and 15
    valid results: narrower than a block, the image padded), 32 and 36 (32 results: exactly a
    block's width, no loop), 40, 56, 24 and 48 (where a row is 8 columns: run once on that
    width), 44, 60 and 28 (there 32 + 16 moved left, 32 + 16 + 16, two of 16), with batch and
    height varied."""
    with einc.load(einc.compile(SOURCE, target=target, outputs=SWEPT).vmfb) as program:
        for n, h, w in [(2, 7, 37), (1, 5, 21), (3, 6, 5), (1, 6, 64), (2, 5, 150), (2, 5, 16), (1, 5, 17),
                        (2, 5, 32), (1, 5, 36), (2, 5, 40), (1, 5, 56), (1, 5, 28), (1, 5, 24), (2, 5, 48),
                        (1, 6, 44), (2, 5, 60)]:
            x = _inputs(n, h, w)
            got = program(**x)
            for name, want in _references(x, SWEPT).items():
                np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-4, err_msg=f"{name} at {(n, h, w)}")


def test_one_column_and_one_image():
    """A padded convolution of a 1-column image: one block of which one column is kept."""
    with einc.load(einc.compile(SOURCE, outputs=["padded"]).vmfb) as program:
        x = _inputs(1, 4, 1)
        got = program(**x)["padded"]
    np.testing.assert_allclose(got, _references(x, ["padded"])["padded"], rtol=1e-4, atol=1e-4)


def test_batched_convolutions_run_on_static_blocks_on_the_cpu(emitted, monkeypatch):
    """2-d convolutions (NCHW, NHWC) run with 64 result columns, 32 and 16 (three loops), or
    once on a width of exactly 64, 32 or 16, or on 16 padded columns when narrower (seven ops
    in all, chosen by `scf.if`), on a host whose vector step is a row of 16 columns (AVX-512);
    the known `--dim` width keeps its own; pooling, depthwise convolutions and Vulkan keep the
    run-time width."""
    monkeypatch.setattr(host_cpu, "cpuinfo_fields", lambda: AVX512)
    text = emitted(SOURCE, "llvm-cpu", ["padded"])
    assert re.search(r"linalg\.conv_2d_nchw_fchw .*-> tensor<\?x4x\?x64xf32>", text)
    assert re.search(r"linalg\.conv_2d_nchw_fchw .*-> tensor<\?x4x\?x32xf32>", text)
    assert re.search(r"linalg\.conv_2d_nchw_fchw .*-> tensor<\?x4x\?x16xf32>", text)
    assert text.count("scf.for") == 3 and text.count("tensor.pad") == 2     # its own pad, and one if narrow
    assert text.count("linalg.conv_2d_nchw_fchw") == 7 and text.count("scf.if") == 4
    fixed = emitted(SOURCE, "llvm-cpu", ["padded"], dims={"W": 40})
    assert re.search(r"linalg\.conv_2d_nchw_fchw .*-> tensor<\?x4x\?x40xf32>", fixed)
    nhwc = emitted(SOURCE, "llvm-cpu", ["nhwc"])
    assert re.search(r"linalg\.conv_2d_nhwc_hwcf .*-> tensor<\?x\?x16x4xf32>", nhwc)
    pool = emitted(SOURCE, "llvm-cpu", ["pool"])
    assert re.search(r"linalg\.pooling_nchw_max .*-> tensor<\?x3x\?x\?xf32>", pool)
    depthwise = emitted(SOURCE, "llvm-cpu", ["depthwise"])
    assert re.search(r"linalg\.depthwise_conv_2d_nchw_chw .*-> tensor<\?x3x\?x\?xf32>", depthwise)
    vulkan = emitted(SOURCE, "vulkan-spirv", ["padded"])
    assert re.search(r"linalg\.conv_2d_nchw_fchw .*-> tensor<\?x4x\?x\?xf32>", vulkan)


def test_rows_shorter_than_a_block_get_blocks_of_their_own(emitted, monkeypatch):
    """Where a vector step is a row of 8 columns (AVX2), blocks of 8 follow those of 16 (a loop
    more), and the rest after the blocks of 16 is at most one row (36 columns run as 32 + 8, not
    32 + 16 moved left); a width of any whole count of rows up to 64 runs the op once on it
    (eight widths and the narrow one: nine choices; 40 and 56 columns ran 1.4x and 1.8x their
    `--dim` time on blocks). The columns above match NumPy at such widths on this host."""
    monkeypatch.setattr(host_cpu, "cpuinfo_fields", lambda: {"flags": "avx avx2 fma"})
    text = emitted(SOURCE, "llvm-cpu", ["padded"])
    for width in (64, 56, 48, 40, 32, 24, 16, 8):
        assert re.search(rf"linalg\.conv_2d_nchw_fchw .*-> tensor<\?x4x\?x{width}xf32>", text), width
    assert text.count("scf.for") == 4 and text.count("scf.if") == 9 and text.count("linalg.conv_2d_nchw_fchw") == 13
    assert "arith.ceildivui" in text and "arith.minui" in text
    ncw = emitted(SOURCE, "llvm-cpu", ["ncw"])                                    # 2-d ops only
    assert re.search(r"linalg\.conv_1d_ncw_fcw .*-> tensor<\?x4x64xf32>", ncw)
    assert not re.search(r"linalg\.conv_1d_ncw_fcw .*-> tensor<\?x4x40xf32>", ncw)


def test_one_dimensional_convolutions_run_on_wide_blocks(emitted):
    """A 1-d convolution's run-time length: blocks of 1024 points, of 64, then of 16 (einc's
    tiles on each), matching NumPy at lengths of no block of 1024, of one exactly and of two and
    a part under 64."""
    text = emitted(SOURCE, "llvm-cpu", ["ncw"])
    assert re.search(r"linalg\.conv_1d_ncw_fcw \{compilation_info.*-> tensor<\?x4x1024xf32>", text)
    assert re.search(r"linalg\.conv_1d_ncw_fcw \{compilation_info.*-> tensor<\?x4x64xf32>", text)
    assert re.search(r"linalg\.conv_1d_ncw_fcw \{compilation_info.*-> tensor<\?x4x16xf32>", text)
    with einc.load(einc.compile(SOURCE, outputs=["ncw"]).vmfb) as program:
        for n, w in [(2, 300), (1, 1026), (3, 2100)]:
            x = _inputs(n, 5, w)
            want = _references(x, ["ncw"])["ncw"]
            np.testing.assert_allclose(program(**x)["ncw"], want, rtol=1e-4, atol=1e-4, err_msg=f"at {(n, w)}")
    # the `--dim` build of the same length (IREE's tiles, no blocks) agrees with NumPy too
    with einc.load(einc.compile(SOURCE, outputs=["ncw"], dims={"N": 3, "W": 2100}).vmfb) as program:
        np.testing.assert_allclose(program(**x)["ncw"], want, rtol=1e-4, atol=1e-4, err_msg="fixed")


@pytest.mark.full
def test_a_fixed_batch_with_a_run_time_width():
    """The loop over blocks with a batch of build-time size: blocks are sliced, not reshaped."""
    with einc.load(einc.compile(SOURCE, outputs=["padded", "strided", "nhwc"], dims={"N": 2}).vmfb) as program:
        x = _inputs(2, 5, 21)
        got = program(**x)
    for name, want in _references(x, ["padded", "strided", "nhwc"]).items():
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-4, err_msg=name)


EPILOGUES = """
let X: [f32; N, 3, H, W];
let Xh: [f32; N, H, W, 3];
let Z: [f32; N, 4, H, W];
let K: [f32; 4, 3, 5, 5];
let Kh: [f32; 3, 3, 3, 4];
let b: [f32; 4];
fn relu(v) { if v > 0.0 { v } else { 0.0 } }
let layer[n, o, h in 0..H, w in 0..W] = relu(b[o] + sum[c, kh, kw](
    if ih >= 0 && ih < H && iw >= 0 && iw < W { X[n, c, ih, iw] * K[o, c, kh, kw] } else { 0.0 }
    where ih = h + kh - 2, iw = w + kw - 2));
let residual[n, o, h in 0..H - 4, w in 0..W - 4] = Z[n, o, h, w] * 0.5 + sum[c, kh, kw](
    X[n, c, h + kh, w + kw] * K[o, c, kh, kw]);
let nhwc[n, h, w, o] = max(b[o], sum[kh, kw, c](Xh[n, h + kh, w + kw, c] * Kh[kh, kw, c, o]));
let conv[n, o, h, w] = sum[c, kh, kw](X[n, c, h + kh, w + kw] * K[o, c, kh, kw]);
let twice[n, o, h, w] = conv[n, o, h, w] * 2.0;
"""
EPILOGUE_OUTPUTS = ["layer", "residual", "nhwc", "conv", "twice"]


def _epilogue_references(x: dict) -> dict:
    x = {k: v.astype(np.float64) for k, v in x.items()}
    conv = lambda image, kernel: np.einsum("nchwij,ocij->nohw", strided_windows(image, kernel.shape[2:], (2, 3)),
                                           kernel)
    padded = conv(np.pad(x["X"], ((0, 0), (0, 0), (2, 2), (2, 2))), x["K"])
    valid = conv(x["X"], x["K"])
    nhwc = np.einsum("nhwcij,ijco->nhwo", strided_windows(x["Xh"], (3, 3), (1, 2)), x["Kh"])
    return {"layer": np.maximum(padded + x["b"][:, None, None], 0),
            "residual": x["Z"][:, :, :valid.shape[2], :valid.shape[3]] * 0.5 + valid,
            "nhwc": np.maximum(nhwc, x["b"]), "conv": valid, "twice": valid * 2}


def test_an_elementwise_epilogue_runs_with_each_block(emitted, monkeypatch):
    """An elementwise op on a convolution over a run-time width (bias and ReLU, a residual read
    at the same point, NHWC) is computed in each branch of the width's choice and on each block
    before it is written into place, so IREE fuses it into the block's convolution: no
    linalg.generic is left after the choice. A convolution also read as it is keeps its op
    after the choice. Each matches NumPy at widths of one block exactly, narrower than a block,
    and of several blocks and a part. (The counts are an AVX-512 host's: seven widths.)"""
    with monkeypatch.context() as forced:
        forced.setattr(host_cpu, "cpuinfo_fields", lambda: AVX512)
        layer = emitted(EPILOGUES, "llvm-cpu", ["layer"])
        shared = emitted(EPILOGUES, "llvm-cpu", ["conv", "twice"])
    assert layer.count("linalg.conv_2d_nchw_fchw") == 7 and layer.count("linalg.generic") == 7
    tail = layer[layer.rindex("scf.yield"):]
    assert "linalg.generic" not in tail and "einc.width_choice" not in layer
    assert re.search(r"linalg\.generic .*tensor<\?x4x\?x64xf32>\) outs", layer)
    assert "linalg.generic" in shared[shared.rindex("scf.yield"):]
    with einc.load(einc.compile(EPILOGUES, outputs=EPILOGUE_OUTPUTS).vmfb) as program:
        for n, h, w in [(2, 6, 64), (1, 7, 37), (2, 5, 9), (1, 6, 150), (2, 5, 20)]:
            f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
            x = {"X": f(n, 3, h, w), "Xh": f(n, h, w, 3), "Z": f(n, 4, h, w), "K": f(4, 3, 5, 5),
                 "Kh": f(3, 3, 3, 4), "b": f(4)}
            got = program(**x)
            for name, want in _epilogue_references(x).items():
                np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-4, err_msg=f"{name} at {(n, h, w)}")
