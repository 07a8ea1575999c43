"""Dense recognizers (einc/mlir/named_ops, operand_views): each pattern's MLIR holds its named op
(or tensor.pad / tensor.expand_shape) and no tensor.extract gather, and every definition, those
that must not be recognised included, matches NumPy. One module holds every definition, built
once; the MLIR of each definition alone is lowered without IREE."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from numpy_windows import strided_windows

import einc
from einc import host_cpu
from einc.driver import lower
from einc.mlir.dense import cpu_matmuls
from tests.tiers import GENERIC_FULL, VULKAN_FULL

SOURCE = """
let A: [f32; M, K];
let B: [f32; K, N];
let v: [f32; K];
let u: [f32; M];
let T: [f32; 2, M, K];
let S: [f32; 2, K, N];
let Q: [f32; 2, 3, K];
let P: [f32; 2, 4, 3, 3];
let Wf: [f32; 36, 5];
let X: [f32; 2, 3, 9, 8];
let Wc: [f32; 4, 3, 3, 3];
let X1: [f32; G, 1, 9, 8];
let Xg: [f32; G, 9, 8, 1];
let Wg: [f32; 3, 3, 1, 4];
let W1: [f32; 4, 1, 3, 3];
let Xh: [f32; 2, 9, 8, 3];
let Wh: [f32; 3, 3, 3, 4];
let Wo: [f32; 4, 3, 3, 3];
let Xd: [f32; 2, 3, 8];
let Wd: [f32; 3, 3];
let Wdw: [f32; 3, 3, 3];
let Xv: [f32; 2, 3, 5, 6, 4];
let Wv: [f32; 4, 3, 2, 3, 3];
let img: [f32; H, W];
let ker: [f32; 3, 3];
let idx: [i32; 4];
let Wst: [f32; 3, K, N];
let C: [f32; N, K];
let qk: [f32; 5, 12];
let kk: [f32; 6, 12];
let ctx: [f32; 3, 5, 4];
let Wm: [f32; 12, 6];
let qkv: [f32; 2, 5, 36];
let pr: [f32; 2, 3, 5, 5];

fn relu(z) { if z > 0.0 { z } else { 0.0 } }

// contractions: the result's letters stand for runs of variables
let mm[i, j] = sum[k](A[i, k] * B[k, j]);
let bmm[b, i, j] = sum[k](T[b, i, k] * S[b, k, j]);
let mv[i] = sum[k](A[i, k] * v[k]);
let vm[j] = sum[i](u[i] * A[i, j]);
let dot = sum[k](v[k] * v[k]);
let rows[b, r, j] = sum[k](Q[b, r, k] * B[k, j]);
let flat[n, k in 0..5] = sum[c, h, w](P[n, c, h, w] * Wf[9 * c + 3 * h + w, k]);
// a slice of stacked weights; operands transposed into the op's order (attention's heads split
// by a flattened subscript, merged back by a quotient and a remainder)
let stacked[i, j] = sum[k](A[i, k] * Wst[1, k, j]);
let abt[i, j] = sum[k](A[i, k] * C[j, k]);
let heads[h in 0..3, s, t] = sum[d in 0..4](qk[s, h * 4 + d] * kk[t, h * 4 + d]);
let merged[s, e] = sum[d in 0..12](ctx[d / 4, s, d % 4] * Wm[d, e]);
let unheads[s, d in 0..12] = ctx[d / 4, s, d % 4];
// batched heads of queries, keys and values side by side: the keys' and values' columns start
// at an offset (a cut of the axis, then the split)
let scores[n, h in 0..3, s, t] = sum[d in 0..4](qkv[n, s, h * 4 + d] * qkv[n, t, 12 + h * 4 + d]);
let mixed[n, h in 0..3, s, d in 0..4] = sum[t](pr[n, h, s, t] * qkv[n, t, 24 + h * 4 + d]);

// convolutions: zero padding written as a guard, strides, dilations, layouts
let conv[n, o in 0..4, h in 0..9, w in 0..8] = relu(sum[c in 0..3, kh in 0..3, kw in 0..3](
    if ih >= 0 && ih < 9 && iw >= 0 && iw < 8 { X[n, c, ih, iw] * Wc[o, c, kh, kw] } else { 0.0 }
    where ih = h + kh - 1, iw = w + kw - 1));
let gray[n, o in 0..4, h in 0..5, w in 0..4] = sum[c in 0..1, kh in 0..3, kw in 0..3](
    if ih >= 0 && ih < 9 && iw >= 0 && iw < 8 { X1[n, c, ih, iw] * W1[o, c, kh, kw] } else { 0.0 }
    where ih = 2 * h + kh - 1, iw = 2 * w + kw - 1);
let strided[n, o in 0..4, h in 0..4, w in 0..3] = sum[c in 0..3, kh in 0..3, kw in 0..3](
    X[n, c, 2 * h + kh, 2 * w + kw] * Wc[o, c, kh, kw]);
let grayh[n, h in 0..7, w in 0..6, o in 0..4] = sum[kh in 0..3, kw in 0..3, c in 0..1](
    Xg[n, h + kh, w + kw, c] * Wg[kh, kw, c, o]);
// the channel of group o / 4 (one group: o / 4 is 0 over o in 0..4), as std::ml::conv writes it
let onegroup[n, o in 0..4, h in 0..7, w in 0..6] = sum[c in 0..3, kh in 0..3, kw in 0..3](
    X[n, o / 4 * 3 + c, h + kh, w + kw] * Wc[o, c, kh, kw]);
// remainders that are their dividend over its range (c % 3 for c in 0..3), as std::ml::gemm writes its bias
let wrapped[n, o in 0..4, h in 0..7, w in 0..6] = sum[c in 0..3, kh in 0..3, kw in 0..3](
    X[n, c % 3, h + kh, w + kw] * Wc[o % 4, c, kh, kw]);
let dilated[n, o in 0..4, h in 0..5, w in 0..4] = sum[c in 0..3, kh in 0..3, kw in 0..3](
    X[n, c, h + 2 * kh, w + 2 * kw] * Wc[o, c, kh, kw]);
let nhwc[n, h in 0..7, w in 0..6, o in 0..4] = sum[kh in 0..3, kw in 0..3, c in 0..3](
    Xh[n, h + kh, w + kw, c] * Wh[kh, kw, c, o]);
let fhwc[n, h in 0..9, w in 0..8, o in 0..4] = sum[kh in 0..3, kw in 0..3, c in 0..3](
    if ih >= 0 && ih < 9 && iw >= 0 && iw < 8 { Xh[n, ih, iw, c] * Wo[o, kh, kw, c] } else { 0.0 }
    where ih = h + kh - 1, iw = w + kw - 1);
let conv1d[n, o in 0..3, w in 0..6] = sum[c in 0..3, kw in 0..3](Xd[n, c, w + kw] * Wd[o, kw] * 1.0);
let conv3d[n, o in 0..4, d in 0..4, h in 0..4, w in 0..2] = sum[c in 0..3, kd in 0..2, kh in 0..3, kw in 0..3](
    Xv[n, c, d + kd, h + kh, w + kw] * Wv[o, c, kd, kh, kw]);
let depthwise[n, c, h in 0..7, w in 0..6] = sum[kh in 0..3, kw in 0..3](X[n, c, h + kh, w + kw] * Wdw[c, kh, kw]);
let depthwise1d[n, c, w in 0..6] = sum[kw in 0..3](Xd[n, c, w + kw] * Wd[c, kw]);
let plain2d[h in 0..H - 2, w in 0..W - 2] = sum[kh, kw](img[h + kh, w + kw] * ker[kh, kw]);
let unitdiv[h in 0..H / 1 - 2, w in 0..W - 2] = sum[kh, kw](img[h + kh, w + kw] * ker[kh, kw]);   // x / 1 is x

