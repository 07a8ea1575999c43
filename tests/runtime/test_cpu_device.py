"""The local-task device's worker count (einc.runtime.cpu_device) reaches IREE: the worker threads
IREE started are counted by name in a fresh process (IREE's task flags are process-wide), and the
device's results still match NumPy."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import einc

REPO = Path(__file__).resolve().parents[2]
MATMUL = """
    let A: [f32; M, K];
    let B: [f32; K, N];
    let C[i, j] = sum[k](A[i, k] * B[k, j]);
"""
# Runs the module on local-task, checks it against NumPy (relative 1e-4, f32 sums of 96 products),
# then prints how many threads IREE named as task workers.
CHILD = """
import os, sys
import numpy as np
import einc
rng = np.random.default_rng(0)
a, b = rng.standard_normal((64, 96), dtype=np.float32), rng.standard_normal((96, 80), dtype=np.float32)
with einc.load(sys.argv[1], device="local-task") as program:
    np.testing.assert_allclose(program(A=a, B=b)["C"], a @ b, rtol=1e-4, atol=1e-4 * np.sqrt(96))
    names = [open(f"/proc/self/task/{t}/comm").read() for t in os.listdir("/proc/self/task")]
    print(sum(name.startswith("iree-worker") for name in names))
"""


@pytest.fixture(scope="module")
def matmul_path(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("workers") / "matmul.vmfb"
    path.write_bytes(einc.compile(MATMUL, target="llvm-cpu").vmfb)
    return str(path)


def run_child(args: list[str], workers: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "EINC_CPU_WORKERS"} | {"PYTHONPATH": str(REPO)}
    if workers is not None:
        env["EINC_CPU_WORKERS"] = workers
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=300)


def worker_threads(vmfb: str, workers: str | None) -> int:
    child = run_child(["-c", CHILD, vmfb], workers)
    assert child.returncode == 0, child.stderr
    return int(child.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads through /proc")
def test_one_worker_when_asked(matmul_path):
    assert worker_threads(matmul_path, "1") == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads through /proc")
def test_two_workers_when_asked(matmul_path):
    if worker_threads(matmul_path, None) < 2:
        pytest.skip("IREE starts one worker per physical core; this machine has one")
    assert worker_threads(matmul_path, "2") == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads through /proc")
def test_unset_and_empty_leave_the_count_to_iree(matmul_path):
    assert worker_threads(matmul_path, None) == worker_threads(matmul_path, "") >= 1


def test_a_bad_count_is_a_one_line_error(matmul_path, tmp_path):
    np.save(tmp_path / "a.npy", np.ones((2, 3), np.float32))
    np.save(tmp_path / "b.npy", np.ones((3, 2), np.float32))
    child = run_child(["-m", "einc", "run", matmul_path, "--input", f"A={tmp_path / 'a.npy'}",
                       "--input", f"B={tmp_path / 'b.npy'}", "--device", "local-task"], "none")
    assert child.returncode != 0 and child.stdout == ""
    assert child.stderr == "error: EINC_CPU_WORKERS must be a whole number of workers, at least 1 (it is 'none')\n"
