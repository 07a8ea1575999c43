"""Lowering of recurrence groups: storage windows in the emitted MLIR, long loops in one dispatch
(llvm-cpu), the host-loop form on vulkan-spirv against llvm-cpu and NumPy, and its E011."""
import os
import subprocess
import sys

import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from einc.driver import lower
from tests.programs import source
from process_resources import open_fds, peak_resident_bytes_of, resident_bytes

rng = np.random.default_rng(23)


def run(source: str, target: str = "llvm-cpu", outputs=None, **inputs) -> dict:
    return einc.load(einc.compile(source, target=target, outputs=outputs).vmfb)(**inputs)


def logistic(steps: int) -> str:
    return f"""
        let x0: f32;
        let x[0] = x0;
        let x[t in 1..{steps}] = 3.7 * x[t - 1] * (1.0 - x[t - 1]);
        let last = x[{steps - 1}];
    """


def logistic_numpy(steps: int, x0: float = 0.3) -> np.float32:
    x = np.float32(x0)
    for _ in range(steps - 1):
        x = np.float32(3.7) * x * (np.float32(1) - x)
    return x


# ------------------------------------------------------------------------------------ storage

@pytest.mark.parametrize("target", ["llvm-cpu", "vulkan-spirv"])
def test_a_member_read_only_at_its_end_never_has_its_full_length(emitted, target):
    text = emitted(logistic(10_000_000), target, ["last"])
    assert "10000000x" not in text
    assert "tensor<2xf32>" in text                     # lookback 1 -> two slots


def test_a_member_that_leaves_the_program_keeps_every_step(emitted):
    text = emitted(logistic(1000), "llvm-cpu", None)
    assert "tensor<1000xf32>" in text


def test_the_cpu_form_is_one_dispatch_region_per_group(emitted):
    text = emitted(KALMAN, "llvm-cpu", ["x", "P"])
    assert text.count("flow.dispatch.region") == 1
    assert "linalg" not in text.split("flow.dispatch.region")[1].split("flow.return")[0]


def test_scalar_states_carry_their_history_in_registers(emitted):
    # the loop carries the window and the last `lookback` values (two for fib)
    text = emitted("""
        let fib[0] = 0;
        let fib[1] = 1;
        let fib[k in 2..100] = fib[k - 1] + fib[k - 2];
        let last = fib[99];
    """, "llvm-cpu", ["last"])
    assert "-> (tensor<3xi32>, i32, i32)" in text
    assert "-> (tensor<2xf32>, f32)" in emitted(logistic(1000), "llvm-cpu", ["last"])


def test_ten_million_steps_read_at_the_end_run_in_a_few_megabytes(tmp_path):
    # run in a fresh process, so its peak memory shows what the run added (a full trajectory
    # would be 40 MB; test_windowed_logistic_matches_a_numpy_float32_loop_bit_for_bit checks values)
    path = os.path.join(tmp_path, "logistic.vmfb")
    einc.compile(logistic(10_000_000), outputs=["last"]).save(path)
    probe = f"""
import resource, numpy as np, einc
program = einc.load({path!r})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
last = program(x0=np.float32(0.3))["last"]
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, last.item())
"""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    grown_kb, last = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                    check=True, env=env).stdout.split()
    assert int(grown_kb) < 8 * 1024
    assert 0.0 <= float(last) <= 1.0


def test_windowed_logistic_matches_a_numpy_float32_loop_bit_for_bit():
    out = run(logistic(20_000), outputs=["last"], x0=np.float32(0.3))
    assert out["last"] == logistic_numpy(20_000)


def test_windowed_vector_state_with_a_dynamic_width():
    H, T = 5, 40
    W = (rng.standard_normal((H, H)) * 0.4).astype(np.float32)
    x = rng.standard_normal((T, H)).astype(np.float32)
    out = run(RNN, outputs=["final"], W=W, x=x)
    np.testing.assert_allclose(out["final"], rnn_numpy(W, x), rtol=1e-4, atol=1e-5)


def test_a_windowed_member_without_a_first_step_reads_zero_there():
    # y has no clause at t = 0, so its slot must be cleared before each step
    out = run("""
        let n: [f32; N];
        let y[t in 1..N] = x[t - 1] + 1.0;
        let x[0] = 1.0;
        let x[t in 1..N] = y[t] * 0.5 + x[t - 1];
        let last = x[N - 1];
        let first_y = y[N - 1];
    """, outputs=["last", "first_y"], n=np.zeros(7, np.float32))
    x, y = 1.0, 0.0
    for _ in range(6):
        y = x + 1.0
        x = y * 0.5 + x
    assert out["last"] == pytest.approx(x) and out["first_y"] == pytest.approx(y)


def test_state_read_at_a_constant_step_stays_inside_the_loop():
    out = run("""
        let x[0] = 2.0;
        let x[t in 1..6] = x[t - 1] + x[0];
    """)
    np.testing.assert_allclose(out["x"], [2, 4, 6, 8, 10, 12])


# ------------------------------------------------------------------------------------ vulkan