// pooling
let maxpool[n, c, h in 0..4, w in 0..4] = max[dh in 0..2, dw in 0..2](X[n, c, 2 * h + dh, 2 * w + dw]);
let minpool[n, h in 0..3, w in 0..2, c] = min[dh in 0..3, dw in 0..3](Xh[n, 3 * h + dh, 3 * w + dw, c]);
let sumpool[n, c, w in 0..3] = sum[dw in 0..2](Xd[n, c, 2 * w + dw]);

// a prefix read: v cut to the loop's extent, read through a map (no gather)
let pairs[i in 0..K - 1] = v[i] + v[i + 1];

// padding with the else's constant; only the side the read crosses needs a test; a padded
// square is a generic (one operand read twice), not a sum pooling
let shifted[n, c, h in 0..9, w in 0..8] = if h >= 1 { X[n, c, h - 1, w] } else { 2.0 };
let square[n, c, h in 0..9, w in 0..8] = sum[kh in 0..3](
    if ih >= 0 && ih < 9 { X[n, c, ih, w] * X[n, c, ih, w] } else { 0.0 } where ih = h + kh - 1);

// not recognised, still exact: a guard tighter than the bounds, one with a test that is not
// a bounds test of the read, an else that is not a constant, a filter that does not read
// every input channel, a gather, a flattened subscript that is not row-major
let tight[n, c, h in 0..9, w in 0..8] = sum[kh in 0..3](
    if ih >= 1 && ih < 9 { X[n, c, ih, w] } else { 0.0 } where ih = h + kh - 1);
let extra[n, c, h in 0..9, w in 0..8] = sum[kh in 0..3](
    if w >= 1 && ih >= 0 && ih < 9 { X[n, c, ih, w] } else { 0.0 } where ih = h + kh - 1);
let edge[n, c, h in 0..9, w in 0..8] = sum[kh in 0..3](
    if ih >= 0 && ih < 9 { X[n, c, ih, w] } else { X[n, c, 0, w] } where ih = h + kh - 1);
let gathered[i, j] = A[idx[i], j];
let overlap[n, k in 0..5] = sum[c in 0..4, h in 0..3](P[n, c, h, 0] * Wf[4 * c + 3 * h, k]);
"""

OPS = {
    "mm": "linalg.matmul", "bmm": "linalg.batch_matmul", "mv": "linalg.matvec", "vm": "linalg.vecmat",
    "dot": "linalg.dot", "rows": "linalg.matmul", "flat": "linalg.matmul",
    "stacked": "linalg.matmul", "abt": "linalg.matmul", "heads": "linalg.batch_matmul", "merged": "linalg.matmul",
    "scores": "linalg.batch_matmul", "mixed": "linalg.batch_matmul",
    "conv": "linalg.conv_2d_nchw_fchw", "strided": "linalg.conv_2d_nchw_fchw",
    "dilated": "linalg.conv_2d_nchw_fchw", "onegroup": "linalg.conv_2d_nchw_fchw",
    "wrapped": "linalg.conv_2d_nchw_fchw",
    "nhwc": "linalg.conv_2d_nhwc_hwcf", "grayh": "linalg.conv_2d_nhwc_hwcf",
    "fhwc": "linalg.conv_2d_nhwc_fhwc", "conv3d": "linalg.conv_3d_ncdhw_fcdhw",
    "depthwise": "linalg.depthwise_conv_2d_nchw_chw", "depthwise1d": "linalg.depthwise_conv_1d_ncw_cw",
    "plain2d": "linalg.conv_2d", "unitdiv": "linalg.conv_2d",
    "maxpool": "linalg.pooling_nchw_max", "minpool": "linalg.pooling_nhwc_min", "sumpool": "linalg.pooling_ncw_sum",
}
# llvm-cpu writes a pooling over 3 channels last out as shifted slices, and reads the rows of one
# whose last window axis takes 2 points 2 apart as pairs (tests/mlir/test_cpu_poolings.py)
WRITTEN_OUT = {"minpool", "maxpool", "sumpool"}
NOT_NAMED = ["conv1d", "square", "tight", "extra", "edge", "gathered", "overlap"]
EXTRACT = re.compile(r"tensor\.extract\s")


@pytest.fixture(autouse=True)
def named_matmuls(monkeypatch):
    """The recognizers' own forms on any host: an AVX-512 host packs f32 matmuls into einc's
    register tiles instead (tests/mlir/test_cpu_matmuls.py)."""
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: None)


@pytest.fixture(scope="module")
def source_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("dense") / "dense.ein"
    path.write_text(SOURCE)
    return path


def mlir_of(path, output, target="llvm-cpu"):
    return str(lower(str(path), target, [output]))


@pytest.mark.parametrize("output", sorted(OPS))
def test_named_op_without_gathers(source_file, output):
    text = mlir_of(source_file, output, "vulkan-spirv" if output in WRITTEN_OUT else "llvm-cpu")
    assert OPS[output] + " " in text
    assert not EXTRACT.search(text)


def test_cpu_convolutions_carry_tile_sizes_and_one_channel_gets_a_channel_of_zeros(source_file):
    """llvm-cpu only: NCHW convolutions get IREE tile sizes, a row of columns that divides the
    output's width (8 of 8, 4 of 4); one input channel gets a second channel of zeros."""
    text = mlir_of(source_file, "conv")
    assert "vector_common_parallel = [1, 4, 1, 8, 0, 0, 0]" in text
    assert "compilation_info" not in mlir_of(source_file, "conv", "vulkan-spirv")
    text = mlir_of(source_file, "gray")
    assert "vector_common_parallel = [1, 4, 1, 4, 0, 0, 0]" in text
    assert "strides = dense<2>" in text and "tensor<4x2x3x3xf32>" in text and not EXTRACT.search(text)
    assert text.count("high[0, 1, 0, 0]") == 2             # image and filter, one channel of zeros each
    vulkan = mlir_of(source_file, "gray", "vulkan-spirv")
    assert "linalg.conv_2d_nchw_fchw" in vulkan and "tensor<4x1x3x3xf32>" in vulkan
    text = mlir_of(source_file, "grayh")                   # any layout: the channel axis is padded
    assert "tensor<3x3x2x4xf32>" in text and "high[0, 0, 0, 1]" in text and "high[0, 0, 1, 0]" in text
    assert "compilation_info" not in text                  # IREE's own tiles for NHWC


@pytest.mark.parametrize("output", ["depthwise", "depthwise1d"])
def test_channels_first_depthwise_is_a_generic_on_vulkan(source_file, output):
    """IREE 3.13 miscompiles those named ops there (named_ops.MISCOMPILED)."""
    assert OPS[output] + " " in mlir_of(source_file, output)
    text = mlir_of(source_file, output, "vulkan-spirv")
    assert "linalg.depthwise" not in text and "linalg.generic" in text


@pytest.mark.parametrize("output, pad_value", [("conv", "0.0"), ("fhwc", "0.0"), ("shifted", "2.0"),
                                               ("square", "0.0")])
def test_bounds_guard_is_a_padded_operand(source_file, output, pad_value):
    text = mlir_of(source_file, output)
    assert "tensor.pad" in text and f"arith.constant {pad_value}" in text
    assert not re.search(r"arith\.cmpi s[gl]", text) and not EXTRACT.search(text)     # no guard left


def test_flattened_subscript_reads_the_matrix_whole(source_file):
    text = mlir_of(source_file, "flat")
    assert "tensor.collapse_shape" in text and "linalg.matmul" in text and not EXTRACT.search(text)
    # inside a generic (no named op), the same read is an expand_shape view: no d * 9 + .. map
    text = mlir_of(source_file, "overlap")
    assert "linalg.matmul" not in text and "tensor.expand_shape" not in text and not EXTRACT.search(text)


