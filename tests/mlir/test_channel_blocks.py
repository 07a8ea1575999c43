"""Convolutions over a run-time count of output channels (einc/mlir/dense/channel_blocks.py): on
llvm-cpu the 2-d ones loop over blocks of 8 output channels known at build time; every form
matches NumPy at channel counts under a block, off the block and a multiple of it, with every
other size named too; other forms and targets keep the op as it is."""
import re

import numpy as np
import pytest

from numpy_windows import strided_windows

import einc
from einc.host_cpu import vector_registers
from tests.tiers import VULKAN_FULL, by_tier

SOURCE = """
let X: [f32; N, C, H, W];
let Xh: [f32; N, H, W, C];
let K: [f32; F, C, 5, 5];
let K3: [f32; F, C, 3, 3];
let Kh: [f32; 3, 3, C, F];
let Kf: [f32; F, 3, 3, C];
let Kd: [f32; F, C, 3];

let padded[n, o, h in 0..H, w in 0..W] = sum[c, kh, kw](
    if ih >= 0 && ih < H && iw >= 0 && iw < W { X[n, c, ih, iw] * K[o, c, kh, kw] } else { 0.0 }
    where ih = h + kh - 2, iw = w + kw - 2);
let strided[n, o, h, w] = sum[c, kh, kw](X[n, c, 2 * h + kh, 2 * w + kw] * K3[o, c, kh, kw]);
let nhwc[n, h, w, o] = sum[kh, kw, c](Xh[n, h + kh, w + kw, c] * Kh[kh, kw, c, o]);
let fhwc[n, h, w, o] = sum[kh, kw, c](Xh[n, h + kh, w + kw, c] * Kf[o, kh, kw, c]);
let ncw[n, o, x] = sum[c, k](X[n, c, 0, x + k] * Kd[o, c, k]);
"""
OUTPUTS = ["padded", "strided", "nhwc", "fhwc", "ncw"]
SWEPT = by_tier(["padded", "nhwc", "ncw"], OUTPUTS)      # the forms the fast tier's sweep builds
rng = np.random.default_rng(1919)


def _inputs(n: int, c: int, f: int, h: int, w: int) -> dict:
    g = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return {"X": g(n, c, h, w), "Xh": g(n, h, w, c), "K": g(f, c, 5, 5), "K3": g(f, c, 3, 3),
            "Kh": g(3, 3, c, f), "Kf": g(f, 3, 3, c), "Kd": g(f, c, 3)}


def _references(x: dict) -> dict:
    x = {k: v.astype(np.float64) for k, v in x.items()}
    conv = lambda image, kernel, **kw: np.einsum(
        "nchwij,ocij->nohw", strided_windows(image, kernel.shape[2:], (2, 3), **kw), kernel)
    return {
        "padded": conv(np.pad(x["X"], ((0, 0), (0, 0), (2, 2), (2, 2))), x["K"]),
        "strided": conv(x["X"], x["K3"], stride=2),
        "nhwc": np.einsum("nhwcij,ijco->nhwo", strided_windows(x["Xh"], (3, 3), (1, 2)), x["Kh"]),
        "fhwc": np.einsum("nhwcij,oijc->nhwo", strided_windows(x["Xh"], (3, 3), (1, 2)), x["Kf"]),
        "ncw": np.einsum("ncxk,ock->nox", strided_windows(x["X"][:, :, 0], (3,), (2,)), x["Kd"]),
    }


# (batch, input channels, output channels, height, width): output channels under a block, of
# one channel, off the block by one and by more, one block and four blocks exactly, none; the
# last one with a width over a wide block of columns (width_blocks: one of 64 and one of 16)
SIZES = [(2, 3, 5, 7, 9), (1, 1, 1, 5, 6), (2, 2, 17, 6, 21), (1, 4, 37, 5, 5), (1, 2, 8, 4, 17), (2, 3, 32, 6, 7),
         (2, 3, 0, 6, 7), (1, 2, 11, 3, 70)]


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("llvm-cpu-generic", marks=pytest.mark.full), VULKAN_FULL])
def test_every_convolution_matches_numpy_at_channel_counts_off_the_block(target):
    with einc.load(einc.compile(SOURCE, target=target, outputs=SWEPT).vmfb) as program:
        # (Vulkan refuses empty tensors with a RunError: tests/e2e/test_empty_extents.py)
        for sizes in [s for s in SIZES if target != "vulkan-spirv" or 0 not in s]:
            x = _inputs(*sizes)
            got = program(**x)
            for name, want in _references(x).items():
                if name in SWEPT:
                    np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-4, err_msg=f"{name} at {sizes}")


def test_run_time_output_channels_loop_over_static_blocks_on_the_cpu(emitted):
    """The 1-d and 2-d convolutions run once a block of 8 output channels (and on blocks of 64,
    32 and 16 columns for the run-time width, 1024, 64 and 16 for 1-d); a fixed channel count and
    Vulkan keep the op's channels."""
    text = emitted(SOURCE, "llvm-cpu", ["padded"])
    assert "scf.for" in text
    assert re.search(r"linalg\.conv_2d_nchw_fchw .*tensor<8x\?x5x5xf32>\) .*-> tensor<\?x8x\?x16xf32>", text)
    nhwc = emitted(SOURCE, "llvm-cpu", ["nhwc", "fhwc"])
    assert re.search(r"linalg\.conv_2d_nhwc_hwcf .*-> tensor<\?x\?x16x8xf32>", nhwc)
    assert re.search(r"linalg\.conv_2d_nhwc_fhwc .*-> tensor<\?x\?x16x8xf32>", nhwc)
    # channels last: blocks of 16 output channels, then of 8 for the rest
    assert re.search(r"linalg\.conv_2d_nhwc_hwcf .*-> tensor<\?x\?x16x16xf32>", nhwc)
    assert re.search(r"linalg\.conv_2d_nhwc_fhwc .*-> tensor<\?x\?x64x16xf32>", nhwc)
    # channels last on blocks: einc's tiles (rows of 8 columns by the block's 8 or 16 channels, at
    # most one vector register of them: 8 on AVX2, tests/mlir/test_conv_rows.py)
    assert re.search(r"linalg\.conv_2d_nhwc_hwcf \{compilation_info", nhwc)
    for channels in (8, 16):
        step = min(channels, vector_registers(True).lanes)
        assert f"vector_common_parallel = [1, 1, 8, {step}, 0, 0, 0]" in nhwc
    fixed = emitted(SOURCE, "llvm-cpu", ["padded"], dims={"F": 12})
    # the width's loop stays, with no slice of 8 filters in it
    assert "to tensor<8x?x5x5xf32>" not in fixed
    assert re.search(r"linalg\.conv_2d_nchw_fchw .*-> tensor<\?x12x\?x16xf32>", fixed)
    ncw = emitted(SOURCE, "llvm-cpu", ["ncw"])
    # a 1-d one: blocks of 8 output channels and of 1024, 64 and 16 columns
    assert re.search(r"linalg\.conv_1d_ncw_fcw .*tensor<8x\?x3xf32>\) .*-> tensor<\?x8x1024xf32>", ncw)
    assert re.search(r"linalg\.conv_1d_ncw_fcw .*tensor<8x\?x3xf32>\) .*-> tensor<\?x8x16xf32>", ncw)
    vulkan = emitted(SOURCE, "vulkan-spirv", ["padded"])
    assert "scf.for" not in vulkan and re.search(r"linalg\.conv_2d_nchw_fchw .*-> tensor<\?x\?x\?x\?xf32>", vulkan)
