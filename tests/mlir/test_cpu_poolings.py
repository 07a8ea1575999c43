"""Poolings written out as shifted slices on the CPU targets (einc/mlir/dense/cpu_poolings): every
pooling einc recognizes (1-, 2- and 3-d, channels first and last, max, min and sum, strides and
dilations) matches NumPy at run-time sizes whose result rows are not a multiple of the vector step
(the peeled rest) and with its sizes fixed, whichever form it takes; the module holds one slice a
window point where the written-out form was measured faster (channels first read point by point
along the rows; a 1-d row read every few points over a run-time length, its rest peeled; channels
last over a run-time window axis or few channels), else the pooling op, as for larger windows and
on Vulkan."""
import re

import numpy as np
import pytest

from numpy_windows import strided_windows

import einc
from einc import host_cpu
from tests.programs import built
from tests.tiers import GENERIC_FULL, VULKAN_FULL

SOURCE = """
let Xw: [f32; N, C, W];
let Xl: [f32; N, W, C];
let X: [f32; N, C, H, W];
let Xh: [f32; N, H, W, C];
let Xv: [f32; N, D, H, W, C];
let ncw_max[n, c, x] = max[q in 0..3](Xw[n, c, 2 * x + q]);
let ncw_sum[n, c, x] = sum[q in 0..2](Xw[n, c, x + 2 * q]);
let nwc_min[n, x, c] = min[q in 0..3](Xl[n, x + q, c]);
let nchw_max[n, c, y, x] = max[p in 0..2, q in 0..2](X[n, c, 2 * y + p, 2 * x + q]);
let nchw_avg[n, c, y, x] = sum[p in 0..3, q in 0..3](X[n, c, y + p, x + q]) / 9.0;
let nchw_dilated[n, c, y, x] = max[p in 0..2, q in 0..3](X[n, c, y + 2 * p, 3 * x + 2 * q]);
let nhwc_max[n, y, x, c] = max[p in 0..3, q in 0..3](Xh[n, 2 * y + p, 2 * x + q, c]);
let nhwc_sum[n, y, x, c] = sum[p in 0..2, q in 0..2](Xh[n, y + p, x + q, c]);
let ndhwc_min[n, z, y, x, c] = min[o in 0..2, p in 0..2, q in 0..2](Xv[n, z + o, 2 * y + p, 2 * x + q, c]);
"""
OUTPUTS = ["ncw_max", "ncw_sum", "nwc_min", "nchw_max", "nchw_avg", "nchw_dilated", "nhwc_max", "nhwc_sum",
           "ndhwc_min"]
rng = np.random.default_rng(29)


def _inputs(n: int, c: int, h: int, w: int) -> dict:
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return {"Xw": f(n, c, w), "Xl": f(n, w, c), "X": f(n, c, h, w), "Xh": f(n, h, w, c), "Xv": f(n, 3, h, w, c)}


def _references(x: dict) -> dict:
    x = {k: v.astype(np.float64) for k, v in x.items()}
    win = strided_windows
    return {
        "ncw_max": win(x["Xw"], (3,), (2,), stride=2).max(axis=3),
        "ncw_sum": win(x["Xw"], (2,), (2,), dilation=2).sum(axis=3),
        "nwc_min": win(x["Xl"], (3,), (1,)).min(axis=3),
        "nchw_max": win(x["X"], (2, 2), (2, 3), stride=2).max(axis=(4, 5)),
        "nchw_avg": win(x["X"], (3, 3), (2, 3)).sum(axis=(4, 5)) / 9.0,
        # rows: stride 1, dilation 2; columns: stride 3, dilation 2
        "nchw_dilated": win(win(x["X"], (2,), (2,), dilation=2), (3,), (3,), stride=3, dilation=2).max(axis=(4, 5)),
        "nhwc_max": win(x["Xh"], (3, 3), (1, 2), stride=2).max(axis=(4, 5)),
        "nhwc_sum": win(x["Xh"], (2, 2), (1, 2)).sum(axis=(4, 5)),
        "ndhwc_min": _ndhwc_min(x["Xv"]),
    }


def _ndhwc_min(v: np.ndarray) -> np.ndarray:
    depth = strided_windows(v, (2,), (1,))                                   # [n, z, h, w, c, o]
    return strided_windows(depth, (2, 2), (2, 3), stride=2).min(axis=(5, 6, 7))


def _check(got: dict, x: dict, at) -> None:
    for name, want in _references(x).items():
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5, err_msg=f"{name} at {at}")