@pytest.mark.parametrize("output", NOT_NAMED)
def test_near_misses_stay_generic(source_file, output):
    text = mlir_of(source_file, output)
    assert not re.search(r"linalg\.(conv|pooling|depthwise|matmul|matvec)", text)
    if output in ("tight", "extra", "edge"):
        assert "tensor.pad" not in text


def test_prefix_read_is_a_cut_view(source_file):
    text = mlir_of(source_file, "pairs")
    assert "tensor.extract_slice" in text and not EXTRACT.search(text)


def test_stacked_weights_are_a_slice_and_heads_a_transpose(source_file):
    text = mlir_of(source_file, "stacked")
    assert "tensor.extract_slice %arg" in text and "[1, 0, 0]" in text and "linalg.transpose" not in text
    assert "linalg.transpose" in mlir_of(source_file, "abt")
    text = mlir_of(source_file, "heads")
    assert text.count("tensor.expand_shape") == 2 and text.count("linalg.transpose") == 2
    # merged heads: one transpose and a collapse, in a matmul and in a plain copy alike
    for output in ("merged", "unheads"):
        text = mlir_of(source_file, output)
        assert text.count("linalg.transpose") == 1 and "tensor.collapse_shape" in text and not EXTRACT.search(text)
    # columns at an offset: cut out (offsets [0, 0, 12]), split into heads, transposed
    text = mlir_of(source_file, "scores")
    assert "[0, 0, 12] [2, 5, 12] [1, 1, 1]" in text and "linalg.batch_matmul" in text and not EXTRACT.search(text)


def test_symbolic_slice_of_stacked_weights(tmp_path):
    path = tmp_path / "last.ein"
    path.write_text("let A: [f32; 4, 3];\nlet Ws: [f32; L, 3, 5];\n"
                    "let y[i, j] = sum[k](A[i, k] * Ws[L - 1, k, j]);\n")
    text = mlir_of(path, "y")
    assert "linalg.matmul" in text and "tensor.extract_slice" in text and not EXTRACT.search(text)
    a, w = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, 3, 5)).astype(np.float32)
    got = einc.load(einc.compile(str(path)).vmfb)(A=a, Ws=w)["y"]
    np.testing.assert_allclose(got, a.astype(np.float64) @ w[-1].astype(np.float64), rtol=1e-5, atol=1e-5)


def test_flattened_read_in_a_generic_is_an_expanded_view(tmp_path):
    # a max of products is no named op (a sum scaled by a constant is a matmul of computed operands)
    path = tmp_path / "scaled.ein"
    path.write_text("let P: [f32; 2, 4, 3, 3];\nlet Wf: [f32; 36, 5];\n"
                    "let s[n, k] = max[c, h, w](P[n, c, h, w] * Wf[9 * c + 3 * h + w, k] * 0.5);\n")
    text = mlir_of(path, "s")
    assert "tensor.expand_shape" in text and "linalg.matmul" not in text and not EXTRACT.search(text)


# ------------------------------------------------------------------------------ results

rng = np.random.default_rng(10)
SIZES = {"M": 5, "K": 7, "N": 6, "H": 6, "W": 7}


def _inputs():
    m, k, n = SIZES["M"], SIZES["K"], SIZES["N"]
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return {"A": f(m, k), "B": f(k, n), "v": f(k), "u": f(m), "T": f(2, m, k), "S": f(2, k, n),
            "Q": f(2, 3, k), "P": f(2, 4, 3, 3), "Wf": f(36, 5), "X": f(2, 3, 9, 8), "Wc": f(4, 3, 3, 3),
            "Xh": f(2, 9, 8, 3), "Wh": f(3, 3, 3, 4), "Wo": f(4, 3, 3, 3), "Xd": f(2, 3, 8), "Wd": f(3, 3),
            "Wdw": f(3, 3, 3), "X1": f(3, 1, 9, 8), "W1": f(4, 1, 3, 3), "Xg": f(3, 9, 8, 1), "Wg": f(3, 3, 1, 4),
            "Xv": f(2, 3, 5, 6, 4), "Wv": f(4, 3, 2, 3, 3), "img": f(SIZES["H"], SIZES["W"]), "ker": f(3, 3),
            "idx": np.array([4, 0, 2, 2], np.int32), "Wst": f(3, k, n), "C": f(n, k), "qk": f(5, 12),
            "kk": f(6, 12), "ctx": f(3, 5, 4), "Wm": f(12, 6), "qkv": f(2, 5, 36), "pr": f(2, 3, 5, 5)}



def _references(x):
    pad = lambda a, axes: np.pad(a, [(1, 1) if i in axes else (0, 0) for i in range(a.ndim)])
    X, Xh = x["X"], x["Xh"]
    out = {
        "mm": x["A"] @ x["B"], "bmm": x["T"] @ x["S"], "mv": x["A"] @ x["v"], "vm": x["u"] @ x["A"],
        "dot": np.dot(x["v"], x["v"]), "rows": x["Q"] @ x["B"], "flat": x["P"].reshape(2, 36) @ x["Wf"],
        "conv": np.maximum(np.einsum("nchwpq,ocpq->nohw", strided_windows(pad(X, (2, 3)), (3, 3), (2, 3)), x["Wc"]), 0),
        "gray": np.einsum("nchwpq,ocpq->nohw", strided_windows(pad(x["X1"], (2, 3)), (3, 3), (2, 3), stride=2),
                          x["W1"]),
        "strided": np.einsum("nchwpq,ocpq->nohw", strided_windows(X, (3, 3), (2, 3), stride=2), x["Wc"]),
        "dilated": np.einsum("nchwpq,ocpq->nohw", strided_windows(X, (3, 3), (2, 3), dilation=2), x["Wc"]),
        "onegroup": np.einsum("nchwpq,ocpq->nohw", strided_windows(X, (3, 3), (2, 3)), x["Wc"]),
        "wrapped": np.einsum("nchwpq,ocpq->nohw", strided_windows(X, (3, 3), (2, 3)), x["Wc"]),
        "nhwc": np.einsum("nhwcpq,pqco->nhwo", strided_windows(Xh, (3, 3), (1, 2)), x["Wh"]),
        "grayh": np.einsum("nhwcpq,pqco->nhwo", strided_windows(x["Xg"], (3, 3), (1, 2)), x["Wg"]),
        "fhwc": np.einsum("nhwcpq,opqc->nhwo", strided_windows(pad(Xh, (1, 2)), (3, 3), (1, 2)), x["Wo"]),
        "conv1d": np.einsum("ncwq,oq->now", strided_windows(x["Xd"], (3,), (2,)), x["Wd"]),
        "conv3d": np.einsum("ncdhwabe,ocabe->nodhw", strided_windows(x["Xv"], (2, 3, 3), (2, 3, 4)), x["Wv"]),
        "depthwise": np.einsum("nchwpq,cpq->nchw", strided_windows(X, (3, 3), (2, 3)), x["Wdw"]),
        "depthwise1d": np.einsum("ncwq,cq->ncw", strided_windows(x["Xd"], (3,), (2,)), x["Wd"]),
        "plain2d": np.einsum("hwpq,pq->hw", strided_windows(x["img"], (3, 3), (0, 1)), x["ker"]),
        "unitdiv": np.einsum("hwpq,pq->hw", strided_windows(x["img"], (3, 3), (0, 1)), x["ker"]),
        "maxpool": strided_windows(X[:, :, :8, :8], (2, 2), (2, 3), stride=2).max(axis=(4, 5)),
        "minpool": strided_windows(Xh[:, :9, :8], (3, 3), (1, 2), stride=3).min(axis=(4, 5))[:, :3, :2],
        "sumpool": strided_windows(x["Xd"][:, :, :6], (2,), (2,), stride=2).sum(axis=3),
        "gathered": x["A"][x["idx"]], "pairs": x["v"][:-1] + x["v"][1:],
        "stacked": x["A"] @ x["Wst"][1], "abt": x["A"] @ x["C"].T,
        "heads": np.einsum("shd,thd->hst", x["qk"].reshape(5, 3, 4), x["kk"].reshape(6, 3, 4)),
        "merged": x["ctx"].transpose(1, 0, 2).reshape(5, 12) @ x["Wm"],
        "unheads": x["ctx"].transpose(1, 0, 2).reshape(5, 12),
        "scores": np.einsum("nshd,nthd->nhst", *(x["qkv"][..., c:c + 12].reshape(2, 5, 3, 4) for c in (0, 12))),
        "mixed": np.einsum("nhst,nthd->nhsd", x["pr"], x["qkv"][..., 24:].reshape(2, 5, 3, 4)),
        "overlap": np.einsum("nch,chk->nk", x["P"][:, :, :, 0],
                             x["Wf"][(4 * np.arange(4)[:, None] + 3 * np.arange(3)[None, :])]),
    }
    rows = np.arange(9)[:, None] + np.arange(3)[None, :] - 1            # ih for h, kh
    inside = (rows >= 0) & (rows < 9)
    taps = X[:, :, np.clip(rows, 0, 8), :]                              # [n, c, h, kh, w]
    out["square"] = np.where(inside[None, None, :, :, None], taps * taps, 0).sum(3)
    out["tight"] = np.where(((rows >= 1) & inside)[None, None, :, :, None], taps, 0).sum(3)
    out["extra"] = np.where(inside[None, None, :, :, None], taps, 0).sum(3) * (np.arange(8) >= 1)
    out["edge"] = np.where(inside[None, None, :, :, None], taps, X[:, :, :1, None, :]).sum(3)
    out["shifted"] = np.concatenate([np.full_like(X[:, :, :1], 2.0), X[:, :, :-1]], axis=2)
    return out


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
def test_every_definition_matches_numpy(source_file, target):
    """On Vulkan IREE 3.13 miscompiled the channels-first depthwise convolutions (channels after
    the first partly left 0; found by the dense fuzz campaign), which stay generics there."""
    x = _inputs()
    with einc.load(einc.compile(str(source_file), target=target).vmfb) as program:
        got = program(**x)
    expected = _references({k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in x.items()})
    wrong = [name for name, want in expected.items() if not np.allclose(got[name], want, rtol=1e-4, atol=1e-4)]
    assert not wrong, f"{target} differs from NumPy in {wrong}"


