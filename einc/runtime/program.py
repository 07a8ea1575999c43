"""Loading an einc .vmfb and running its `main`."""
from __future__ import annotations

import atexit
import os
import re
import statistics
import sys
import time
import traceback
import weakref
from dataclasses import dataclass
from typing import Any, Mapping, TextIO

import numpy as np
import iree.runtime as rt

from einc import host_cpu
from einc.target import TARGETS
from einc.diagnostics import file_problem
from einc.module_file import ModuleFileError, archive_beside, load_module
from einc.runtime.cpu_device import CpuDeviceOptions
from einc.runtime.errors import FailedCheck, RunError
from einc.runtime.fenced_calls import main_invoker
from einc.runtime.host_memory import DeviceArguments, dtype_of, result_array
from einc.runtime.index_checks import bad_index
from einc.runtime.inputs import CheckedInputs, bind_inputs
from einc.runtime.parameters import parameters_module
from einc.runtime.printing import PRINT_LABEL_PREFIX, format_print, perform
from einc.runtime.readback import copy_of_mapped, to_numpy
from einc.runtime.signature import Signature, signature_from_reflection

KNOWN_DEVICES = ("local-task", "local-sync", "vulkan")
_FALLBACK_DEVICE = "local-task"  # for modules einc did not lower (no einc.target)
_ASSERT_MESSAGE_STARTS = ("assertion failed at ", "shape mismatch: ")
DEVICE_LIMIT = "device limit: "   # a host check that the sizes of this run exceed what the device runs


def load(path_or_bytes: str | os.PathLike | bytes, device: str | None = None,
         parameters: str | os.PathLike | None = None) -> "Program":
    """Open an einc module; `device` defaults to the one its target runs on. `parameters` is
    the weights archive (.irpa) of a module that has one; default: the one beside the module's file."""
    archive = None if parameters is None else os.fspath(parameters)
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return Program(bytes(path_or_bytes), "<module bytes>", device, archive)
    path = os.fspath(path_or_bytes)
    try:
        with open(path, "rb") as module_file:
            data = module_file.read()
    except OSError as err:
        raise RunError(f"cannot read {path}: {file_problem(err)}") from None
    return Program(data, path, device, archive or archive_beside(path))


def read_signature(vmfb: bytes, name: str) -> Signature:
    """The signature of a module, without opening a device."""
    module = _load_module(rt.VmInstance(), vmfb, name)
    return signature_from_reflection(dict(module.lookup_function("main").reflection), name)


@dataclass(frozen=True)
class Timing:
    """Seconds per call of `main` over `calls` timed calls (see Program.benchmark)."""
    calls: int
    min_s: float
    median_s: float


class _PrintRecorder:
    """Debug-sink callback collecting print traces as numpy copies.

    Kept apart from Program on purpose: a callback referring to the Program would form a cycle
    through the native HAL module that Python cannot collect.
    """

    def __init__(self) -> None:
        self._traces: list[tuple[int, int, list[np.ndarray]]] = []     # (print, part, arrays)

    def __call__(self, label: str, buffer_views: list) -> None:
        if not label.startswith(PRINT_LABEL_PREFIX):
            return  # traces einc did not emit (e.g. IREE's dispatch tracing flags) are not prints
        arrays = [copy_of_mapped(view, view.shape, dtype_of(view)) for view in buffer_views]
        index, _, part = label[len(PRINT_LABEL_PREFIX):].partition(".")
        self._traces.append((int(index), int(part or 0), arrays))

    @property
    def records(self) -> list[tuple[int, list[np.ndarray]]]:
        """(print, arrays) in the order the prints came, each with the parts traced apart
        (einc.mlir.effects, IREE-271), which may come in any order: the n-th of each part."""
        parts: dict = {}
        for index, part, arrays in self._traces:
            parts.setdefault((index, part), []).append(arrays)
        seen: dict = {}
        out = []
        for index, part, arrays in self._traces:
            if part == 0:
                n = seen[index] = seen.get(index, -1) + 1
                joined = list(arrays)
                for k in range(1, len(self._traces)):
                    more = parts.get((index, k), [])
                    if n >= len(more):
                        break
                    joined += more[n]
                out.append((index, joined))
        return out

    def clear(self) -> None:
        self._traces.clear()


