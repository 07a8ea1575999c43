"""Reduction ranges clamped with min and max (`sum[j in max(0, i - 1)..min(N, i + 2)]`): a window
cut at the edges, with its own extent at each point. Checked exactly (sums of a few f32 values,
rtol 1e-6) against NumPy slices, at fixed sizes, at run-time sizes and at sizes fixed by --dim,
on llvm-cpu and vulkan-spirv (lavapipe)."""
import einc
import numpy as np
import pytest

from einc.runtime.errors import RunError
from tests.programs import built
from tests.tiers import VULKAN_FULL

TOL = dict(rtol=1e-6, atol=1e-6)

FIXED = """
use std::math::clamp;
let x: [f32; 8];
let w: [f32; 3];
let win[i in 0..8] = sum[j in max(0, i - 1)..min(8, i + 2)](x[j]);
let incl[i in 0..8] = sum[j in max(0, i - 2)..=min(7, i + 1)](x[j] * (j as f32));
let clamped[i in 0..8] = max[j in clamp(i - 2, 0, 8)..clamp(i + 3, 0, 8)](x[j]);
let conv[i in 0..8] = sum[j in max(0, i - 1)..min(8, i + 2)](x[j] * w[j - i + 1]);
"""

NAMED = """
let x: [f32; N];
let m: [f32; H, W];
let win[i in 0..N] = sum[j in max(0, i - 1)..min(N, i + 2)](x[j]);
let box[i in 0..H, j in 0..W] =
    sum[p in max(0, i - 1)..min(H, i + 2), q in max(0, j - 2)..min(W, j + 1)](m[p, q]);
let tail[i in 0..N] = sum[j in max(i, N - 3)..N](x[j]);
"""


def window(x, lo, hi, f=np.sum):
    return np.array([f(x[lo(i):hi(i)]) for i in range(len(x))])


def box(m):
    H, W = m.shape
    return np.array([[m[max(0, i - 1):min(H, i + 2), max(0, j - 2):min(W, j + 1)].sum()
                      for j in range(W)] for i in range(H)])


TARGETS = ["llvm-cpu", VULKAN_FULL]


@pytest.mark.parametrize("target", TARGETS)
def test_clamped_windows_at_fixed_sizes(target):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(8).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    out = einc.load(built(FIXED, target).vmfb)(x=x, w=w)
    np.testing.assert_allclose(out["win"], window(x, lambda i: max(0, i - 1), lambda i: min(8, i + 2)), **TOL)
    np.testing.assert_allclose(out["incl"], window(x * np.arange(8), lambda i: max(0, i - 2),
                                                   lambda i: min(7, i + 1) + 1), **TOL)
    np.testing.assert_array_equal(out["clamped"], window(x, lambda i: max(0, i - 2),
                                                         lambda i: min(8, i + 3), np.max))
    ref = [sum(x[j] * w[j - i + 1] for j in range(max(0, i - 1), min(8, i + 2))) for i in range(8)]
    np.testing.assert_allclose(out["conv"], ref, **TOL)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fixed", [False, pytest.param(True, marks=pytest.mark.full)],   # fixed sizes: above
                         ids=["run-time sizes", "--dim"])
def test_clamped_windows_at_named_sizes(target, fixed):
    rng = np.random.default_rng(1)
    for n, h, w in ((7, 5, 4), (1, 1, 2)) if not fixed else ((6, 3, 5),):
        x, m = rng.standard_normal(n).astype(np.float32), rng.standard_normal((h, w)).astype(np.float32)
        dims = dict(N=n, H=h, W=w) if fixed else None
        out = einc.load(built(NAMED, target, dims=dims).vmfb)(x=x, m=m)
        np.testing.assert_allclose(out["win"], window(x, lambda i: max(0, i - 1), lambda i: min(n, i + 2)), **TOL)
        np.testing.assert_allclose(out["box"], box(m), **TOL)
        np.testing.assert_allclose(out["tail"], window(x, lambda i: max(i, n - 3), lambda i: n), **TOL)


