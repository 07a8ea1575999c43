"""Which recurrences share a loop (issue 11 item 2). Two recurrences run in one loop only when
every read between them is at the reader's own step `t - c`; a read of a finished value (a
fixed point, another axis, a reduction over the other's steps) runs the reader after the other
recurrence's loop. Each program is checked against a NumPy loop and its --explain groups."""
import numpy as np
import pytest

import einc
from einc.driver import emit_program


def groups_of(source: str, tmp_path) -> list[str]:
    path = tmp_path / "program.ein"
    path.write_text(source)
    explained = emit_program(str(path), "explain")
    return [line.split(": ", 1)[1] for line in explained.splitlines() if line.startswith("recurrence group")]


def g_doubling():
    g = np.ones(5, np.float32)
    for n in range(1, 5):
        g[n] = g[n - 1] * 2
    return g


def fixed_point():
    g = np.empty(5, np.float32)
    g[0] = 3
    for n in range(1, 5):
        g[n] = g[n - 1] + 2
    h = np.empty(3, np.float32)
    h[0] = g[4]
    for n in range(1, 3):
        h[n] = h[n - 1] * 0.5
    return {"g": g, "h": h}


def state_axis():
    r = np.array([1.0, 2.0, 0.5], np.float32)
    cum = np.cumsum(r)
    w = np.zeros((4, 3), np.float32)
    for k in range(1, 4):
        w[k] = 0.5 * w[k - 1] + cum
    return {"cum": cum, "W": w}


def reduction_over_steps():
    g = g_doubling()
    return {"g": g, "h": np.arange(4, dtype=np.float32) * g.sum()}


def other_axis_same_length():
    g = np.arange(5, dtype=np.float32)[None, :] + np.arange(5, dtype=np.float32)[:, None]
    diag = np.diag(g)
    return {"g": g, "h": np.arange(5, dtype=np.float32)[:, None] * diag[None, :]}


def fixed_point_beside_a_step_read():
    g = g_doubling()
    h = np.zeros(5, np.float32)
    for n in range(1, 5):
        h[n] = h[n - 1] + g[n - 1] + g[4]
    return {"g": g, "h": h}


def fixed_point_on_a_path():
    p = np.ones(6, np.float32)
    for t in range(1, 6):
        p[t] = p[t - 1] * 0.5 + 1
    k = np.where(np.arange(6) >= 1, p[4] * 2, 0).astype(np.float32)
    x = np.zeros(6, np.float32)
    for t in range(1, 6):
        x[t] = x[t - 1] + k[t] + p[t - 1]
    return {"P": p, "K": k, "x": x}


def same_step_read():
    g = g_doubling()
    h = np.zeros(5, np.float32)
    for n in range(1, 5):
        h[n] = h[n - 1] + g[n]
    return {"g": g, "h": h}


def different_lengths():
    a = [1.0, 2.0]
    for t in range(2, 9):
        a.append(a[t - 2] * 0.5 + 1.0)
    b = [0.0, 0.0]
    for t in range(2, 4):
        b.append(b[t - 2] + a[t - 1])
    return {"a": np.array(a), "b": np.array(b)}


CASES = {
    "fixed point": ("""
        let g[0] = 3.0;
        let g[n in 1..5] = g[n - 1] + 2.0;
        let h[0] = g[4];
        let h[n in 1..3] = h[n - 1] * 0.5;
    """, fixed_point, ["g", "h"]),
    "state axis": ("""
        let R = [1.0, 2.0, 0.5];
        let cum[0] = R[0];
        let cum[s in 1..3] = cum[s - 1] + R[s];
        let W[0, s in 0..3] = 0.0;
        let W[k in 1..4, s in 0..3] = 0.5 * W[k - 1, s] + cum[s];
    """, state_axis, ["cum", "W"]),
    "reduction over the other's steps": ("""
        let g[0] = 1.0;
        let g[n in 1..5] = g[n - 1] * 2.0;
        let h[0] = 0.0;
        let h[t in 1..4] = h[t - 1] + sum[s in 0..5](g[s]);
    """, reduction_over_steps, ["g", "h"]),
    "another axis of the same length": ("""
        let g[0, j in 0..5] = j as f32;
        let g[n in 1..5, j in 0..5] = g[n - 1, j] + 1.0;
        let h[0, k in 0..5] = 0.0;
        let h[t in 1..5, k in 0..5] = h[t - 1, k] + g[k, k];
    """, other_axis_same_length, ["g", "h"]),
    "a fixed point beside a step read": ("""
        let g[0] = 1.0;
        let g[n in 1..5] = g[n - 1] * 2.0;
        let h[0] = 0.0;
        let h[n in 1..5] = h[n - 1] + g[n - 1] + g[4];
    """, fixed_point_beside_a_step_read, ["g", "h"]),
    "a fixed point on a path between two recurrences": ("""
        let P[0] = 1.0;
        let P[t in 1..6] = P[t - 1] * 0.5 + 1.0;
        let K[t in 1..6] = P[4] * 2.0;
        let x[0] = 0.0;
        let x[t in 1..6] = x[t - 1] + K[t] + P[t - 1];
    """, fixed_point_on_a_path, ["P", "x"]),
    "a read at the same step shares the loop": ("""
        let g[0] = 1.0;
        let g[n in 1..5] = g[n - 1] * 2.0;
        let h[0] = 0.0;
        let h[n in 1..5] = h[n - 1] + g[n];
    """, same_step_read, ["g, h"]),
    "a step read between recurrences of different lengths": ("""
        let a[0] = 1.0;
        let a[1] = 2.0;
        let a[t in 2..9] = a[t - 2] * 0.5 + 1.0;
        let b[t in 0..2] = 0.0;
        let b[t in 2..4] = b[t - 2] + a[t - 1];
    """, different_lengths, ["a", "b"]),
}


def read_between():
    g = g_doubling()
    h = np.zeros(5, np.float32)
    for n in range(1, 5):
        h[n] = h[n - 1] + g[n] * g[3]
    return {"g": g, "mid": g[3], "h": h}


CASES["a statement between them reads the first"] = ("""
        let g[0] = 1.0;
        let g[n in 1..5] = g[n - 1] * 2.0;
        let mid = g[3];
        let h[0] = 0.0;
        let h[n in 1..5] = h[n - 1] + g[n] * mid;
    """, read_between, ["g", "h"])


def check(case: str, target: str = "llvm-cpu") -> None:
    source, reference, _ = CASES[case]
    out = einc.load(einc.compile(source, target=target).vmfb)()
    for name, expected in reference().items():
        np.testing.assert_allclose(out[name], expected, rtol=1e-6, err_msg=name)


@pytest.mark.sampled(every=2)
@pytest.mark.parametrize("case", list(CASES))
def test_recurrences_share_a_loop_only_through_reads_at_their_own_step(case, tmp_path):
    check(case)
    assert groups_of(CASES[case][0], tmp_path) == CASES[case][2]


@pytest.mark.vulkan
@pytest.mark.parametrize("case", ["fixed point", "state axis",
                                  "a step read between recurrences of different lengths"])
def test_a_finished_value_is_read_after_its_loop_on_vulkan(case):
    check(case, "vulkan-spirv")