def test_zero_padding_times_inf_is_nan_as_in_convolution_libraries():
    """docs/DECISIONS.md: a padded point contributes 0 * w, so an infinite weight gives NaN at
    the border (NumPy and JAX convolutions agree), where the guard alone would give 0."""
    src = """
        let X: [f32; 1, 1, 4, 4];
        let W: [f32; 1, 1, 3, 3];
        let y[n, o in 0..1, h in 0..4, w in 0..4] = sum[c in 0..1, kh in 0..3, kw in 0..3](
            if ih >= 0 && ih < 4 && iw >= 0 && iw < 4 { X[n, c, ih, iw] * W[o, c, kh, kw] } else { 0.0 }
            where ih = h + kh - 1, iw = w + kw - 1);
    """
    w = np.ones((1, 1, 3, 3), np.float32)
    w[0, 0, 0, 0] = np.inf
    y = einc.load(einc.compile(src).vmfb)(X=np.ones((1, 1, 4, 4), np.float32), W=w)["y"][0, 0]
    assert np.isnan(y[0]).all() and np.isnan(y[:, 0]).all() and np.isposinf(y[1:, 1:]).all()


def test_the_library_convolution_with_one_group_is_the_named_op(tmp_path):
    # std::ml::conv reads channel `o / Mg * Cg + c`: with one group o / Mg is 0 over o's range,
    # so the read is plain and the convolution named (it was a gather per tap before)
    path = tmp_path / "library_conv.ein"
    path.write_text("use std::ml::{conv, relu};\nlet X: [f32; B, 3, 16, 16];\nlet W: [f32; 8, 3, 3, 3];\n"
                    "let b: [f32; 8];\nlet y = relu(conv(X, W, b, [1, 1], [1, 1, 1, 1], [1, 1], 1));\n")
    text = mlir_of(path, "y")
    assert "linalg.conv_2d_nchw_fchw " in text and not EXTRACT.search(text)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
