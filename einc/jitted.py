"""`einc.jit`: an Einlang program as a callable that builds one module per size signature, as
`jax.jit` traces one program per shape (einc.specialize).

A call reads the sizes of the named dims, and the ranks of the inputs declared of any rank
(`[f32; *]`), from its inputs, and runs the module built with those dims and ranks fixed: from
memory (the `max_cached` most recently used modules), else from the build cache on disk, else
built once and stored there. The program's file is read at the first call (its inputs'
declarations, which say where each named dim is read; again for each new set of ranks) and when
a module is built.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any, NamedTuple

from einc.diagnostics import OptionError

# One build at a time in a process, whichever callable asks: IREE's compiler already uses every
# core, and a thread that waited finds the module another thread built for the same sizes.
_BUILD_LOCK = threading.Lock()


class CacheInfo(NamedTuple):
    hits: int        # calls served by a module kept in memory
    misses: int      # modules loaded: from the build cache on disk, or built
    builds: int      # modules built (entries the build cache recorded storing)
    currsize: int    # modules kept in memory now
    maxsize: int


class Jitted:
    """`f(**inputs)` runs the program's module specialized to the inputs' sizes and returns what
    `einc.load(...)(...)` returns; `f.generic()` is the loaded module with run-time sizes."""

    def __init__(self, path: str | os.PathLike, target: str, device: str | None, max_cached: int,
                 build_options: dict[str, Any]):
        from einc.backend.cache import user_module_cache
        from einc.user_cache import cache_root
        if isinstance(max_cached, bool) or not isinstance(max_cached, int) or max_cached < 1:
            raise OptionError(f"max_cached must be a whole number of at least 1, got {max_cached!r}")
        self.path, self.target, self.device, self.max_cached = os.fspath(path), target, device, max_cached
        self._options = build_options
        self._cache = user_module_cache()
        if self._cache is None:
            raise OSError(f"cannot create the build cache in {cache_root()}; set EINC_CACHE to a writable folder")
        self._lock = threading.Lock()          # guards what follows
        self._modules: OrderedDict = OrderedDict()   # (ranks, size signature) -> loaded Program, oldest first
        self._any_rank = None                   # the names of the any-rank inputs
        self._signatures: dict = {}             # ranks -> what main takes (einc.specialize.input_signature)
        self._hits = self._misses = 0

    def __call__(self, device_outputs: bool = False, **inputs: Any) -> dict[str, Any]:
        """The outputs by name; `device_outputs` keeps them on the device (einc.load's call)."""
        import numpy as np
        from einc.runtime.inputs import as_array, check_input_names
        from einc.specialize import size_signature
        ranks = {name: np.ndim(inputs[name]) for name in self._any_rank_inputs() if name in inputs}
        signature = self._input_signature(ranks)
        check_input_names(signature, inputs)
        arrays = {spec.name: inputs[spec.name] if spec.is_scalar else as_array(spec, inputs[spec.name])
                  for spec in signature.inputs}
        sizes = size_signature(signature, {name: getattr(v, "shape", ()) for name, v in arrays.items()})
        return self._module(sizes, ranks)(device_outputs=device_outputs, **arrays)

    def generic(self):
        """The loaded module with the named dims as run-time sizes (those fixed by `dims` stay
        fixed): what `einc build` makes, kept like a specialized one under the empty signature."""
        return self._module({}, {})

    def cache_info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._misses, len(self._cache.stored), len(self._modules), self.max_cached)

    def _any_rank_inputs(self) -> list[str]:
        with self._lock:
            if self._any_rank is None:
                from einc import driver
                self._any_rank = driver.any_rank_inputs(self.path)
            return self._any_rank

    def _input_signature(self, ranks: dict[str, int]):
        key = tuple(sorted(ranks.items()))
        with self._lock:
            if key not in self._signatures:
                from einc import driver
                from einc.specialize import input_signature
                ir_program = driver.check_program(
                    self.path, self.target, self._options["outputs"], self._options["dims"],
                    self._options["allow_python"], unchecked_indices=self._options["unchecked_indices"],
                    ranks=ranks)[1]
                self._signatures[key] = input_signature(ir_program)
            return self._signatures[key]

    def _module(self, sizes: dict[str, int], ranks: dict[str, int]):
        key = (tuple(sorted(ranks.items())), tuple(sizes.items()))
        program = self._kept(key)
        if program is not None:
            return program
        with _BUILD_LOCK:
            program = self._kept(key)       # built by another thread while this one waited
            if program is not None:
                return program
            program = self._load(sizes, ranks)
        with self._lock:
            self._misses += 1
            self._modules[key] = program
            while len(self._modules) > self.max_cached:
                self._modules.popitem(last=False)   # dropped: closed once no caller holds it
        return program

    def _kept(self, key: tuple):
        with self._lock:
            program = self._modules.get(key)
            if program is not None:
                self._modules.move_to_end(key)
                self._hits += 1
            return program

    def _load(self, sizes: dict[str, int], ranks: dict[str, int]):
        from einc import driver
        from einc.runtime import load
        options = dict(self._options)
        dims, outputs, allow_python = options.pop("dims"), options.pop("outputs"), options.pop("allow_python")
        found = driver.cached_build(self.path, self.target, outputs, {**dims, **sizes}, allow_python, self._cache,
                                    ranks=ranks, **options)
        return load(found, self.device)
