"""Many Vulkan programs loaded one after another in one process each run right: IREE 3.13's
Vulkan driver lost a device shared by programs in turn (IREE-28: VK_ERROR_DEVICE_LOST after 35
to 190 loads of this example on lavapipe), so each program opens its own (einc/runtime/program.py).
That rule is checked directly (two programs open at once hold two devices), since a hundred
loads caught the shared device only some of the time; the loads in turn check that opening and
closing a device per program keeps working in one process."""
import io

import numpy as np
import pytest

import einc
import references  # noqa: F401  (registers the examples)
from catalog import EXAMPLES, load_golden_outputs
from compare import assert_outputs_match
from einc.runtime import RunError

EXAMPLE = EXAMPLES["timeseries/exponential_smoothing.ein"]
LOADS = 20


@pytest.mark.vulkan
@pytest.mark.full
def test_programs_in_turn_on_vulkan_each_have_a_device_of_their_own_and_match_the_golden():
    golden = load_golden_outputs(EXAMPLE.golden_outputs)      # NumPy's, checked in test_goldens
    vmfb = einc.compile(str(EXAMPLE.source), target="vulkan-spirv").vmfb
    with einc.load(vmfb) as first, einc.load(vmfb) as second:
        assert first._hal_device is not second._hal_device
        for program in (first, second):
            assert_outputs_match(program.run({}, stdout=io.StringIO()), golden, EXAMPLE.rtol, EXAMPLE.atol)
    for _ in range(LOADS):
        with einc.load(vmfb) as program:
            outputs = program.run({}, stdout=io.StringIO())
        assert_outputs_match(outputs, golden, EXAMPLE.rtol, EXAMPLE.atol)


@pytest.mark.vulkan
def test_a_vulkan_program_whose_call_failed_closes_without_harm():
    source = "let a: [f32; N];\nlet b: [f32; N];\nlet c[i] = a[i] + b[i];\n"
    vmfb = einc.compile(source, target="vulkan-spirv").vmfb
    for _ in range(3):
        with einc.load(vmfb) as program, pytest.raises(RunError):
            program.run({"a": np.ones(3, np.float32), "b": np.ones(4, np.float32)}, io.StringIO())
    with einc.load(vmfb) as program:
        np.testing.assert_array_equal(program(a=np.ones(2, np.float32), b=np.ones(2, np.float32))["c"], [2, 2])