KALMAN = source("kalman_1d").replace("f64", "f32")

RNN = source("rnn")


def rnn_numpy(W: np.ndarray, x: np.ndarray) -> np.ndarray:
    h = np.zeros(W.shape[0])
    for t in range(1, x.shape[0]):
        h = np.tanh(W.astype(np.float64) @ h + x[t])
    return h


def test_scalar_states_on_vulkan_loop_inside_a_kernel(emitted):
    text = emitted(logistic(200_000), "vulkan-spirv", ["last"])
    kernel = text.split("linalg.generic")[1]
    assert "scf.for" in kernel and "-> (f32, f32)" in kernel      # the steps, two registers
    assert "65000" in text                                         # steps per kernel (lavapipe)


@pytest.mark.vulkan
@pytest.mark.parametrize("steps", [1000, 140_000])
def test_scalar_logistic_on_vulkan_matches_numpy_bit_for_bit(steps):
    # 140,000 steps run as three kernels: lavapipe stops a shader loop after 65,535 iterations
    out = run(logistic(steps), target="vulkan-spirv", outputs=["last"], x0=np.float32(0.3))
    assert out["last"] == logistic_numpy(steps)


@pytest.mark.vulkan
def test_fibonacci_tail_on_vulkan_reads_the_right_slots():
    # window 3 (two lookbacks), read at three distances from a run-time end
    out = run("""
        let n: [i32; N];
        let fib[0] = 0;
        let fib[1] = 1;
        let fib[k in 2..N] = fib[k - 1] + fib[k - 2];
        let last = fib[N - 1];
        let before = fib[N - 2] * 1000 + fib[N - 3];
    """, target="vulkan-spirv", outputs=["last", "before"], n=np.zeros(23, np.int32))
    fib = [0, 1]
    for _ in range(21):
        fib.append(fib[-1] + fib[-2])
    assert out["last"] == fib[22] and out["before"] == fib[21] * 1000 + fib[20]


@pytest.mark.vulkan
def test_scalar_kalman_read_at_its_end_runs_in_a_kernel_on_vulkan():
    y = (np.cumsum(rng.standard_normal(300)) + rng.standard_normal(300)).astype(np.float32)
    source = KALMAN + "let x_last = x[T - 1];\nlet P_last = P[T - 1];\n"
    vk = run(source, target="vulkan-spirv", outputs=["x_last", "P_last"], y=y, q=0.5, r=2.0)
    x, P = y[0], np.float32(1.0)
    for t in range(1, 300):
        pp = P + np.float32(0.5)
        k = pp / (pp + np.float32(2.0))
        x, P = x + k * (y[t] - x), (1 - k) * pp
    np.testing.assert_allclose([vk["x_last"], vk["P_last"]], [x, P], rtol=1e-5)


@pytest.mark.vulkan
@pytest.mark.parametrize("outputs", [["x", "P"], pytest.param(None, marks=pytest.mark.full)])
def test_kalman_group_on_vulkan_matches_llvm_cpu(outputs):
    y = (np.cumsum(rng.standard_normal(30)) + rng.standard_normal(30)).astype(np.float32)
    cpu = run(KALMAN, outputs=outputs, y=y, q=0.5, r=2.0)
    vk = run(KALMAN, target="vulkan-spirv", outputs=outputs, y=y, q=0.5, r=2.0)
    assert set(vk) == set(cpu)
    for name in cpu:
        np.testing.assert_allclose(vk[name], cpu[name], rtol=1e-6)