class Program:
    """A loaded module: call it with the inputs by name, get the outputs by name."""

    def __init__(self, vmfb: bytes, name: str, device: str | None = None, parameters: str | None = None):
        self.name = name
        self._vmfb = vmfb
        self._instance = rt.VmInstance()
        self._module = _load_module(self._instance, vmfb, name)
        self.signature: Signature = signature_from_reflection(
            dict(self._module.lookup_function("main").reflection), name)
        self.device = _choose_device(self.signature.target, device)
        check_cpu_features(self.signature, name)
        self._archive = parameters
        self._parameters = None if self.signature.parameters is None else \
            parameters_module(self._instance, self.signature.parameters, parameters, name)
        self._recorder = _PrintRecorder()
        self._inputs = CheckedInputs(self.signature)
        self._output_dtypes = [np.dtype(spec.dtype) for spec in self.signature.outputs]
        self._open_context()
        _open_programs.add(self)

    def _open_context(self) -> None:
        self._hal_device = _open_device(self.device)
        try:
            hal = rt.create_hal_module(self._instance, self._hal_device,
                                       debug_sink=rt.HalModuleDebugSink(self._recorder))
            modules = [hal, self._module] if self._parameters is None else [hal, self._parameters, self._module]
            self._context = rt.VmContext(self._instance, modules=modules)
            # the CPU devices' results are read from their buffer views (host_memory.result_array)
            self._main = main_invoker(self._context, self._hal_device, self._module.lookup_function("main"),
                                      self.device == "vulkan")
            # Vulkan takes the bound inputs as they are (_device_arguments)
            self._arguments = None if self.device == "vulkan" else DeviceArguments(
                self._hal_device, self.signature.input_alignment,
                [spec.name in self.signature.read_once for spec in self.signature.inputs])
        except Exception as err:  # noqa: BLE001 - whatever IREE raises, the module cannot run here
            raise RunError(_load_failure(self.name, self.device, str(err))) from None

    def __call__(self, device_outputs: bool = False, **inputs: Any) -> dict[str, Any]:
        return self.run(inputs, device_outputs=device_outputs)

    def __reduce__(self):
        """A program pickles as its module bytes, name, device, weights archive path and
        signature; the other side loads the module again (its own device) and checks it has the
        signature sent."""
        return _reloaded, (self._vmfb, self.name, self.device, self.signature, self._archive)

    def run(self, inputs: Mapping[str, Any], stdout: TextIO | None = None,
            device_outputs: bool = False) -> dict[str, Any]:
        """Check and bind `inputs`, call `main`, write its prints to `stdout`, return the outputs:
        NumPy arrays, or with `device_outputs` IREE device arrays left where `main` wrote them,
        which later calls take as inputs without a copy through the host (on the CPU devices
        any program's calls, on Vulkan this program's: each has a device of its own)."""
        if self._main is None:
            raise RunError(f"{self.name} was closed")
        bound = self._inputs.bind(inputs)
        self._check_on_this_device(bound)
        for attempt in range(_RUNS_ON_A_LOST_DEVICE + 1):
            try:
                # One expression: a local of run() holding IREE's results would be kept alive by an
                # earlier lost device's traceback, and freed after its device it crashed the process.
                return self._returned(self._call_printing(self._device_arguments(bound, not device_outputs),
                                                          stdout), bound, device_outputs)
            except Exception as err:  # noqa: BLE001 - only a lost device is taken here
                if not self._lost_device(err):
                    raise
                if attempt == _RUNS_ON_A_LOST_DEVICE:
                    raise RunError(f"the {self.device} device was lost running {self.name}") from None
                print(f"einc: the {self.device} device was lost; running {self.name} again on a new one",
                      file=sys.stderr)
                _keep_after_failure(self._hal_device)
                self._open_context()
        raise AssertionError("unreachable")

    def benchmark(self, inputs: Mapping[str, Any], repeat: int,
                  stdout: TextIO | None = None) -> tuple[dict[str, np.ndarray], "Timing"]:
        """Run `main` once to warm up (its prints are written), then `repeat` times more, each
        timed from the call to its completion with the inputs already on the device and the
        results left there. Returns the last call's outputs and the timing."""
        if self._main is None:
            raise RunError(f"{self.name} was closed")
        bound = bind_inputs(self.signature, inputs)
        args = self._device_arguments(bound)
        if self.device == "vulkan":
            args = [rt.asdevicearray(self._hal_device, a) if isinstance(a, np.ndarray) else a for a in args]
        results = self._call_printing(args, stdout)
        seconds = []
        for _ in range(repeat):
            start = time.perf_counter()
            results = self._call(args)
            seconds.append(time.perf_counter() - start)
            self._recorder.clear()       # each call prints the same: shown once above
        results = _as_tuple(results)
        failure = self._index_failure(results)
        if failure is not None:
            results = None                       # (see _returned)
            raise RunError(failure)
        return self._outputs(results, bound), Timing(repeat, min(seconds), statistics.median(seconds))

    def _call_printing(self, args: list, stdout: TextIO | None):
        """`main` on `args`, then its prints written to `stdout` (none when the device was lost:
        the call runs again)."""
        self._recorder.clear()
        failure = None
        try:
            return self._call(args)
        except RunError as err:
            failure = err
            raise self._with_values(err) from None
        except RuntimeError as err:
            if self._lost_device(err):
                self._recorder.clear()
            raise
        finally:
            self._write_prints(stdout or sys.stdout, failure)

    def _lost_device(self, err: Exception) -> bool:
        """IREE reports a lost Vulkan device as VK_ERROR_DEVICE_LOST, or, when the loss reached
        a fence first, as a bare DATA_LOSS status (seen in a fresh clone's test run)."""
        text = str(err)
        return self.device == "vulkan" and ("VK_ERROR_DEVICE_LOST" in text or "DATA_LOSS;" in text)

    def _call(self, args: list):
        try:
            return self._main(*args)
        except (RuntimeError, ValueError) as err:
            failure = _as_run_error(err)
            # The frames of the failed call hold IREE's objects of the call (argument lists,
            # fences) in a cycle with `err`. Left to the garbage collector they could be freed
            # after their device, which segfaulted (a Vulkan device closed after a failed assert).
            traceback.clear_frames(err.__traceback__)
        raise failure

    def _write_prints(self, stdout: TextIO, failure: RunError | None) -> None:
        """In program order: IREE schedules a print once its values are ready, which need not be
        where the program has it. After a failed assert, only the prints before it. The values
        of an assert's message are not prints (_with_values). A call that printed nothing
        writes nothing (and saves a few us of a small call)."""
        if not self._recorder.records:
            return
        cut = self.signature.asserts.get(failure.text) if isinstance(failure, FailedCheck) else None
        messages = set(self.signature.assert_values.values())
        for index, arrays in sorted(self._recorder.records, key=lambda record: record[0]):
            if (cut is None or index < cut) and index not in messages:
                perform(self.signature.prints[index], arrays, stdout)
        stdout.flush()

    def _with_values(self, failure: RunError) -> RunError:
        """A failed assert whose message shows run-time values, with the values it traced."""
        index = self.signature.assert_values.get(failure.text) if isinstance(failure, FailedCheck) else None
        traced = [arrays for k, arrays in self._recorder.records if k == index]
        if not traced:
            return failure
        return FailedCheck(f"assertion failed at {failure.location}: "
                           f"{format_print(self.signature.prints[index], traced[-1])}")

    def _device_arguments(self, bound: list, reuse: bool = True) -> list:
        """On the CPU devices arrays go in as buffer views over their own memory where they can,
        else over staging arrays kept for later calls where `reuse` (einc.runtime.host_memory);
        Vulkan takes them as they are and copies them."""
        return bound if self._arguments is None else self._arguments(bound, reuse)

    def _check_on_this_device(self, bound: list) -> None:
        for spec, value in zip(self.signature.inputs, bound):
            if isinstance(value, rt.DeviceArray) and value._device is not self._hal_device:
                raise RunError(f"input {spec.name}: a device array of another {self.device} device; each "
                               f"Vulkan program has its own, so pass it through the host (numpy.asarray)")

    def _returned(self, results, bound: list, device_outputs: bool) -> dict[str, Any]:
        results = _as_tuple(results)
        failure = self._index_failure(results)
        if failure is not None:
            # raised with no IREE result alive in a frame of the traceback (run() holds them in
            # no local): freed after their device, Vulkan's results segfaulted
            results = None
            raise RunError(failure)
        return self._device_outputs(results) if device_outputs else self._outputs(results, bound)

    def _index_failure(self, results: tuple) -> str | None:
        """The message of the first index check that failed, None when every index was in range."""
        specs, checks = self.signature.outputs, self.signature.index_checks
        if len(results) != len(specs) + len(checks):
            raise AssertionError(f"main returned {len(results)} values for outputs {[s.name for s in specs]} "
                                 f"and {len(checks)} index checks")
        return bad_index(checks, [self._status(status) for status in results[len(specs):]])

    def _device_outputs(self, results) -> dict[str, rt.DeviceArray]:
        arrays = [self._device_array(result) for result in self._results(results)]
        for array in arrays:
            # The array holds the program's VM objects: freed after its program was closed, a
            # Vulkan device array crashed the process. Set after __init__'s attributes, this is
            # released after the buffer.
            array._einc_program_objects = (self._instance, self._module, self._context, self._hal_device)
        return dict(zip((spec.name for spec in self.signature.outputs), arrays))

    def _results(self, results: tuple) -> tuple:
        """The outputs among `main`'s results (the index checks' statuses follow them)."""
        return results[:len(self.signature.outputs)]

    def _outputs(self, results, bound: list) -> dict[str, np.ndarray]:
        results = self._results(results)
        specs = self.signature.outputs
        lent = [value for value in bound if isinstance(value, np.ndarray)]
        if self._arguments is not None:
            lent += self._arguments.staged()
        arrays: list[np.ndarray] = []
        for result in results:
            arrays.append(to_numpy(result) if self.device == "vulkan" else
                          result_array(self._hal_device, _buffer_view(result), lent, arrays))
        # unsigned results come back as the signed integers of the same bits (a view of a string's
        # dtype on every result cost ~0.8 us each)
        return {spec.name: array if array.dtype == dtype else array.view(dtype)
                for spec, dtype, array in zip(specs, self._output_dtypes, arrays)}

    def _status(self, result) -> np.ndarray:
        """An index check's status vector (an array of its own)."""
        return to_numpy(result) if self.device == "vulkan" else \
            result_array(self._hal_device, _buffer_view(result), [], [])

    def _device_array(self, result) -> rt.DeviceArray:
        """A result of `main` as IREE's device array (the CPU devices return buffer views)."""
        if isinstance(result, rt.HalBufferView):
            return rt.DeviceArray(self._hal_device, result, implicit_host_transfer=True)
        return result

    def close(self) -> None:
        """Release the VM objects now, in dependency order (left alive at exit they crash or warn)."""
        self._arguments = None     # the lent inputs' views, before the device they are views of
        self._main = self._context = self._hal_device = self._module = self._parameters = self._instance = None
        _open_programs.discard(self)

    def __enter__(self) -> "Program":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _buffer_view(result) -> rt.HalBufferView:
    """A result's buffer view: what a fenced `main` returns, or the view of IREE's device array
    (a module built before the CPU targets took fences)."""
    return result if isinstance(result, rt.HalBufferView) else result._buffer_view


