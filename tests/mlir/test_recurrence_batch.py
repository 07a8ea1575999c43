"""Independent series along a batch axis as lane blocks (llvm-cpu, einc.mlir.recurrences.batch):
which groups take the form, and values against NumPy loops at batch sizes that exercise whole
blocks, the masked rest and a batch smaller than one block, keeping the last step or every step;
vulkan-spirv keeps its own forms."""
import os
from pathlib import Path

import numpy as np
import pytest

from benchmarks.cases import kalman_batch_numpy
import einc
from einc.driver import emit_program, lower
from einc.mlir.recurrences import batch as recurrence_batch
from tests.programs import built, source

rng = np.random.default_rng(24)

LOGISTIC = source("logistic_batch")          # 2 live values a lane: blocks of 8 vectors (64 f32 lanes)
KALMAN = source("kalman_batch")              # f64, 25 live values a lane: blocks of 4 vectors (16 lanes)

# Three coupled maps a lane, read at t - 1 (across the middle axis) and t - 2 (9 live values a lane:
# blocks of 4 vectors, 32 f32 lanes), with a guard along the lanes; contracting, so it stays in [0, 1].
COUPLED = """
    let r: [f32; B];
    let x0: [f32; 3, B];
    let steps: [i32; T];
    let x[t in 0..2, k in 0..3, b in 0..B] = x0[k, b];
    let x[t in 2..T, k in 0..3, b in 0..B] =
        0.5 * x[t - 1, k, b] * (1.0 - x[t - 1, 2 - k, b]) + 0.25 * x[t - 2, k, b]
        + (if b < 5 { r[b] } else { 0.5 * r[b] });
    let last[k in 0..3, b in 0..B] = x[T - 1, k, b];
"""


def written(tmp_path, text: str) -> str:
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def explained(tmp_path, text: str, outputs: list, target: str = "llvm-cpu") -> str:
    return emit_program(written(tmp_path, text), "explain", outputs, target)


def run(text: str, outputs: list, target: str = "llvm-cpu", **inputs) -> dict:
    """B and T are run-time sizes: one build per program, outputs and target serves them all."""
    return einc.load(built(text, target, outputs).vmfb)(**inputs)


def logistic_inputs(T: int, B: int) -> dict:
    return {"r": rng.uniform(2.8, 3.4, B).astype(np.float32), "x0": rng.uniform(0.1, 0.9, B).astype(np.float32),
            "steps": np.zeros(T, np.int32)}


def logistic_numpy(r, x0, steps) -> np.ndarray:
    x = np.zeros((len(steps), len(r)), np.float32)
    x[0] = x0
    for t in range(1, len(steps)):
        x[t] = r * x[t - 1] * (np.float32(1) - x[t - 1])
    return x


def coupled_numpy(r, x0, steps) -> np.ndarray:
    x = np.zeros((len(steps),) + x0.shape, np.float32)
    x[:2] = x0
    bias = np.where(np.arange(len(r)) < 5, r, np.float32(0.5) * r)
    for t in range(2, len(steps)):
        x[t] = np.float32(0.5) * x[t - 1] * (np.float32(1) - x[t - 1, ::-1]) + np.float32(0.25) * x[t - 2] + bias
    return x


def kalman_inputs(T: int, B: int) -> dict:
    return {"y": rng.standard_normal((T, B)), "F": np.array([[1.0, 1.0], [0.0, 1.0]]),
            "Q": np.array([[1e-4, 0.0], [0.0, 1e-5]]), "r": rng.uniform(0.1, 0.5, B)}


def kalman_numpy(y, F, Q, r) -> np.ndarray:
    return kalman_batch_numpy(len(y), {"y": y, "F": F, "Q": Q, "r": r})


# ------------------------------------------------------------------------------ which form

def test_independent_series_run_as_lane_blocks(tmp_path):
    for text, outputs in ((LOGISTIC, ["last"]), (LOGISTIC, ["x"]), (KALMAN, ["x"]), (COUPLED, ["x"])):
        assert recurrence_batch.FORM in explained(tmp_path, text, outputs)


