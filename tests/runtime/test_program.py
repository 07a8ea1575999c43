"""Running hand-built einc modules: results, prints, asserts, devices (CPU and Vulkan)."""
import io

import numpy as np
import pytest

import einc.runtime as runtime
from einc.runtime import RunError
from mlir_samples import compiled

A = np.arange(6, dtype=np.float32).reshape(3, 2)
B = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


def run_matmul(vmfb, **inputs):
    stdout = io.StringIO()
    with runtime.load(vmfb) as program:
        outputs = program.run(inputs, stdout)
    return outputs, stdout.getvalue()


def test_matmul_matches_numpy_and_prints_in_order(matmul_vmfb):
    outputs, printed = run_matmul(matmul_vmfb, A=A, B=B, s=0.5)
    np.testing.assert_allclose(outputs["C"], (A @ B) * 0.5, rtol=1e-6)
    assert outputs["scale"].shape == () and outputs["scale"].dtype == np.float32
    assert printed == f"s = 0.50\nC =\n{(A @ B) * np.float32(0.5)}\n"


def test_scalar_int_and_bool_inputs_and_outputs(add_vmfb):
    with runtime.load(add_vmfb) as program:
        stdout = io.StringIO()
        outputs = program.run({"a": A[:, 0].copy(), "b": A[:, 1].copy(), "n": 41, "flag": True}, stdout)
    np.testing.assert_array_equal(outputs["total"], A[:, 0] + A[:, 1])
    assert outputs["next"] == 42 and outputs["next"].dtype == np.int32
    assert outputs["flag_out"].dtype == np.bool_ and bool(outputs["flag_out"])
    assert stdout.getvalue() == "n = 41, flag = true\n"


def test_device_follows_the_target(matmul_vmfb, target):
    with runtime.load(matmul_vmfb) as program:
        assert program.signature.target == target
        assert program.device == ("vulkan" if target == "vulkan-spirv" else "local-task")


def test_local_sync_runs_cpu_modules():
    with runtime.load(compiled("matmul", "llvm-cpu"), device="local-sync") as program:
        np.testing.assert_allclose(program.run({"A": A, "B": B, "s": 1.0}, io.StringIO())["C"], A @ B)


def test_call_syntax_returns_outputs_by_name(capsys):
    with runtime.load(compiled("matmul", "llvm-cpu")) as program:
        assert set(program(A=A, B=B, s=1.0)) == {"C", "scale"}
    assert capsys.readouterr().out.startswith("s = 1.00\n")


def test_cpu_module_refuses_vulkan_device():
    with pytest.raises(RunError, match="built for llvm-cpu and runs on local-task or local-sync, not vulkan"):
        runtime.load(compiled("matmul", "llvm-cpu"), device="vulkan")


def test_failed_assert_reports_its_message_after_earlier_prints(matmul_vmfb):
    stdout = io.StringIO()
    with runtime.load(matmul_vmfb) as program, pytest.raises(RunError) as failure:
        program.run({"A": A, "B": B, "s": 0.0}, stdout)
    assert str(failure.value) == "matmul.ein:4:1: error[E006]: assertion failed: scale must be nonzero"
    assert stdout.getvalue() == "s = 0.00\n"


def test_compiled_shape_check_is_a_run_error(add_vmfb):
    with runtime.load(add_vmfb) as program, pytest.raises(RunError, match="^shape mismatch: a and b"):
        program.run({"a": np.ones(3, np.float32), "b": np.ones(4, np.float32), "n": 1, "flag": False},
                    io.StringIO())


