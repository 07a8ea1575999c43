"""Reads that the sizes' checks before a run keep inside their axes (einc/semantics/core/bounds,
`in_bounds` of a strict read): a window whose result size is a named dim of its own (`h in 0..P`
over rows 3 * h + a of an image of H rows; the run checks 3 P <= H) is a named op, not a loop
nest of clamped reads; the module asserts the same checks for a caller that skips einc's."""
import re

import numpy as np
import pytest

from lowering_harness import Compiled
from numpy_windows import strided_windows

import einc
from tests.programs import built
from tests.tiers import GENERIC_FULL, VULKAN_FULL

SOURCE = """
let X: [f32; N, C, H, W];
let K: [f32; F, C, 3, 3];
let S: [f32; P, Q];
let pool[n, c, h in 0..P, w in 0..Q] = max[a in 0..3, b in 0..3](X[n, c, 3 * h + a, 3 * w + b]);
let total[n, c, h in 0..P, w in 0..Q] = sum[a in 0..2, b in 0..2](X[n, c, 3 * h + a, 3 * w + b]);
let strided[n, o, h in 0..P, w in 0..Q] = sum[c, kh, kw](X[n, c, 3 * h + kh, 3 * w + kw] * K[o, c, kh, kw]);
"""
OUTPUTS = ["pool", "total", "strided"]
rng = np.random.default_rng(23)


def _inputs(n: int, c: int, h: int, w: int, p: int, q: int) -> dict:
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return {"X": f(n, c, h, w), "K": f(5, c, 3, 3), "S": f(p, q)}


def _references(x: dict) -> dict:
    p, q = x["S"].shape
    image = x["X"].astype(np.float64)
    windows = lambda k: strided_windows(image, (k, k), (2, 3), stride=3)[:, :, :p, :q]
    return {"pool": windows(3).max(axis=(4, 5)), "total": windows(2).sum(axis=(4, 5)),
            "strided": np.einsum("nchwij,ocij->nohw", windows(3), x["K"].astype(np.float64))}


def test_windows_of_a_checked_size_are_named_ops(emitted):
    text = emitted(SOURCE, "llvm-cpu", OUTPUTS)
    assert re.search(r"linalg\.pooling_nchw_max .*strides = dense<3>", text)
    assert re.search(r"linalg\.pooling_nchw_sum .*strides = dense<3>", text)
    assert re.search(r"linalg\.conv_2d_nchw_fchw .*strides = dense<3>", text)
    assert "tensor.extract %" not in text           # no clamped read of an element
    assert text.count("a read leaves axis") >= 4     # rows and columns of the image, asserted


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL,
                                    VULKAN_FULL])
@pytest.mark.parametrize("sizes", [(2, 3, 17, 13, 5, 4), (1, 1, 7, 3, 2, 1), (3, 2, 19, 37, 1, 12)])
def test_windows_of_a_checked_size_match_numpy(target, sizes):
    """Sizes that fill the image (3 P = H - 2) and that leave rows or columns unread."""
    x = _inputs(*sizes)
    with einc.load(built(SOURCE, target, OUTPUTS).vmfb) as program:      # one build, every size
        got = program(**x)
    for name, want in _references(x).items():
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-4, err_msg=f"{name} at {sizes}")


def test_sizes_that_leave_the_image_are_refused_by_the_runner_and_the_module():
    """P = 6 reads row 17 of 17: einc refuses the inputs before the call, and the module itself
    asserts rather than read outside its buffer when called without einc's checks."""
    vmfb = einc.compile(SOURCE, outputs=["pool"]).vmfb
    x = _inputs(2, 3, 17, 19, 6, 4)
    with einc.load(vmfb) as program, pytest.raises(einc.RunError, match="P"):
        program(**x)
    with pytest.raises(RuntimeError, match="a read leaves axis 2"):
        Compiled(vmfb, "llvm-cpu").main(x["X"], x["K"], x["S"])
