"""A CPU module's `main` takes fences and the runner waits for it without spinning
(einc.runtime.fenced_calls; docs/DECISIONS.md, "The caller waits without spinning")."""
import dataclasses
import threading
import time

import numpy as np
import pytest
import iree.runtime as rt

import einc
import einc.runtime.fenced_calls as fenced_calls
from einc.runtime import RunError
from einc.runtime.fenced_calls import FencedMain, takes_fences, wait_without_spinning
from einc.target import get
from tests.programs import built

MATMUL = """
let A: [f32; M, K];
let B: [f32; K, N];
let C[i, j] = sum[k](A[i, k] * B[k, j]);
"""
# prints, a run-time assert, an index check and two outputs, through a fenced `main`
CHECKED = """
let x: [f32; N];
let idx: [i32; 2];
let total = sum[i](x[i]);
print("total = {total:.1f}");
assert(total > 0.0, "the total must be positive, it is {total}");
let picked[j] = x[idx[j]] * 2.0;
"""


def _matrices(n: int):
    rng = np.random.default_rng(7)
    return rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)


@pytest.fixture(scope="module")
def matmul():
    with einc.load(built(MATMUL).vmfb) as program:
        yield program


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic"])
def test_cpu_modules_take_fences_and_match_numpy(target):
    A, B = _matrices(96)
    with einc.load(built(MATMUL, target).vmfb) as program:
        assert takes_fences(program._module.lookup_function("main"))
        assert isinstance(program._main, FencedMain)
        got = program(A=A, B=B)["C"]
    np.testing.assert_allclose(got, A @ B, rtol=1e-4, atol=1e-4 * np.sqrt(96))


@pytest.mark.parametrize("device", ["local-task", "local-sync"])
def test_prints_asserts_and_index_checks_through_fences(device, capsys):
    x = np.array([1.0, 2.0, 4.0], np.float32)
    with einc.load(built(CHECKED).vmfb, device=device) as program:
        out = program(x=x, idx=np.array([2, 0], np.int32))
        np.testing.assert_array_equal(out["picked"], x[[2, 0]] * 2)
        assert out["total"] == pytest.approx(7.0)
        assert capsys.readouterr().out == "total = 7.0\n"
        with pytest.raises(RunError, match="the total must be positive, it is -7"):
            program(x=-x, idx=np.array([0, 1], np.int32))
        with pytest.raises(RunError, match="index 3 out of range"):
            program(x=x, idx=np.array([3, 0], np.int32))
        np.testing.assert_array_equal(program(x=x, idx=np.array([1, 1], np.int32))["picked"], x[[1, 1]] * 2)


def test_device_outputs_feed_the_next_call(matmul):
    A, B = _matrices(64)
    first = matmul.run({"A": A, "B": B}, device_outputs=True)["C"]
    second = matmul.run({"A": first, "B": B})["C"]
    np.testing.assert_allclose(second, (A @ B) @ B, rtol=1e-3, atol=1e-3)


def test_a_module_built_without_fences_still_runs():
    """A module saved before the CPU targets took fences is called the synchronous way."""
    llvm_cpu = get("llvm-cpu")
    unfenced = dataclasses.replace(llvm_cpu, flags=tuple(f for f in llvm_cpu.flags if "execution-model" not in f))
    A, B = _matrices(32)
    with einc.load(einc.compile(MATMUL, unfenced).vmfb) as program:
        assert not takes_fences(program._module.lookup_function("main"))
        assert isinstance(program._main, rt.FunctionInvoker)
        np.testing.assert_allclose(program(A=A, B=B)["C"], A @ B, rtol=1e-4, atol=1e-3)


def _device():
    return rt.get_driver("local-task").create_device_by_uri("local-task")


def test_the_wait_sleeps_until_another_thread_signals():
    """Ten waits of 5 ms for a signal from another thread take the waiting thread a few
    wake-ups of CPU each, not the 50 ms a polling loop that never sleeps would. (Load on the
    machine delays the signals, which lengthens the waits, not the CPU their polls take.)"""
    device = _device()
    cpu = time.thread_time()
    for _ in range(10):
        semaphore = device.create_semaphore(0)
        timer = threading.Timer(0.005, semaphore.signal, args=(1,))
        timer.start()
        wait_without_spinning(semaphore, 1, rt.HalFence.create_at(semaphore, 1))
        assert semaphore.query() == 1
        timer.join()
    cpu = time.thread_time() - cpu
    assert cpu < 0.01, f"the waiting thread used {cpu * 1e3:.1f} ms of CPU"


