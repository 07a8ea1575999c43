"""Recurrences that the host runs in chunks of steps on vulkan-spirv (einc/mlir/recurrences/chunks.py):
reads of a fixed step (`x[0]`) in the workgroup form, the host-loop form's chunk storage (pinned
rows, tails, windows, whole tensors) across chunk boundaries, and a long host loop that holds no
resources per step (issue 10 item 3). Every run is checked against a NumPy loop in float64."""

import numpy as np
import pytest

import einc
from process_resources import open_fds, peak_resident_bytes_of

rng = np.random.default_rng(31)

FIXED_STEP_RNN = """
    use std::math::tanh;
    let W: [f32; H, H];
    let u: [f32; T, H];
    let x[0, i in 0..H] = u[0, i];
    let x[1, i in 0..H] = 2.0 * u[1, i];
    let x[t in 2..T, i in 0..H] = tanh(sum[j](W[i, j] * x[t - 1, j]) + 0.5 * x[0, i] - 0.25 * x[1, i] + u[t, i]);
"""


def fixed_step_rnn(W, u):
    x = np.zeros(u.shape)
    x[0], x[1] = u[0], 2 * u[1]
    for t in range(2, len(u)):
        x[t] = np.tanh(W.astype(np.float64) @ x[t - 1] + 0.5 * x[0] - 0.25 * x[1] + u[t])
    return x


def test_reads_of_fixed_steps_run_inside_one_workgroup(emitted):
    # they once made the group a host loop with a kernel per step, whose cost grew with the run
    assert "gpu.thread_id" in emitted(FIXED_STEP_RNN, "vulkan-spirv")