def _as_tuple(results) -> tuple:
    """IREE returns None for no results, the value itself for one."""
    if isinstance(results, tuple):
        return results
    return () if results is None else (results,)


def _reloaded(vmfb: bytes, name: str, device: str, signature: Signature, archive: str | None = None) -> Program:
    program = Program(vmfb, name, device, archive)
    if program.signature != signature:
        raise RunError(f"{name} unpickled with a signature other than the one pickled")
    return program


def check_cpu_features(signature: Signature, name: str) -> None:
    """RunError if the module's code needs instruction set extensions this CPU lacks (running
    it would stop the process at the first such instruction). Where this CPU's extensions are
    unknown (not Linux) nothing can be told and the module runs."""
    host = set(host_cpu.isa_features())
    missing = [f for f in signature.cpu_features or () if f not in host]
    if host and missing:
        shown = " ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
        raise RunError(f"{name} was built for llvm-cpu on a CPU with {shown}, which this CPU lacks; rebuild "
                       f"it on this machine, or build for llvm-cpu-generic to run modules on other machines")


def _load_module(instance: rt.VmInstance, sealed: bytes, name: str) -> rt.VmModule:
    """The module in `sealed`, which IREE only sees once its integrity digest matched."""
    try:
        return load_module(instance, sealed, name)
    except ModuleFileError as err:
        raise RunError(str(err)) from None


