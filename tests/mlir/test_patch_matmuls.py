"""Convolutions over non-overlapping windows (einc/mlir/dense/patch_matmuls.py): a ViT's patch
embedding and its kin in other layouts are a matmul over the input split into patches (no conv
op, no gather), with the result in the definition's layout; overlapping or dilated windows stay
convolutions. Every definition matches NumPy at batch 1 and 3 on llvm-cpu and vulkan-spirv."""
import os
import re

import numpy as np
import pytest

import einc
from einc.driver import lower
from einc.mlir.dense import cpu_matmuls
from tests.tiers import VULKAN_FULL

SOURCE = """
let X: [f32; B, 3, 10, 13];
let Wt: [f32; 5, 3, 4, 4];
let Xh: [f32; B, 10, 13, 3];
let Wh: [f32; 4, 4, 3, 5];
let Wo: [f32; 5, 4, 4, 3];
let Xs: [f32; B, 3, 12];
let Ws: [f32; 7, 3, 3];
let Wst: [f32; 2, 5, 3, 2, 2];

// channels first, a non-square image with rows and columns past the last window
let nchw[n, f in 0..5, i in 0..2, j in 0..3] = sum[c, kh in 0..4, kw in 0..4](
    X[n, c, 4 * i + kh, 4 * j + kw] * Wt[f, c, kh, kw]);
// channels last, weights [kh, kw, c, f] and [f, kh, kw, c]
let nhwc[n, i in 0..2, j in 0..3, f in 0..5] = sum[kh in 0..4, kw in 0..4, c](
    Xh[n, 4 * i + kh, 4 * j + kw, c] * Wh[kh, kw, c, f]);
let fhwc[n, i in 0..2, j in 0..3, f in 0..5] = sum[kh in 0..4, kw in 0..4, c](
    Xh[n, 4 * i + kh, 4 * j + kw, c] * Wo[f, kh, kw, c]);
// 1-d, the windows covering the whole signal; 2 x 2 windows of a layer of stacked weights
let frames[n, f in 0..7, t in 0..4] = sum[c, k in 0..3](Xs[n, c, 3 * t + k] * Ws[f, c, k]);
let stacked[n, f in 0..5, i in 0..5, j in 0..6] = sum[c, kh in 0..2, kw in 0..2](
    X[n, c, 2 * i + kh, 2 * j + kw] * Wst[1, f, c, kh, kw]);
// not patches: overlapping windows, and dilated ones (they do not overlap but skip elements)
let overlapping[n, f in 0..5, i in 0..3, j in 0..4] = sum[c, kh in 0..4, kw in 0..4](
    X[n, c, 3 * i + kh, 3 * j + kw] * Wt[f, c, kh, kw]);
let dilated[n, f in 0..7, t in 0..2] = sum[c, k in 0..3](Xs[n, c, 6 * t + 2 * k] * Ws[f, c, k]);
"""

PATCHES = ["nchw", "nhwc", "fhwc", "frames", "stacked"]
CONVOLUTIONS = {"overlapping": "linalg.conv_2d_nchw_fchw", "dilated": "linalg.conv_1d_ncw_fcw"}
EXTRACT = re.compile(r"tensor\.extract\s")


@pytest.fixture(autouse=True)
def named_matmuls(monkeypatch):
    """The rule's own form on any host (an AVX-512 host packs f32 matmuls into register tiles)."""
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: None)


@pytest.mark.parametrize("output", PATCHES)
def test_non_overlapping_windows_are_a_matmul(emitted, output):
    text = emitted(SOURCE, outputs=[output])
    assert "linalg.matmul " in text and "tensor.expand_shape" in text
    assert "linalg.conv" not in text and not EXTRACT.search(text)


@pytest.mark.parametrize("output", sorted(CONVOLUTIONS))
def test_overlapping_or_dilated_windows_stay_a_convolution(emitted, output):
    text = emitted(SOURCE, outputs=[output])
    assert CONVOLUTIONS[output] + " " in text and "linalg.matmul" not in text


def _patches(x, window, axes):
    """x cut to whole windows on `axes` and split there into (window, offset)."""
    shape, index = [], []
    for a, size in enumerate(x.shape):
        whole = size // window if a in axes else size
        index.append(slice(0, whole * window) if a in axes else slice(None))
        shape += [whole, window] if a in axes else [size]
    return x[tuple(index)].reshape(shape)


def _references(x):
    X, Xh, Xs = x["X"], x["Xh"], x["Xs"]
    dilated = np.stack([Xs[:, :, 6 * t + 2 * np.arange(3)] for t in range(2)], axis=2)
    overlapping = np.stack([np.stack([X[:, :, 3 * i:3 * i + 4, 3 * j:3 * j + 4] for j in range(4)], axis=2)
                            for i in range(3)], axis=2)
    return {
        "nchw": np.einsum("ncipjq,fcpq->nfij", _patches(X, 4, (2, 3)), x["Wt"]),
        "nhwc": np.einsum("nipjqc,pqcf->nijf", _patches(Xh, 4, (1, 2)), x["Wh"]),
        "fhwc": np.einsum("nipjqc,fpqc->nijf", _patches(Xh, 4, (1, 2)), x["Wo"]),
        "frames": np.einsum("nctk,fck->nft", _patches(Xs, 3, (2,)), x["Ws"]),
        "stacked": np.einsum("ncipjq,fcpq->nfij", _patches(X, 2, (2, 3)), x["Wst"][1]),
        "overlapping": np.einsum("ncijpq,fcpq->nfij", overlapping, x["Wt"]),
        "dilated": np.einsum("nctk,fck->nft", dilated, x["Ws"]),
    }


