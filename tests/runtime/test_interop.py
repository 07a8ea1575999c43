"""A loaded program among other array libraries and processes: inputs from anything with
`__dlpack__`, `__array__` or the buffer protocol; outputs kept on the device and passed to the
next call; programs and artifacts pickled into worker processes."""
from __future__ import annotations

import array
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import iree.runtime as rt
import numpy as np
import pytest

import einc
from einc import runtime
from einc.runtime import RunError
from einc.runtime.inputs import as_array

A = np.array([1.0, -2.0, 0.5, 4.0], np.float32)
B = np.array([0.25, 3.0, -1.0, 2.0], np.float32)


class DLPackOnly:
    """What torch or JAX hand over: __dlpack__ and nothing NumPy would read otherwise."""

    def __init__(self, array: np.ndarray):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class ArrayOnly:
    def __init__(self, array: np.ndarray):
        self._array = array

    def __array__(self, dtype=None, copy=None):
        return self._array


def add(program, a, b, **options):
    return program(a=a, b=b, n=1, flag=True, **options)


@pytest.mark.parametrize("wrap", [DLPackOnly, ArrayOnly, lambda a: memoryview(array.array("f", a.tolist()))],
                         ids=["dlpack", "array", "buffer"])
def test_array_likes_are_inputs(add_vmfb, wrap):
    with runtime.load(add_vmfb) as program:
        total = add(program, wrap(A), wrap(B))["total"]
    np.testing.assert_array_equal(total, A.astype(np.float64) + B)   # one f32 add of exact values


def test_dlpack_and_array_inputs_are_read_in_place():
    spec = runtime.InputSpec("a", "float32", [None])
    assert np.shares_memory(as_array(spec, DLPackOnly(A)), A)
    assert np.shares_memory(as_array(spec, ArrayOnly(A)), A)


def test_array_likes_of_another_dtype_are_run_errors(add_vmfb):
    with runtime.load(add_vmfb) as program:
        with pytest.raises(RunError, match=r"^input a: expected float32, got float64$"):
            add(program, DLPackOnly(A.astype(np.float64)), B)
        with pytest.raises(RunError, match=r"^input b: expected a float32\[\?\] numpy array .*got dict$"):
            add(program, A, {"b": 1})


def test_device_outputs_go_into_the_next_call(add_vmfb):
    with runtime.load(add_vmfb) as program:
        first = add(program, A, B, device_outputs=True)
        assert isinstance(first["total"], rt.DeviceArray)
        second = add(program, first["total"], B)["total"]
        third = add(program, first["total"], add(program, B, B, device_outputs=True)["total"])["total"]
    np.testing.assert_array_equal(second, (A.astype(np.float64) + B) + B)
    np.testing.assert_array_equal(third, (A.astype(np.float64) + B) + (B + B))


def test_a_device_array_is_checked_like_an_array(add_vmfb):
    with runtime.load(add_vmfb) as program:
        flag = add(program, A, B, device_outputs=True)["flag_out"]
        with pytest.raises(RunError, match=r"^input a: expected float32, got bool$"):
            add(program, flag, B)


def test_device_arrays_cross_programs_on_the_cpu_not_on_vulkan(add_vmfb, target):
    with runtime.load(add_vmfb) as first, runtime.load(add_vmfb) as second:
        kept = add(first, A, B, device_outputs=True)["total"]
        if target == "vulkan-spirv":
            with pytest.raises(RunError, match="^input a: a device array of another vulkan device"):
                add(second, kept, B)
        else:
            np.testing.assert_array_equal(add(second, kept, B)["total"], (A.astype(np.float64) + B) + B)


def test_programs_and_artifacts_pickle(add_vmfb):
    with runtime.load(add_vmfb) as program:
        copy = pickle.loads(pickle.dumps(program))
        assert copy.signature == program.signature and copy.device == program.device
        np.testing.assert_array_equal(add(copy, A, B)["total"], add(program, A, B)["total"])
        copy.close()
    artifact = pickle.loads(pickle.dumps(einc.Artifact(add_vmfb, "llvm-cpu")))
    assert artifact.vmfb == add_vmfb and artifact.signature.inputs[0].name == "a"


def _total_in_worker(program, a, b):
    return add(program, a, b)["total"]


def test_a_program_runs_in_a_worker_process(add_vmfb):
    with runtime.load(add_vmfb) as program, ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        total = pool.submit(_total_in_worker, program, A, B).result(timeout=300)
    np.testing.assert_array_equal(total, A.astype(np.float64) + B)


def test_a_failed_assert_pickles_with_its_location(matmul_vmfb):
    with runtime.load(matmul_vmfb) as program, pytest.raises(RunError) as failure:
        program(A=np.eye(2, dtype=np.float32), B=np.eye(2, dtype=np.float32), s=0.0)
    copy = pickle.loads(pickle.dumps(failure.value))
    assert str(copy) == str(failure.value) == "matmul.ein:4:1: error[E006]: assertion failed: scale must be nonzero"
    assert (copy.location, copy.code) == ("matmul.ein:4:1", "E006")
    plain = pickle.loads(pickle.dumps(RunError("missing input 'A'")))
    assert str(plain) == "missing input 'A'" and plain.location is None