def test_index_guard_beside_a_window_read_of_a_batch_of_one(target):
    """A generic reading windows with a guard on an index: IREE 3.13 took it for a convolution
    without a batch axis (the batch of one folded away), put one in front and left the body's
    linalg.index ops unnumbered, so `w >= 2` tested the row (found by the dense fuzz campaign;
    kernels._window_not_first)."""
    src = """
        let x: [f32; 1, 2, 9, 8];
        let y[n, c, h in 0..7, w in 0..6] = sum[kh in 0..3, kw in 0..3](
            if w >= 2 { x[n, c, h + kh, w + kw] } else { 0.0 });
        let z[n, c, h in 0..4, w in 0..3] = max[kh in 0..2, kw in 0..2](
            if kh + h <= 6 { x[n, c, 2 * h + kh, 2 * w + kw] } else { 0.0 });
    """
    x = rng.standard_normal((1, 2, 9, 8)).astype(np.float32)
    with einc.load(einc.compile(src, target=target).vmfb) as program:
        got = program(x=x)
    windows = strided_windows(x.astype(np.float64), (3, 3), (2, 3))
    np.testing.assert_allclose(got["y"], windows.sum(axis=(4, 5)) * (np.arange(6) >= 2), rtol=1e-5, atol=1e-5)
    pooled = strided_windows(x.astype(np.float64), (2, 2), (2, 3), stride=2).max(axis=(4, 5))[:, :, :4, :3]
    np.testing.assert_allclose(got["z"], pooled, rtol=1e-6)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_sum_over_a_run_with_a_named_dim_of_an_input_read_through_windows(target, tmp_path):
    """IREE-07 on an input: a strided 3-d window of `x` (depth and height of one output row) is a
    matmul whose left operand, the input's windows transposed, is summed over the run (kd, kh,
    kw, c) with C a named dim; that operand passes a barrier too, as a computed one does (the
    dense fuzz campaign: "affine.delinearize_index ... statically non-positive" without it)."""
    path = tmp_path / "windows.ein"
    path.write_text("let x: [f32; N, 2, 1, 9, C];\nlet f: [f32; 2, 1, 2, C, 7];\n"
                    "let y[n, d in 0..1, h in 0..1, w, o] = sum[c, kw, kh in 0..1, kd]"
                    "(x[n, kd + 2 * d, kh + h, kw + 2 * w, c] * f[kd, kh, kw, c, o]);\n")
    x = rng.standard_normal((2, 2, 1, 9, 5)).astype(np.float32)
    f = rng.standard_normal((2, 1, 2, 5, 7)).astype(np.float32)
    with einc.load(einc.compile(str(path), target=target, outputs=["y"]).vmfb) as program:
        got = program(x=x, f=f)["y"]
    windows = np.stack([x[:, :, :, 2 * i:2 * i + 2, :] for i in range(4)], axis=1).astype(np.float64)
    want = np.einsum("nwdhkc,dhkco->nwo", windows, f.astype(np.float64))
    np.testing.assert_allclose(got, want.reshape(2, 1, 1, 4, 7), rtol=1e-5, atol=1e-5)
    text = mlir_of(path, "y", target)
    assert "linalg.matmul" in text and "flow.tensor.barrier" in text


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_sum_over_a_run_with_a_named_dim_of_a_computed_operand(target, tmp_path):
    """IREE 3.13 failed to compile a matmul over the collapsed run (c, k), K a named dim, of an
    elementwise producer's result on the CPU targets (found by the dense fuzz campaign): there
    the collapsed operand passes a barrier (named_ops._operand), and it is a matmul."""
    path = tmp_path / "run.ein"
    path.write_text("let x: [f32; N, 3, K];\nlet w: [f32; 3, K, 5];\nlet ink = 1.0 - x;\n"
                    "let y[i, j] = sum[c, k](ink[i, c, k] * w[c, k, j]);\n")
    x, w = rng.standard_normal((4, 3, 7)).astype(np.float32), rng.standard_normal((3, 7, 5)).astype(np.float32)
    with einc.load(einc.compile(str(path), target=target, outputs=["y"]).vmfb) as program:
        got = program(x=x, w=w)["y"]
    want = (1.0 - x.astype(np.float64)).reshape(4, 21) @ w.astype(np.float64).reshape(21, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    text = mlir_of(path, "y", target)
    assert "linalg.matmul" in text and "flow.tensor.barrier" in text
    assert "linalg.matmul" in mlir_of(path, "y", "vulkan-spirv")


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_rows_of_a_computed_operand_summed_over_a_named_dim(target, tmp_path):
    """IREE-07 with the run kept: `y[n, i, j] = sum[k](h[n, i, k] * w[k, j])`, rows (n, i)
    collapsed and K a named dim, of a batch matmul's result h failed to compile ("no basis
    element may be statically non-positive"; found by the dense fuzz campaign, seed 5 program
    277); the collapsed operand passes a barrier."""
    path = tmp_path / "rows.ein"
    path.write_text("let a: [f32; 3, 2, 13];\nlet v: [f32; 3, 13, K];\nlet w: [f32; K, 32];\n"
                    "let h[n, i, k] = sum[t](a[n, i, t] * v[n, t, k]);\n"
                    "let y[n, i, j] = sum[k](h[n, i, k] * w[k, j]);\n")
    x = {"a": (3, 2, 13), "v": (3, 13, 9), "w": (9, 32)}
    x = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in x.items()}
    with einc.load(einc.compile(str(path), target=target, outputs=["y"]).vmfb) as program:
        got = program(**x)["y"]
    d = {name: v.astype(np.float64) for name, v in x.items()}
    np.testing.assert_allclose(got, (d["a"] @ d["v"]) @ d["w"], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
@pytest.mark.parametrize("definition, reference", [
    ("let s[i, k] = a[i, k] * 2.0;\nlet y[i, j] = sum[k](s[i, k] * v[k, j]);", lambda a, v: (a * 2.0) @ v),
    ("let s[k, j] = v[k, j] * 2.0;\nlet y[i, j] = sum[k](a[i, k] * s[k, j]);", lambda a, v: a @ (v * 2.0)),
    ("let s[i, k] = a[i, k] + 1.0;\nlet y[i] = sum[k](s[i, k] * v[k, 1]);", lambda a, v: (a + 1.0) @ v[:, 1]),
])
def test_an_elementwise_operand_summed_over_a_named_dim(target, definition, reference, tmp_path):
    """IREE-77: a matmul or matvec over a named (run-time) extent K whose operand an elementwise
    kernel computes failed to compile on the CPU targets ("'affine.delinearize_index' op no
    basis element may be statically non-positive"); such an operand passes a barrier. Attention
    written out with a run-time sequence length, only its result an output, was one."""
    path = tmp_path / "scaled.ein"
    path.write_text(f"let a: [f32; 4, K];\nlet v: [f32; K, 3];\n{definition}\n")
    a, v = (rng.standard_normal(shape).astype(np.float32) for shape in ((4, 7), (7, 3)))
    with einc.load(einc.compile(str(path), target=target, outputs=["y"]).vmfb) as program:
        got = program(a=a, v=v)["y"]
    np.testing.assert_allclose(got, reference(a.astype(np.float64), v.astype(np.float64)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_batch_matmul_of_computed_operands(target):
    """IREE 3.13's data tiling fused a batch_matmul with the op computing its first operand (a
    broadcast bias, or a matmul over rows expanded into batches) and read the batches after the
    first wrong for 15 rows (found by the dense fuzz campaign); batch_matmul operands pass an
    optimization barrier on the CPU targets (named_ops.emit), with run-time sizes (J) tied back on."""
    src = """
        let x: [f32; 3, 15, 13];
        let b: [f32; 13];
        let a: [f32; 3, 15, 9];
        let w: [f32; 9, 13];
        let v: [f32; 3, 13, J];
        let biased[n, i, j] = x[n, i, j] + b[j];
        let rows[n, i, j] = sum[k](a[n, i, k] * w[k, j]);
        let y[n, i, j] = sum[k](biased[n, i, k] * v[n, k, j]);
        let z[n, i, j] = sum[k](rows[n, i, k] * v[n, k, j]);
    """
    x = {"x": (3, 15, 13), "b": (13,), "a": (3, 15, 9), "w": (9, 13), "v": (3, 13, 5)}
    x = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in x.items()}
    with einc.load(einc.compile(src, target=target, outputs=["y", "z"]).vmfb) as program:
        got = program(**x)
    d = {name: v.astype(np.float64) for name, v in x.items()}
    np.testing.assert_allclose(got["y"], (d["x"] + d["b"]) @ d["v"], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got["z"], (d["a"] @ d["w"]) @ d["v"], rtol=1e-5, atol=1e-4)


# Attention's kernels, weights normalised by their sum of squares: not softmax attention, so never
# fused into one attention op (einc/mlir/dense/attention.py) and the barriers below stay in place
# at run-time sizes too.
WEIGHTS_OF_A_COMPUTED_QKV = """use std::math::exp;
    let x: [f32; B, S, 36];
    let b: [f32; 36];
    let qkv[n, s, c] = x[n, s, c] + b[c];
    let score[n, h in 0..3, s, t] = sum[k in 0..4](qkv[n, s, h * 4 + k] * qkv[n, t, 12 + h * 4 + k]);
    let p[n, h, s, t] = exp(score[n, h, s, t] - max[u](score[n, h, s, u]));
    let ctx[n, h, s, k in 0..4] = sum[t](p[n, h, s, t] * qkv[n, t, 24 + h * 4 + k]) / sum[t](p[n, h, s, t] * p[n, h, s, t]);
    let merged[n, s, c in 0..12] = ctx[n, c / 4, s, c % 4];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
@pytest.mark.parametrize("positions, static", [(3, True), pytest.param(11, True, marks=pytest.mark.full),
                                              (13, True), (13, False)])
def test_heads_of_a_computed_tensor_pass_one_barrier_before_their_split(target, positions, static, tmp_path):
    """IREE-09 on attention: the computed qkv passes one barrier before its heads are cut and
    transposed (q, k and v alike), P another, so IREE fuses each split into its encoding of the
    operand and ends its work stream twice a layer instead of once per operand; the batches
    after the first stay right at odd row counts. qkv passes it part-major ([3, n, S, 12]: q,
    k and v leading slices, read in place, where IREE copied each column cut in a dispatch of
    its own). IREE-51: with a run-time number of positions each operand passes a barrier of its
    own after its split, as before."""
    path = tmp_path / "attention.ein"
    path.write_text(WEIGHTS_OF_A_COMPUTED_QKV)
    dims = {"S": positions} if static else None
    barriers = re.findall(r"flow.tensor.barrier \S+ : (tensor<[^>]*>)", str(lower(str(path), target, ["merged"], dims)))
    s = positions if static else "?"
    after_split = ["tensor<?x?x4xf32>", "tensor<?x4x?xf32>", "tensor<?x?x?xf32>", "tensor<?x?x4xf32>"]
    row_sum = f"tensor<?x3x{s}xf32>"     # IREE-53, beside P V's result
    assert barriers == ([f"tensor<3x?x{s}x12xf32>", f"tensor<?x3x{s}x{s}xf32>", row_sum] if static
                        else after_split + [row_sum])
    x = rng.standard_normal((2, positions, 36)).astype(np.float32)
    b = rng.standard_normal(36).astype(np.float32)
    got = einc.load(einc.compile(str(path), target=target, outputs=["merged"], dims=dims).vmfb)(x=x, b=b)["merged"]
    qkv = x.astype(np.float64) + b
    q, k, v = (qkv[..., c:c + 12].reshape(2, positions, 3, 4).transpose(0, 2, 1, 3) for c in (0, 12, 24))
    score = q @ k.transpose(0, 1, 3, 2)
    p = np.exp(score - score.max(-1, keepdims=True))
    ctx = p @ v / (p * p).sum(-1)[..., None]
    np.testing.assert_allclose(got, ctx.transpose(0, 2, 1, 3).reshape(2, positions, 12), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm-cpu", "vulkan-spirv"])
def test_fusion_barriers_wait_on_the_device_not_the_host(target, tmp_path):
    """IREE-62: einc's fusion barriers (attention's, IREE-09 and IREE-53 on the CPU targets) are
    `flow.tensor.barrier`s, so `main` queues all its work without waiting on the host between
    the dispatches a barrier separates (a `util.optimization_barrier` on a tensor made IREE wait
    for the work before it, spinning the caller). IREE-63: vulkan-spirv keeps the host barrier
    where IREE-42 puts one (a clause written at an offset on the last axis)."""
    path = tmp_path / "attention.ein"
    path.write_text(WEIGHTS_OF_A_COMPUTED_QKV if target != "vulkan-spirv" else
                    "let x: [f32; 4, 32];\nlet y[n, j in 2..34] = 1.0 - x[n, j - 2];\nlet y[n in 0..4, j in 34..36] = 5.0;\n")
    built = einc.compile(str(path), target=target)
    module = tmp_path / "attention.vmfb"
    module.write_bytes(built.vmfb)
    dump = subprocess.run([Path(sys.executable).parent / "iree-dump-module", module], capture_output=True, text=True)
    assert dump.returncode == 0, dump.stderr
    host_waits = re.findall(r"vm\.call\S* @hal\.fence\.await", dump.stdout.split("vm.func @main")[1].split("vm.func ")[0])
    text = mlir_of(path, "merged" if target != "vulkan-spirv" else "y", target)
    if target == "vulkan-spirv":
        assert "util.optimization_barrier" in text and "flow.tensor.barrier" not in text
        return
    assert text.count("flow.tensor.barrier") >= 2 and "util.optimization_barrier" not in text
    assert host_waits == []
    x, b = rng.standard_normal((2, 7, 36)).astype(np.float32), rng.standard_normal(36).astype(np.float32)
    with einc.load(built.vmfb) as program:
        got = program(x=x, b=b)["merged"]
    qkv = x.astype(np.float64) + b
    q, k, v = (qkv[..., c:c + 12].reshape(2, 7, 3, 4).transpose(0, 2, 1, 3) for c in (0, 12, 24))
    score = q @ k.transpose(0, 1, 3, 2)
    p = np.exp(score - score.max(-1, keepdims=True))
    ctx = p @ v / (p * p).sum(-1)[..., None]
    np.testing.assert_allclose(got, ctx.transpose(0, 2, 1, 3).reshape(2, 7, 12), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_a_batch_matmul_combined_with_a_reduction_of_another_tensor(target, tmp_path):
    """IREE-53: with a run-time batch and 10 positions (not a whole tile), IREE fused the
    division by a reduction of another tensor into the data-tiled batch matmul's dispatch and
    read 200 of the 240 values of the batches after the first wrong. The reduction passes a
    barrier before the division (einc/mlir/dense/batch_matmul_epilogues.py)."""
    path = tmp_path / "context.ein"
    path.write_text(WEIGHTS_OF_A_COMPUTED_QKV.replace("let merged", "// let merged"))
    x = rng.standard_normal((2, 10, 36)).astype(np.float32)
    b = rng.standard_normal(36).astype(np.float32)
    got = einc.load(einc.compile(str(path), target=target, outputs=["ctx"]).vmfb)(x=x, b=b)["ctx"]
    qkv = x.astype(np.float64) + b
    q, k, v = (qkv[..., c:c + 12].reshape(2, 10, 3, 4).transpose(0, 2, 1, 3) for c in (0, 12, 24))
    score = q @ k.transpose(0, 1, 3, 2)
    p = np.exp(score - score.max(-1, keepdims=True))
    np.testing.assert_allclose(got, p @ v / (p * p).sum(-1)[..., None], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_a_batch_matmul_of_fixed_size_beside_a_row_maximum(target):
    """IREE-53 with every size fixed (the dense fuzzer, seed 33 program 112): the ReLU of a
    batch matmul over 2 x 5 rows plus a maximum over another input's rows had the second batch
    wrong (155 of 310 values); the maximum passes a barrier."""
    src = """
        let y: [f32; 2, 5, 17];
        let w: [f32; 2, 17, 31];
        let q: [f32; 2, 5, 7];
        let z[n, i, j] = relu(sum[k](y[n, i, k] * w[n, k, j])) + max[r](q[n, i, r]);
        fn relu(v) { if v > 0.0 { v } else { 0.0 } }
    """
    x = {name: rng.uniform(-1, 1, shape).astype(np.float32)
         for name, shape in {"y": (2, 5, 17), "w": (2, 17, 31), "q": (2, 5, 7)}.items()}
    with einc.load(einc.compile(src, target=target, outputs=["z"]).vmfb) as program:
        got = program(**x)["z"]
    d = {name: v.astype(np.float64) for name, v in x.items()}
    want = np.maximum(d["y"] @ d["w"], 0) + d["q"].max(-1)[..., None]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_view_of_other_parts_reads_a_part_major_tensor_whole(tmp_path, monkeypatch):
    """qkv passes its barrier part-major for the scores (q and k: parts 12 wide of 48 columns);
    v, from column 28, is no part of that layout and reads qkv through a barrier of its own.
    The barriers are those of attention as written: an AVX-512 host's (a host without AVX-512
    fuses attention at every size, einc.mlir.dense.attention)."""
    path = tmp_path / "attention.ein"
    path.write_text("""use std::math::exp;
    let x: [f32; B, S, 48];
    let qkv[n, s, c] = x[n, s, c] * 2.0;
    let score[n, h in 0..3, s, t] = sum[k in 0..4](qkv[n, s, h * 4 + k] * qkv[n, t, 12 + h * 4 + k]);
    let p[n, h, s, t] = exp(score[n, h, s, t] - max[u](score[n, h, s, u]));
    let ctx[n, h, s, k in 0..4] = sum[t](p[n, h, s, t] * qkv[n, t, 28 + h * 4 + k]) / sum[t](p[n, h, s, t]);
    let merged[n, s, c in 0..12] = ctx[n, c / 4, s, c % 4];
