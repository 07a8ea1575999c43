"""Named dims against `--dim` for each dense form einc recognizes (issue 19), on one core.

    .venv/bin/python benchmarks/named_dims.py [--only SUBSTRING] [--rounds N]

Each form is one Einlang program over named batch and image sizes (channel counts fixed), built
twice for llvm-cpu: with the names as run-time sizes, and with them fixed (`--dim`). Both results
are checked against a NumPy reference before timing. The process is pinned to one CPU and einc
runs on local-sync; a sample is the process CPU time of enough calls to take MIN_SAMPLE seconds,
samples of the two builds alternate (load on the machine hits both alike), and the best of
`--rounds` is kept. Printed: both times and named/--dim (1: run-time sizes cost nothing).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import einc  # noqa: E402

MIN_SAMPLE = 0.05
TOLERANCE = {"rtol": 2e-4, "atol": 2e-4}


@dataclass(frozen=True)
class Form:
    name: str
    source: str
    shapes: dict                  # input name -> shape (at the dims below)
    dims: dict                    # the named dims at the sizes timed
    numpy: Callable               # inputs (float64) -> the result
    dtype: type = np.float32


def windows(x: np.ndarray, window: tuple, axes: tuple, stride: int = 1, dilation: int = 1) -> np.ndarray:
    """x's windows over `axes` (the window's axes appended last), every `stride` along each."""
    span = tuple((k - 1) * dilation + 1 for k in window)
    view = sliding_window_view(x, span, axis=axes)
    for a in axes:
        view = np.take(view, np.arange(0, view.shape[a], stride), axis=a)
    return view[(Ellipsis, *[slice(None, None, dilation)] * len(window))]


def conv2d(x, k, **kw):
    return np.einsum("nchwij,ocij->nohw", windows(x, k.shape[2:], (2, 3), **kw), k)


PADDED_CONV = """
let X: [f32; B, 8, H, W];
let K: [f32; 16, 8, 5, 5];
let y[n, o, h in 0..H, w in 0..W] = sum[c, kh, kw](
    if ih >= 0 && ih < H && iw >= 0 && iw < W { X[n, c, ih, iw] * K[o, c, kh, kw] } else { 0.0 }
    where ih = h + kh - 2, iw = w + kw - 2);
"""


def padded_conv(width: int) -> Form:
    return Form(f"conv 2-d NCHW 8->16, 5x5, pad 2, {width} wide", PADDED_CONV,
                {"X": ("B", 8, "H", "W"), "K": (16, 8, 5, 5)}, {"B": 32, "H": 64, "W": width},
                lambda x: conv2d(np.pad(x["X"], ((0, 0), (0, 0), (2, 2), (2, 2))), x["K"]))


MAX_POOL = """
let X: [f32; B, C, H, W];
let y[n, c, h in 0..H / 2, w in 0..W / 2] = max[a in 0..2, b in 0..2](X[n, c, 2 * h + a, 2 * w + b]);
"""


def max_pool_every_size_named(batch: int, channels: int, width: int) -> Form:
    """The MNIST CNN's 2x2 pools: batch, channels and image all named."""
    return Form(f"max pool 2x2, every size named, {batch} x {channels} x {width} x {width}", MAX_POOL,
                {"X": ("B", "C", "H", "W")}, {"B": batch, "C": channels, "H": width, "W": width},
                lambda x: windows(x["X"], (2, 2), (2, 3), stride=2).max(axis=(4, 5)))


RESNET_CONV = {
    "NCHW": ("X: [f32; B, 64, H, W]", "K: [f32; 64, 64, 3, 3]", "n, o, {h}, {w}", "c, kh, kw",
             "X[n, c, ih, iw] * K[o, c, kh, kw]"),
    "NHWC": ("X: [f32; B, H, W, 64]", "K: [f32; 3, 3, 64, 64]", "n, {h}, {w}, o", "kh, kw, c",
             "X[n, ih, iw, c] * K[kh, kw, c, o]"),
}


def resnet_conv(layout: str, stride: int, width: int) -> Form:
    """A ResNet stage's 3x3 convolution, 64 -> 64 channels, padding 1, stride 1 or 2."""
    image, kernel, out, summed, product = RESNET_CONV[layout]
    extent = "" if stride == 1 else f" / {stride}"
    out = out.format(h=f"h in 0..H{extent}", w=f"w in 0..W{extent}")
    step = "" if stride == 1 else f"{stride} * "
    source = f"""
let {image};
let {kernel};
let y[{out}] = sum[{summed}](
    if ih >= 0 && ih < H && iw >= 0 && iw < W {{ {product} }} else {{ 0.0 }}
    where ih = {step}h + kh - 1, iw = {step}w + kw - 1);
"""
    nchw = layout == "NCHW"
    shapes = {"X": ("B", 64, "H", "W") if nchw else ("B", "H", "W", 64),
              "K": (64, 64, 3, 3) if nchw else (3, 3, 64, 64)}
    axes, pads = ((2, 3), ((0, 0), (0, 0), (1, 1), (1, 1))) if nchw else ((1, 2), ((0, 0), (1, 1), (1, 1), (0, 0)))
    spec = "nchwij,ocij->nohw" if nchw else "nhwcij,ijco->nhwo"
    return Form(f"ResNet conv {layout} 64->64, 3x3, stride {stride}, {width} x {width}", source, shapes,
                {"B": 8, "H": width, "W": width},
                lambda x: np.einsum(spec, windows(np.pad(x["X"], pads), (3, 3), axes, stride=stride), x["K"]))