# IREE-32: a kernel takes its run-time sizes and buffer offsets as push constants, of which Vulkan
# guarantees 128 bytes; a kernel needing more cannot load, and the message says what to do.
_PUSH_CONSTANTS = re.compile(r"push_constant_ranges\[\d+\] end offset (\d+) exceeds device limit (\d+)")


def _load_failure(name: str, device: str, text: str) -> str:
    """Why a module cannot be loaded on `device`, with what to do where einc knows it."""
    push = _PUSH_CONSTANTS.search(text)
    if push:
        return (f"cannot load {name} on the {device} device: one of its kernels takes {push.group(1)} bytes of "
                f"run-time sizes (push constants), more than this device allows ({push.group(2)}); fix the "
                f"program's run-time sizes at build time (einc build --dim NAME=SIZE), or build for llvm-cpu")
    return f"cannot load {name} on the {device} device ({text.strip().splitlines()[0] if text.strip() else 'no reason given'})"


def _first_line(err: Exception) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def _choose_device(target: str | None, requested: str | None) -> str:
    if requested is not None and requested not in KNOWN_DEVICES:
        raise RunError(f"unknown device {requested!r}; expected one of {', '.join(KNOWN_DEVICES)}")
    if target is None:
        return requested or _FALLBACK_DEVICE
    known = TARGETS.get(target)
    if known is None:
        raise RunError(f"the module was built for target {target!r}, which this runner does not know")
    allowed = known.devices
    if requested is None:
        return allowed[0]
    if requested not in allowed:
        raise RunError(f"the module was built for {target} and runs on {' or '.join(allowed)}, not {requested}")
    return requested


