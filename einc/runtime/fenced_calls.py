"""Calling a `main` that takes fences, and waiting for it without spinning.

IREE-52: IREE's host wait spins: the synchronous `main`'s `hal.fence.await`, and `HalFence.wait`
too, hold the calling thread in a `pause` loop for a few ms before it sleeps (no run-time flag
reaches it). On a local-task CPU device the device is IREE's task workers, so a caller spinning
beside them on a machine with as many cores as workers takes a core from them. The CPU targets
therefore build `main` with IREE's async-external execution model (einc.target): it queues the
work, signals a fence when done and returns. `FencedMain` passes it a fence of its own and
polls it, sleeping between polls for a fraction of the time waited so far.
docs/DECISIONS.md, "The caller waits without spinning".
"""
from __future__ import annotations

import time

import iree.runtime as rt
# What IREE's FunctionInvoker packs arguments and converts results with (iree/runtime/function.py
# of the pinned release), so a fenced call takes and returns the same values as a synchronous one.
from iree.runtime._binding import ArgumentPacker, InvokeContext, _invoke_statics
from iree.runtime.function import Invocation, _extract_vm_sequence_to_python

from einc.runtime.timer_slack import fine_sleeps

# IREE's reflection of a function built with the async-external model: two fences follow the
# arguments, the first waited on before the work starts, the second signalled when it is done.
_FENCED_MODEL = "coarse-fences"
# Sleep between polls: a tenth of the time waited so far (so a call ends at most ~10% after its
# work did), at least 20 us and at most 1 ms, with a timer slack of 1 us (timer_slack).
_SLEEP_FRACTION = 0.1
_SHORTEST_SLEEP_S = 20e-6
_LONGEST_SLEEP_S = 1e-3
# Before polling, a call whose work is still running after `main` returned first sleeps
# _FIRST_SLEEP of the work time estimated from earlier calls of the same argument shapes
# (FencedMain._learn): each poll's wake-up cost the caller ~20-25 us of CPU on a loaded
# machine, taken from the cores the workers use (a 512 matmul polled ~16 times a call, the MLP
# ~20). The estimate is the wait of a call whose work outlasted its first sleep, at most
# _GROWTH times the last estimate (a call slowed by the load raises it little, a faster call
# lowers it at once), and half the estimate after a call whose work was done when its first
# sleep ended (that call's wait is the sleep's own overshoot, not the work: learned, it made the
# estimate grow, docs/DECISIONS.md). It is at most _LONGEST_SLEEP_S: on a loaded machine a
# sleep of 4 ms ended 4-20 ms later (one of 1 ms on time), the thread waiting for a core, while
# the polls' short sleeps woke in time. At most _KEPT_SHAPES argument shapes are learned.
_FIRST_SLEEP = 0.8
_GROWTH = 1.25
_KEPT_SHAPES = 64


def takes_fences(function: rt.VmFunction) -> bool:
    """Whether `function` was built with the async-external model (what the module says of itself:
    a module built before einc's CPU targets had it still runs)."""
    return dict(function.reflection).get("iree.abi.model") == _FENCED_MODEL


def main_invoker(context: rt.VmContext, device: rt.HalDevice, function: rt.VmFunction,
                 device_arrays: bool = True):
    """A callable running `function` on `device` and returning what IREE's FunctionInvoker
    returns (None, a value, or a tuple), once its results are ready; without `device_arrays`
    a fenced `main`'s buffers come back as the HalBufferViews themselves."""
    if takes_fences(function):
        return FencedMain(context, device, function, device_arrays)
    return rt.FunctionInvoker(context, device, function)