FORMS = [
    padded_conv(64),
    padded_conv(40),
    padded_conv(56),
    padded_conv(100),
    *(resnet_conv(layout, stride, width) for layout in RESNET_CONV for stride in (1, 2) for width in (56, 28)),
    Form("conv 2-d NCHW 8->16, 3x3, stride 2", """
let X: [f32; B, 8, H, W];
let K: [f32; 16, 8, 3, 3];
let y[n, o, h, w] = sum[c, kh, kw](X[n, c, 2 * h + kh, 2 * w + kw] * K[o, c, kh, kw]);
""", {"X": ("B", 8, "H", "W"), "K": (16, 8, 3, 3)}, {"B": 32, "H": 65, "W": 65},
         lambda x: conv2d(x["X"], x["K"], stride=2)),
    Form("conv 2-d NCHW 8->16, 3x3, dilation 2", """
let X: [f32; B, 8, H, W];
let K: [f32; 16, 8, 3, 3];
let y[n, o, h, w] = sum[c, kh, kw](X[n, c, h + 2 * kh, w + 2 * kw] * K[o, c, kh, kw]);
""", {"X": ("B", 8, "H", "W"), "K": (16, 8, 3, 3)}, {"B": 32, "H": 36, "W": 36},
         lambda x: conv2d(x["X"], x["K"], dilation=2)),
    Form("conv 2-d NHWC 8->16, 5x5, pad 2", """
let X: [f32; B, H, W, 8];
let K: [f32; 5, 5, 8, 16];
let y[n, h in 0..H, w in 0..W, o] = sum[kh, kw, c](
    if ih >= 0 && ih < H && iw >= 0 && iw < W { X[n, ih, iw, c] * K[kh, kw, c, o] } else { 0.0 }
    where ih = h + kh - 2, iw = w + kw - 2);
""", {"X": ("B", "H", "W", 8), "K": (5, 5, 8, 16)}, {"B": 32, "H": 64, "W": 64},
         lambda x: np.einsum("nhwcij,ijco->nhwo",
                             windows(np.pad(x["X"], ((0, 0), (2, 2), (2, 2), (0, 0))), (5, 5), (1, 2)), x["K"])),
    Form("depthwise 2-d NCHW 16 channels, 3x3", """
let X: [f32; B, 16, H, W];
let K: [f32; 16, 3, 3];
let y[n, c, h, w] = sum[kh, kw](X[n, c, h + kh, w + kw] * K[c, kh, kw]);
""", {"X": ("B", 16, "H", "W"), "K": (16, 3, 3)}, {"B": 32, "H": 66, "W": 66},
         lambda x: np.einsum("nchwij,cij->nchw", windows(x["X"], (3, 3), (2, 3)), x["K"])),
    Form("conv 1-d NCW 8->16, 5 taps", """
let X: [f32; B, 8, L];
let K: [f32; 16, 8, 5];
let y[n, o, t] = sum[c, k](X[n, c, t + k] * K[o, c, k]);
""", {"X": ("B", 8, "L"), "K": (16, 8, 5)}, {"B": 32, "L": 4300},
         lambda x: np.einsum("nctk,ock->not", windows(x["X"], (5,), (2,)), x["K"])),
    Form("conv 3-d NCDHW 4->8, 3x3x3", """
let X: [f32; B, 4, D, H, W];
let K: [f32; 8, 4, 3, 3, 3];
let y[n, o, d, h, w] = sum[c, kd, kh, kw](X[n, c, d + kd, h + kh, w + kw] * K[o, c, kd, kh, kw]);
""", {"X": ("B", 4, "D", "H", "W"), "K": (8, 4, 3, 3, 3)}, {"B": 8, "D": 18, "H": 34, "W": 34},
         lambda x: np.einsum("ncdhwijk,ocijk->nodhw", windows(x["X"], (3, 3, 3), (2, 3, 4)), x["K"])),
    Form("max pool 2x2, 16 channels", """
let X: [f32; B, 16, H, W];
let y[n, c, h in 0..H / 2, w in 0..W / 2] = max[a in 0..2, b in 0..2](X[n, c, 2 * h + a, 2 * w + b]);
""", {"X": ("B", 16, "H", "W")}, {"B": 32, "H": 64, "W": 64},
         lambda x: windows(x["X"], (2, 2), (2, 3), stride=2).max(axis=(4, 5))),
    Form("max pool 2x2, 16 channels, odd width", MAX_POOL, {"X": ("B", "C", "H", "W")},
         {"B": 32, "C": 16, "H": 64, "W": 65},
         lambda x: windows(x["X"][..., :64], (2, 2), (2, 3), stride=2).max(axis=(4, 5))),
    Form("max pool 2x2 f64, 16 channels", MAX_POOL.replace("f32", "f64"), {"X": ("B", "C", "H", "W")},
         {"B": 32, "C": 16, "H": 64, "W": 64},
         lambda x: windows(x["X"], (2, 2), (2, 3), stride=2).max(axis=(4, 5)), np.float64),
    max_pool_every_size_named(100, 8, 28),
    max_pool_every_size_named(100, 16, 14),
    Form("avg pool 3x3, stride 1, 16 channels", """
let X: [f32; B, 16, H, W];
let y[n, c, h, w] = sum[a in 0..3, b in 0..3](X[n, c, h + a, w + b]) / 9.0;
""", {"X": ("B", 16, "H", "W")}, {"B": 32, "H": 66, "W": 66},
         lambda x: windows(x["X"], (3, 3), (2, 3)).mean(axis=(4, 5))),
    Form("avg pool 3x3 NHWC, stride 1, 16 channels", """
let X: [f32; B, H, W, 16];
let y[n, h, w, c] = sum[a in 0..3, b in 0..3](X[n, h + a, w + b, c]) / 9.0;
""", {"X": ("B", "H", "W", 16)}, {"B": 32, "H": 66, "W": 66},
         lambda x: windows(x["X"], (3, 3), (1, 2)).mean(axis=(4, 5))),
    Form("avg pool 3x3 NHWC, stride 1, 16 channels named", """
let X: [f32; B, H, W, C];
let y[n, h, w, c] = sum[a in 0..3, b in 0..3](X[n, h + a, w + b, c]) / 9.0;
""", {"X": ("B", "H", "W", "C")}, {"B": 32, "H": 66, "W": 66, "C": 16},
         lambda x: windows(x["X"], (3, 3), (1, 2)).mean(axis=(4, 5))),
    Form("batch matmul 64 x 128 x 128 x 128", """
let A: [f32; B, M, K];
let C: [f32; B, K, N];
let y[b, i, j] = sum[k](A[b, i, k] * C[b, k, j]);
""", {"A": ("B", "M", "K"), "C": ("B", "K", "N")}, {"B": 64, "M": 128, "K": 128, "N": 128},
         lambda x: np.einsum("bik,bkj->bij", x["A"], x["C"])),
]