# IREE-28: a Vulkan device shared by many programs in turn is lost after a few dozen, so each
# Vulkan program opens a device of its own (~20 ms); the CPU device is shared.
_DEVICE_PER_PROGRAM = ("vulkan",)
# A device can still be lost under load, rarely: `run` says so on stderr and runs the call again
# on a new device, twice at most, then it is a RunError. Only Program.run does (its inputs are
# host arrays). Details: docs/DECISIONS.md, Running on Vulkan.
_RUNS_ON_A_LOST_DEVICE = 2


# A lost device is kept until the process ends rather than destroyed (never seen to be safe).
# A device whose call failed otherwise (an assert) closes as usual (Program._call frees the
# call's objects first): kept, an idle Vulkan device spins two threads.
_devices_kept_after_failure: list = []


def _keep_after_failure(device) -> None:
    if device is not None and device not in _devices_kept_after_failure:
        _devices_kept_after_failure.append(device)


# The CPU devices keep the buffers a call released for the calls after it (IREE's caching
# allocator): through malloc every call page-faulted large buffers in afresh (~1 ms per 4 MB).
# At most 256 MiB of released buffers are kept, so a program run at many sizes stays bounded.
_CPU_ALLOCATOR = "caching:device_local=*;256mib;64"
_cpu_devices: dict[str, rt.HalDevice] = {}


def _open_device(device: str) -> rt.HalDevice:
    try:
        if device in _DEVICE_PER_PROGRAM:
            return rt.get_device(device, cache=False)
        if device not in _cpu_devices:
            CpuDeviceOptions.from_environment().apply()
            _cpu_devices[device] = rt.get_driver(device).create_device_by_uri(device, allocators=[_CPU_ALLOCATOR])
        return _cpu_devices[device]
    except (ValueError, RuntimeError) as err:
        raise RunError(f"cannot open the {device} device: {_first_line(err)}") from None


# IREE-21: the Vulkan HAL refuses a dispatch that binds an empty buffer (a run-time size of 0);
# einc/mlir/empty_guards.py says why einc does not work around it.
_EMPTY_VULKAN_BINDING = "resolved to an empty buffer range"


def _as_run_error(err: Exception) -> Exception:
    """Failed asserts, shape checks and device limits become RunErrors, and so does a Vulkan
    dispatch over an empty tensor; anything else stays an internal error."""
    text = str(err)
    marker = "FAILED_PRECONDITION; "
    if marker in text:
        message = text.split(marker, 1)[1].rstrip().rstrip(";").strip()
        if message.startswith(_ASSERT_MESSAGE_STARTS):
            return FailedCheck(message)
        if message.startswith(DEVICE_LIMIT):
            return RunError(message[len(DEVICE_LIMIT):])
    if _EMPTY_VULKAN_BINDING in text:
        return RunError("a tensor of this run is empty (a size is 0 or a range has no element), which "
                        "the vulkan device cannot dispatch over; run the llvm-cpu build "
                        "for these sizes")
    return err


# Programs still open at interpreter exit are closed first: IREE's native objects alive during
# shutdown produce nanobind leak warnings, and a segfault when iree.compiler.ir was also imported.
_open_programs: "weakref.WeakSet[Program]" = weakref.WeakSet()


def open_programs() -> set:
    """The Programs not closed yet."""
    return set(_open_programs)


@atexit.register
def _close_open_programs() -> None:
    for program in list(_open_programs):
        program.close()
