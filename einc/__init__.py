"""einc: an ahead-of-time compiler for Einlang, targeting IREE.

    art = einc.compile("model.ein", target="llvm-cpu")   # or Einlang source text
    art.save("model.vmfb")
    run = einc.load("model.vmfb")
    outputs = run(A=np.ones((4, 8), np.float32))          # {"C": array(...)}

Errors: einc.CompileError (a mistake in the program; str() is `file:line:col: error[Ennn]:
message`, one line per diagnostic), einc.OptionError (a bad build option, a ValueError) and
einc.RunError (bad inputs, a failed assert, an unavailable device: one line; a failed assert
reads `file:line:col: error[E006]: assertion failed: message`).
Artifacts and loaded programs pickle as their module bytes, so they go to worker processes.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from functools import cached_property

from einc.diagnostics import CompileError, OptionError
from einc.version import einc_version

__all__ = ["compile", "load", "Artifact", "CompileError", "OptionError", "RunError", "__version__"]
__version__ = einc_version()


def __getattr__(name: str):
    if name == "RunError":   # lazy: einc.runtime loads the IREE runtime
        from einc.runtime.errors import RunError
        return RunError
    raise AttributeError(f"module 'einc' has no attribute {name!r}")


@dataclass(frozen=True)
class Artifact:
    """A compiled module: the .vmfb bytes and the target they were built for."""

    vmfb: bytes
    target: str

    @cached_property
    def signature(self):
        from einc.runtime.program import read_signature
        return read_signature(self.vmfb, "<compiled module>")

    def save(self, path: str | os.PathLike) -> None:
        from einc.build import write_artifact
        write_artifact(path, self.vmfb)

    def __reduce__(self):
        # the bytes and the target only: the signature is read again from the bytes
        return Artifact, (self.vmfb, self.target)


def compile(source_or_path: str | os.PathLike, target: str = "llvm-cpu",
            outputs: list[str] | None = None, dims: dict[str, int] | None = None,
            allow_python: bool = False, fp_contract: bool = False, cache: bool = False) -> Artifact:
    """Compile an .ein file, or Einlang source text, to an Artifact. With `fp_contract`, llvm-cpu
    kernels may fuse `a * b + c` into one FMA (one rounding instead of the two IEEE float
    arithmetic and NumPy have; see docs/DECISIONS.md).

    `dims` fixes named dims at build time ({"B": 8192}): IREE sees static shapes and the module
    accepts no other size. Raises einc.diagnostics.CompileError for errors in the program and
    einc.diagnostics.OptionError (a ValueError) for a dim the program does not have or a bad
    size. Source text is compiled from a temporary directory, so relative imports and load_npy
    paths need a file instead. `allow_python` lets the program call Python functions during the
    build (`python::mod::f(..)`).

    With `cache`, a file is built through the build cache `einc run FILE.ein` uses (keyed by
    everything the module depends on, EINC_CACHE moves it), so an unchanged program is not
    compiled again; source text is always compiled.
    """
    from einc.driver import compile_program  # lazy: pulls in the whole compiler

    if _is_path(source_or_path) and cache:
        return Artifact(_cached_vmfb(os.fspath(source_or_path), target, outputs, dims, allow_python,
                                     fp_contract), target)
    if _is_path(source_or_path):
        return Artifact(compile_program(os.fspath(source_or_path), target, outputs, dims, allow_python,
                                        fp_contract=fp_contract), target)
    with tempfile.TemporaryDirectory(prefix="einc-") as tmp:
        path = os.path.join(tmp, "program.ein")
        with open(path, "w", encoding="utf-8") as source_file:
            source_file.write(source_or_path)
        return Artifact(compile_program(path, target, outputs, dims, allow_python, fp_contract=fp_contract),
                        target)


def _cached_vmfb(path: str, target: str, outputs, dims, allow_python: bool, fp_contract: bool) -> bytes:
    from einc.build.cache import user_module_cache
    from einc.driver import cached_build
    from einc.user_cache import cache_root
    module_cache = user_module_cache()
    if module_cache is None:
        raise OSError(f"cannot create the build cache in {cache_root()}; set EINC_CACHE to a writable folder")
    with open(cached_build(path, target, outputs, dims, allow_python, module_cache, fp_contract=fp_contract),
              "rb") as module_file:
        return module_file.read()


def load(path_or_bytes, device: str | None = None):
    """Open a .vmfb (path or bytes); the result is callable with the inputs by name."""
    from einc.runtime import load as load_program
    return load_program(path_or_bytes, device)


def _is_path(source_or_path) -> bool:
    if isinstance(source_or_path, os.PathLike):
        return True
    # Einlang statements end in ';', so text without one or a newline can only be a file name.
    return source_or_path.endswith(".ein") or not any(c in source_or_path for c in ";\n")
