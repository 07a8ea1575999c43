"""einc.backend: IREE compilation per target and atomic artifact writing.

`compile_mlir` and `IreeCompileError` load the IREE compiler on first use, so that importing
einc.backend for `write_artifact` (as `einc run` does) stays cheap.
"""
from einc.backend.artifact import write_artifact

__all__ = ["compile_mlir", "start_compiler", "write_artifact", "IreeCompileError", "IreeCompilerCrash"]


def __getattr__(name: str):
    if name in ("compile_mlir", "start_compiler", "IreeCompileError", "IreeCompilerCrash"):
        from einc.backend import iree_compile
        return getattr(iree_compile, name)
    raise AttributeError(f"module 'einc.backend' has no attribute {name!r}")
