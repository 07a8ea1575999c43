"""A Vulkan program whose call failed (an assert) closes like any other: its device and the
device's threads go at once. IREE's objects of the failed call were once left in a reference
cycle with the error, and freed after their device by the garbage collector, which segfaulted;
so every such device was kept until the process ended, and on lavapipe each kept device has
two threads that spin while they wait (Mesa 22.3 emulates a wait for any of several semaphores
by polling): the test suite ran 5x slower after a few dozen failed calls."""
import subprocess
import sys

import pytest

from mlir_samples import compiled

# Runs in a child process: a segfault must fail this test, not end the test run.
CHILD = """
import gc, os, sys
import numpy as np
import einc.runtime as runtime
from einc.runtime import RunError

def threads():
    return len(os.listdir("/proc/self/task"))

vmfb = open(sys.argv[1], "rb").read()
a, b = np.ones((3, 2), np.float32), np.ones((2, 2), np.float32)
before = threads()
for _ in range(3):
    program = runtime.load(vmfb)
    try:
        program(A=a, B=b, s=0.0)
    except RunError as failure:
        assert "scale must be nonzero" in str(failure), failure
    else:
        raise AssertionError("the assert did not fail")
    program.close()
    gc.collect()
    assert threads() == before, (before, threads())
print("closed cleanly")
"""


@pytest.mark.vulkan
def test_a_program_whose_call_failed_closes_its_device(tmp_path):
    module = tmp_path / "matmul.vmfb"
    module.write_bytes(compiled("matmul", "vulkan-spirv"))
    child = subprocess.run([sys.executable, "-c", CHILD, str(module)], capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.splitlines()[-1] == "closed cleanly"   # after the prints of the calls
