"""The CPU region form runs its steps as one loop per span between the clauses' first steps
(recurrence_region.step_spans): base clauses at t = 0 and 1, clauses starting at a later fixed
step, one ending at one. Against NumPy at step counts shorter than, equal to and past every
cut (a run-time T from 1, or 3 where fixed clauses need it), with scalar f64 members kept in registers, a
tensor member in vector lanes at an odd size, and a member whose clauses leave a step
uncovered."""
import os

import numpy as np
import pytest

import einc
from einc.driver import front_end
from einc.ir.types import Lin
from einc.mlir.recurrences.region import step_spans
from einc.mlir.recurrences.step import covers_steps
from tests.programs import source

rng = np.random.default_rng(23)
STEP_COUNTS = (1, 2, 3, 4, 9, 100)


def trend_reference(y, q_level, q_slope, r):
    """The local-linear-trend Kalman filter (tests/programs/kalman_local_trend.ein), its level m."""
    m, b, p00, p01, p11 = y[0], 0.0, 1.0, 0.0, 1.0
    out = [m]
    for t in range(1, len(y)):
        pp00, pp01, pp11 = p00 + 2.0 * p01 + p11 + q_level, p01 + p11, p11 + q_slope
        s = pp00 + r
        k0, k1 = pp00 / s, pp01 / s
        e = y[t] - (m + b)
        m, b = m + b + k0 * e, b + k1 * e
        p00, p01, p11 = pp00 - k0 * pp00, pp01 - k0 * pp01, pp11 - k1 * pp01
        out.append(m)
    return np.array(out)


@pytest.fixture(scope="module")
def trend():
    with einc.load(einc.compile(source("kalman_local_trend"), outputs=["m"]).vmfb) as program:
        yield program


@pytest.mark.parametrize("steps", STEP_COUNTS)
def test_five_scalar_members_in_registers_match_numpy(trend, steps):
    y = np.cumsum(rng.standard_normal(steps))
    got = trend(y=y, q_level=0.01, q_slope=0.001, r=0.5)["m"]
    np.testing.assert_allclose(got, trend_reference(y, 0.01, 0.001, 0.5), rtol=1e-12, atol=1e-12)


# a: two base clauses, then a step clause from t = 2; c: a clause ending at t = 3 and one from
# there; d: no clause at t = 0 or 1 (those steps read as 0; its step reads t - 1 from t = 3 on); f: reads them at t; h: a vector
# member (H = 37, so whole vectors and a scalar rest) with base clauses at t = 0 and 1. Read
# whole, or only f and h: then a, c and d are kept in windows no read after the loop needs, so
# their steps stay in registers unstored (d's uncovered steps from its cleared slot)
STAGGERED = """
use std::math::tanh;
let y: [f64; T];
let W: [f32; 37, 37];
let x: [f32; T, 37];
let a[0] = 1.0;
let a[1] = 2.0;
let a[t in 2..T] = a[t - 1] + 0.5 * a[t - 2] + y[t];
let c[t in 0..3] = y[t];
let c[t in 3..T] = 0.5 * c[t - 1] + a[t - 2];
let d[t in 2..T] = 0.25 * (if t > 2 { d[t - 1] } else { 0.0 }) + c[t];
let f[t in 0..T] = d[t] + 0.5 * a[t];
let h[0, i in 0..37] = x[0, i];
let h[1, i in 0..37] = 0.5 * x[1, i];
let h[t in 2..T, i in 0..37] = tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i]);
"""


def staggered_reference(y, W, x):
    T = len(y)
    a, c, d = np.zeros(T), np.zeros(T), np.zeros(T)
    h = np.zeros((T, 37), np.float32)
    for t in range(T):
        a[t] = 1.0 if t == 0 else 2.0 if t == 1 else a[t - 1] + 0.5 * a[t - 2] + y[t]
        c[t] = y[t] if t < 3 else 0.5 * c[t - 1] + a[t - 2]
        d[t] = 0.0 if t < 2 else 0.25 * d[t - 1] + c[t]
        h[t] = x[0] if t == 0 else 0.5 * x[1] if t == 1 else np.tanh(W @ h[t - 1] + x[t])
    return {"a": a, "c": c, "d": d, "f": d + 0.5 * a, "h": h}


OUTPUTS = (["a", "c", "d", "f", "h"], ["f", "h"])


@pytest.fixture(scope="module", params=OUTPUTS, ids=["whole", "windows"])
def staggered(request):
    with einc.load(einc.compile(STAGGERED, outputs=request.param).vmfb) as program:
        yield program, request.param


@pytest.mark.parametrize("steps", [3, 4, 5, 9, 100])      # its fixed clauses need T >= 3
def test_clauses_starting_and_ending_at_fixed_steps_match_numpy(staggered, steps):
    program, outputs = staggered
    y = rng.standard_normal(steps)
    W = (rng.standard_normal((37, 37)) / 6).astype(np.float32)
    x = rng.standard_normal((steps, 37)).astype(np.float32)
    got = program(y=y, W=W, x=x)
    expected = staggered_reference(y, W, x)
    for name in outputs[:-1]:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-12, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(got["h"], expected["h"], rtol=1e-5, atol=1e-5)


def test_the_spans_cut_where_clauses_start_or_end(tmp_path):
    path = os.path.join(tmp_path, "staggered.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(STAGGERED)
    groups = front_end(path, OUTPUTS[0])[1].recurrences
    group = next(g for g in groups if "c" in [m.name for m in g.members])
    spans = step_spans(group)
    assert [(lo.const, hi.const) for lo, hi in spans[:-1]] == [(0, 1), (1, 2), (2, 3)]
    assert spans[-1][0] == Lin(3) and spans[-1][1] == group.t_var.extent


def test_a_slot_is_cleared_only_in_the_spans_its_clauses_leave_uncovered(tmp_path):
    # d[t in 2..T] covers the span from 3 to T, so its slot is not cleared there each step; at
    # t = 0 and 1 it is (those steps read as 0, checked against NumPy above), and in [2, 3) too
    # (that T >= 3 is not known at build time); c's two clauses cover every step back to back
    path = os.path.join(tmp_path, "staggered.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(STAGGERED)
    group = next(g for g in front_end(path, OUTPUTS[0])[1].recurrences if "c" in [m.name for m in g.members])
    members = {m.name: m for m in group.members}
    spans = step_spans(group)
    assert [covers_steps(members["d"], lo, hi) for lo, hi in spans] == [False, False, False, True]
    assert all(covers_steps(members["c"], lo, hi) for lo, hi in spans)
    assert covers_steps(members["c"], Lin(0), group.t_var.extent)
    assert not covers_steps(members["d"], Lin(0), group.t_var.extent)


@pytest.mark.parametrize("fixed", [False, True])
def test_a_member_ending_before_the_loop_keeps_one_span(fixed, tmp_path):
    """The local level model: v[t in 0..T] in a loop over T + 1 steps, a base clause a[0]. Split at
    t = 1, IREE failed to compile the run-time-T group (a stack allocation of unbounded size); one
    span builds, and the filter matches NumPy to 1e-12."""
    path = os.path.join(tmp_path, "level.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source("kalman_local_level"))
    group = front_end(path, "L")[1].recurrences[0]
    assert len(step_spans(group)) == 1
    y, s = np.cumsum(rng.standard_normal(25)), 0.35
    dims = {"T": 25} if fixed else None
    with einc.load(einc.compile(source("kalman_local_level"), outputs=["v"], dims=dims).vmfb) as program:
        got = program(y=y, s=s)["v"]
    a, want = 0.0, []
    for obs in y:
        want.append(obs - a)
        a += s * want[-1]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

