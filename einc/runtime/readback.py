"""Copying `main`'s results from a Vulkan device into numpy arrays (the CPU devices' results are
read in place: einc.runtime.host_memory)."""
from __future__ import annotations

import numpy as np
import iree.runtime as rt
from iree.runtime import BufferUsage, HalElementType, HalFence, MemoryType


def to_numpy(result: rt.DeviceArray) -> np.ndarray:
    """A host copy of `result`, read through a host-visible staging buffer.

    IREE-29: `DeviceArray.to_host()` imports a numpy allocation that Vulkan drivers may reject
    as unaligned.
    """
    view = result._buffer_view
    shape = tuple(view.shape)
    dtype = HalElementType.map_to_dtype(view.element_type)
    if view.byte_length == 0:
        return np.zeros(shape, dtype)
    return _read_staged(result._device, view.get_buffer(), shape, dtype)


def _read_staged(device: rt.HalDevice, source: rt.HalBuffer, shape: tuple, dtype: np.dtype) -> np.ndarray:
    staging = device.allocator.allocate_buffer(
        memory_type=int(MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(BufferUsage.TRANSFER_TARGET | BufferUsage.MAPPING_SCOPED),
        allocation_size=source.byte_length())
    semaphore = device.create_semaphore(0)
    device.queue_copy(source, staging,
                      wait_semaphores=HalFence.create_at(semaphore, 0),
                      signal_semaphores=HalFence.create_at(semaphore, 1))
    HalFence.create_at(semaphore, 1).wait()
    return copy_of_mapped(staging, shape, dtype)


def copy_of_mapped(mappable, shape, dtype) -> np.ndarray:
    """A copy of a host-visible buffer or buffer view's contents. The mapping is held until the
    copy is made (IREE-34: the array `MappedMemory.asarray` gives does not hold it)."""
    mapping = mappable.map()
    return np.array(mapping.asarray(shape, dtype), copy=True)