@pytest.mark.vulkan
def test_reads_of_fixed_steps_stay_right_across_chunks_on_vulkan():
    # H = 64 with a sum over 64 values a step: about 1,000 steps a chunk, so steps 0 and 1 are
    # read from the chunk's own rows, then from the previous chunk's, then from pinned rows
    H, T = 64, 2500
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    u = rng.standard_normal((T, H)).astype(np.float32)
    out = einc.load(einc.compile(FIXED_STEP_RNN, target="vulkan-spirv").vmfb)(W=W, u=u)
    # float32 sums in another order than NumPy's; the state stays in (-1, 1)
    np.testing.assert_allclose(out["x"], fixed_step_rnn(W, u), rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------------------------ host loop

# a Stack of points in the step keeps this group out of the workgroup form: x keeps rows with a
# pinned step 0 and a tail of one step
STACKED = """
    let u: [f32; T, 3];
    let x0: [f32; 3];
    let x[0, i in 0..3] = x0[i];
    let x[t in 1..T, i in 0..3] = [x[t - 1, 1], x[t - 1, 2], x[0, 0]][i] * 0.9 + u[t, i];
"""


def stacked(u, x0):
    x = np.zeros(u.shape)
    x[0] = x0
    for t in range(1, len(u)):
        x[t] = 0.9 * np.array([x[t - 1, 1], x[t - 1, 2], x[0, 0]]) + u[t]
    return {"x": x}


# b reads every step of a so far: a keeps its whole tensor; b, read at t - 1 and not an
# output, a window
PREFIX = """
    let u: [f32; T, 3];
    let x0: [f32; 3];
    let a[0, i in 0..3] = x0[i];
    let a[t in 1..T, i in 0..3] = a[t - 1, i] * 0.5 + b[t - 1, i] + u[t, i];
    let b[0, i in 0..3] = 0.0;
    let b[t in 1..T, i in 0..3] = sum[r in 0..t + 1](a[r, i]) * 0.001;
"""


def prefix(u, x0):
    a, b = np.zeros(u.shape), np.zeros(u.shape)
    a[0] = x0
    for t in range(1, len(u)):
        a[t] = a[t - 1] * 0.5 + b[t - 1] + u[t]
        b[t] = a[:t + 1].sum(axis=0) * 0.001
    return {"a": a}


# gradient descent pulled back towards its first iterate: each step computes tensors whole
# (recurrence_tensor_steps) and reads the pinned step 0
ANCHORED_DESCENT = """
    let X: [f32; N, 3];
    let y: [f32; N];
    let u: [f32; T, 3];
    let w[0, d in 0..3] = 0.5;
    let w[k in 1..T, d in 0..3] = w[k - 1, d] - 0.1 * {
        let v = w[k - 1];
        let r[n] = sum[j](X[n, j] * v[j]) - y[n];
        let L = sum[n](r[n] * r[n]) / 2.0;
        (@L / @v)[d]
    } - 0.05 * (w[k - 1, d] - w[0, d]) + 0.0 * u[k, d];
"""
DESCENT_DATA = {"X": (rng.standard_normal((12, 3)) * 0.3).astype(np.float32),
                "y": rng.standard_normal(12).astype(np.float32)}


def anchored_descent(u, X, y):
    X, w = X.astype(np.float64), np.zeros(u.shape)
    w[0] = 0.5
    for k in range(1, len(u)):
        w[k] = w[k - 1] - 0.1 * X.T @ (X @ w[k - 1] - y) - 0.05 * (w[k - 1] - w[0])
    return {"w": w}


@pytest.mark.vulkan
@pytest.mark.parametrize("source, reference, outputs, data, calls", [
    (STACKED, stacked, None, {}, (1, 700, 257)), (PREFIX, prefix, ["a"], {}, (257, 1, 700)),
    pytest.param(ANCHORED_DESCENT, anchored_descent, None, DESCENT_DATA, (1, 700, 257), marks=pytest.mark.full)],
    ids=["stacked", "prefix", "anchored_descent"])
def test_host_loop_chunks_match_numpy_on_vulkan(emitted, source, reference, outputs, data, calls):
    # 257 and 700 steps: two and three chunks of at most 256. Regression: the host read an
    # element of each storage back after a chunk by a copy into a staging buffer, which now and
    # then also overwrote two words of another live storage on lavapipe; these calls, in this
    # order, hit it (the prefix's `a` at 257 steps, the stacked `x` at 700 after one step)
    assert "gpu.thread_id" not in emitted(source, "vulkan-spirv")
    program = einc.load(einc.compile(source, target="vulkan-spirv", outputs=outputs).vmfb)
    for steps in calls:
        u = (0.1 * rng.standard_normal((steps, 3))).astype(np.float32)
        inputs = {"u": u, **({"x0": np.array([1.0, -0.5, 0.25], np.float32)} if not data else data)}
        out, expected = program(**inputs), reference(**inputs)
        assert set(out) == set(expected)
        for name, values in expected.items():
            np.testing.assert_allclose(out[name], values, rtol=1e-4, atol=1e-5, err_msg=f"{steps} steps")


@pytest.mark.vulkan
@pytest.mark.full
def test_a_long_host_loop_holds_no_resources_per_step_on_vulkan():
    # regression (issue 10 item 3): every step of the host loop copied the whole history into
    # new allocations, and the host never waited, so all of them stayed alive: this program
    # held 330 MB after 4,000 steps and 1.6 GB after 8,000 (5.5 ms a step) on lavapipe, and an
    # RNN reading x[0] 11 GB after 4,000. Now the loop carries at most a chunk's rows and the
    # host waits for each chunk. 20,000 steps, not 100,000: a step here is a few device
    # operations, ~0.2-0.45 ms on lavapipe, so 100,000 take 20-45 s (checked, with 6 MB of
    # growth); 20,000 is 5 x the length where the old form already held 330 MB.
    program = einc.load(einc.compile(STACKED, target="vulkan-spirv").vmfb)
    x0 = np.array([1.0, -0.5, 0.25], np.float32)
    program(u=(0.1 * rng.standard_normal((2000, 3))).astype(np.float32), x0=x0)
    u = (0.1 * rng.standard_normal((20_000, 3))).astype(np.float32)
    fds, out = open_fds(), {}
    growth = peak_resident_bytes_of(lambda: out.update(program(u=u, x0=x0)))
    # per step or per chunk (78 of them) would be dozens to thousands; a few may be other
    # threads' of the process (seen under the full tier's workers: 26 then 32)
    assert open_fds() - fds < 16, (fds, open_fds())
    assert growth < 16 * 2**20, growth                  # input and result: 0.5 MB
    np.testing.assert_allclose(out["x"], stacked(u, x0)["x"], rtol=1e-4, atol=1e-5)