def test_a_clamped_start_that_leaves_the_array_at_run_time_sizes_is_reported_before_the_run():
    # at i = 0 the window starts at min(0, N - 4): inside x for N >= 4, at -2 for N = 2
    source = "let x: [f32; N];\nlet y[i in 0..N] = sum[j in min(i, N - 4)..N](x[j]);\n"
    module = einc.load(built(source).vmfb)
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(module(x=x)["y"], [x[min(i, 2):].sum() for i in range(6)])
    with pytest.raises(RunError, match=r"needs index min\(0, N - 4\) = -2 of its axis 0"):
        module(x=x[:2])


@pytest.mark.parametrize("source, message", [
    # a comprehension's range takes no min or max of an index
    ("let x: [f32; 4];\nlet y[i in 0..4] = sum([x[j] | j in max(0, i - 1)..4]);\n", "only by a reduction"),
    # no range takes one of a length computed from data, which no check before a run knows
    ("let x: [f32; N];\nlet c = [v | v in x, v > 0.0];\nlet s = sum[j in 0..min(len(c), N)](x[j]);\n",
     "length computed from data"),
])
def test_min_and_max_einc_cannot_bound_are_E004(diagnose, source, message):
    diag, _ = diagnose(source)
    assert diag.code == "E004" and message in diag.message


def test_a_window_read_past_the_end_at_its_last_point_is_E005(diagnose):
    # at i = N - 1 the window is N - 2..N, so x[j + 1] reads x[N]
    diag, _ = diagnose("let x: [f32; N];\nlet y[i in 0..N] = sum[j in max(0, i - 1)..min(N, i + 2)](x[j + 1]);\n")
    assert diag.code == "E005" and "subscript 0 is N at i = N - 1, j = N - 1" in diag.message


def test_a_window_of_constant_width_runs_over_its_width_not_the_axis(tmp_path):
    # a 5x5 box cut at the edges visits 25 points per pixel, not H * W: its indices run from the
    # window's unclamped start (i - 2) over the width, behind the guards of its real range
    from einc.driver import front_end
    from einc.ir.nodes import Reduce, walk
    path = tmp_path / "box.ein"
    path.write_text("let m: [f32; H, W];\n"
                    "let box[i in 0..H, j in 0..W] = sum[p in max(0, i - 2)..min(H, i + 3), q in max(0, j - 2)..min(W, j + 3)](m[p, q]);\n")
    _, program = front_end(str(path))
    reduces = [v for v in walk([value for _, value in program.outputs]) if isinstance(v, Reduce)]
    assert [tuple(v.extent for v in r.vars) for r in reduces] == [(5, 5)]
    m = np.random.default_rng(1).standard_normal((7, 9)).astype(np.float32)
    out = einc.load(built(path.read_text(), "llvm-cpu").vmfb)(m=m)
    ref = [[m[max(0, i - 2):i + 3, max(0, j - 2):j + 3].sum() for j in range(9)] for i in range(7)]
    np.testing.assert_allclose(out["box"], ref, **TOL)


def test_a_window_in_a_recurrence_step_runs_over_its_width(tmp_path):
    # windows over the previous iterate and over the step index itself, each 3 or 4 wide
    from einc.driver import front_end
    from einc.ir.nodes import Reduce, walk
    path = tmp_path / "smooth.ein"
    path.write_text("let x: [f64; N];\nlet u[0, i in 0..N] = x[i];\n"
                    "let u[t in 1..4, i in 0..N] = sum[k in max(0, i - 1)..min(N, i + 2)](u[t - 1, k]);\n"
                    "let s[0] = x[0];\nlet s[t in 1..N] = 0.5 * s[t - 1] + max[k in max(0, t - 2)..min(N, t + 2)](x[k]);\n")
    _, program = front_end(str(path))
    bodies = [c.body for g in program.recurrences for m in g.members for c in m.clauses]
    assert sorted(v.extent.const for r in walk(bodies) if isinstance(r, Reduce) for v in r.vars if v.extent.is_const) == [3, 4]
    x = np.random.default_rng(2).standard_normal(9)
    out = einc.load(built(path.read_text(), "llvm-cpu").vmfb)(x=x)
    u = [x]
    for _ in range(3):
        u.append(np.array([u[-1][max(0, i - 1):i + 2].sum() for i in range(9)]))
    s = [x[0]]
    for t in range(1, 9):
        s.append(0.5 * s[-1] + x[max(0, t - 2):t + 2].max())
    np.testing.assert_allclose(out["u"], u, rtol=1e-12)
    np.testing.assert_allclose(out["s"], s, rtol=1e-12)
