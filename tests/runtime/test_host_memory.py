"""Inputs lent to IREE in place and results read in place on the CPU devices
(einc/runtime/host_memory.py): what the caller holds is never changed, and a result is an
array of its own that later calls do not overwrite."""
import gc
import threading
import weakref

import ml_dtypes

import numpy as np
import pytest

import einc
from einc.runtime import RunError
from einc.runtime.host_memory import COPIED_RESULT_BYTES, LENT_OFF_THE_LINE, REMEMBERED_BYTES, _address, _can_lend
from einc.mlir.dense import cpu_matmuls
from einc.runtime.signature import signature_from_reflection
from tests.programs import built

SOURCE = """
let x: [f32; N];
let same = x;
let doubled[i] = x[i] * 2.0;
let doubled_again = doubled;
"""


BOUNDARY = 64      # a cache line: offsets past it are what NumPy's allocations give


@pytest.fixture(scope="module", params=["local-sync", "local-task"])
def program(request):
    vmfb = built(SOURCE, outputs=["same", "doubled", "doubled_again"]).vmfb      # one build, both devices
    with einc.load(vmfb, device=request.param) as loaded:
        yield loaded


def placed(values: np.ndarray, offset: int) -> np.ndarray:
    """A copy of `values` starting `offset` bytes past a BOUNDARY."""
    raw = np.empty(values.nbytes + BOUNDARY + offset, np.uint8)
    start = (-raw.ctypes.data) % BOUNDARY + offset
    array = raw[start:start + values.nbytes].view(values.dtype)
    array[:] = values
    return array


def check(outputs: dict, x: np.ndarray) -> None:
    np.testing.assert_array_equal(outputs["same"], x)
    np.testing.assert_array_equal(outputs["doubled"], x * 2)
    np.testing.assert_array_equal(outputs["doubled_again"], x * 2)


@pytest.mark.parametrize("offset", [0, 4, 16, 48])
def test_inputs_at_any_alignment_give_the_same_results_and_stay_unchanged(program, offset):
    # Lent where they start on the module's input alignment (16 bytes: NumPy's large arrays are
    # lent too), copied elsewhere: IREE's kernels crash on an input they assume aligned.
    values = np.arange(1000, dtype=np.float32)
    x = placed(values, offset)
    check(program.run({"x": x}), values)
    np.testing.assert_array_equal(x, values)