def test_a_failed_semaphore_is_a_runtime_error():
    semaphore = _device().create_semaphore(0)
    semaphore.fail("the work failed")
    with pytest.raises(RuntimeError, match="the work failed"):
        wait_without_spinning(semaphore, 1, rt.HalFence.create_at(semaphore, 1))


def test_an_interrupted_wait_lets_the_work_finish_first(monkeypatch):
    """Ctrl-C during the wait: the work still uses the caller's memory, so it is waited for."""
    semaphore = _device().create_semaphore(0)
    timer = threading.Timer(0.05, semaphore.signal, args=(1,))

    def interrupted(seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(fenced_calls.time, "sleep", interrupted)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        wait_without_spinning(semaphore, 1, rt.HalFence.create_at(semaphore, 1))
    assert semaphore.query() == 1
    timer.join()


def test_results_other_than_buffer_views_are_converted_as_irees_invoker_converts_them(matmul):
    # einc's `main` returns buffer views only, which the fenced call takes directly; a list with
    # any other value goes through IREE's own conversion
    A, B = _matrices(8)
    number = rt.VmVariantList(1)
    number.push_int(3)
    assert matmul._main._converted(number) == [3]
    view = matmul(A=A, B=B, device_outputs=True)["C"]._buffer_view
    both = rt.VmVariantList(2)
    both.push_ref(view.ref)
    both.push_list(rt.VmVariantList(0))
    converted = matmul._main._converted(both)
    assert isinstance(converted[0], rt.DeviceArray)
    np.testing.assert_allclose(converted[0].to_host(), A @ B, rtol=1e-5, atol=1e-5)
    assert not isinstance(converted[1], rt.DeviceArray)


@pytest.mark.parametrize("signal_after, first_sleep, outlasted", [(0.05, 0.005, True), (0.002, 0.03, False)])
def test_a_first_sleep_says_whether_the_work_outlasted_it(signal_after, first_sleep, outlasted):
    semaphore = _device().create_semaphore(0)
    timer = threading.Timer(signal_after, semaphore.signal, args=(1,))
    start = time.perf_counter()
    timer.start()
    assert wait_without_spinning(semaphore, 1, rt.HalFence.create_at(semaphore, 1), first_sleep) == outlasted
    assert semaphore.query() == 1
    assert time.perf_counter() - start >= max(signal_after, first_sleep)
    timer.join()


def test_the_work_time_is_learned_per_shape_lowered_at_once_and_raised_little(matmul):
    main = matmul._main
    shapes, other = ((8, 8), (8, 8)), ((16, 8), (8, 4))
    main._work_times.clear()
    main._learn(shapes, None, True, 0.004)            # a first call: its wait
    assert main._work_times[shapes] == 0.004
    main._learn(shapes, 0.004, True, 0.002)           # a faster call lowers it at once
    assert main._work_times[shapes] == 0.002
    main._learn(shapes, 0.002, True, 0.010)           # a slower one raises it by a quarter at most
    assert main._work_times[shapes] == pytest.approx(0.0025)
    main._learn(shapes, 0.0025, False, 0.007)         # done when the first sleep ended: halved
    assert main._work_times[shapes] == pytest.approx(0.00125)
    assert other not in main._work_times
    for k in range(2 * fenced_calls._KEPT_SHAPES):   # a bounded number of shapes
        main._learn(((k, 1),), None, True, 0.001)
    assert len(main._work_times) == fenced_calls._KEPT_SHAPES
    main._work_times.clear()


@pytest.mark.parametrize("device, learns", [("local-task", True), ("local-sync", False)])
def test_calls_learn_their_work_time_where_it_outlasts_main(device, learns):
    # local-sync runs the work inside `main`, so its calls never wait (nor sleep); local-task's
    # calls of shapes taking a few ms each learn their own estimate, and the results stay right.
    # 768, not 384: on an AVX-512 host under a loaded test run, a 384 matmul was once done before
    # `main` returned, so no call waited and nothing was learned.
    with einc.load(built(MATMUL).vmfb, device=device) as program:
        for n in (768, 64, 768, 64, 768):
            A, B = _matrices(n)
            np.testing.assert_allclose(program(A=A, B=B)["C"], A @ B, rtol=1e-3, atol=1e-3 * np.sqrt(n))
        learned = program._main._work_times
        assert (((768, 768), (768, 768)) in learned) == learns
        assert all(seconds > 0 for seconds in learned.values())
