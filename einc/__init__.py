"""einc: an ahead-of-time compiler for Einlang, targeting IREE.

    art = einc.compile("model.ein")   # or Einlang source text; target=NAME: einc.target.TARGETS
    art.save("model.vmfb")            # + model.irpa for large weights
    run = einc.load("model.vmfb")     # or einc.load(art), without a file
    outputs = run(A=np.ones((4, 8), np.float32))   # {"C": array(...)}

    f = einc.jit("model.ein", max_cached=8)    # like jax.jit: one module per set of input sizes
    outputs = f(A=np.ones((4, 8), np.float32))            # built for A's sizes, then kept

Errors: einc.CompileError (a mistake in the program; str() is `file:line:col: error[Ennn]:
message`, one line per diagnostic), einc.OptionError (a bad build option, a ValueError) and
einc.RunError (bad inputs, a failed assert, an unavailable device: one line; a failed assert
reads `file:line:col: error[E006]: assertion failed: message`). einc.BuildWarning (a warning): a
module built another way than asked, e.g. again without CPU data tiling after IREE's compiler crashed.
Artifacts and loaded programs pickle as their module bytes, so they go to worker processes.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from einc.diagnostics import BuildWarning, CompileError, OptionError
from einc.driver import DEFAULT_THRESHOLD   # (the driver loads the compiler only when called)
from einc.target import DEFAULT, get as get_target
from einc.version import einc_version

if TYPE_CHECKING:
    from einc.backend.parameters import Archive

__all__ = ["compile", "load", "jit", "Artifact", "BuildWarning", "CompileError", "OptionError", "RunError", "__version__"]
__version__ = einc_version()


def __getattr__(name: str):
    if name == "RunError":   # lazy: einc.runtime loads the IREE runtime
        from einc.runtime.errors import RunError
        return RunError
    raise AttributeError(f"module 'einc' has no attribute {name!r}")


@dataclass(frozen=True)
class Artifact:
    """A compiled module: the .vmfb bytes, the target they were built for and the parameter
    archive (.irpa) of its large constant arrays (None when every constant is in the module):
    an einc.backend.parameters.Archive, a file (`.path`; `.read()` gives its bytes)."""

    vmfb: bytes
    target: str
    archive: Archive | None = None

    @cached_property
    def signature(self):
        from einc.runtime.program import read_signature
        return read_signature(self.vmfb, "<compiled module>")

    def save(self, path: str | os.PathLike) -> None:
        """Write the module to `path` and its weights archive, if any, beside it (same name, .irpa)."""
        from einc.backend import write_artifact
        from einc.module_file import archive_beside
        if self.archive is not None:
            self.archive.save(archive_beside(os.fspath(path)))
        write_artifact(path, self.vmfb)

    def __reduce__(self):
        # the bytes, the target and the archive (as its bytes) only: the signature is read
        # again from the bytes
        return Artifact, (self.vmfb, self.target, self.archive)


def compile(source_or_path: str | os.PathLike, target: str = DEFAULT.name,
            outputs: list[str] | None = None, dims: dict[str, int] | None = None,
            allow_python: bool = False, fp_contract: bool = False, unchecked_indices: bool = False,
            weights_threshold: int | None = DEFAULT_THRESHOLD, cache: bool = False) -> Artifact:
    """Compile an .ein file, or Einlang source text, to an Artifact. With `fp_contract`, llvm-cpu
    kernels may fuse `a * b + c` into one FMA (one rounding instead of the two IEEE float
    arithmetic and NumPy have; see docs/DECISIONS.md).

    `dims` fixes named dims at build time ({"B": 8192}): IREE sees static shapes and the module
    accepts no other size. Raises einc.CompileError for errors in the program and
    einc.OptionError (a ValueError) for a dim the program does not have, a bad size or an
    output it does not have. Source text is compiled from a temporary directory, so relative
    imports and load_npy paths need a file instead. `allow_python` lets the program call Python functions during the build
    (`python::mod::f(..)`). Data-dependent indices (`table[idx[i]]`) are checked when the module
    runs (an index outside its axis is a RunError); `unchecked_indices` clamps them instead.
    Constant arrays (`load_npy`) of at least `weights_threshold` bytes go to the Artifact's
    parameter archive instead of the module (0: every constant array; None: none).

    With `cache`, a file is built through the build cache `einc run FILE.ein` uses (keyed by
    everything the module depends on, EINC_CACHE moves it), so an unchanged program is not
    compiled again; source text is always compiled.
    """
    target = get_target(target)
    options = (allow_python, fp_contract, weights_threshold, unchecked_indices)
    if _is_path(source_or_path) and cache:
        return _cached(os.fspath(source_or_path), target, outputs, dims, *options)
    if _is_path(source_or_path):
        return _built(os.fspath(source_or_path), target, outputs, dims, *options)
    with tempfile.TemporaryDirectory(prefix="einc-") as tmp:
        path = os.path.join(tmp, "program.ein")
        with open(path, "w", encoding="utf-8") as source_file:
            source_file.write(source_or_path)
        return _built(path, target, outputs, dims, *options)


def _built(path, target, outputs, dims, allow_python, fp_contract, weights_threshold,
           unchecked_indices) -> Artifact:
    from einc.driver import build_program  # lazy: pulls in the whole compiler
    built = build_program(path, target, outputs, dims, allow_python, fp_contract=fp_contract,
                          weights_threshold=weights_threshold, unchecked_indices=unchecked_indices)
    return Artifact(built.vmfb, target.name, built.archive)


def _cached(path, target, outputs, dims, allow_python, fp_contract, weights_threshold,
            unchecked_indices) -> Artifact:
    from einc.backend.cache import user_module_cache
    from einc.backend.parameters import Archive
    from einc.driver import cached_build
    from einc.module_file import archive_beside
    from einc.user_cache import cache_root
    module_cache = user_module_cache()
    if module_cache is None:
        raise OSError(f"cannot create the build cache in {cache_root()}; set EINC_CACHE to a writable folder")
    found = cached_build(path, target, outputs, dims, allow_python, module_cache, fp_contract=fp_contract,
                         unchecked_indices=unchecked_indices, weights_threshold=weights_threshold)
    archive = archive_beside(str(found))
    return Artifact(_read_bytes(found), target.name, Archive(archive) if os.path.exists(archive) else None)


def _read_bytes(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def jit(path: str | os.PathLike, target: str = DEFAULT.name, *, device: str | None = None, max_cached: int = 8,
        outputs: list[str] | None = None, dims: dict[str, int] | None = None, allow_python: bool = False,
        fp_contract: bool = False, unchecked_indices: bool = False,
        weights_threshold: int | None = DEFAULT_THRESHOLD):
    """The .ein file `path` as a callable, like `jax.jit`: `f(X=..., W=...)` runs the module
    built with the program's named dims fixed to the sizes of that call's inputs, and its inputs
    of any rank (`[f32; *]`) to their ranks (one build per new set of sizes and ranks, kept in the build cache einc run uses; the `max_cached` most recently used
    modules stay loaded) and returns what `einc.load(...)(...)` returns. `f.generic()` is the
    module with run-time sizes; `f.cache_info()` counts hits, misses and builds. Thread-safe:
    concurrent calls with the same new sizes build once. The other options are einc.compile's;
    `dims` fixes a named dim for every call. Raises einc.CompileError and einc.OptionError as
    einc.compile does, einc.RunError as a loaded module's call does."""
    from einc.driver import checked_dims
    from einc.jitted import Jitted
    options = {"outputs": outputs, "dims": checked_dims(dims), "allow_python": allow_python,
               "fp_contract": fp_contract, "unchecked_indices": unchecked_indices,
               "weights_threshold": weights_threshold}
    return Jitted(path, target, device, max_cached, options)


def load(module, device: str | None = None, parameters: str | os.PathLike | None = None):
    """Open a module: a .vmfb (path or bytes) or an einc.compile Artifact; the result is callable
    with the inputs by name. A module with external weights reads them from `parameters` (.irpa),
    by default the archive beside its file or the Artifact's own."""
    from einc.runtime import load as load_program
    if isinstance(module, Artifact):
        if parameters is None and module.archive is not None:
            parameters = module.archive.path
        module = module.vmfb
    return load_program(module, device, parameters)


def _is_path(source_or_path) -> bool:
    if isinstance(source_or_path, os.PathLike):
        return True
    # Statements end in ';' and items have a `{ .. }` body, so one-line text with neither is a file name.
    return source_or_path.endswith(".ein") or not any(c in source_or_path for c in ";\n{")