@pytest.mark.parametrize("offset, size, lent", [(0, 4096, True), (16, 4096, False), (48, 4096, False),
                                               (16, LENT_OFF_THE_LINE // 4, True), (48, LENT_OFF_THE_LINE // 4, True),
                                               (4, LENT_OFF_THE_LINE // 4, False)])
def test_an_input_is_lent_in_place_on_a_cache_line_or_large_on_the_modules_alignment(program, offset, size, lent,
                                                                                   monkeypatch):
    # Small inputs off a cache line are copied (each vector load would span two lines); large
    # ones on the module's 16 bytes are lent (a copy costs a pass over them). A copy is
    # imported too: the program's staging array, not the caller's.
    assert program.signature.input_alignment == 16
    imported = []
    allocator = type(program._hal_device.allocator)
    real = allocator.import_host_allocation
    monkeypatch.setattr(allocator, "import_host_allocation",
                        lambda self, array, **kw: imported.append(array) or real(self, array, **kw))
    values = np.arange(size, dtype=np.float32)
    x = placed(values, offset)
    check(program.run({"x": x}), values)
    assert any(np.shares_memory(array, x) for array in imported) == lent


MATMUL = """
let A: [f32; M, K];
let B: [f32; K, N];
let C[i, j] = sum[k](A[i, k] * B[k, j]);
"""


@pytest.fixture(scope="module")
def packed_matmul() -> bytes:
    """MATMUL as an AVX-512 host packs its operands, built once for every device and offset."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cpu_matmuls, "vector_unit", lambda: "avx512")
        return einc.compile(MATMUL).vmfb


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
@pytest.mark.parametrize("offset, lent", [(16, True), (48, True), (4, False)])
def test_inputs_every_kernel_reads_once_are_lent_off_a_cache_line(monkeypatch, packed_matmul, device, offset, lent):
    # A matmul's operands, which only their packs read, are lent on the module's 16 bytes
    # whatever their size (here 192 KB each): no kernel reads them twice, so a copy onto a cache
    # line would only cost a pass over them. Off 16 bytes they are still copied (IREE-31).
    vmfb = packed_matmul
    rng = np.random.default_rng(offset)
    a, b = rng.standard_normal((192, 256)).astype(np.float32), rng.standard_normal((256, 192)).astype(np.float32)
    imported = []
    with einc.load(vmfb, device=device) as program:
        assert program.signature.read_once == {"A", "B"}
        allocator = type(program._hal_device.allocator)
        real = allocator.import_host_allocation
        monkeypatch.setattr(allocator, "import_host_allocation",
                            lambda self, array, **kw: imported.append(array) or real(self, array, **kw))
        inputs = {"A": placed(a.ravel(), offset).reshape(a.shape), "B": placed(b.ravel(), offset).reshape(b.shape)}
        got = program.run(inputs)["C"]
    assert sum(np.shares_memory(array, x) for array in imported for x in inputs.values()) == (2 if lent else 0)
    # f32 sums of 256 products of standard normals against float64 NumPy
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5 * np.sqrt(256))


@pytest.mark.parametrize("offset, size, lent", [(0, 4096, True), (16, LENT_OFF_THE_LINE // 4, False)])
def test_a_module_built_for_64_bytes_is_lent_nothing_off_them(offset, size, lent):
    # IREE's default: a large array on 16 bytes would crash its kernels, so it is copied
    assert _can_lend(placed(np.zeros(size, np.float32), offset), 64) == lent


def test_a_module_that_does_not_state_its_input_alignment_gets_irees_default(program):
    reflection = dict(program._module.lookup_function("main").reflection)
    del reflection["einc.input_alignment"]
    assert signature_from_reflection(reflection, "m").input_alignment == 64


def test_a_recurrence_started_from_a_lent_input_leaves_it_unchanged():
    # IREE could carry the state in the input's buffer; it copies it instead.
    source = """
    let x0: [f32; 256];
    let s[0, i in 0..256] = x0[i];
    let s[t in 1..20, i in 0..256] = s[t - 1, i] * 0.5 + 1.0;
    let last[i] = s[19, i];
    """
    values = np.arange(256, dtype=np.float32)
    expected = values.copy()
    for _ in range(19):
        expected = expected * np.float32(0.5) + np.float32(1.0)
    x0 = placed(values, 0)
    with einc.load(einc.compile(source, outputs=["last"]).vmfb, device="local-sync") as program:
        np.testing.assert_allclose(program.run({"x0": x0})["last"], expected, rtol=1e-6)
    np.testing.assert_array_equal(x0, values)


def test_read_only_strided_and_empty_inputs(program):
    read_only = placed(np.arange(8, dtype=np.float32), 0)
    read_only.flags.writeable = False
    check(program.run({"x": read_only}), read_only)
    strided = np.arange(16, dtype=np.float32)[::2]
    check(program.run({"x": strided}), strided)
    check(program.run({"x": np.zeros(0, np.float32)}), np.zeros(0, np.float32))


def test_an_output_that_is_the_input_is_a_copy_of_it(program):
    x = placed(np.arange(64, dtype=np.float32), 0)
    outputs = program.run({"x": x})
    assert not np.shares_memory(outputs["same"], x)
    outputs["same"][:] = -1
    np.testing.assert_array_equal(x, np.arange(64, dtype=np.float32))


# An input copied into a staging array of the program's (off a cache line, under
# LENT_OFF_THE_LINE): more than COPIED_RESULT_BYTES, so results over it are not copies anyway.
STAGED = COPIED_RESULT_BYTES      # float32 elements, four times the bytes


def test_an_output_that_is_a_staged_input_keeps_its_values_through_later_calls(program):
    # the staging array is written again by the next call: a result over it must be a copy
    firsts = [placed(np.full(STAGED, float(k), np.float32), 16) for k in range(3)]
    results = [program.run({"x": x}) for x in firsts]
    for k, outputs in enumerate(results):
        check(outputs, np.full(STAGED, float(k), np.float32))
    for x in firsts:
        np.testing.assert_array_equal(x, np.full(STAGED, x[0], np.float32))


def test_device_outputs_of_staged_inputs_keep_their_values_through_later_calls(program):
    kept = program(device_outputs=True, x=placed(np.full(STAGED, 1.0, np.float32), 16))
    later = program(x=placed(np.full(STAGED, 2.0, np.float32), 16))
    check(later, np.full(STAGED, 2.0, np.float32))
    np.testing.assert_array_equal(np.asarray(kept["same"]), np.full(STAGED, 1.0, np.float32))
    np.testing.assert_array_equal(np.asarray(kept["doubled"]), np.full(STAGED, 2.0, np.float32))


def test_a_staged_input_changed_in_place_is_read_as_it_is_at_each_call(program):
    x = placed(np.arange(STAGED, dtype=np.float32), 16)
    check(program.run({"x": x}), x.copy())
    x *= 3
    check(program.run({"x": x}), x.copy())
    strided = np.arange(2 * STAGED, dtype=np.float32)[::2]
    check(program.run({"x": strided}), strided.copy())


def test_calls_from_several_threads_read_their_own_inputs(program):
    # each thread stages its inputs in arrays of its own: one thread's copy never replaces
    # another's input while that one's call runs
    failures = []

    def calls(fill: float) -> None:
        for _ in range(40):
            x = placed(np.full(STAGED, fill, np.float32), 16)
            outputs = program.run({"x": x})
            if not (np.all(outputs["same"] == fill) and np.all(outputs["doubled"] == 2 * fill)):
                failures.append(fill)

    threads = [threading.Thread(target=calls, args=(float(k),)) for k in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


@pytest.mark.parametrize("dtype", [np.float32, np.bool_, np.float16, ml_dtypes.bfloat16, np.uint64])
def test_an_arrays_address_is_where_its_memory_starts(dtype):
    array = np.zeros((3, 5), dtype)[1:]
    assert _address(array) == array.ctypes.data


def test_two_outputs_of_one_value_are_arrays_of_their_own(program):
    outputs = program.run({"x": np.ones(64, np.float32)})
    assert not np.shares_memory(outputs["doubled"], outputs["doubled_again"])


@pytest.mark.parametrize("elements, copied", [(COPIED_RESULT_BYTES // 4, True), (COPIED_RESULT_BYTES // 4 + 1, False)])
def test_small_results_are_copies_and_larger_ones_arrays_over_their_buffers(program, elements, copied):
    # either way a result keeps its values through later calls (a copy costs less than a mapping
    # up to COPIED_RESULT_BYTES)
    first = program.run({"x": np.full(elements, 1.0, np.float32)})
    second = program.run({"x": np.full(elements, 2.0, np.float32)})
    np.testing.assert_array_equal(first["doubled"], np.full(elements, 2.0, np.float32))
    np.testing.assert_array_equal(second["doubled"], np.full(elements, 4.0, np.float32))
    assert owns_its_memory(first["doubled"]) == copied
    assert first["doubled"].flags.writeable


TYPED = """
let x: [f32; N];
let b[i] = x[i] > 1.5;
let h[i] = x[i] as f16;
let c[i] = x[i] as i8;
let u[i] = (x[i] + 100.0) as u8;
let d[i] = (x[i] as f64) * 3.0;
let bf[i] = x[i] as bf16;
"""


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_results_of_every_element_type_are_writable_arrays_of_their_own(device):
    # Results are read through DLPack (host_memory.result_array); bfloat16, for which DLPack has
    # no type, is copied out. Each is above COPIED_RESULT_BYTES, so none is a copy for its size.
    outputs = ["b", "h", "c", "u", "d", "bf"]
    with einc.load(built(TYPED, outputs=outputs).vmfb, device=device) as typed:
        x = np.linspace(-3.0, 3.0, 5000).astype(np.float32)
        first = typed.run({"x": x})
        typed.run({"x": x[::-1].copy()})
    expected = {"b": x > 1.5, "h": x.astype(np.float16), "c": x.astype(np.int8),
                "u": (x + np.float32(100)).astype(np.uint8), "d": x.astype(np.float64) * 3.0,
                "bf": x.astype(ml_dtypes.bfloat16)}
    for name in outputs:
        assert first[name].dtype == expected[name].dtype, name
        np.testing.assert_array_equal(first[name], expected[name], err_msg=name)
        assert first[name].flags.writeable, name
    first["d"][0] = 7.0
    assert first["d"][0] == 7.0


def owns_its_memory(array: np.ndarray) -> bool:
    """Whether `array`, or the array it is a view of, allocated its memory (a result over
    IREE's buffer is a view of the owner that holds the buffer, no array)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array.flags.owndata


def test_a_released_result_leaves_no_reference_cycle(program):
    """A result array over its buffer is freed when its last reference goes, not at the next
    garbage collection: until then its buffer cannot return to the device's cache, and each call
    allocates (and page-faults) its results afresh (an owner made of a ctypes array over the
    mapping did this: the conv layer of benchmarks/ ran 2x slower on two cores)."""
    x = np.ones(COPIED_RESULT_BYTES, np.float32)
    np.testing.assert_array_equal(program.run({"x": x})["doubled"], x * 2)
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            del program.run({"x": x})["doubled"]
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert unreachable == 0


def test_results_outlive_later_calls_and_their_program():
    # Each result holds the buffer IREE wrote it into (through the mapping it was read from,
    # einc.runtime.host_memory._MappedResult); a released buffer goes back to the device's
    # cache, where the next call takes it.
    vmfb = built(SOURCE, outputs=["doubled"]).vmfb
    program = einc.load(vmfb, device="local-sync")
    fills = [1.0, 2.0, 3.0, 4.0, 5.0]
    results = []
    for fill in fills:
        results.append(program.run({"x": np.full(4096, fill, np.float32)})["doubled"])
        gc.collect()                  # whatever IREE left in reference cycles is released now
    program.close()
    del program
    gc.collect()
    for fill, result in zip(fills, results):
        np.testing.assert_array_equal(result, np.full(4096, 2 * fill, np.float32))


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
@pytest.mark.parametrize("offset", [0, 4])
def test_results_of_earlier_calls_keep_their_values(device, offset):
    # A result array owns the buffer it was read from: released early, the buffer went back to
    # the device's cache and the next call wrote its results into the arrays already returned
    # (seen as garbage in a stdlib test that compared its outputs after other programs ran).
    source = """
    use std::ml::*;
    let y: [f32; 2, 1, 3, 1, 2];
    let reshaped = reshape(y, [3, 0, -1]);
    let squeezed = squeeze(y, [1, 3]);
    let shifted[i, j, k, l, m] = y[i, j, k, l, m] + 1.0;
    """
    vmfb = built(source).vmfb                 # one build for every device and offset
    calls = []
    with einc.load(vmfb, device=device) as program:
        for call in range(4):
            y = np.arange(12, dtype=np.float32).reshape(2, 1, 3, 1, 2) + 100 * call
            calls.append((y, program.run({"y": placed(y.ravel(), offset).reshape(y.shape)})))
            gc.collect()
            scratch = [np.full(12, -1.0, np.float32) for _ in range(200)]  # noqa: F841 - takes freed memory
    for y, outputs in calls:
        np.testing.assert_array_equal(outputs["reshaped"], y.reshape(3, 1, 4))
        np.testing.assert_array_equal(outputs["squeezed"], y[:, 0, :, 0])
        np.testing.assert_array_equal(outputs["shifted"], y + 1)


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def test_buffers_kept_for_later_calls_stay_under_their_bound():
    # Twelve sizes of 32 MiB and more: a cache without a bound keeps all of them (~0.8 GB).
    vmfb = built(SOURCE, outputs=["doubled"]).vmfb
    with einc.load(vmfb, device="local-sync") as program:
        program.run({"x": np.ones(1024, np.float32)})
        before = resident_bytes()
        for step in range(12):
            x = np.ones(2 ** 23 + 4096 * step, np.float32)
            assert program.run({"x": x})["doubled"][-1] == 2.0
            del x
    assert resident_bytes() - before < 450 * 2 ** 20


MATMUL = """
let A: [f32; M, K];
let B: [f32; K, N];
let C[i, j] = sum[k](A[i, k] * B[k, j]);
"""


@pytest.fixture(scope="module", params=["local-sync", "local-task"])
def matmul(request):
    with einc.load(built(MATMUL).vmfb, device=request.param) as loaded:
        yield loaded


def test_an_input_passed_again_is_read_as_it_is_at_each_call(matmul):
    # The view of an input lent at one call is passed again when the same array comes back
    # (host_memory.DeviceArguments): changed in place, or given another shape in place, the
    # next call reads it as it is then.
    rng = np.random.default_rng(3)
    A = placed(rng.standard_normal(64 * 32, dtype=np.float32), 0).reshape(64, 32)
    B = rng.standard_normal((32, 48), dtype=np.float32)
    tolerance = {"rtol": 1e-5, "atol": 1e-5 * np.sqrt(64)}
    np.testing.assert_allclose(matmul(A=A, B=B)["C"], A @ B, **tolerance)
    A *= 3
    B[5] = 7
    np.testing.assert_allclose(matmul(A=A, B=B)["C"], A @ B, **tolerance)
    A.shape = (32, 64)
    B2 = rng.standard_normal((64, 16), dtype=np.float32)
    got = matmul(A=A, B=B2)["C"]
    assert got.shape == (32, 16)
    np.testing.assert_allclose(got, A @ B2, **tolerance)


def test_results_of_calls_on_the_same_inputs_are_arrays_of_their_own(matmul):
    rng = np.random.default_rng(4)
    A = rng.standard_normal((128, 128), dtype=np.float32)
    B = rng.standard_normal((128, 128), dtype=np.float32)
    expected = A @ B
    results = [matmul(A=A, B=B)["C"] for _ in range(4)]
    for k, result in enumerate(results):
        np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4 * np.sqrt(128))
        assert result.flags.writeable
        assert not any(np.shares_memory(result, other) for other in results[k + 1:] + [A, B])
    results[0][:] = -1
    A[:] = 0
    assert np.all(matmul(A=A, B=B)["C"] == 0)
    for result in results[1:]:
        np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4 * np.sqrt(128))


@pytest.mark.parametrize("rows, kept", [(16, True), (REMEMBERED_BYTES // (4 * 16) + 1, False)])
def test_the_program_keeps_only_small_inputs_of_its_last_call(matmul, rows, kept):
    # kept: the next call given the same array passes the view made for this one; a larger input
    # is released when the caller drops it, as before
    A = placed(np.ones(rows * 16, np.float32), 0).reshape(rows, 16)
    B = np.ones((16, 4), np.float32)
    assert matmul(A=A, B=B)["C"][-1, -1] == 16
    alive = weakref.ref(A)
    del A
    gc.collect()
    assert (alive() is not None) == kept
    matmul(A=np.ones((2, 16), np.float32), B=B)    # another array in its place
    gc.collect()
    assert alive() is None


def test_an_input_kept_from_an_earlier_call_is_checked_again_when_it_changed(matmul):
    # the same array object, its dtype or shape changed in place, is refused as any other
    A = placed(np.ones(32 * 16, np.float32), 0).reshape(32, 16)
    B = np.ones((16, 8), np.float32)
    assert np.all(matmul(A=A, B=B)["C"] == 16)
    A.dtype = np.int32
    with pytest.raises(RunError, match="input A: expected float32, got int32"):
        matmul(A=A, B=B)
    A.dtype = np.float32
    A.shape = (16, 32)
    with pytest.raises(RunError, match="named dim K is 32 from A but 16 from B"):
        matmul(A=A, B=B)
    A.shape = (32, 16)
    np.testing.assert_array_equal(matmul(A=A, B=B)["C"], A @ B)
