"""f32 sin, cos and tan (einc.mlir.core.f32_trig's reduction) on rows of widths 1, 3, 5 and 8:
in row functions, in sums over a row and in plain definitions, on every target, against NumPy.
Rows of odd widths vectorize to shapes such as vector<1x3xi32>, on which IREE 3.13 cannot lower
arith.mului_extended (IREE-47)."""
import numpy as np
import pytest

import einc
from tests.tiers import GENERIC_FULL, VULKAN_FULL, by_tier

WIDTHS = (1, 3, 5, 8)
BUILT = by_tier((1, 3, 8), WIDTHS)       # the fast tier's build leaves out a second odd width
FUNCTIONS = {"sin": np.sin, "cos": np.cos, "tan": np.tan}
ROWS = 4


def source():
    lines = ["use std::math::{sin, cos, tan};"]
    for f in FUNCTIONS:
        lines += [f"fn row_{f}(v) {{ {f}(v) }}", f"fn sum_{f}(v) {{ sum[j]({f}(v[j])) }}"]
    for w in BUILT:
        lines.append(f"let x{w}: [f32; {ROWS}, {w}];")
        for f in FUNCTIONS:
            lines += [f"let fn_{f}_{w}[i, j] = row_{f}(x{w}[i])[j];",
                      f"let fnsum_{f}_{w}[i] = sum_{f}(x{w}[i]);",
                      f"let plain_{f}_{w}[i, j] = {f}(x{w}[i, j]);",
                      f"let plainsum_{f}_{w}[i] = sum[j]({f}(x{w}[i, j]));"]
    return "\n".join(lines) + "\n"


def inputs():
    rng = np.random.default_rng(11)
    # small arguments, then magnitudes up to 2^100 (the Payne–Hanek path), either sign
    return {f"x{w}": (rng.choice([-1, 1], (ROWS, w)) * np.exp2(rng.uniform(-2, 100, (ROWS, w)))).astype(np.float32)
            for w in BUILT}


@pytest.fixture(scope="module", params=["llvm-cpu", GENERIC_FULL,
                                        VULKAN_FULL])
def results(request):
    program = einc.load(einc.compile(source(), target=request.param).vmfb)
    args = inputs()
    return args, program(**args)


@pytest.mark.parametrize("w", [w if w in BUILT else pytest.param(w, marks=pytest.mark.full) for w in WIDTHS])
@pytest.mark.parametrize("f", list(FUNCTIONS))
def test_rows_match_numpy(results, f, w):
    args, out = results
    ref = FUNCTIONS[f](args[f"x{w}"].astype(np.float64))
    # a few f32 ulps of each value (tan's are large near its poles); sums add one ulp per term of 1
    for name in (f"fn_{f}_{w}", f"plain_{f}_{w}"):
        np.testing.assert_allclose(out[name], ref, rtol=3e-7 * 4, atol=1e-7 * 4, err_msg=name)
    total = ref.sum(axis=1)
    scale = np.abs(ref).sum(axis=1) + 1
    for name in (f"fnsum_{f}_{w}", f"plainsum_{f}_{w}"):
        assert np.all(np.abs(out[name] - total) <= 1e-6 * w * scale), name