# (batch, channels, height, width): result rows of 17-18 points (a vector step of 16 and a rest),
# of 1-3 points (a rest alone), of 48-50; one image, one channel
SIZES = [(2, 3, 7, 37), (1, 1, 6, 7), (3, 2, 5, 100), (1, 5, 8, 9)]


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
def test_every_pooling_matches_numpy_at_run_time_sizes(target):
    with einc.load(built(SOURCE, target, OUTPUTS).vmfb) as program:       # one build, every size
        for sizes in SIZES:
            x = _inputs(*sizes)
            _check(program(**x), x, sizes)


@pytest.mark.parametrize("channels", [3, 8])      # channels last: written out, the op
def test_every_pooling_matches_numpy_with_its_sizes_fixed(channels):
    sizes = (2, channels, 7, 37)
    dims = dict(zip("NCHW", sizes), D=3)
    with einc.load(built(SOURCE, "llvm-cpu", OUTPUTS, dims=dims).vmfb) as program:
        x = _inputs(*sizes)
        _check(program(**x), x, sizes)


def _slice_strides(text: str) -> list[str]:
    """The strides of each slice of an input (of its columns and channels merged where they are
    known, pooling_rows)."""
    return re.findall(r"tensor\.extract_slice %(?:arg\d+|collapsed\w*)\[[^]]*\] \[[^]]*\] \[([^]]*)\]", text)


def test_a_pooling_is_written_out_where_measured_faster(emitted):
    text = emitted(SOURCE, "llvm-cpu", OUTPUTS)
    slices = _slice_strides(text)
    # ncw_max, ncw_sum, nwc_min, nchw_avg, nhwc_max, nhwc_sum, ndhwc_min: one slice a window point
    assert len(slices) == 3 + 2 + 3 + 9 + 9 + 4 + 8
    assert slices.count("1, 1, 2") == 3 and slices.count("1, 2, 2, 1") == 9 and slices.count("1, 1, 2, 2, 1") == 8
    # channels first, read every few points along the rows of a 2-d image: IREE's op
    assert text.count("linalg.pooling_nchw_max ") == 2 and text.count("linalg.pooling") == 2
    # sizes fixed: channels last keeps the op from 8 channels up
    fixed = emitted(SOURCE, "llvm-cpu", OUTPUTS, dims={"N": 2, "C": 8, "H": 7, "W": 37, "D": 3})
    assert "[1, 1, 1, 1] : tensor<2x8x7x37xf32> to tensor<2x8x5x35xf32>" in fixed             # nchw_avg
    assert len(_slice_strides(fixed)) == 2 + 9                                               # and ncw_sum
    assert all(f"linalg.{op} " in fixed for op in ("pooling_ncw_max", "pooling_nwc_min", "pooling_nhwc_max",
                                                   "pooling_nhwc_sum", "pooling_ndhwc_min"))
    few = emitted(SOURCE, "llvm-cpu", OUTPUTS, dims={"N": 2, "C": 7, "H": 7, "W": 37, "D": 3})
    assert len(_slice_strides(few)) == 2 + 9 + 3 + 9 + 4 + 8 and "linalg.pooling_ncw_max " in few


def test_a_row_read_every_few_points_peels_its_rest(emitted):
    """Such a slice is a gather a vector step; IREE masks every step of it unless told to peel."""
    assert emitted(SOURCE, "llvm-cpu", ["ncw_max"]).count("enable_loop_peeling") == 1
    assert "enable_loop_peeling" not in emitted(SOURCE, "llvm-cpu", ["ncw_sum", "nchw_avg", "nhwc_max"])


def test_a_large_window_and_vulkan_keep_the_named_op(emitted):
    large = "let X: [f32; N, C, H, W];\nlet g[n, c, y, x] = sum[p in 0..9, q in 0..9](X[n, c, y + p, x + q]);\n"
    assert "linalg.pooling_nchw_sum" in emitted(large, "llvm-cpu")
    vulkan = emitted(SOURCE, "vulkan-spirv", OUTPUTS)
    assert vulkan.count("linalg.pooling_") == len(OUTPUTS)


