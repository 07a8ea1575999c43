"""A long f32 sum to one value adds its terms in f64 and rounds once on the CPU targets: added in
f32 in loop order across IREE's vector lanes, a million squares summed 3.6e-4 off (a plain sum
7e-6), where NumPy's pairwise f32 sum stays within 1e-7 of the exact value. vulkan-spirv has no
f64 and keeps f32 (docs/DECISIONS.md)."""
import numpy as np
import pytest

import einc
from tests.tiers import GENERIC_FULL

SUMS = """
    let x: [f32; N];
    let y: [f32; 5000];
    let squares = sum[i](x[i] * x[i]);
    let mean = sum[i](x[i]) / (N as f32);
    let fixed = sum[i](y[i]);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_a_million_f32_terms_sum_as_close_as_numpy(target):
    rng = np.random.default_rng(0)
    x, y = rng.random(1_000_000).astype(np.float32), rng.random(5000).astype(np.float32)
    with einc.load(einc.compile(SUMS, target=target).vmfb) as program:
        out = program(x=x, y=y)
    wide = x.astype(np.float64)
    np.testing.assert_allclose(out["squares"], (wide * wide).sum(), rtol=1e-7)
    np.testing.assert_allclose(out["mean"], wide.mean(), rtol=1e-7)
    np.testing.assert_allclose(out["fixed"], y.astype(np.float64).sum(), rtol=1e-7)
    assert out["squares"].dtype == np.float32