@pytest.mark.vulkan
def test_small_rnn_on_vulkan_matches_numpy():
    H, T = 6, 25
    W = (rng.standard_normal((H, H)) * 0.4).astype(np.float32)
    x = rng.standard_normal((T, H)).astype(np.float32)
    out = run(RNN, target="vulkan-spirv", W=W, x=x)
    np.testing.assert_allclose(out["final"], rnn_numpy(W, x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["h"][-1], out["final"])


def test_a_vector_recurrence_on_vulkan_runs_its_steps_inside_one_workgroup(emitted):
    text = emitted(RNN, "vulkan-spirv", ["final"])
    region = text.split("flow.dispatch.region")[1]
    assert "gpu.thread_id" in region and "spirv.ControlBarrier" in region and "compilation_info" in region
    assert "workgroup_size = [64, 1, 1]" in text


@pytest.mark.vulkan
@pytest.mark.full
def test_a_vector_recurrence_of_100k_steps_holds_no_resources_per_step_on_vulkan():
    # regression (issue 10 item 3): as a host loop, every step took new allocations, copies of
    # the storage and fences, alive until the device caught up: a step cost more the longer the
    # run (17 ms a step at T = 4000 on lavapipe, 10 GB), and an NVIDIA driver ran out of memory
    # and file descriptors at T = 10,000. Now chunks of steps run inside one workgroup, and
    # 100,000 steps hold what 20,000 hold.
    H = 64
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    program = einc.load(einc.compile(RNN, target="vulkan-spirv", outputs=["final"]).vmfb)
    short = rng.standard_normal((20_000, H)).astype(np.float32)
    long = rng.standard_normal((100_000, H)).astype(np.float32)
    program(W=W, x=short)
    fds, resident = open_fds(), resident_bytes()
    out = program(W=W, x=long)
    assert open_fds() == fds
    assert resident_bytes() - resident < 64 * 2**20
    # float32 sums in another order than NumPy's; the state stays in (-1, 1)
    np.testing.assert_allclose(out["final"], rnn_numpy(W, long), rtol=1e-4, atol=1e-4)


@pytest.mark.vulkan
def test_a_recurrence_kept_whole_on_vulkan_holds_a_bounded_number_of_copies():
    # IREE copies a whole history carried from chunk to chunk; the host waits for each chunk,
    # so only a few copies are alive at once (a host running ahead kept all 20: 143 MB)
    H, T = 64, 20_000
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    x = rng.standard_normal((T, H)).astype(np.float32)
    program = einc.load(einc.compile(RNN, target="vulkan-spirv", outputs=["h"]).vmfb)
    program(W=W, x=x[:10])                              # lavapipe compiles its kernels here
    out = {}
    growth = peak_resident_bytes_of(lambda: out.update(program(W=W, x=x)))
    assert growth < 8 * x.nbytes, growth                # about 5 x: input, result, copies
    np.testing.assert_allclose(out["h"][-1], rnn_numpy(W, x), rtol=1e-4, atol=1e-4)


def test_a_same_step_self_read_is_rejected_for_vulkan():
    with pytest.raises(CompileError) as info:
        einc.compile("""
            let a: [f32; N];
            let c[0, j in 0..N] = a[j];
            let c[t in 1..4, 0] = c[t - 1, 0];
            let c[t in 1..4, j in 1..N] = c[t, j - 1] + c[t - 1, j];
        """, target="vulkan-spirv")
    diag = info.value.diagnostics[0]
    assert diag.code == "E011" and "`c`" in diag.message and "llvm-cpu" in diag.hint
    assert diag.span.line == 5


@pytest.mark.vulkan
def test_a_fixed_step_clause_may_read_the_steps_before_it_on_vulkan():
    # x[1, i] reads step 0 from a clause that only covers step 1: an earlier step, not the same
    src = """
        let x[0, i in 0..4] = 1.0 + (i as f32);
        let x[1, i in 0..4] = x[0, i] * 2.0;
        let x[t in 2..6, i in 0..4] = x[t - 1, i] + x[t - 2, i];
    """
    expected = np.zeros((6, 4), np.float32)
    expected[0] = 1 + np.arange(4)
    expected[1] = expected[0] * 2
    for t in range(2, 6):
        expected[t] = expected[t - 1] + expected[t - 2]
    out = einc.load(einc.compile(src, target="vulkan-spirv").vmfb)()
    np.testing.assert_array_equal(out["x"], expected)      # small integers: exact in f32


SUMMED_STEPS = """
    let x: [f32; T, J];
    let s[0] = 0.0;
    let s[t in 1..T] = s[t - 1] + sum[j](x[t, j]);
    let last = s[T - 1];
"""


def test_a_scalar_state_whose_step_runs_a_loop_runs_in_a_workgroup_on_vulkan(emitted):
    # lavapipe counts every loop iteration of an invocation against its ~65,535 limit, so a
    # reduction inside each step would end the one-invocation kernel's step loop early; the
    # workgroup form sizes its chunks by the iterations a step runs
    text = emitted(SUMMED_STEPS, "vulkan-spirv", ["last"])
    assert "gpu.thread_id" in text


@pytest.mark.vulkan
def test_a_scalar_state_summing_64_values_a_step_runs_every_step_on_vulkan():
    # regression: run as an in-kernel loop, this stopped after ~1,000 of its 1,100 steps on
    # lavapipe and returned 63549 (a silent wrong result)
    x = rng.integers(-4, 5, size=(1100, 64)).astype(np.float32)
    out = run(SUMMED_STEPS, target="vulkan-spirv", outputs=["last"], x=x)
    assert out["last"] == x[1:].sum()          # small integers: exact in f32


@pytest.mark.vulkan
def test_matrix_kalman_filter_in_f32_on_vulkan_matches_llvm_cpu(tmp_path):
    # examples/filters/kalman_filter.ein (matrix states whose histories are outputs) in f32,
    # which vulkan-spirv has: its group runs as chunks inside one workgroup there
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "filters")
    with open(os.path.join(example, "kalman_filter.ein"), encoding="utf-8") as f:
        source = f.read().replace("f64", "f32")
    path = os.path.join(tmp_path, "kalman_filter.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    z = np.load(os.path.join(example, "kalman_measurements.npy")).astype(np.float32)
    cpu = einc.load(einc.compile(path).vmfb)(z=z)
    vk = einc.load(einc.compile(path, target="vulkan-spirv").vmfb)(z=z)
    assert "gpu.thread_id" in lower(path, "vulkan-spirv", None).operation.get_asm()
    for name in cpu:
        np.testing.assert_allclose(vk[name], cpu[name], rtol=1e-5, atol=1e-5)