ROWS = """
let Xh: [f32; N, H, W, C];
let X16: [f32; N, H, W, 16];
let Xl: [f32; N, W, 12];
let Z: [f32; N, H, W, 16];
let b: [f32; 16];
let avg[n, y, x, c] = sum[p in 0..3, q in 0..3](Xh[n, y + p, x + q, c]) / 9.0;
let avg16[n, y, x, c] = sum[p in 0..3, q in 0..3](X16[n, y + p, x + q, c]) / 9.0;
let max16[n, y, x, c] = max[p in 0..3, q in 0..2](X16[n, y + p, x + 2 * q, c]);
let mixed[n, y in 0..H - 2, x in 0..W - 2, c] = Z[n, y, x, c] - max[p in 0..3, q in 0..3](X16[n, y + p, x + q, c]);
let biased[n, y, x, c] = b[c] + sum[p in 0..3, q in 0..3](X16[n, y + p, x + q, c]);
let rows[n, x, c] = min[q in 0..4](Xl[n, x + q, c]) * 2.0;
"""
ROWS_OUTPUTS = ["avg", "avg16", "max16", "mixed", "biased", "rows"]


def _rows_references(x: dict) -> dict:
    x = {k: v.astype(np.float64) for k, v in x.items()}
    win = strided_windows
    sum3 = win(x["X16"], (3, 3), (1, 2)).sum(axis=(4, 5))
    return {"avg": win(x["Xh"], (3, 3), (1, 2)).sum(axis=(4, 5)) / 9.0, "avg16": sum3 / 9.0,
            "max16": win(win(x["X16"], (3,), (1,)), (2,), (2,), dilation=2).max(axis=(4, 5)),
            "mixed": x["Z"][:, :-2, :-2] - win(x["X16"], (3, 3), (1, 2)).max(axis=(4, 5)), "biased": x["b"] + sum3,
            "rows": win(x["Xl"], (4,), (1,)).min(axis=3) * 2.0}


def test_a_channels_last_pooling_runs_whole_rows_with_its_consumer(emitted):
    """A channels-last pooling written out, its last window axis read at every column: its
    elementwise consumer read at the same points (the average's division, another input) is
    taken into its pass and it runs 8 whole rows a workgroup, its columns and channels one axis
    where the channels are known (einc/mlir/dense/pooling_rows.py). Each matches NumPy at widths
    of a vector step and a rest, under one step, and of one column of results (the 1-d min), and
    at more result rows than a workgroup's with a rest (11)."""
    text = emitted(ROWS, "llvm-cpu", ["avg16"])
    assert text.count("linalg.generic") == 1 and text.count("tensor.extract_slice") == 9
    assert "tensor<?x?x?x16xf32> into tensor<?x?x?xf32>" in text and "einc.pooling_rows" not in text
    assert "distribution = [1, 8, 0], vector_common_parallel = [1, 1, 64]" in text
    assert "distribution = [1, 8, 0, 0], vector_common_parallel = [1, 1, 8, 16]" in emitted(ROWS, "llvm-cpu", ["avg"])
    assert emitted(ROWS, "llvm-cpu", ["rows"]).count("distribution = [8, 0]") == 1    # 1-d: rows of images
    assert emitted(ROWS, "llvm-cpu", ["biased"]).count("linalg.generic") == 2          # b[c]: not at each point
    with einc.load(built(ROWS, "llvm-cpu", ROWS_OUTPUTS).vmfb) as program:
        for n, c, h, w in [(2, 16, 5, 21), (1, 3, 4, 7), (2, 5, 6, 4), (1, 16, 3, 40), (2, 19, 13, 18)]:
            f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
            x = {"Xh": f(n, h, w, c), "X16": f(n, h, w, 16), "Xl": f(n, w, 12), "Z": f(n, h, w, 16),
                 "b": f(16)}
            got = program(**x)
            for name, want in _rows_references(x).items():
                np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5, err_msg=f"{name} at {(n, c, h, w)}")


PAIRS = """
let X: [f32; N, C, H, W];
let Xw: [f32; N, C, W];
let max2[n, c, y, x] = max[p in 0..2, q in 0..2](X[n, c, 2 * y + p, 2 * x + q]);
let avg2[n, c, y, x] = sum[p in 0..2, q in 0..2](X[n, c, 2 * y + p, 2 * x + q]) / 4.0;
let rows3[n, c, y, x] = max[p in 0..3, q in 0..2](X[n, c, y + 2 * p, 2 * x + q]);
let ncw2[n, c, x] = sum[q in 0..2](Xw[n, c, 2 * x + q]);
"""
PAIRS_OUTPUTS = ["max2", "avg2", "rows3", "ncw2"]
# (batch, channels, height, width): rows of 7 and 5 results (short rows: a masked step, or a step
# of 4 pairs and a peeled rest), of 37 (long rows: two steps of 16 and a peeled rest), of exactly
# 32, of one result; odd widths under an even height (max2 over pairs of two rows: short and
# long rows, one result), under an odd one (IREE's op; the written-out 1-d pass) and an odd height
PAIR_SIZES = [(2, 3, 7, 14), (1, 2, 6, 10), (1, 2, 9, 74), (1, 2, 5, 64), (2, 1, 6, 2), (2, 3, 6, 15), (1, 2, 6, 75),
              (2, 1, 6, 3), (1, 2, 5, 75)]


