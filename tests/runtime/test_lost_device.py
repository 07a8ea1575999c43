"""A Vulkan device lost during a call (lavapipe under load, docs/DECISIONS.md "Running on
Vulkan"): the call runs again on a new device, at most twice, said on stderr; then a RunError.
The loss is simulated by an invoker that fails the way IREE reports it."""
import numpy as np
import pytest

import einc.runtime as runtime
import einc.runtime.program as program_module
from einc.runtime import RunError
from mlir_samples import compiled

A = np.arange(6, dtype=np.float32).reshape(3, 2)
B = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
LOST = "UNKNOWN; VkResult=VK_ERROR_DEVICE_LOST; while invoking native function hal.fence.await"


class LosingInvoker:
    """Stands in for the runner's invoker of `main`: the first `losses` calls, counted over every
    invoker made, fail as a lost device; later ones run the real function."""
    losses = 0

    def __init__(self, real):
        self.real = real

    def __call__(self, *args):
        if LosingInvoker.losses > 0:
            LosingInvoker.losses -= 1
            raise RuntimeError(LOST)
        return self.real(*args)


@pytest.fixture
def losing_device(monkeypatch):
    real = program_module.main_invoker
    monkeypatch.setattr(program_module, "main_invoker", lambda *a: LosingInvoker(real(*a)))
    # The runner keeps a lost device until the process ends. These devices are not really lost,
    # so they are released after the test: kept, each spun two lavapipe threads for the rest of
    # the test process (docs/DECISIONS.md, Running on Vulkan).
    monkeypatch.setattr(program_module, "_devices_kept_after_failure", [])
    return LosingInvoker


@pytest.mark.vulkan
def test_a_lost_device_runs_the_call_again_on_a_new_one(losing_device, capsys):
    losing_device.losses = 2
    with runtime.load(compiled("matmul", "vulkan-spirv")) as program:
        first_device = program._hal_device
        outputs = program(A=A, B=B, s=0.5)
        assert program._hal_device is not first_device
    np.testing.assert_allclose(outputs["C"], (A @ B) * 0.5, rtol=1e-6)
    assert capsys.readouterr().err.count("device was lost; running") == 2


@pytest.mark.vulkan
def test_a_device_lost_three_times_is_a_run_error(losing_device):
    losing_device.losses = 3
    with runtime.load(compiled("matmul", "vulkan-spirv")) as program:
        with pytest.raises(RunError, match="the vulkan device was lost running"):
            program(A=A, B=B, s=0.5)


def test_a_cpu_call_is_never_run_again(losing_device):
    losing_device.losses = 1
    with runtime.load(compiled("matmul", "llvm-cpu")) as program:
        with pytest.raises(RuntimeError) as err:     # IREE's error as it came: the CLI reports it
            program(A=A, B=B, s=0.5)
    assert "VK_ERROR_DEVICE_LOST" in str(err.value) and losing_device.losses == 0