""")
    with monkeypatch.context() as patch:
        patch.setattr(host_cpu, "has_avx512", lambda: True)
        module = lower(str(path), "llvm-cpu", ["merged"], {"S": 5})
    barriers = re.findall(r"flow.tensor.barrier \S+ : (tensor<[^>]*>)", str(module))
    row_sum = "tensor<?x3x5xf32>"         # IREE-53, beside P V's result
    assert barriers == ["tensor<4x?x5x12xf32>", "tensor<?x3x5x5xf32>", "tensor<?x5x48xf32>", row_sum]
    x = rng.standard_normal((2, 5, 48)).astype(np.float32)
    got = einc.load(einc.compile(str(path), outputs=["merged"], dims={"S": 5}).vmfb)(x=x)["merged"]
    qkv = x.astype(np.float64) * 2
    q, k, v = (qkv[..., c:c + 12].reshape(2, 5, 3, 4).transpose(0, 2, 1, 3) for c in (0, 12, 28))
    p = np.exp(q @ k.transpose(0, 1, 3, 2))
    ctx = p @ v / p.sum(-1)[..., None]
    np.testing.assert_allclose(got, ctx.transpose(0, 2, 1, 3).reshape(2, 5, 12), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_matmul_of_a_computed_single_element(target):
    """IREE 3.13 failed to compile a matmul whose [1, 1] operand an elementwise op computes
    ("tiling factors must be less than or equal to the input rank for pack"; found by the
    dense fuzz campaign): it stays a generic on the CPU targets (named_ops.emitted_on)."""
    src = """
        let x: [f32; 1, 1];
        let b: [f32; 1];
        let w: [f32; 1, 45];
        let y[i, j] = x[i, j] + b[j];
        let z[i, j] = sum[k](y[i, k] * w[k, j]);
    """
    x = {"x": rng.standard_normal((1, 1)), "b": rng.standard_normal(1), "w": rng.standard_normal((1, 45))}
    with einc.load(einc.compile(src, target=target, outputs=["z"]).vmfb) as program:
        got = program(**{name: v.astype(np.float32) for name, v in x.items()})["z"]
    np.testing.assert_allclose(got, (x["x"] + x["b"]) @ x["w"], rtol=1e-5, atol=1e-6)


def test_a_literal_row_of_an_outer_index_is_no_matmul_operand():
    """`[D[n, 1], D[n, 0]][k]` is built at each n: it has no program-level tensor, so the
    product summed over k is no matvec of it (einc crashed with a KeyError lowering the
    operand; found by a block-tridiagonal hold-out program)."""
    src = """
        let L: [f64; N, 2];
        let D: [f64; N, 2];
        let g[n] = sum[k](L[n, k] * [D[n, 1], D[n, 0]][k]);
    """
    L, D = rng.standard_normal((5, 2)), rng.standard_normal((5, 2))
    with einc.load(einc.compile(src).vmfb) as program:
        got = program(L=L, D=D)["g"]
    np.testing.assert_allclose(got, (L * D[:, ::-1]).sum(1), rtol=1e-12)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
def test_window_sum_under_a_guard_its_ranges_decide(target):
    """`w >= 1` over w in 0..1 is never true, so every term is the else constant; IREE folded
    the guard and summed the constant once (-1, not -6; found by the dense fuzz campaign). einc
    decides such guards first (einc/mlir/core/decided_guards.py), so the sum runs as scalar loops;
    a guard always true leaves the windows' sum."""
    src = """
        let x: [f32; 6, 4];
        let k: [f32; 2, 3];
        let never[h in 0..3, w in 0..1] = sum[kw in 0..3, kh in 0..2](
            if w >= 1 { k[kh, kw] * x[kh + 2 * h, w + kw] } else { -1.0 });
        let always[h in 0..3, w in 0..2] = sum[kw in 0..3, kh in 0..2](
            if w <= 1 { k[kh, kw] * x[kh + 2 * h, w + kw] } else { -1.0 });
    """
    x, k = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    with einc.load(einc.compile(src, target=target).vmfb) as program:
        got = program(x=x, k=k)
    np.testing.assert_array_equal(got["never"], np.full((3, 1), -6.0, np.float32))
    windows = strided_windows(x.astype(np.float64), (2, 3), (0, 1))[::2]             # [h, w, kh, kw]
    np.testing.assert_allclose(got["always"], np.einsum("hwpq,pq->hw", windows, k), rtol=1e-5, atol=1e-6)