def _pairs_references(x: dict) -> dict:
    """max2 and rows3 in f32 (a max is exact: the module's must equal it), the sums in f64."""
    win, image = strided_windows, x["X"]
    return {"max2": win(image, (2, 2), (2, 3), stride=2).max(axis=(4, 5)),
            "avg2": win(image.astype(np.float64), (2, 2), (2, 3), stride=2).sum(axis=(4, 5)) / 4.0,
            "rows3": win(win(image, (3,), (2,), dilation=2), (2,), (3,), stride=2).max(axis=(4, 5)),
            "ncw2": win(x["Xw"].astype(np.float64), (2,), (2,), stride=2).sum(axis=3)}


def _check_pairs(got: dict, x: dict, at) -> None:
    for name, want in _pairs_references(x).items():
        if name.endswith("2") and name != "max2":
            np.testing.assert_allclose(got[name], want, rtol=1e-6, atol=1e-6, err_msg=f"{name} at {at}")
        else:
            np.testing.assert_array_equal(got[name], want, err_msg=f"{name} at {at}")


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
def test_a_two_point_stride_two_window_reads_pairs_and_matches_numpy(target):
    """A pooling whose last window axis takes 2 points 2 apart reads the image's rows as i64
    pairs on the CPU targets (einc/mlir/dense/pooling_pairs.py): at run-time sizes, short and
    long rows, odd widths (as before) and odd heights, each max equal to NumPy's."""
    with einc.load(built(PAIRS, target, PAIRS_OUTPUTS).vmfb) as program:       # one build, every size
        for n, c, h, w in PAIR_SIZES:
            x = {"X": rng.standard_normal((n, c, h, w)).astype(np.float32),
                 "Xw": rng.standard_normal((n, c, w)).astype(np.float32)}
            _check_pairs(program(**x), x, (n, c, h, w))


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_f64_rows_are_read_as_i128_pairs_and_match_numpy(target, emitted):
    """An f64 image's rows are read as i128 pairs (LLVM splits them into i64 lanes): IREE's op
    with run-time sizes ran the 2x2 max pool at 1.6-1.9x its fixed-size time on AVX2, the pairs
    at 0.9x. Each max equals NumPy's, each sum within 1e-12, over the sizes of the f32 test."""
    source = PAIRS.replace("f32", "f64")
    text = emitted(source, target, ["max2"])
    assert "-> tensor<?x?x?x?xi128>{%" in text and text.count("flow.tensor.bitcast") == 4         # even and odd widths
    with einc.load(built(source, target, PAIRS_OUTPUTS).vmfb) as program:
        for n, c, h, w in PAIR_SIZES:
            x = {"X": rng.standard_normal((n, c, h, w)), "Xw": rng.standard_normal((n, c, w))}
            got, want = program(**x), _pairs_references(x)
            for name in PAIRS_OUTPUTS:
                assert got[name].dtype == np.float64
                np.testing.assert_allclose(got[name], want[name], rtol=0 if name in ("max2", "rows3") else 1e-12,
                                           atol=0 if name in ("max2", "rows3") else 1e-12, err_msg=f"{name} at {(n, c, h, w)}")


@pytest.mark.parametrize("height, width", [(7, 14), (7, 15), (6, 15)])
def test_a_two_point_stride_two_window_with_its_sizes_fixed(height, width):
    sizes = (2, 3, height, width)
    with einc.load(built(PAIRS, "llvm-cpu", PAIRS_OUTPUTS, dims=dict(zip("NCHW", sizes))).vmfb) as program:
        x = {"X": rng.standard_normal(sizes).astype(np.float32),
             "Xw": rng.standard_normal((2, 3, width)).astype(np.float32)}
        _check_pairs(program(**x), x, sizes)