def test_a_step_reading_across_the_batch_axis_is_not_a_batch(tmp_path):
    mirrored = LOGISTIC.replace("(1.0 - x[t - 1, b])", "(1.0 - x[t - 1, B - 1 - b])")
    assert recurrence_batch.FORM not in explained(tmp_path, mirrored, ["last"])
    assert "across the batch axis" in recurrence_batch.misfit(_group(tmp_path, mirrored, ["last"]))
    # value iteration sums v[t - 1, k, j] over the last axis, inside a reduction of constant range
    mccall = (Path(__file__).parents[2] / "examples" / "economics" / "mccall.ein").read_text(encoding="utf-8")
    assert "across the batch axis" in recurrence_batch.misfit(_group(tmp_path, mccall, None))
    assert "has more than 16 points" in recurrence_batch.misfit(_group(tmp_path, source("rnn_batch"), ["final"]))


def test_vulkan_keeps_its_own_forms(tmp_path):
    assert recurrence_batch.FORM not in explained(tmp_path, LOGISTIC, ["last"], "vulkan-spirv")


def test_a_block_is_emitted_as_wide_vectors_and_a_masked_rest(tmp_path):
    text = str(lower(written(tmp_path, LOGISTIC), "llvm-cpu", ["last"]))
    assert "vector<64xf32>" in text                   # 8 vectors of 8 lanes
    writes = [line for line in text.splitlines() if "vector.transfer_write" in line]
    assert len(writes) == 2 and sum("in_bounds = [true]" in w for w in writes) == 1   # a whole block, the masked rest


def _group(tmp_path, text: str, outputs: list):
    from einc.driver import front_end
    return front_end(written(tmp_path, text), outputs)[1].recurrences[0]


# ------------------------------------------------------------------------------ values

@pytest.mark.parametrize("B", [1, 63, 64, 65, 200])
def test_batched_logistic_maps_match_numpy(B):
    # 1 and 63: only the masked block; 64: one whole block; 65 and 200: whole blocks and the rest
    inputs = logistic_inputs(40, B)
    out = run(LOGISTIC, ["last"], **inputs)
    np.testing.assert_allclose(out["last"], logistic_numpy(**inputs)[-1], rtol=1e-6, atol=0)


@pytest.mark.parametrize("T", [2, 8, 19])
def test_batched_logistic_maps_keep_every_step_over_tiles_of_steps(T):
    # tiles of 8 steps: part of one, exactly one, two and part of a third
    inputs = logistic_inputs(T, 70)
    np.testing.assert_allclose(run(LOGISTIC, ["x"], **inputs)["x"], logistic_numpy(**inputs), rtol=1e-6, atol=0)


@pytest.mark.parametrize("B", [3, 32, 45])
@pytest.mark.parametrize("output", ["x", "last"])
def test_coupled_maps_match_numpy_keeping_every_step_or_the_last(B, output):
    inputs = {"r": rng.uniform(0.0, 0.25, B).astype(np.float32),
              "x0": rng.uniform(0.0, 1.0, (3, B)).astype(np.float32), "steps": np.zeros(21, np.int32)}
    expected = coupled_numpy(**inputs)
    out = run(COUPLED, [output], **inputs)
    np.testing.assert_allclose(out[output], expected if output == "x" else expected[-1], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("B", [3, 16, 37])
def test_batched_kalman_filters_match_numpy(B):
    inputs = kalman_inputs(25, B)
    np.testing.assert_allclose(run(KALMAN, ["x"], **inputs)["x"], kalman_numpy(**inputs), rtol=1e-9, atol=1e-9)


@pytest.mark.vulkan
def test_batched_logistic_maps_on_vulkan_match_numpy():
    inputs = logistic_inputs(30, 37)
    out = run(LOGISTIC, ["last"], "vulkan-spirv", **inputs)
    np.testing.assert_allclose(out["last"], logistic_numpy(**inputs)[-1], rtol=1e-6, atol=0)