@pytest.mark.vulkan
def test_heads_merged_from_a_batch_matmul_on_vulkan(tmp_path):
    """IREE-41: without a barrier Vulkan fused the merge's transpose with the batch_matmul (and
    its divide) computing attention's context, and rows came out wrong."""
    path = tmp_path / "merge.ein"
    path.write_text("""use std::math::exp;
        let qkv: [f32; B, 30, 36];
        let score[n, h in 0..3, s, t] = sum[k in 0..4](qkv[n, s, h * 4 + k] * qkv[n, t, 12 + h * 4 + k]);
        let p[n, h, s, t] = exp(score[n, h, s, t] - max[u](score[n, h, s, u]));
        let ctx[n, h, s, k in 0..4] = sum[t](p[n, h, s, t] * qkv[n, t, 24 + h * 4 + k]) / sum[t](p[n, h, s, t]);
        let merged[n, s, c in 0..12] = ctx[n, c / 4, s, c % 4];
    """)
    qkv = rng.standard_normal((2, 30, 36)).astype(np.float32)
    got = einc.load(einc.compile(str(path), target="vulkan-spirv", outputs=["merged"]).vmfb, device="vulkan")(qkv=qkv)
    q, k, v = (qkv[..., c:c + 12].reshape(2, 30, 3, 4).transpose(0, 2, 1, 3).astype(np.float64) for c in (0, 12, 24))
    score = q @ k.transpose(0, 1, 3, 2)
    p = np.exp(score - score.max(-1, keepdims=True))
    ctx = p @ v / p.sum(-1)[..., None]
    np.testing.assert_allclose(got["merged"], ctx.transpose(0, 2, 1, 3).reshape(2, 30, 12), rtol=1e-5, atol=1e-6)


def test_a_layer_of_constant_stacked_weights_is_a_constant_of_its_own(tmp_path):
    """IREE packs a constant matmul operand once at build time, a slice of a larger constant at
    every call: the layer is cut at build time, and the unread stack leaves the archive."""
    from einc.driver import front_end, lower_ir
    from einc.mlir.weights import Weights
    w = rng.standard_normal((3, 7, 6)).astype(np.float32)
    np.save(tmp_path / "w.npy", w)
    path = tmp_path / "layer.ein"
    path.write_text('use std::io::load_npy;\nlet A: [f32; M, 7];\nlet Ws = load_npy("w.npy");\n'
                    "let y[i, j] = sum[k](A[i, k] * Ws[1, k, j]);\n")
    text = mlir_of(path, "y")
    assert "linalg.matmul" in text and "tensor.extract_slice" not in text and "tensor<7x6xf32>" in text
    weights = Weights(0)
    lower_ir(*front_end(str(path), ["y"], None, False), "llvm-cpu", weights=weights)
    assert [a.shape for a in weights.arrays.values()] == [(7, 6)]
    a = rng.standard_normal((4, 7)).astype(np.float32)
    got = einc.load(einc.compile(str(path), outputs=["y"], weights_threshold=None).vmfb)(A=a)["y"]
    np.testing.assert_allclose(got, a.astype(np.float64) @ w[1], rtol=1e-5, atol=1e-5)


