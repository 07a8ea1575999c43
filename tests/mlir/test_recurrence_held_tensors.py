"""Small fixed-size tensor states kept in registers (recurrence_region `small_points`): a step's
2 x 2 covariance or 3-vector state is carried through the step loop one scalar per point, its
clauses' points unrolled; reads pick points by constant subscript or by selects. Values against
NumPy loops on both CPU targets (Vulkan keeps its own forms and must stay right too)."""
import re
import subprocess
import sys

import numpy as np
import pytest

import einc
from tests.programs import built
from tests.tiers import GENERIC_FULL, VULKAN_FULL

rng = np.random.default_rng(24)

CPU = ["llvm-cpu", GENERIC_FULL]
EVERY_TARGET = CPU + [VULKAN_FULL]

# A 3-state Kalman filter (position, velocity, acceleration): the state x and covariance P are
# read at t - 1, the step's tensors (FP, P_pred, K) at t, its sums over k run at run-time k.
KALMAN3 = """
    let y: [f64; T];
    let F: [f64; 3, 3];
    let Q: [f64; 3, 3];
    let r: f64;
    let x[0, i in 0..3] = if i == 0 { y[0] } else { 0.0 as f64 };
    let P[0, i in 0..3, j in 0..3] = if i == j { 1.0 as f64 } else { 0.0 as f64 };
    let x_pred[t in 1..T, i in 0..3] = sum[k](F[i, k] * x[t - 1, k]);
    let FP[t in 1..T, i in 0..3, l in 0..3] = sum[k](F[i, k] * P[t - 1, k, l]);
    let P_pred[t in 1..T, i in 0..3, j in 0..3] = sum[l](FP[t, i, l] * F[j, l]) + Q[i, j];
    let S[t in 1..T] = P_pred[t, 0, 0] + r;
    let K[t in 1..T, i in 0..3] = P_pred[t, i, 0] / S[t];
    let x[t in 1..T, i in 0..3] = x_pred[t, i] + K[t, i] * (y[t] - x_pred[t, 0]);
    let P[t in 1..T, i in 0..3, j in 0..3] = P_pred[t, i, j] - K[t, i] * P_pred[t, 0, j];
"""


def kalman3_inputs(T: int) -> dict:
    return {"y": np.cumsum(rng.standard_normal(T)) * 0.1,
            "F": np.array([[1.0, 1.0, 0.5], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]),
            "Q": np.diag([1e-3, 1e-4, 1e-5]), "r": np.float64(0.3)}


def kalman3_numpy(y, F, Q, r):
    x, P = np.zeros((len(y), 3)), np.zeros((len(y), 3, 3))
    x[0, 0], P[0] = y[0], np.eye(3)
    for t in range(1, len(y)):
        x_pred, P_pred = F @ x[t - 1], F @ P[t - 1] @ F.T + Q
        K = P_pred[:, 0] / (P_pred[0, 0] + r)
        x[t] = x_pred + K * (y[t] - x_pred[0])
        P[t] = P_pred - np.outer(K, P_pred[0])
    return x, P


def run(source: str, target: str, outputs=None, dims=None, **inputs) -> dict:
    """One build per program, target, outputs and fixed sizes, shared by the sizes run with it."""
    with einc.load(built(source, target, outputs, dims).vmfb) as program:
        return program(**inputs)


def carried_scalars(text: str) -> int:
    """The scalars the step loop (the scf.for carrying the most values, tensors among them) carries."""
    loops = [types for types in re.findall(r"scf\.for .*?-> \((.*?)\) \{", text) if "tensor" in types]
    widest = max(loops, key=lambda types: types.count(","))
    return sum(1 for t in widest.split(", ") if not t.startswith("tensor"))


def test_a_small_tensor_state_is_carried_in_registers(emitted):
    # x (3 points) and P (9 points), each read at t - 1 only
    assert carried_scalars(emitted(KALMAN3.replace("T]", "50]").replace("..T", "..50"))) == 12