class FencedMain:
    """An async-external `main` called synchronously: the arguments packed as FunctionInvoker
    packs them, then a fence already reached (nothing to wait for) and one signalled when the
    results are ready, which is polled (`wait_without_spinning`)."""

    def __init__(self, context: rt.VmContext, device: rt.HalDevice, function: rt.VmFunction,
                 device_arrays: bool = True):
        self._context, self._device, self._function = context, device, function
        self._device_arrays = device_arrays
        self._packer = ArgumentPacker(_invoke_statics, None)
        self._ready = rt.HalFence(1)
        self._work_times: dict[tuple, float] = {}   # argument shapes -> estimated seconds

    def __call__(self, *args):
        arguments = self._packer.pack(InvokeContext(self._device), args, {})
        # A semaphore per call: one that failed stays failed, and creating one costs ~0.3 us.
        semaphore = self._device.create_semaphore(0)
        done = rt.HalFence.create_at(semaphore, 1)
        arguments.push_ref(self._ready.ref)
        arguments.push_ref(done.ref)
        results = rt.VmVariantList(4)
        self._context.invoke(self._function, arguments, results)
        # (query raises RuntimeError where the work failed)
        if semaphore.query() < 1:           # the work runs on (local-task), as not on local-sync
            shapes = _shapes(args)
            estimate = self._work_times.get(shapes)
            first_sleep = 0.0 if estimate is None or estimate < _SHORTEST_SLEEP_S else \
                min(_FIRST_SLEEP * estimate, _LONGEST_SLEEP_S)
            start = time.perf_counter()
            outlasted = wait_without_spinning(semaphore, 1, done, first_sleep)
            self._learn(shapes, estimate, outlasted, time.perf_counter() - start)
        returned = self._converted(results)
        return None if not returned else returned[0] if len(returned) == 1 else tuple(returned)

    def _learn(self, shapes: tuple, estimate: float | None, outlasted: bool, waited: float) -> None:
        if estimate is None:
            learned = waited
        elif outlasted:
            learned = min(waited, _GROWTH * estimate)
        else:
            learned = estimate / 2
        if shapes in self._work_times or len(self._work_times) < _KEPT_SHAPES:
            self._work_times[shapes] = learned

    def _converted(self, results: rt.VmVariantList) -> list:
        """`results` as FunctionInvoker returns them: a buffer view as a DeviceArray. einc's `main`
        returns buffer views only, taken here directly (IREE's general conversion cost 0.3-0.5 us
        more a result right after a kernel); any other value goes through that conversion."""
        try:
            views = [results.get_as_object(i, rt.HalBufferView) for i in range(len(results))]
        except ValueError:       # a value that is no ref
            views = [None]
        if any(view is None for view in views):     # a ref of another type
            return _extract_vm_sequence_to_python(Invocation(self._device), results, None)
        if not self._device_arrays:  # (a DeviceArray each cost 3-4 us more right after a kernel)
            return views
        return [rt.DeviceArray(self._device, view, implicit_host_transfer=True) for view in views]


def wait_without_spinning(semaphore: rt.HalSemaphore, value: int, fence: rt.HalFence,
                          first_sleep: float = 0.0) -> bool:
    """Returns once `semaphore` reached `value` (RuntimeError if it failed), after sleeping
    `first_sleep` seconds first if it had not; True when it had not reached it then (the work
    outlasted the first sleep). Interrupted (Ctrl-C), it waits for the work through `fence`
    first: the work reads and writes memory the caller owns (lent inputs), which must outlive it."""
    start = time.perf_counter()
    try:
        with fine_sleeps():
            if first_sleep and semaphore.query() < value:
                time.sleep(first_sleep)
            if semaphore.query() >= value:
                return False
            while semaphore.query() < value:
                waited = time.perf_counter() - start
                time.sleep(min(max(waited * _SLEEP_FRACTION, _SHORTEST_SLEEP_S), _LONGEST_SLEEP_S))
    except RuntimeError:
        raise  # the work failed: none of it runs any more
    except BaseException:
        fence.wait()
        raise
    return True


def _shapes(args: tuple) -> tuple:
    """What a call's work time depends on, as far as its arguments tell: their shapes, and the
    values of number arguments (a step count)."""
    return tuple(tuple(arg.shape) if hasattr(arg, "shape") else arg for arg in args)
