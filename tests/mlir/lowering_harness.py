"""Compile and run lowered programs directly with iree.compiler / iree.runtime (no einc.backend),
plus terse constructors for hand-built IR programs."""
from __future__ import annotations

import numpy as np
import iree.compiler as ic
import iree.runtime as rt

from einc.ir.nodes import Const, IndexRef, IndexVar, Input, Op, Program, Read
from einc.ir.types import BY_NAME, Lin, Sym
from einc.mlir import lower_to_text
from einc.runtime.fenced_calls import main_invoker
from einc.target import get

FLAGS = {
    "llvm-cpu": ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false"],
    "vulkan-spirv": ["--iree-hal-target-device=vulkan"],
}
DEVICES = {"llvm-cpu": "local-task", "vulkan-spirv": "vulkan"}


def compile_program(program: Program, target: str = "llvm-cpu") -> bytes:
    return ic.compile_str(lower_to_text(program, get(target)), extra_args=FLAGS[target])


class Compiled:
    """A loaded module; `main(*args)` returns the outputs as numpy arrays."""

    def __init__(self, vmfb: bytes, target: str):
        # Not IREE's cached device: a Vulkan device kept open spins two lavapipe threads for the
        # rest of the process (tests/conftest.py fails a test that leaves one).
        self.config = rt.Config(device=rt.get_device(DEVICES[target], cache=False))
        self.context = rt.SystemContext(config=self.config)
        self.context.add_vm_module(rt.VmModule.copy_buffer(self.context.instance, vmfb))

    def main(self, *args) -> list[np.ndarray]:
        module = self.context.modules.module.vm_module
        # a CPU main built by einc takes fences (einc.runtime.fenced_calls); FLAGS' modules do not
        main = main_invoker(self.context.vm_context, self.config.device, module.lookup_function("main"))
        results = main(*args)
        if not isinstance(results, (list, tuple)):
            results = [results]
        return [_to_host(r) for r in results]


def run(program: Program, *args, target: str = "llvm-cpu") -> list[np.ndarray]:
    return Compiled(compile_program(program, target), target).main(*args)


def _to_host(array: rt.DeviceArray) -> np.ndarray:
    """Read back through a host-visible staging buffer: DeviceArray.to_host() fails on lavapipe
    (it imports unaligned host memory)."""
    view, device = array._buffer_view, array._device
    source = view.get_buffer()
    staging = device.allocator.allocate_buffer(
        memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED),
        allocation_size=max(source.byte_length(), 1))
    semaphore = device.create_semaphore(0)
    device.queue_copy(source, staging, wait_semaphores=rt.HalFence.create_at(semaphore, 0),
                      signal_semaphores=rt.HalFence.create_at(semaphore, 1))
    rt.HalFence.create_at(semaphore, 1).wait()
    dtype = rt.HalElementType.map_to_dtype(view.element_type)
    return np.array(staging.map().asarray(view.shape, dtype), copy=True)


# ------------------------------------------------------------------- IR construction

def dt(name: str):
    return BY_NAME[name]


def tensor_input(name: str, pos: int, dtype: str, dims: list, syms: dict) -> Input:
    """An input with declared dims (int or a name); a name's first use adds a Sym to `syms`."""
    shape = []
    for axis, d in enumerate(dims):
        if isinstance(d, int):
            shape.append(Lin(d))
        else:
            sym = syms.setdefault(d, Sym(d, pos, axis))
            shape.append(Lin.of(sym))
    return Input(name, pos, dt(dtype), tuple(shape), list(dims))


def scalar_input(name: str, pos: int, dtype: str) -> Input:
    return Input(name, pos, dt(dtype), (), [])


def const(value, dtype: str = "f32") -> Const:
    return Const(np.asarray(value, dtype=dt(dtype).numpy))


def var(name: str, extent, lo=0) -> IndexVar:
    as_lin = lambda x: x if isinstance(x, Lin) else Lin(x)
    return IndexVar(name, as_lin(lo), as_lin(extent))


def ref(v: IndexVar) -> IndexRef:
    return IndexRef(v)


def op(name: str, *args, dtype: str | None = None) -> Op:
    """An Op whose dtype defaults to its (value) operands'; pass it for casts and comparisons."""
    if dtype is None:
        return Op(name, tuple(args), args[1].dtype if name == "select" else args[0].dtype)
    return Op(name, tuple(args), dt(dtype))


def read(t, *subs, in_bounds: bool = True) -> Read:
    return Read(t, tuple(subs), in_bounds=in_bounds)


def program(inputs: list, outputs: list, syms: dict, effects: list = ()) -> Program:
    return Program("test.ein", list(inputs), list(outputs), list(effects), list(syms.values()))
