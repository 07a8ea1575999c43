"""Running an einc module over the blocks of dask arrays, on any dask scheduler (threads,
processes, a `distributed` cluster of many machines).

    import dask.array as da, einc, einc.dask
    art = einc.compile("examples/mnist/cnn.ein", outputs=["digit"])
    X = da.from_array(images, chunks=(256, 1, 28, 28))          # batch dim B chunked
    out = einc.dask.map_blocks(art, batch_dim="B", X=X, W1=w1, ...)  # {"digit": dask array}
    digits = out["digit"].compute()

An input whose declared dims name `batch_dim` is split along that axis into the blocks of its
dask array (inputs chunked differently are rechunked to the first one's blocks); every other
input goes whole to every block. Each block is one call of the program. The module travels
as bytes (a loaded IREE module cannot be pickled) and each process loads it once, on its first
block, into a cache keyed by its digest. Prints of the program are dropped.
"""
from __future__ import annotations

import hashlib
import io
import os
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

import dask
import dask.array as da
import numpy as np

from einc import Artifact
from einc.backend.artifact import write_artifact
from einc.runtime.errors import RunError
from einc.module_file import ARCHIVE_SUFFIX, archive_beside
from einc.runtime.program import Program, read_signature
from einc.runtime.signature import Signature

__all__ = ["map_blocks", "loads"]


@dataclass(frozen=True)
class Module:
    """A module as it travels to the workers: its bytes, its weights archive's bytes (b"" when
    it has none) and the device to run it on (None: its target's default)."""
    vmfb: bytes
    parameters: bytes = b""
    device: str | None = None

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.vmfb + self.parameters + str(self.device).encode()).hexdigest()


def map_blocks(program, batch_dim: str = "B", *, outputs: list[str] | None = None, device: str | None = None,
               **inputs: Any) -> dict[str, da.Array]:
    """The outputs of `program` (an einc.Artifact, the path of a .vmfb with its archive beside
    it, or .vmfb bytes) run block by block over the batch dim `batch_dim`, as dask arrays
    chunked like the inputs. `outputs` picks outputs, each of which must have the batch dim;
    by default every output that has it. Nothing runs until the results are computed."""
    module = _module(program, device)
    signature = read_signature(module.vmfb, "<module>")
    batched = _batched_inputs(signature, batch_dim, inputs)
    blocks = _blocks(batched, inputs)
    axes = _output_axes(module, signature, batch_dim, batched, inputs)
    wanted = _wanted(axes, outputs, batch_dim)
    # inputs every block gets whole: one key each, so each worker fetches them once
    shared = {name: dask.delayed(value, pure=True) for name, value in inputs.items() if name not in batched}
    shipped = dask.delayed(module, pure=True)       # one key: each worker fetches it once
    results: dict[str, list] = {name: [] for name in wanted}
    for block_inputs, size in blocks:
        call = dask.delayed(_run_block, pure=True)(shipped, {**shared, **block_inputs})
        for name in wanted:
            shape, dtype = axes[name]
            block_shape = shape[:_axis(shape)] + (size,) + shape[_axis(shape) + 1:]
            results[name].append(da.from_delayed(call[name], block_shape, dtype))
    return {name: da.concatenate(parts, axis=_axis(axes[name][0])) for name, parts in results.items()}


_BATCH = -1   # marks the batch axis in an output's probed shape


def _axis(shape: tuple) -> int:
    return shape.index(_BATCH)


def _module(program, device: str | None) -> Module:
    """`program` as bytes to ship: from an Artifact, a .vmfb path (and its archive) or bytes."""
    if isinstance(program, Artifact):
        return Module(program.vmfb, b"" if program.archive is None else program.archive.read(), device)
    if isinstance(program, (bytes, bytearray, memoryview)):
        return Module(bytes(program), b"", device)
    path = os.fspath(program)
    with open(path, "rb") as module_file:
        vmfb = module_file.read()
    archive = archive_beside(path)
    if read_signature(vmfb, path).parameters is None:
        return Module(vmfb, b"", device)
    with open(archive, "rb") as archive_file:
        return Module(vmfb, archive_file.read(), device)


def _batched_inputs(signature: Signature, batch_dim: str, inputs: dict) -> dict[str, int]:
    """Input name -> the axis of the batch dim, for the inputs declared with it."""
    unknown = sorted(set(inputs) - {spec.name for spec in signature.inputs})
    if unknown:
        raise ValueError(f"the program has no input {', '.join(unknown)}; its inputs are "
                         f"{', '.join(spec.name for spec in signature.inputs)}")
    batched = {spec.name: spec.dims.index(batch_dim) for spec in signature.inputs
               if spec.dims and batch_dim in spec.dims and spec.name in inputs}
    if not batched:
        raise ValueError(f"no input of the program is declared with the dim {batch_dim!r} to map over")
    return batched