def test_pairs_are_a_bitcast_and_a_width_choice_at_run_time(emitted, monkeypatch):
    """Over a run-time width: an odd one under an even height over pairs of two rows, else as
    before (IREE's op, a 1-d pass written out), an even one on einc's tiles for short or long rows (short ones 2 rows by 8 pairs masked where
    the host has AVX-512's mask registers); at a build-time width, one form; on vulkan-spirv,
    IREE's op."""
    monkeypatch.setattr(host_cpu, "cpuinfo_fields", lambda: {"flags": "avx2 fma avx512f"})
    text = emitted(PAIRS, "llvm-cpu", ["max2", "ncw2"])
    # max2: an even width (2 bitcasts, short and long rows), an odd width under an even height
    # (2, two rows a pair row) or an odd one (IREE's op); ncw2: an even width (2) or not
    assert text.count("flow.tensor.bitcast") == 6 and text.count("scf.if") == 6
    assert "tensor<?x?x?x?xf32>{%" in text and "-> tensor<?x?x?x?xi64>{%" in text
    assert "distribution = [1, 16, 32, 0], vector_common_parallel = [1, 1, 2, 8]" in text
    assert "pipeline<DoubleTilingExpert>>\n" in text                                 # masked, not peeled
    assert "distribution = [1, 16, 32, 0], vector_common_parallel = [1, 1, 1, 16]" in text
    assert "distribution = [16, 32, 0], vector_common_parallel = [1, 2, 8]" in text          # 1-d
    assert "linalg.pooling_nchw_max " in text and "linalg.pooling" not in text.replace("pooling_nchw_max", "")
    even = emitted(PAIRS, "llvm-cpu", ["max2"], dims={"N": 2, "C": 3, "H": 7, "W": 14})
    assert even.count("flow.tensor.bitcast") == 1 and "scf.if" not in even and "linalg.pooling" not in even
    odd = emitted(PAIRS, "llvm-cpu", ["max2"], dims={"N": 2, "C": 3, "H": 7, "W": 15})
    assert "flow.tensor.bitcast" not in odd and "linalg.pooling_nchw_max " in odd
    two_rows = emitted(PAIRS, "llvm-cpu", ["max2"], dims={"N": 2, "C": 3, "H": 6, "W": 15})
    assert "tensor<2x3x6x15xf32> -> tensor<2x3x3x15xi64>" in two_rows and "linalg.pooling" not in two_rows
    vulkan = emitted(PAIRS, "vulkan-spirv", PAIRS_OUTPUTS)
    assert "flow.tensor.bitcast" not in vulkan and vulkan.count("linalg.pooling_") == 4


@pytest.mark.parametrize("flags, target, step", [
    ("avx2 fma", "llvm-cpu", "[1, 1, 1, 4]"), ("avx2 fma avx512f", "llvm-cpu-generic", "[1, 1, 1, 2]")])
def test_short_rows_of_pairs_peel_where_masks_are_dear(emitted, monkeypatch, flags, target, step):
    """Without AVX-512's mask registers (AVX2; SSE2, the generic build's) a short row of pairs
    runs one row of a register's pairs a vector step, its rest peeled: AVX2's masked loads and
    stores ran the MNIST CNN's 2x2 pool 1.7x slower (docs/DECISIONS.md)."""
    monkeypatch.setattr(host_cpu, "cpuinfo_fields", lambda: {"flags": flags})
    text = emitted(PAIRS, target, ["max2"])
    assert f"distribution = [1, 16, 32, 0], vector_common_parallel = {step}>" in text
    assert "pipeline<DoubleTilingExpert>>" not in text and "[1, 1, 2, 8]" not in text      # every step peeled


# Windows over an image with no batch or channel axis: linalg has no op for them, so the CPU
# targets write them out (one slice a window point) and Vulkan keeps a generic reduction; the
# same for a window whose guard of its own variables keeps some of its points, and for reads
# clamped into the image (its edges replicated: a copy padded with them, read affinely).
BARE = """
use std::math::clamp;
let s: [f32; W];
let img: [f32; H, W];
let vol: [f32; D, H, W];
let row_max[x] = max[q in 0..3](s[x + q]);
let row_sum[x] = sum[q in 0..2](s[2 * x + 3 * q]);
let eroded[y, x] = min[p in 0..3, q in 0..3](img[y + p, x + q]);
let pooled[y, x] = max[p in 0..2, q in 0..2](img[2 * y + p, 2 * x + q]);
let box[y, x] = sum[p in 0..3, q in 0..5](img[y + p, x + q]) / 15.0;
let cube[z, y, x] = min[o in 0..2, p in 0..2, q in 0..2](vol[z + o, y + p, x + q]);
let se = [[false, true, false], [true, true, true], [false, true, false]];
let cross[y, x] = min[p in 0..3, q in 0..3](img[y + p, x + q] where se[p, q]);
let ring[y, x] = sum[p in 0..3, q in 0..3](img[y + p, x + q] where p != 1 || q != 1);
let diagonal[c, y, x] = max[p in 0..2, q in 0..2](vol[c, y + p, x + q] where p == q);
let ker: [f32; 3, 3];
let edge[y in 0..H, x in 0..W] = min[p in 0..3, q in 0..3](img[clamp(y + p - 1, 0, H - 1), clamp(x + q - 1, 0, W - 1)]
    where se[p, q]);
let smear[x in 0..W] = max[q in 0..4](s[max(min(x + q - 2, W - 1), 0)]);
let blur[y in 0..H, x in 0..W] = sum[p in 0..3, q in 0..3](
    img[clamp(y + p - 1, 0, H - 1), clamp(x + q - 1, 0, W - 1)] * ker[p, q]);
"""
BARE_OUTPUTS = ["row_max", "row_sum", "eroded", "pooled", "box", "cube", "cross", "ring", "diagonal", "edge",
                "smear", "blur"]


