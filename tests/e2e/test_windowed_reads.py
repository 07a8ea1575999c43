"""Reads at sums of indices (`sig[j + m]`, `q[t + 2 - s]`) in forms IREE 3.13 mishandles as
indexing maps: a unit-extent index in the sum, a negative coefficient (issue 11 item 6). They
are read element by element instead; the results must match NumPy."""
import numpy as np
import pytest
from tests.tiers import VULKAN_FULL

PROGRAM = """
    let sig: [f32; 3];
    let w: [f32; 2];
    let q: [f32; 5];
    let x: [f32; 499];
    let y[j in 0..1] = sum[m in 0..2](sig[j + m] * w[m]);
    let back[t in 0..2] = sum[s in 0..3](q[t + 2 - s]);
    let pad[j in 0..1, m in 0..2] = sig[j + m + 1];
    let flipped[i in 0..300, j in 0..200] = x[i - j + 199];
    let corr[i in 0..300] = sum[j in 0..200](x[i - j + 199] * x[j]);
"""


def reference(sig, w, q, x):
    i, j = np.meshgrid(np.arange(300), np.arange(200), indexing="ij")
    flipped = x[i - j + 199]
    return {"y": [sig[0] * w[0] + sig[1] * w[1]],
            "back": [q[2] + q[1] + q[0], q[3] + q[2] + q[1]],
            "pad": [[sig[1], sig[2]]],
            "flipped": flipped,
            "corr": (flipped.astype(np.float64) * x[:200]).sum(1)}


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_reads_at_sums_with_unit_extents_and_negative_coefficients(run, target):
    rng = np.random.default_rng(11)
    inputs = {"sig": np.array([1.0, 2.0, 3.0], np.float32), "w": np.array([0.5, 0.25], np.float32),
              "q": np.arange(1, 6, dtype=np.float32), "x": rng.standard_normal(499).astype(np.float32)}
    out = run(PROGRAM, target=target, **inputs)
    for name, expected in reference(**inputs).items():
        np.testing.assert_allclose(out[name], expected, rtol=1e-5, atol=1e-4, err_msg=name)


def test_reverse_mode_through_a_recurrence_reads_its_adjoint_backwards(run):
    """The adjoint loop of `u` reads `q[t + 2 - s]`-shaped windows of the forward states."""
    out = run("""
        let k: f64;
        let u[0] = 1.0;
        let u[t in 1..6] = u[t - 1] * (1.0 - k * 0.1);
        let last = u[5];
        let g = @last / @k;
    """, k=0.05)
    # last = (1 - k / 10) ** 5, so g = -0.5 * (1 - k / 10) ** 4
    np.testing.assert_allclose(out["g"], -0.5 * (1 - 0.05 / 10) ** 4, rtol=1e-12)


SHIFTED = """
    let x: [f32; 5, 9];
    let w: [f32; 4, 4];
    let a[i in 0..4, j in 0..4] = x[i, j + 1] * 2.0;
    let y[i in 0..4, j in 0..4] = a[i, j] * w[i, j];
    let both[i in 0..4, j in 0..4] = x[i, 2 * j + 1] * x[i + 1, j + 3];
    let later[i in 1..5, j in 0..4] = x[i, j + 1] + x[i - 1, j];
"""


def test_reads_shifted_along_later_axes_are_windows_of_their_tensor(run):
    """A read at `j + 1` of a later axis, first among a kernel's operands (also once `a` is fused
    into `y`), segfaulted IREE 3.13 while it named the dispatch; such reads are windows
    (tensor.extract_slice) read at `j` instead."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 9)).astype(np.float32)
    w = rng.standard_normal((4, 4)).astype(np.float32)
    out = run(SHIFTED, outputs=["y", "both", "later"], x=x, w=w)
    np.testing.assert_allclose(out["y"], x[:4, 1:5] * 2.0 * w, rtol=1e-6)
    np.testing.assert_allclose(out["both"], x[:4, 1:9:2] * x[1:5, 3:7], rtol=1e-6)
    later = np.zeros((5, 4), np.float32)     # row 0 is outside the definition's range
    later[1:] = x[1:5, 1:5] + x[0:4, 0:4]
    np.testing.assert_allclose(out["later"], later, rtol=1e-6)
