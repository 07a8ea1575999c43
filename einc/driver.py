"""The pipeline, stage by stage: load + parse → resolve → elaborate to IR → MLIR → IREE.

Each stage raises `CompileError` for mistakes in the program; the error carries the source map
(`.sources`) so the CLI can render the offending lines. Anything else escaping is a compiler bug.
"""
from __future__ import annotations

from einc.diagnostics import CompileError


def front_end(path: str, outputs: list[str] | None = None, allow_python: bool = False):
    """Parse, resolve and elaborate `path`; returns (loaded program, IR program). With
    `allow_python`, `python::mod::f(..)` calls run during the build."""
    from einc.semantics.elaborate import elaborate
    from einc.semantics.modules import load_program
    from einc.semantics.resolve import resolve

    from einc.passes.read_bounds import mark_reads_in_bounds
    from einc.passes.shared_values import share_equal_values
    from einc.passes.recurrence_groups import settle_groups
    from einc.passes.step_work import plan_step_work
    from einc.passes.storage import plan_storage

    program = _stage(None, load_program, path)
    resolution = _stage(program, resolve, program)
    ir_program = _stage(program, elaborate, program, resolution, outputs, allow_python)
    share_equal_values(ir_program)
    settle_groups(ir_program)
    plan_storage(ir_program)
    mark_reads_in_bounds(ir_program)
    _stage(program, plan_step_work, ir_program)
    return program, ir_program


def lower(path: str, target: str, outputs: list[str] | None = None, allow_python: bool = False):
    from einc.mlir import lower_program
    program, ir_program = front_end(path, outputs, allow_python)
    return _stage(program, lower_program, ir_program, target)


def compile_program(path: str, target: str = "llvm-cpu", outputs: list[str] | None = None,
                    allow_python: bool = False) -> bytes:
    from einc.build import compile_mlir
    return compile_mlir(lower(path, target, outputs, allow_python), target)


def emit_program(path: str, what: str, outputs: list[str] | None = None,
                 target: str = "llvm-cpu", allow_python: bool = False) -> str:
    """The intermediate form `what` of `path`; MLIR is the one built for `target`, since the
    lowering of recurrences differs per target."""
    if what == "ast":
        from einc.semantics.modules import load_program
        from einc.syntax.dump import format_module
        return format_module(_stage(None, load_program, path).entry)
    if what == "ir":
        from einc.ir.printer import format_program
        return format_program(front_end(path, outputs, allow_python)[1])
    if what == "mlir":
        return str(lower(path, target, outputs, allow_python))
    if what == "explain":
        from einc.ir.explain import explain_program
        return explain_program(front_end(path, outputs, allow_python)[1])
    raise ValueError(f"unknown form {what!r}")


def _stage(program, fn, *args):
    try:
        return fn(*args)
    except CompileError as err:
        if program is not None and err.sources is None:
            err.sources = program.sources
        raise
