"""IREE-264: a reduction whose body IREE's folders reduce to a value no reduced element changes
(integer `x * 0`, `x - x`, `(x + 3) - x`, `x % 1`, `x == x`, a select of two equal sides, a
read of a kernel that folds to a fill) was vectorized on llvm-cpu to one application of the
body: `sum[k](x[k] * 0 + 1)` gave 1 (llvm-cpu-generic: 2), not N. vulkan-spirv was right.
Float `x * 0.0` and `x - x` are not folded (NaN and inf), so they keep their NaN here."""
import numpy as np
import pytest

import einc

from tests.tiers import GENERIC_FULL

SOURCE = """
    let xi: [i32; 5];
    let d: [i32; ?];
    let m: [i32; 3, 4];
    let xf: [f32; 5];
    let y[k in 0..5] = xi[k] * 0;
    let mul0 = sum[k](xi[k] * 0 + 1);
    let self_sub = sum[k](d[k] - d[k] + 3);
    let shifted = sum[k]((xi[k] + 3) - xi[k]);
    let rem1 = prod[i, j](m[i, j] % 1 + 2);
    let same = sum[k](if xi[k] == xi[k] { 1 } else { 0 });
    let sides = sum[k](if xf[k] > 0.0 { 1.0 } else { 1.0 });
    let row[i] = sum[j](m[i, j] * 0 + i);
    let filled = sum[k](y[k] + 1);
    let count[0] = 0;
    let count[t in 1..4] = count[t - 1] + sum[k](xi[k] * 0 + 1);
    let fzero = sum[k](xf[k] * 0.0 + 1.0);
    let fsub = sum[k](xf[k] - xf[k] + 2.0);
"""


def reference(xi, d, m, xf):
    with np.errstate(invalid="ignore"):
        return {
            "mul0": np.sum(xi * 0 + 1), "self_sub": np.sum(d - d + 3), "shifted": np.sum((xi + 3) - xi),
            "rem1": np.prod(m % 1 + 2), "same": np.sum(np.where(xi == xi, 1, 0)),
            "sides": np.sum(np.where(xf > 0, 1.0, 1.0), dtype=np.float32),
            "row": np.sum(m * 0 + np.arange(3)[:, None], axis=1), "filled": np.sum(xi * 0 + 1),
            "count": np.cumsum([0] + [np.sum(xi * 0 + 1)] * 3),
            "fzero": np.sum(xf * np.float32(0) + 1, dtype=np.float32),
            "fsub": np.sum(xf - xf + 2, dtype=np.float32),
        }


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_a_reduction_whose_body_folds_to_a_constant_counts_every_point(run, target):
    xi = np.array([3, -2, 5, 7, 1], np.int32)
    d = np.array([4, -5, 6, 7, 8, 9, 10], np.int32)
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    xf = np.array([1.5, -2.0, 0.5, np.inf, 2.0], np.float32)
    expected = reference(xi, d, m, xf)
    out = run(SOURCE, target=target, outputs=list(expected), xi=xi, d=d, m=m, xf=xf)
    assert np.isnan(expected["fzero"]) and np.isnan(expected["fsub"])
    for name, value in expected.items():
        np.testing.assert_array_equal(out[name], value, err_msg=name)


INDEX_ONLY = """
    let x: [i32; T];
    let p[i in 2..T] = sum[j in 0..i + 1](x[j] * 0 + 4);
    let q[i in 0..T - 3] = sum[j](x[j] - x[j] + 7 where j < i);
"""


@pytest.mark.parametrize("dims", [{"T": 16}, None])
def test_a_folded_body_that_still_reads_the_reduced_index_builds_and_counts(dims):
    """Once `x[j] * 0` folds, the body depends on the reduced j only through its guard (linalg.index):
    with fewer points than reduced ones (14 of 16) IREE's vectorizer failed to compile it on llvm-cpu
    ("'vector.multi_reduction' op reduction dimension out of range"; fuzz seed 31001 program 78)."""
    x = np.arange(16, dtype=np.int32) - 5
    with einc.load(einc.compile(INDEX_ONLY, target="llvm-cpu", dims=dims).vmfb) as program:
        out = program(x=x)
    np.testing.assert_array_equal(out["p"], [0, 0] + [4 * (i + 1) for i in range(2, 16)])
    np.testing.assert_array_equal(out["q"], [7 * i for i in range(13)])