@pytest.mark.parametrize("inputs, message", [
    ({"A": A, "B": B}, r"^missing input 's' \(float32 scalar\)$"),
    ({"A": A, "B": B, "s": 1.0, "t": 2.0}, r"^unknown input 't'; the program's inputs are: A, B, s$"),
    ({"A": A.astype(np.float64), "B": B, "s": 1.0}, r"^input A: expected float32, got float64$"),
    ({"A": A, "B": B, "s": np.float64(1.0)}, r"^input s: expected float32, got float64$"),
    ({"A": A, "B": B, "s": "1.0"}, r"^input s: expected float32, got str '1.0'$"),
    ({"A": A[0], "B": B, "s": 1.0}, r"^input A: expected rank 2 \(float32\[M, K\]\), got rank 1 \(shape \[2\]\)$"),
    ({"A": A, "B": np.ones((2, 3), np.float32), "s": 1.0}, r"^input B: dimension 1 must be 2, got 3"),
    ({"A": A, "B": np.ones((3, 2), np.float32), "s": 1.0}, r"^named dim K is 2 from A but 3 from B$"),
    ({"A": A.tolist(), "B": B, "s": 1.0}, r"^input A: expected a float32\[M, K\] numpy array \(or an object with __dlpack__, __array__ or the buffer protocol\), got list$"),
])
def test_bad_inputs_are_one_line_errors_before_the_call(inputs, message):
    with runtime.load(compiled("matmul", "llvm-cpu")) as program, pytest.raises(RunError, match=message):
        program.run(inputs, io.StringIO())


def test_a_0d_array_for_a_vector_input_is_a_rank_error():
    """It was taken as a vector of one element: np.ascontiguousarray makes a 0-d array 1-d, and
    the rank was checked after it."""
    with runtime.load(compiled("add", "llvm-cpu")) as program, \
            pytest.raises(RunError, match=r"^input a: expected rank 1 \(.*\), got rank 0 \(shape \[\]\)$"):
        program.run({"a": np.float32(1.0) + np.zeros((), np.float32), "b": np.ones(1, np.float32), "n": 1,
                     "flag": True}, io.StringIO())


def test_python_int_is_accepted_for_a_float_scalar_but_not_the_reverse():
    with runtime.load(compiled("matmul", "llvm-cpu")) as program:
        program.run({"A": A, "B": B, "s": 2}, io.StringIO())
    with runtime.load(compiled("add", "llvm-cpu")) as program, pytest.raises(RunError, match="expected int32"):
        program.run({"a": A[0], "b": A[0], "n": 1.5, "flag": True}, io.StringIO())


def test_int_scalar_out_of_range():
    with runtime.load(compiled("add", "llvm-cpu")) as program, \
            pytest.raises(RunError, match="^input n: 4294967296 does not fit in int32$"):
        program.run({"a": A[0], "b": A[0], "n": 2**32, "flag": True}, io.StringIO())


def test_corrupt_module_is_a_run_error(tmp_path):
    truncated = tmp_path / "cut.vmfb"
    truncated.write_bytes(compiled("matmul", "llvm-cpu")[:4000])
    with pytest.raises(RunError, match=r"^\S*cut.vmfb has no einc integrity seal"):
        runtime.load(truncated)
    with pytest.raises(RunError, match="cannot read"):
        runtime.load(tmp_path / "missing.vmfb")


def test_closed_program_refuses_to_run():
    program = runtime.load(compiled("matmul", "llvm-cpu"))
    program.close()
    with pytest.raises(RunError, match="was closed"):
        program.run({"A": A, "B": B, "s": 1.0})


def test_a_kernel_over_the_push_constants_is_a_load_error_that_says_to_fix_sizes():
    # IREE-32: kernels take their run-time sizes as push constants; one over the device's limit
    # cannot load (IREE's words, as lavapipe's pipeline layout check gives them)
    from einc.runtime.program import _load_failure
    text = "INVALID_ARGUMENT; push_constant_ranges[0] end offset 152 exceeds device limit 128"
    message = _load_failure("m.vmfb", "vulkan", text)
    assert "takes 152 bytes of run-time sizes (push constants), more than this device allows (128)" in message
    assert "--dim NAME=SIZE" in message
