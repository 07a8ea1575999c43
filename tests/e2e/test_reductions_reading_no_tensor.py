"""Reductions whose body reads no tensor along their own variables: a constant, an index
expression, a guard on an outer index. Their trip count comes from their range alone (issue 11
item 1: `sum[p in 0..4](2)` gave 2, `sum[p in 0..3](a + p)` did not compile)."""
import numpy as np
import pytest
from tests.tiers import VULKAN_FULL

WIDE = """
    let c: f64 = 2.5;
    let n: i64 = 3;
    let d = sum[p in 0..4](c);
    let l = sum[p in 0..5](n);
"""
# f32, i32 and bool only, as vulkan-spirv takes them
PORTABLE = """
    let x: [f32; 3];
    let s = sum[p in 0..4](2);
    let f = sum[p in 0..4](2.5);
    let pr = prod[p in 0..4](2);
    let acc[a in 0..2] = sum[p in 0..3](1);
    let tri[a in 0..4] = sum[p in 0..a + 1](1);
    let ap[a in 0..2] = sum[p in 0..3](a + p);
    let nest = sum[p in 0..3](sum[q in 0..p + 1](q));
    let scaled[a in 0..3] = sum[p in 0..4](x[a] * p as f32);
    let mixed[a in 0..3] = sum[p in 0..3, q in 0..2](x[p] + q as f32) where p <= a;
    let counted[a in 0..3] = sum[p in 0..5](1) where p > a;
    let r[0] = 0;
    let r[t in 1..5] = r[t - 1] + sum[p in 0..3](1);
"""


def reference(x):
    p = np.arange(4)
    return {
        "s": 2 * 4, "f": 2.5 * 4, "d": 2.5 * 4, "l": 3 * 5, "pr": 2 ** 4,
        "acc": [3, 3], "tri": [1, 2, 3, 4], "ap": [0 + 1 + 2, 1 + 2 + 3],
        "nest": sum(q for p_ in range(3) for q in range(p_ + 1)),
        "scaled": x * p.sum(),
        "mixed": [sum(x[p_] + q for p_ in range(a + 1) for q in range(2)) for a in range(3)],
        "counted": [sum(1 for p_ in range(5) if p_ > a) for a in range(3)],
        "r": 3 * np.arange(5),
    }


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_reduction_whose_body_reads_no_tensor_counts_every_point(run, target):
    x = np.array([0.5, -1.25, 2.0], np.float32)
    source = PORTABLE + (WIDE if target == "llvm-cpu" else "")
    out = run(source, target=target, x=x)
    expected = reference(x)
    assert set(out) - {"x", "c", "n"} == set(expected) - ({"d", "l"} if target != "llvm-cpu" else set())
    for name in set(out) - {"x", "c", "n"}:
        np.testing.assert_allclose(out[name], expected[name], rtol=1e-6, err_msg=name)


# Tensors of one repeated value: IREE folds them into the reduction as a scalar (issue 11,
# seed 1 program 214: `sum[j in 0..2](d5[j])` over `d5[i in 0..3] = -2i64` gave -2).
REPEATED = """
    let x: f32;
    let c[i in 0..3] = -2;
    let b[i in 0..4] = x;
    let tripled[i in 0..3] = c[i] * 3;
    let total[i in 0..2] = sum[j in 0..2](c[j]);
    let alone = sum[j in 0..3](b[j]);
    let product = prod[j in 0..3](c[j]);
    let derived[i in 0..2] = sum[j in 0..3](tripled[j]);
    let half[i in 0..2] = sum[j in 0..4](b[j] * 0.5) where j >= i;
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_reduction_over_a_tensor_of_one_repeated_value_counts_every_point(run, target):
    x = np.float32(1.5)
    out = run(REPEATED, target=target, outputs=["total", "alone", "product", "derived", "half"], x=x)
    expected = {"total": [-4, -4], "alone": 3 * x, "product": -8, "derived": [-18, -18],
                "half": [4 * x * 0.5, 3 * x * 0.5]}
    assert set(out) == set(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(out[name], value, rtol=1e-6, err_msg=name)