def _bare_references(x: dict) -> dict:
    s, img, vol = (x[k].astype(np.float64) for k in ("s", "img", "vol"))
    win = strided_windows
    return {"row_max": win(s, (3,), (0,)).max(axis=1),
            "row_sum": win(s, (2,), (0,), stride=2, dilation=3).sum(axis=1),
            "eroded": win(img, (3, 3), (0, 1)).min(axis=(2, 3)),
            "pooled": win(img, (2, 2), (0, 1), stride=2).max(axis=(2, 3)),
            "box": win(img, (3, 5), (0, 1)).sum(axis=(2, 3)) / 15.0,
            "cube": win(vol, (2, 2, 2), (0, 1, 2)).min(axis=(3, 4, 5)),
            # windows whose guard of their own variables keeps some points (a mask decided at build time)
            "cross": np.where(CROSS, win(img, (3, 3), (0, 1)), np.inf).min(axis=(2, 3)),
            "ring": win(img, (3, 3), (0, 1)).sum(axis=(2, 3)) - img[1:-1, 1:-1],
            "diagonal": np.maximum(vol[:, :-1, :-1], vol[:, 1:, 1:]),
            # reads clamped into the image: its edges replicated (np.pad's "edge")
            "edge": np.where(CROSS, win(np.pad(img, 1, mode="edge"), (3, 3), (0, 1)), np.inf).min(axis=(2, 3)),
            "smear": win(np.pad(s, (2, 1), mode="edge"), (4,), (0,)).max(axis=1),
            "blur": np.einsum("hwpq,pq->hw", win(np.pad(img, 1, mode="edge"), (3, 3), (0, 1)),
                              x["ker"].astype(np.float64))}


CROSS = np.array([[False, True, False], [True, True, True], [False, True, False]])


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
def test_windows_without_batch_or_channels_match_numpy(target):
    with einc.load(built(BARE, target, BARE_OUTPUTS).vmfb) as program:
        for h, w in ((7, 37), (4, 6), (9, 100)):
            x = {"s": rng.standard_normal(w).astype(np.float32), "img": rng.standard_normal((h, w)).astype(np.float32),
                 "vol": rng.standard_normal((3, h, w)).astype(np.float32),
                 "ker": rng.standard_normal((3, 3)).astype(np.float32)}
            got = program(**x)
            for name, want in _bare_references(x).items():
                np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5, err_msg=f"{name} at {h}x{w}")


def test_windows_without_batch_or_channels_are_written_out_on_the_cpu(emitted):
    slices = _slice_strides(emitted(BARE, "llvm-cpu", BARE_OUTPUTS))
    # a masked window: the points it keeps; `diagonal` (channels, no batch) is no pattern: a generic
    assert len(slices) == 3 + 2 + 9 + 4 + 15 + 8 + 5 + 8
    # reads clamped into the image: slices of a copy of it with its edges replicated, a convolution of it
    assert emitted(BARE, "llvm-cpu", ["edge"]).count("tensor.extract_slice") == 5
    assert emitted(BARE, "llvm-cpu", ["smear"]).count("tensor.extract_slice") == 4
    assert "linalg.conv_2d " in emitted(BARE, "llvm-cpu", ["blur"])
    assert "linalg.pooling" not in emitted(BARE, "llvm-cpu", BARE_OUTPUTS)
    assert "extract_slice" not in emitted(BARE, "vulkan-spirv", BARE_OUTPUTS)
