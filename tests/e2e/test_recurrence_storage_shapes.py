"""Recurrences whose storage IREE 3.13 failed to compile (issue 11 item 7): an axis of length 1
("operand does not dominate this use"), a member kept in a window over a run-time-sized axis
that no output reads (an unbounded stack allocation), and the local-level Kalman filter over a
run-time series. Each is checked against a NumPy loop."""
import numpy as np
import pytest
from tests.tiers import GENERIC_FULL, VULKAN_FULL

BATCH_OF_ONE_RNN = """
    use std::math::tanh;
    let X: [f32; 5, 1, 4];
    let W: [f32; 3, 3];
    let U: [f32; 3, 4];
    let H[0, b in 0..1, j in 0..3] = 0.0;
    let H[t in 1..5, b in 0..1, j in 0..3] =
        tanh(sum[k in 0..3](W[j, k] * H[t - 1, b, k]) + sum[m in 0..4](U[j, m] * X[t, b, m]));
"""


def batch_of_one_rnn(X, W, U):
    H = np.zeros((5, 1, 3), np.float32)
    for t in range(1, 5):
        H[t] = np.tanh(H[t - 1] @ W.T + X[t] @ U.T)
    return H


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_recurrence_with_an_axis_of_length_one(run, target):
    rng = np.random.default_rng(5)
    inputs = {"X": rng.standard_normal((5, 1, 4)).astype(np.float32),
              "W": (0.5 * rng.standard_normal((3, 3))).astype(np.float32),
              "U": (0.5 * rng.standard_normal((3, 4))).astype(np.float32)}
    out = run(BATCH_OF_ONE_RNN, target=target, **inputs)
    np.testing.assert_allclose(out["H"], batch_of_one_rnn(**inputs), rtol=1e-5, atol=1e-6)


# r3 keeps [3, 1] as [3] inside the loop, the type r2 has; `firsts` reads a slice of it
SAME_COMPACT_TYPE = """
    let a: f32;
    let r2[0] = a;
    let r2[t in 1..3] = r2[t - 1] * 0.5;
    let r3[0, j in 0..1] = 0.0;
    let r3[t in 1..3, j in 0..1] = r3[t - 1, j] + r2[t];
    let firsts[i in 0..2] = r3[i, 0];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL, VULKAN_FULL])
def test_a_member_with_a_unit_axis_beside_one_of_its_compact_type(run, target):
    r2 = 8.0 * 0.5 ** np.arange(3, dtype=np.float32)
    r3 = np.concatenate([[0.0], np.cumsum(r2[1:])]).astype(np.float32)[:, None]
    out = run(SAME_COMPACT_TYPE, target=target, a=np.float32(8.0))
    np.testing.assert_array_equal(out["r2"], r2)
    np.testing.assert_array_equal(out["r3"], r3)       # was r2's values on the CPU targets
    np.testing.assert_array_equal(out["firsts"], r3[:2, 0])


UNIT_AXES_GROUP = """
    use std::math::tanh;
    let X: [f32; T, 1, 4];
    let W: [f32; 3, 3];
    let U: [f32; 3, 4];
    let G[t in 1..T, b in 0..1, j in 0..3, c in 0..1] =
        sum[m in 0..4](U[j, m] * X[t, b, m]) + 0.5 * H[t - 1, b, j, c];
    let H[0, b in 0..1, j in 0..3, c in 0..1] = 0.0;
    let H[t in 1..T, b in 0..1, j in 0..3, c in 0..1] = tanh(sum[k in 0..3](W[j, k] * H[t - 1, b, k, c]) + G[t, b, j, c]);
    let final[j in 0..3] = H[T - 1, 0, j, 0];
"""


def unit_axes_group(X, W, U):
    T = X.shape[0]
    G, H = np.zeros((T, 1, 3, 1), np.float32), np.zeros((T, 1, 3, 1), np.float32)
    for t in range(1, T):
        G[t, :, :, 0] = X[t] @ U.T + 0.5 * H[t - 1, :, :, 0]
        H[t, :, :, 0] = np.tanh(H[t - 1, :, :, 0] @ W.T + G[t, :, :, 0])
    return G, H


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
@pytest.mark.parametrize("outputs", [None, ["final"]])
def test_a_recurrence_group_with_several_unit_axes_kept_whole_or_in_windows(run, target, outputs):
    """Two unit axes, one of them last; kept whole (every member an output) or in windows (H in
    two slots, G, read only at its own step, in one: a unit axis 0)."""
    rng = np.random.default_rng(8)
    inputs = {"X": rng.standard_normal((9, 1, 4)).astype(np.float32),
              "W": (0.5 * rng.standard_normal((3, 3))).astype(np.float32),
              "U": (0.5 * rng.standard_normal((3, 4))).astype(np.float32)}
    out = run(UNIT_AXES_GROUP, target=target, outputs=outputs, **inputs)
    G, H = unit_axes_group(**inputs)
    np.testing.assert_allclose(out["final"], H[-1, 0, :, 0], rtol=1e-5, atol=1e-6)
    if outputs is None:
        np.testing.assert_allclose(out["G"], G, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out["H"], H, rtol=1e-5, atol=1e-6)


UNOBSERVED_VECTOR_STATE = """
    let x0: [f32; N];
    let a[0, i in 0..N] = x0[i];
    let a[t in 1..6, i in 0..N] = a[t - 1, i] * 0.5 + 1.0;
    let b[0] = 0.0;
    let b[t in 1..6] = b[t - 1] + sum[i in 0..N](a[t - 1, i]);
