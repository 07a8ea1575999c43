"""Arguments and results of `main` on the CPU devices, whose device memory is host memory.

Handing IREE a NumPy array makes it allocate a device buffer and copy the array into it, and
reading a result back copies it out again: at n = 1024 a matmul spent a third of its time in
these copies and in the page faults of their fresh allocations (benchmarks/, the matmul rows).
Here an input whose memory IREE's kernels can read in place is lent to IREE as it is, and a
result is returned as a NumPy array over the buffer IREE wrote it into.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np
import iree.runtime as rt
from iree.runtime import BufferUsage, HalElementType, MemoryType
from iree.runtime.array_interop import map_dtype_to_element_type

# IREE-31: IREE's CPU kernels assume every buffer starts on the alignment they were built for
# (the module's `input_alignment`: 16 bytes for einc's CPU targets, IREE's default 64 before),
# and a lent array that starts elsewhere crashes the process: such an input is copied. One that
# starts on it but not on a cache line is lent only from half a core's L2 up (512 KiB on Zen 4):
# each of its vector loads then spans two lines, which costs where the data sits in L1 or L2
# and is read again and again (an LSTM's U, 256 KB, read every step: 16% slower lent at 16
# bytes), not where it streams through (the RNN's x, 2.5-25 MB, read once: its copy was 15% of
# the call; a GRU's three 1,000 x 256 inputs, 1 MB each, ~3%). An input the module reads once
# (its `read_once`: a matmul's operands, which only their packs read) is lent off a line at any
# size: the pack of a 256 x 256 matmul's inputs ran as fast from 16 bytes as from a line, and
# their copies cost 4-5% of the call.
CACHE_LINE = 64
LENT_OFF_THE_LINE = 1 << 19
# A result of at most this many bytes is returned as a copy: mapping its buffer for an array
# over it, and checking that array against the call's other arrays, cost ~6 us a call more than
# copying 4 KB (a small program's whole call, one core: 48 -> 45 us).
COPIED_RESULT_BYTES = 4096
_LENT_MEMORY = int(MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE)
_LENT_USAGE = int(BufferUsage.DEFAULT)


# An array lent at a call is remembered with its buffer view, one per input, and a later call
# given the very same array (the same object, of the same shape: binding checked its dtype) passes
# that view again, which reads the array's memory as it is then. Importing an array and wrapping
# it cost 3-5 us an input of a 256 matmul's call. Only arrays of at most REMEMBERED_BYTES are kept
# (alive until an input's next call or the program's close), so a program given fresh large
# arrays at each call holds no earlier ones.
REMEMBERED_BYTES = 1 << 22


class DeviceArguments:
    """`main`'s arguments on a CPU device from the bound inputs (arrays or Python numbers), for
    kernels that assume inputs start on `alignment` bytes; `read_once[i]`: every kernel reads
    input i once (_can_lend).

    An input that cannot be lent is copied, at most REMEMBERED_BYTES of it into a staging array
    of its own kept for the next call of the same thread (imported into IREE once, on a cache
    line): a fresh device buffer for the copy cost ~9.6 us an input, a NumPy copy into the
    staging array ~2 (the MNIST CNN at batch 1 copies four of its seven inputs each call). Each
    thread has its own, so calls from several threads never write each other's; a result over a
    staging array is a copy (`staged`), and a call whose results stay on the device copies into
    fresh buffers (`reuse` False): those results may be the inputs' buffers, which the next call
    would overwrite."""

    def __init__(self, device: rt.HalDevice, alignment: int, read_once: list[bool]):
        self._device, self._alignment, self._read_once = device, alignment, read_once
        self._lent: list[tuple | None] = [None] * len(read_once)   # (array, shape, its view)
        self._staging = threading.local()     # .kept: input index -> (staging array, its view)

    def __call__(self, bound: list, reuse: bool = True) -> list:
        return [self._argument(index, value, reuse) for index, value in enumerate(bound)]

    def staged(self) -> list[np.ndarray]:
        """This thread's staging arrays (memory a result must not be returned over)."""
        return [array for array, _ in getattr(self._staging, "kept", {}).values()]

    def _argument(self, index: int, value, reuse: bool):
        if not isinstance(value, np.ndarray):
            return value
        last = self._lent[index]
        if last is not None and last[0] is value and last[1] == value.shape:
            return last[2]
        if _can_lend(value, self._alignment, self._read_once[index]):
            view = _imported(self._device, value)
            self._lent[index] = (value, value.shape, view) if value.nbytes <= REMEMBERED_BYTES else None
            return view
        self._lent[index] = None
        if reuse and 0 < value.nbytes <= REMEMBERED_BYTES:
            return self._staged_copy(index, value)
        buffer = self._device.allocator.allocate_buffer_copy(memory_type=MemoryType.DEVICE_LOCAL,
                                                             allowed_usage=BufferUsage.DEFAULT,
                                                             device=self._device, buffer=value)
        return rt.HalBufferView(buffer, value.shape, map_dtype_to_element_type(value.dtype))

    def _staged_copy(self, index: int, value: np.ndarray) -> rt.HalBufferView:
        kept = self._staging.__dict__.setdefault("kept", {})
        staging = kept.get(index)
        if staging is None or staging[0].shape != value.shape or staging[0].dtype != value.dtype:
            array = _on_a_cache_line(value.shape, value.dtype)
            staging = kept[index] = (array, _imported(self._device, array))
        np.copyto(staging[0], value)
        return staging[1]


