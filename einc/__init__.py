"""einc: an ahead-of-time compiler for Einlang, targeting IREE.

    art = einc.compile("model.ein", target="llvm-cpu")   # or Einlang source text
    art.save("model.vmfb")                                 # + model.irpa for large weights
    run = einc.load("model.vmfb")
    outputs = run(A=np.ones((4, 8), np.float32))          # {"C": array(...)}
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from functools import cached_property

from einc.driver import DEFAULT_THRESHOLD   # (the driver loads the compiler only when called)

__all__ = ["compile", "load", "Artifact"]


@dataclass(frozen=True)
class Artifact:
    """A compiled module: the .vmfb bytes, the target they were built for and the parameter
    archive (.irpa) of its large constant arrays (b"" when every constant is in the module)."""

    vmfb: bytes
    target: str
    parameters: bytes = b""

    @cached_property
    def signature(self):
        from einc.runtime.program import read_signature
        return read_signature(self.vmfb, "<compiled module>")

    def save(self, path: str | os.PathLike) -> None:
        """Write the module to `path` and its weights archive, if any, beside it (same name, .irpa)."""
        from einc.build import write_artifact
        from einc.runtime.parameters import archive_beside
        if self.parameters:
            write_artifact(archive_beside(os.fspath(path)), self.parameters)
        write_artifact(path, self.vmfb)


def compile(source_or_path: str | os.PathLike, target: str = "llvm-cpu",
            outputs: list[str] | None = None, dims: dict[str, int] | None = None,
            allow_python: bool = False, fp_contract: bool = False, unchecked_indices: bool = False,
            weights_threshold: int | None = DEFAULT_THRESHOLD) -> Artifact:
    """Compile an .ein file, or Einlang source text, to an Artifact. With `fp_contract`, llvm-cpu
    kernels may fuse `a * b + c` into one FMA (one rounding instead of the two IEEE float
    arithmetic and NumPy have; see docs/DECISIONS.md).

    `dims` fixes named dims at build time ({"B": 8192}): IREE sees static shapes and the module
    accepts no other size. Raises einc.diagnostics.CompileError for errors in the program and
    einc.diagnostics.OptionError (a ValueError) for a dim the program does not have or a bad
    size. Source text is compiled from a temporary directory, so relative imports and load_npy
    paths need a file instead. `allow_python` lets the program call Python functions during the
    build (`python::mod::f(..)`). Data-dependent indices (`table[idx[i]]`) are checked when the
    module runs (an index outside its axis is a RunError); `unchecked_indices` clamps them instead.
    Constant arrays (`load_npy`) of at least `weights_threshold` bytes go to the Artifact's
    parameter archive instead of the module (0: every constant array; None: none).
    """
    if _is_path(source_or_path):
        return _built(os.fspath(source_or_path), target, outputs, dims, allow_python, fp_contract, weights_threshold,
                      unchecked_indices)
    with tempfile.TemporaryDirectory(prefix="einc-") as tmp:
        path = os.path.join(tmp, "program.ein")
        with open(path, "w", encoding="utf-8") as source_file:
            source_file.write(source_or_path)
        return _built(path, target, outputs, dims, allow_python, fp_contract, weights_threshold, unchecked_indices)


def _built(path, target, outputs, dims, allow_python, fp_contract, weights_threshold,
           unchecked_indices) -> Artifact:
    from einc.driver import build_program  # lazy: pulls in the whole compiler
    built = build_program(path, target, outputs, dims, allow_python, fp_contract=fp_contract,
                          weights_threshold=weights_threshold, unchecked_indices=unchecked_indices)
    return Artifact(built.vmfb, target, built.parameters)


def load(path_or_bytes, device: str | None = None, parameters: str | os.PathLike | None = None):
    """Open a .vmfb (path or bytes); the result is callable with the inputs by name. A module
    with external weights reads them from `parameters` (.irpa), by default the archive beside it."""
    from einc.runtime import load as load_program
    return load_program(path_or_bytes, device, parameters)


def _is_path(source_or_path) -> bool:
    if isinstance(source_or_path, os.PathLike):
        return True
    # Einlang statements end in ';', so text without one or a newline can only be a file name.
    return source_or_path.endswith(".ein") or not any(c in source_or_path for c in ";\n")