def test_a_row_of_a_constant_stack_in_a_generic_is_a_constant_of_its_own(tmp_path):
    """A build-time array read at a build-time row inside an elementwise or reduction kernel
    (`g[1, j]`: a layer's norm scale taken from a stack) is that row, a constant of its own: no
    indexing map has a constant result (IREE's CPU code for such a kernel is scalar)."""
    from einc.driver import front_end, lower_ir
    from einc.mlir.weights import Weights
    g, b = rng.standard_normal((3, 6)).astype(np.float32), rng.standard_normal((4, 2, 6)).astype(np.float32)
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "b.npy", b)
    path = tmp_path / "rows.ein"
    path.write_text('use std::io::load_npy;\nlet A: [f32; M, 6];\nlet g = load_npy("g.npy");\n'
                    'let b = load_npy("b.npy");\n'
                    "let y[i, j] = A[i, j] * g[1, j] + b[2, 1, j];\n"
                    "let s[i] = max[j](A[i, j] + g[2, j]);\n")
    for output in ("y", "s"):
        text = mlir_of(path, output)
        maps = re.findall(r"affine_map<\([^)]*\) -> \(([^)]*)\)>", text)
        assert maps and not any(re.search(r"(^|, )\d+($|,)", m) for m in maps), maps
        assert "tensor<6xf32>" in text and not EXTRACT.search(text)
    weights = Weights(0)
    lower_ir(*front_end(str(path), ["y", "s"], None, False), "llvm-cpu", weights=weights)
    assert sorted(a.shape for a in weights.arrays.values()) == [(6,), (6,), (6,)]
    a = rng.standard_normal((5, 6)).astype(np.float32)
    got = einc.load(einc.compile(str(path), outputs=["y", "s"], weights_threshold=None).vmfb)(A=a)
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(got["y"], a64 * g[1] + b[2, 1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["s"], (a64 + g[2]).max(axis=1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_a_reshape_of_a_fenced_operand_is_fenced_on_the_host(target, tmp_path):
    """IREE-63 on every target: a weight read reversed along a run-time axis is a gather behind a
    barrier, collapsed for the matmul and fenced again (IREE-07); two device barriers so chained
    made IREE's stream partitioning fail ("circular dependency"), so the second is a host one.
    Found by the dense fuzzer (seed 2024, program 19)."""
    path = tmp_path / "reversed.ein"
    path.write_text("let x: [f32; N, C, H, 1];\nlet w: [f32; C, H, 1, 16];\n"
                    "let y[n in 0..N, j in 0..16] = sum[d in 0..C, h in 0..H, v in 0..1]("
                    "w[d, H - 1 - h, v, j] * x[n, d, h, v]);\n")
    x, w = rng.standard_normal((3, 4, 5, 1)).astype(np.float32), rng.standard_normal((4, 5, 1, 16)).astype(np.float32)
    with einc.load(einc.compile(str(path), target=target).vmfb) as program:
        got = program(x=x, w=w)["y"]
    want = np.einsum("ndhv,dhvj->nj", x.astype(np.float64), w[:, ::-1].astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


CHAINED_ATTENTION = """let q: [f32; N, S, 4];
let k: [f32; N, S, 4];
let v: [f32; N, S, 4];
let s1[n, i, j] = sum[e](q[n, i, e] * k[n, j, e]);
let p1[n, i, j] = std::math::exp(s1[n, i, j] - max[u](s1[n, i, u]));
let c1[n, i, f] = sum[j](p1[n, i, j] * v[n, j, f]) / sum[j](p1[n, i, j]);
let s2[n, i, j] = sum[e](c1[n, i, e] * k[n, j, e]);
let p2[n, i, j] = std::math::exp(s2[n, i, j] - max[u](s2[n, i, u]));
let c2[n, i, f] = sum[j](p2[n, i, j] * v[n, j, f]) / sum[j](p2[n, i, j]);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_a_copy_of_a_fenced_attention_result_is_fenced_on_the_host(target, tmp_path):
    """IREE-63 through a copy: the first attention's result passes a barrier, is copied into its
    definition and fenced again as the second attention's queries; IREE folds the copy, and the
    two device barriers so chained made its stream partitioning fail ("circular dependency").
    Found by the dense fuzzer (seed 1010, program 22)."""
    path = tmp_path / "chained.ein"
    path.write_text(CHAINED_ATTENTION)
    q, k, v = (rng.standard_normal((2, 5, 4)).astype(np.float32) for _ in range(3))
    with einc.load(einc.compile(str(path), target=target, outputs=["c2"]).vmfb) as program:
        got = program(q=q, k=k, v=v)["c2"]

    def attention(queries):
        score = queries @ k.astype(np.float64).transpose(0, 2, 1)
        p = np.exp(score - score.max(-1, keepdims=True))
        return p @ v.astype(np.float64) / p.sum(-1, keepdims=True)
    np.testing.assert_allclose(got, attention(attention(q.astype(np.float64))), rtol=1e-5, atol=1e-6)


def test_a_reduction_read_along_two_loops_by_one_kernel():
    """IREE-267: the row sums of a 40 x 40 matrix, read as deg[i] and deg[j] by one kernel (a
    degree-normalized adjacency), were fused into it and computed for the tile's rows only (the
    product with X off by up to 1.9); the sums pass one barrier before that kernel."""
    src = """
        let A: [f32; N, N];
        let X: [f32; N, 2];
        let deg[i] = sum[j](A[i, j]);
        let An[i, j] = A[i, j] / (deg[i] * deg[j]);
        let XA[i, f] = sum[j](An[i, j] * X[j, f]);
    """
    a = (rng.random((40, 40)) < 0.3).astype(np.float32) + np.eye(40, dtype=np.float32)
    x = rng.standard_normal((40, 2)).astype(np.float32)
    with einc.load(einc.compile(src, target="llvm-cpu", outputs=["XA"]).vmfb) as program:
        got = program(A=a, X=x)["XA"]
    d = a.astype(np.float64).sum(1)
    np.testing.assert_allclose(got, a / (d[:, None] * d[None, :]) @ x, rtol=1e-5, atol=1e-6)


def test_a_row_normalised_matrix_read_with_its_transpose_by_one_kernel():
    """IREE-267 through an elementwise kernel: `p[i, j] = a[i, j] / sum[k](a[i, k])` read as
    p[i, j] + p[j, i] (t-SNE's symmetric affinities) had the row sums and p fused into the sum's
    kernel, and every entry off the diagonal came out 0; p passes one barrier before it."""
    src = """
        let A: [f64; 4, 4];
        let p[i, j] = A[i, j] / sum[k](A[i, k]);
        let s[i, j] = p[i, j] + p[j, i];
    """
    a = rng.random((4, 4)) + 0.5
    with einc.load(einc.compile(src, target="llvm-cpu", outputs=["s"]).vmfb) as program:
        got = program(A=a)["s"]
    p = a / a.sum(1, keepdims=True)
    np.testing.assert_allclose(got, p + p.T, rtol=1e-14)


@pytest.mark.parametrize("contraction, reference", [
    ("sum[c](head[c] * h[c, t])", lambda h, head: head @ h),
    ("sum[c](h[t, c] * head[c])", lambda h, head: h @ head)])
def test_a_matvec_beside_a_row_of_a_matrix(contraction, reference):
    """IREE-268: a vecmat's (or matvec's) result minus a row of a matrix, `x[0, t + 1]`, failed
    to compile on llvm-cpu ("write affecting operations on global resources are restricted to
    workgroup distributed contexts"); the contraction's result passes a barrier first."""
    src = f"""
        let h: [f32; T, T];
        let head: [f32; T];
        let x: [f32; 2, T];
        let e[t in 0..T - 1] = 2.0 * ({contraction} - x[0, t + 1]);
    """
    h, x = rng.standard_normal((9, 9)).astype(np.float32), rng.standard_normal((2, 9)).astype(np.float32)
    head = rng.standard_normal(9).astype(np.float32)
    with einc.load(einc.compile(src, target="llvm-cpu", outputs=["e"]).vmfb) as program:
        got = program(h=h, head=head, x=x)["e"]
    np.testing.assert_allclose(got, 2 * (reference(h, head)[:-1] - x[0, 1:]), rtol=1e-5, atol=1e-5)