def _inputs(batch):
    rng = np.random.default_rng(batch)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return {"X": f(batch, 3, 10, 13), "Wt": f(5, 3, 4, 4), "Xh": f(batch, 10, 13, 3), "Wh": f(4, 4, 3, 5),
            "Wo": f(5, 4, 4, 3), "Xs": f(batch, 3, 12), "Ws": f(7, 3, 3), "Wst": f(2, 5, 3, 2, 2)}


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_patch_matmuls_match_numpy(target):
    with einc.load(einc.compile(SOURCE, target=target).vmfb) as program:
        for batch in (1, 3):
            x = _inputs(batch)
            got = program(**x)
            expected = _references({k: v.astype(np.float64) for k, v in x.items()})
            wrong = [name for name, want in expected.items()
                     if got[name].shape != want.shape or not np.allclose(got[name], want, rtol=1e-4, atol=1e-4)]
            assert not wrong, f"{target} at batch {batch} differs from NumPy in {wrong}"


def test_build_time_weights_on_an_avx512_host_are_register_tiled(program_file, monkeypatch):
    """A ViT's patch embedding as the CPU runs it: constant weights, einc's register tiles."""
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: "avx512")
    weights = np.random.default_rng(0).standard_normal((32, 3, 8, 8)).astype(np.float32)
    path = program_file('use std::io::load_npy;\nlet w = load_npy("w.npy");\nlet X: [f32; B, 3, 32, 48];\n'
                        "let P[n, d, i in 0..4, j in 0..6] = sum[c, kh in 0..8, kw in 0..8](\n"
                        "    X[n, c, 8 * i + kh, 8 * j + kw] * w[d, c, kh, kw]);\n")
    np.save(os.path.join(os.path.dirname(path), "w.npy"), weights)
    assert "linalg.mmt4d" in str(lower(path, "llvm-cpu", ["P"]))
    x = np.random.default_rng(1).standard_normal((2, 3, 32, 48)).astype(np.float32)
    with einc.load(einc.compile(path, target="llvm-cpu", weights_threshold=None).vmfb) as program:
        got = program(X=x)["P"]
    want = np.einsum("ncipjq,dcpq->ndij", _patches(x.astype(np.float64), 8, (2, 3)), weights)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# (program, its input shapes, the stride and size of its windows, its outputs with their scales,
# atol relative to the largest value): patches of a run-time batch on the CPU targets, which
# IREE-43 failed to compile with the patches fused, a ViT's on llvm-cpu-generic and small ones
# (K = 12, of an input and of a computed image, found by the dense fuzzer) on both
VIT_EMBEDDING = ("let X: [f32; B, 3, 224, 224];\nlet W: [f32; 192, 3, 16, 16];\n"
                 "let P[n, d, i in 0..14, j in 0..14] = sum[c, kh in 0..16, kw in 0..16](\n"
                 "    X[n, c, 16 * i + kh, 16 * j + kw] * W[d, c, kh, kw]);\n",
                 ((1, 3, 224, 224), (192, 3, 16, 16)), 16, {"P": 1.0}, 1e-4)
SMALL_PATCHES = ("let X: [f32; B, 3, 16, 8];\nlet W: [f32; 4, 3, 2, 2];\nlet H[n, c, h, w] = X[n, c, h, w] * 0.5;\n"
                 "let P[n, d, i in 0..8, j in 0..4] = sum[c, kh in 0..2, kw in 0..2](X[n, c, 2 * i + kh, 2 * j + kw] * W[d, c, kh, kw]);\n"
                 "let Q[n, d, i in 0..8, j in 0..4] = sum[c, kh in 0..2, kw in 0..2](H[n, c, 2 * i + kh, 2 * j + kw] * W[d, c, kh, kw]);\n",
                 ((3, 3, 16, 8), (4, 3, 2, 2)), 2, {"P": 1.0, "Q": 0.5}, 1e-6)


@pytest.mark.parametrize("case, target", [(VIT_EMBEDDING, "llvm-cpu-generic"), (SMALL_PATCHES, "llvm-cpu"),
                                          (SMALL_PATCHES, "llvm-cpu-generic")], ids=["vit-generic", "small-cpu", "small-generic"])
def test_patches_of_a_run_time_batch_on_the_cpu(case, target):
    source, (x_shape, w_shape), window, scales, atol = case
    rng = np.random.default_rng(2)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    with einc.load(einc.compile(source, target=target, outputs=sorted(scales)).vmfb) as program:
        got = program(X=x, W=w)
    want = np.einsum("ncipjq,dcpq->ndij", _patches(x.astype(np.float64), window, (2, 3)), w)
    for name, scale in scales.items():
        np.testing.assert_allclose(got[name], want * scale, rtol=1e-4, atol=atol * np.abs(want).max(), err_msg=name)
