"""Ranges whose sizes are not affine in the run-time dims: products (`0..B * C`), min, max and
clamps of sizes and constants, and integer divisions by constants (a strided output). Each size
is computed on the device from the input dims and checked before a run (einc/runtime/sizes.py);
the values are exact copies or small sums, checked against NumPy slices (rtol 1e-6), at several
run-time sizes on llvm-cpu and vulkan-spirv (lavapipe) and at sizes fixed by --dim."""
import einc
import numpy as np
import pytest

from einc.runtime.errors import RunError
from tests.programs import built
from tests.tiers import VULKAN_FULL

SOURCE = """
use std::math::clamp;
let x: [f32; B, C];
let v: [f32; N];
let flat[k in 0..B * C] = x[k / C, k % C];
let head[i in 0..min(N, 4)] = v[i];
let tail[i in 0..max(N - 3, 1)] = v[N - 1 - i];
let mid[i in 0..clamp(N - 2, 1, 5)] = v[i] * 2.0;
let pairs[i in 0..(N - 2) / 2 + 1] = sum[k in 0..2](v[2 * i + k]) where 2 * i + k < N;
let blocks[b in 0..B, k in 0..min(B * C, 6)] = x[b, k % C];
"""

TARGETS = ["llvm-cpu", VULKAN_FULL]


def references(x, v):
    b, c = x.shape
    n = len(v)
    pairs = [v[2 * i:2 * i + 2].sum() for i in range((n - 2) // 2 + 1)]
    return {"flat": x.reshape(-1), "head": v[:min(n, 4)], "tail": v[::-1][:max(n - 3, 1)],
            "mid": 2 * v[:min(max(n - 2, 1), 5)], "pairs": np.array(pairs, np.float32),
            "blocks": x[:, np.arange(min(b * c, 6)) % c]}


def check(out, x, v):
    for name, want in references(x, v).items():
        assert out[name].shape == want.shape, name
        np.testing.assert_allclose(out[name], want, rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("target", TARGETS)
def test_sizes_from_products_clamps_and_quotients_at_run_time(target):
    rng = np.random.default_rng(2)
    module = einc.load(built(SOURCE, target).vmfb)
    for (b, c), n in (((3, 4), 9), ((1, 2), 2), ((2, 1), 5)):
        x, v = rng.standard_normal((b, c)).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        check(module(x=x, v=v), x, v)


@pytest.mark.full      # the program above with its sizes fixed at the build
@pytest.mark.parametrize("target", TARGETS)
def test_sizes_from_products_clamps_and_quotients_fixed_by_dim(target):
    rng = np.random.default_rng(3)
    x, v = rng.standard_normal((2, 5)).astype(np.float32), rng.standard_normal(7).astype(np.float32)
    check(einc.load(built(SOURCE, target, dims=dict(B=2, C=5, N=7)).vmfb)(x=x, v=v), x, v)


def test_a_product_of_sizes_too_small_is_reported_before_the_run():
    module = einc.load(built("let x: [f32; B, C];\nlet y[k in 0..B * C - 7] = x[0, 0];\n").vmfb)
    with pytest.raises(RunError, match=r"\(B\) \* \(C\) - 7 = -1"):
        module(x=np.zeros((2, 3), np.float32))
    assert module(x=np.ones((3, 3), np.float32))["y"].shape == (2,)


def test_the_guarded_forms_a_run_time_range_bound_is_written_as():
    # What the E004 for `sum[i in 0..n](..)` with `n` an input suggests (tests/semantics/test_diagnostics.py).
    module = einc.load(built("""let x: [f32; 10];
let n: i32;
let s = sum[i](x[i] where i < n);
let y[i] = if i < n { x[i] * 2.0 } else { 0.0 };
let z = [x[i] | i in 0..10, i < n];
""").vmfb)
    x = np.random.default_rng(0).normal(size=10).astype(np.float32)
    for n in (0, 3, 10):
        out = module(x=x, n=np.int32(n))
        np.testing.assert_allclose(out["s"], x[:n].sum(dtype=np.float32), rtol=1e-6)
        np.testing.assert_array_equal(out["y"], np.where(np.arange(10) < n, x * 2, 0))
        np.testing.assert_array_equal(out["z"], x[:n])