"""


@pytest.mark.parametrize("target, size", [
    ("llvm-cpu", 7), ("llvm-cpu", 9000), pytest.param("vulkan-spirv", 7, marks=pytest.mark.vulkan)])
def test_a_windowed_state_that_no_output_reads_of_run_time_or_large_size(run, target, size):
    """Run-time size, or a fixed one whose two slots exceed IREE's 32 KB of stack."""
    x0 = np.linspace(-1, 2, size, dtype=np.float32)
    source = UNOBSERVED_VECTOR_STATE if size < 1000 else \
        f"let N = {size};" + UNOBSERVED_VECTOR_STATE.replace("[f32; N]", f"[f32; {size}]")
    out = run(source, target=target, outputs=["b"], x0=x0)
    a, b = x0.copy(), [np.float32(0)]
    for _ in range(1, 6):
        b.append(b[-1] + a.sum(dtype=np.float32))
        a = a * np.float32(0.5) + np.float32(1)
    assert set(out) == {"b"}
    np.testing.assert_allclose(out["b"], b, rtol=1e-5)


LOCAL_LEVEL_KALMAN = """
    use std::math::log;
    let y: [f64; T];
    let q: f64;
    let r: f64;
    let m[0] = y[0];
    let P[0] = 1.0;
    let Pp[t in 1..T] = P[t - 1] + q;
    let F[t in 1..T] = Pp[t] + r;
    let K[t in 1..T] = Pp[t] / F[t];
    let v[t in 1..T] = y[t] - m[t - 1];
    let m[t in 1..T] = m[t - 1] + K[t] * v[t];
    let P[t in 1..T] = Pp[t] * (1.0 - K[t]);
    let loglik = sum[t in 1..T](-0.5 * (log(2.0 * 3.141592653589793 * F[t]) + v[t] * v[t] / F[t]));
"""


def local_level_kalman(y, q, r):
    m, P, loglik = [y[0]], [1.0], 0.0
    for t in range(1, len(y)):
        Pp = P[-1] + q
        F = Pp + r
        K = Pp / F
        v = y[t] - m[-1]
        m.append(m[-1] + K * v)
        P.append(Pp * (1 - K))
        loglik += -0.5 * (np.log(2 * np.pi * F) + v * v / F)
    return np.array(m), np.array(P), loglik


@pytest.mark.parametrize("outputs", [None, ["loglik"]])
def test_the_local_level_kalman_filter_over_a_run_time_series(run, outputs):
    rng = np.random.default_rng(3)
    y = np.cumsum(rng.standard_normal(50)) + 0.7 * rng.standard_normal(50)
    out = run(LOCAL_LEVEL_KALMAN, outputs=outputs, y=y, q=0.1, r=0.5)
    m, P, loglik = local_level_kalman(y, 0.1, 0.5)
    np.testing.assert_allclose(out["loglik"], loglik, rtol=1e-12)
    if outputs is None:
        np.testing.assert_allclose(out["m"], m, rtol=1e-12)
        np.testing.assert_allclose(out["P"], P, rtol=1e-12)


# a step tensor makes the group a host loop of one kernel per clause and step on every target;
# the history read's rows lie before the step, so the member is stored whole
HISTORY_BESIDE_A_STEP_TENSOR = """
    let x: [f32; 6, 4];
    let r[0, j in 0..4] = x[0, j];
    let r[t in 1..6, j in 0..4] = {
        let h[q in 0..4] = r[t - 1, q] * 0.5;
        max[p in 0..4](h[p]) + 0.25 * max[i in 0..t](r[i, j]) + x[t, j]
    };
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_read_over_every_earlier_step_in_a_host_loop(run, target):
    """Such a read was E011 in a host loop (it was not `t - c`); found by the program fuzzer's
    step histories, which left groups with step tensors out."""
    x = np.random.default_rng(7).standard_normal((6, 4)).astype(np.float32)
    want = np.zeros((6, 4))
    want[0] = x[0]
    for t in range(1, 6):
        want[t] = (0.5 * want[t - 1]).max() + 0.25 * want[:t].max(0) + x[t]
    np.testing.assert_allclose(run(HISTORY_BESIDE_A_STEP_TENSOR, target=target, x=x)["r"], want, rtol=1e-5, atol=1e-6)