def _blocks(batched: dict[str, int], inputs: dict) -> list[tuple[dict, int]]:
    """Per block: the delayed block of every batched input, and the block's batch size."""
    arrays = {name: _dask_array(inputs[name]) for name in batched}
    first = next(iter(arrays))
    chunks = arrays[first].chunks[batched[first]]
    delayed = {}
    for name, array in arrays.items():
        axis = batched[name]
        if array.shape[axis] != sum(chunks):
            raise ValueError(f"input {name} has {array.shape[axis]} along the batch dim, {first} has {sum(chunks)}")
        whole_elsewhere = tuple(chunks if a == axis else -1 for a in range(array.ndim))
        grid = array.rechunk(whole_elsewhere).to_delayed()
        delayed[name] = [grid[tuple(i if a == axis else 0 for a in range(array.ndim))] for i in range(len(chunks))]
    return [({name: blocks[i] for name, blocks in delayed.items()}, size) for i, size in enumerate(chunks)]


def _dask_array(value) -> da.Array:
    return value if isinstance(value, da.Array) else da.from_array(np.asarray(value), chunks=-1)


def _output_axes(module: Module, signature: Signature, batch_dim: str, batched: dict[str, int],
                 inputs: dict) -> dict[str, tuple[tuple, np.dtype]]:
    """Each output's shape with _BATCH at its batch axis (None when it has none) and dtype,
    from two runs on zeros with batch sizes 1 and 2 (the only way to learn output shapes
    without computing a block)."""
    try:
        probes = [_cached_program(module).run(_probe_inputs(signature, batched, inputs, size), stdout=io.StringIO())
                  for size in (1, 2)]
    except RunError as err:
        raise ValueError(f"cannot learn the shapes of the outputs: the program run on zeros with batch sizes "
                         f"1 and 2 failed ({err})") from None
    axes = {}
    for spec in signature.outputs:
        one, two = probes[0][spec.name].shape, probes[1][spec.name].shape
        differ = [a for a, (m, n) in enumerate(zip(one, two)) if m != n]
        batch_axis = len(differ) == 1 and one[differ[0]] == 1 and two[differ[0]] == 2
        shape = tuple(_BATCH if a in differ else n for a, n in enumerate(one)) if batch_axis else None
        axes[spec.name] = (shape, np.dtype(spec.dtype))
    return axes


def _probe_inputs(signature: Signature, batched: dict[str, int], inputs: dict, size: int) -> dict:
    probe = {}
    for name, value in inputs.items():
        if name in batched:
            shape = list(np.shape(value))
            shape[batched[name]] = size
            probe[name] = np.zeros(shape, signature.input(name).dtype)
        else:
            probe[name] = value.compute() if isinstance(value, da.Array) else value
    return probe


def _wanted(axes: dict, outputs: list[str] | None, batch_dim: str) -> list[str]:
    if outputs is None:
        return [name for name, (shape, _) in axes.items() if shape is not None]
    for name in outputs:
        if name not in axes:
            raise ValueError(f"the program has no output {name}; its outputs are {', '.join(axes)}")
        if axes[name][0] is None:
            raise ValueError(f"output {name} does not have the batch dim {batch_dim} as one of its axes, "
                             f"so it cannot be computed block by block")
    return list(outputs)


def _run_block(module: Module, inputs: dict) -> dict[str, np.ndarray]:
    program, lock = _cached_program(module), _locks[module.digest]
    with lock:                     # a Program's call is not thread-safe (its print recorder)
        return program.run(inputs, stdout=io.StringIO())


# The modules this process loaded, by digest, and how many times each was loaded (tests check
# that a worker loads a module once however many blocks it runs).
_programs: dict[str, Program] = {}
_locks: dict[str, threading.Lock] = {}
_load_counts: dict[str, int] = {}
_cache_lock = threading.Lock()


def _cached_program(module: Module) -> Program:
    with _cache_lock:
        digest = module.digest
        if digest not in _programs:
            _programs[digest] = Program(module.vmfb, "<einc.dask module>", module.device,
                                        _archive_file(module, digest))
            _locks[digest] = threading.Lock()
            _load_counts[digest] = _load_counts.get(digest, 0) + 1
        return _programs[digest]


def _archive_file(module: Module, digest: str) -> str | None:
    """The module's weights archive as a file of this machine (IREE maps archives from files)."""
    if not module.parameters:
        return None
    path = os.path.join(tempfile.gettempdir(), f"einc-{digest}{ARCHIVE_SUFFIX}")
    if not os.path.exists(path):
        write_artifact(path, module.parameters)
    return path


def loads() -> dict[str, int]:
    """How many times this process loaded each module (by digest) for map_blocks."""
    return dict(_load_counts)