def _imported(device: rt.HalDevice, array: np.ndarray) -> rt.HalBufferView:
    """A buffer view over `array`'s own memory."""
    buffer = device.allocator.import_host_allocation(array, memory_type=_LENT_MEMORY, allowed_usage=_LENT_USAGE)
    return rt.HalBufferView(buffer, array.shape, map_dtype_to_element_type(array.dtype))


def _on_a_cache_line(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """An uninitialized C-contiguous array starting on a CACHE_LINE."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + CACHE_LINE, np.uint8)
    start = (-raw.ctypes.data) % CACHE_LINE
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def _can_lend(array: np.ndarray, alignment: int, read_once: bool = False) -> bool:
    """IREE reads an input and never writes it, but the import wants a writable buffer."""
    if not (array.flags.c_contiguous and array.flags.writeable and array.nbytes > 0):
        return False
    start = _address(array)
    return start % alignment == 0 and (start % CACHE_LINE == 0 or array.nbytes >= LENT_OFF_THE_LINE or read_once)


def _address(array: np.ndarray) -> int:
    """Where a writable C-contiguous array's memory starts. Through ctypes' view of its buffer:
    NumPy's `array.ctypes` object cost 2-4 us, a quarter of a small input's binding; a dtype the
    buffer protocol cannot describe (bfloat16) takes that way."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (ValueError, TypeError):
        return array.ctypes.data


def result_array(device: rt.HalDevice, view: rt.HalBufferView, lent: list[np.ndarray],
                 returned: list[np.ndarray]) -> np.ndarray:
    """`view` as a NumPy array over its buffer, which lives as long as the array, or a copy
    where that buffer is memory held elsewhere: an input lent to IREE or a staging array the
    next call writes again (`lent`: a program may return its input as it is), or an earlier
    result of the same call (two outputs may be one value); a small result is always a copy
    (COPIED_RESULT_BYTES)."""
    if view.byte_length == 0:
        return np.zeros(tuple(view.shape), dtype_of(view))
    held = _exported(device, view)
    if held is None:
        return np.array(rt.DeviceArray(device, view, implicit_host_transfer=True).to_host(), copy=True)
    if view.byte_length <= COPIED_RESULT_BYTES:
        return held.copy()
    array = np.asarray(_Writable(held))
    if any(np.may_share_memory(array, other) for other in (*lent, *returned)):
        return array.copy()
    return array


# A result is read through DLPack: IREE exports its buffer as a capsule that holds the buffer
# (IREE-34: the array of IREE's `MappedMemory.asarray` did not) and NumPy takes it. Right after
# a kernel has evicted the caches, the mapping, `asarray` and their checks cost 200-230 us of a
# 256 matmul's call, this way 45-60 (one core, load 9; docs/DECISIONS.md).
_DLPACK_CPU = 1          # DLPack's device type of host memory


def _exported(device: rt.HalDevice, view: rt.HalBufferView) -> np.ndarray | None:
    """A read-only array over `view`'s buffer, holding it; None where the buffer cannot be
    exported or DLPack has no type for its elements (bfloat16)."""
    try:
        return np.from_dlpack(_Capsule(device.create_dlpack_capsule(view, _DLPACK_CPU, 0)))
    except (RuntimeError, ValueError, TypeError, BufferError):
        return None


class _Capsule:
    """What np.from_dlpack asks of a producer, over a capsule already made."""

    __slots__ = ("_capsule",)

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **_):
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_DLPACK_CPU, 0)


class _Writable:
    """The owner of a writable array over the memory of the read-only one it holds: NumPy
    marks an array taken through a capsule of DLPack's first version read-only (that version
    cannot say otherwise), where einc's results have always been arrays of the caller's."""

    __slots__ = ("__array_interface__", "_held")

    def __init__(self, held: np.ndarray):
        self._held = held
        interface = held.__array_interface__
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


# IREE element type -> NumPy dtype. Looked up once per type: after a large kernel has evicted the
# caches, each native call costs several us (map_to_dtype took 10-30 us of a 256-512 matmul call).
_DTYPES: dict = {}


def dtype_of(view: rt.HalBufferView) -> np.dtype:
    element = view.element_type
    dtype = _DTYPES.get(element)
    if dtype is None:
        dtype = _DTYPES[element] = HalElementType.map_to_dtype(element)
    return dtype