def test_a_state_of_more_points_stays_in_memory(emitted):
    source = """
        let A: [f64; 5, 5];
        let M[0, i in 0..5, j in 0..5] = if i == j { 1.0 as f64 } else { 0.0 as f64 };
        let M[t in 1..20, i in 0..5, j in 0..5] = sum[k](M[t - 1, i, k] * A[k, j]);
    """
    assert carried_scalars(emitted(source)) == 0      # 25 points: over MAX_HELD_POINTS


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("T", [1, 2, 37])
def test_a_three_state_kalman_filter_matches_numpy(target, T):
    # f32 on Vulkan (no f64 there), against the same f64 reference; T of run-time size there too
    # (its chunk's sizes, computed inside the dispatch, fit the push constants: IREE-32)
    wide = target != "vulkan-spirv"
    inputs = kalman3_inputs(T)
    source = KALMAN3 if wide else KALMAN3.replace("f64", "f32")
    out = run(source, target, **{k: v if wide else np.float32(v) if v.ndim == 0 else v.astype(np.float32)
                                 for k, v in inputs.items()})
    x, P = kalman3_numpy(**inputs)
    tolerance = {"rtol": 1e-10, "atol": 1e-12} if wide else {"rtol": 1e-4, "atol": 1e-5}
    np.testing.assert_allclose(out["x"], x, **tolerance)
    np.testing.assert_allclose(out["P"], P, **tolerance)


@pytest.mark.parametrize("target", CPU)
def test_a_windowed_state_observed_at_its_last_step_matches_numpy(target):
    # only the last step is observed: P keeps a window of slots, x the whole tensor
    inputs = kalman3_inputs(23)
    out = run(KALMAN3, target, outputs=["x"], **inputs)
    np.testing.assert_allclose(out["x"], kalman3_numpy(**inputs)[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("target", CPU)     # Vulkan rejects same-step self-reads (E011)
def test_an_integer_matrix_state_with_two_steps_back_matches_numpy(target):
    """Reads at t - 1 and t - 2 with run-time subscripts on both axes (the sum's k), a clause
    reading points of its member written earlier in the step, another member reading it at t,
    and clauses that start at step 2."""
    source = """
        let A: [i32; 2, 3];
        let M[0, i in 0..2, j in 0..3] = i + j;
        let M[1, i in 0..2, j in 0..3] = i * j + 1;
        let M[t in 2..T, i in 0..2, j in 0..3] =
            (sum[k](A[i, k] * M[t - 1, i, k] + M[t - 2, 1 - i, 2 - k])
             + (if i == 1 { M[t, 0, j] } else { 0 }) + j) % 1009;
        let N[t in 2..T, i in 0..2] = M[t, i, 0] + M[t, 1 - i, 2];
    """
    T = 29
    A = rng.integers(0, 4, (2, 3)).astype(np.int32)
    M = np.zeros((T, 2, 3), np.int64)
    for t in range(T):
        for i in range(2):
            for j in range(3):
                if t < 2:
                    M[t, i, j] = i + j if t == 0 else i * j + 1
                    continue
                total = sum(int(A[i, k]) * M[t - 1, i, k] + M[t - 2, 1 - i, 2 - k] for k in range(3))
                M[t, i, j] = (total + (M[t, 0, j] if i == 1 else 0) + j) % 1009
    out = run(source.replace("..T", f"..{T}"), target, A=A)
    np.testing.assert_array_equal(out["M"], M)
    np.testing.assert_array_equal(out["N"][2:], M[2:, :, 0] + M[2:, ::-1, 2])


# the mutant fuzzer: a state axis 2^31 long (its clause's range for j is empty) made small_points
# list every point before counting them, a MemoryError (the process killed, without a limit)
HUGE_STATE = """let A: [f32; 4, 4];
let M[0, i in 0..4, j in 0..4] = if i == j { 1.0 } else { 0.0 };
let M[t in 1..6, i in 0..2147483647, j in 2147483647..4] = sum[k](A[i, k] * M[t - 1, k, j]);
"""


def test_a_huge_state_is_not_listed_point_by_point(tmp_path):
    path = tmp_path / "huge.ein"
    path.write_text(HUGE_STATE)
    script = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
              f"from einc.driver import lower; lower({str(path)!r}, 'llvm-cpu', ['M'])\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