def inputs(form: Form) -> dict:
    rng = np.random.default_rng(19)
    size = lambda s: form.dims[s] if isinstance(s, str) else s
    return {name: rng.standard_normal(tuple(size(s) for s in shape)).astype(form.dtype)
            for name, shape in form.shapes.items()}


def sample(program, x: dict) -> float:
    """Process CPU seconds a call, over enough calls to take MIN_SAMPLE seconds."""
    calls, start = 0, time.process_time()
    while (spent := time.process_time() - start) < MIN_SAMPLE or calls == 0:
        program(**x)
        calls += 1
    return spent / calls


def measure(form: Form, rounds: int) -> tuple[float, float]:
    x = inputs(form)
    want = form.numpy({k: v.astype(np.float64) for k, v in x.items()})
    builds = [einc.compile(form.source, outputs=["y"]), einc.compile(form.source, outputs=["y"], dims=form.dims)]
    programs = [einc.load(b.vmfb, device="local-sync") for b in builds]
    for program, how in zip(programs, ("named", "--dim")):
        np.testing.assert_allclose(program(**x)["y"], want, err_msg=f"{form.name} ({how})", **TOLERANCE)
    best = [min(sample(p, x) for _ in range(1)) for p in programs]        # warm-up round
    for _ in range(rounds):
        best = [min(b, sample(p, x)) for b, p in zip(best, programs)]
    for program in programs:
        program.close()
    return best[0], best[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the forms whose name contains this")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print("one core, local-sync, process CPU time, best of interleaved samples")
    print(f"| {'form':45} | named ms | --dim ms | named/--dim |")
    print(f"|{'-' * 47}|----------|----------|-------------|")
    for form in (f for f in FORMS if args.only in f.name):
        named, fixed = measure(form, args.rounds)
        print(f"| {form.name:45} | {named * 1e3:8.2f} | {fixed * 1e3:8.2f} | {named / fixed:11.2f} |", flush=True)


if __name__ == "__main__":
    main()
