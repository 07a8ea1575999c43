"""In-process IREE compilation of an MLIR module to a .vmfb.

Uses `iree.compiler.api` (no subprocess). The compiler reports diagnostics only on fd 2, so the
call is wrapped in an fd-level redirect to a temporary file to recover the text on failure.
"""
from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from typing import Callable, Iterator

from iree.compiler import ir
from iree.compiler.api import Output, Session, Source

from einc import host_cpu
from einc.build.targets import get_target
from einc.runtime.integrity import seal
from einc.runtime.signature import CPU_FEATURES_KEY, PARAMETERS_KEY, TARGET_KEY


class IreeCompileError(Exception):
    """IREE rejected MLIR that einc generated: a compiler bug, not a user error."""

    def __init__(self, target: str, diagnostics: str):
        self.target = target
        self.diagnostics = diagnostics.strip()
        super().__init__(f"IREE failed to compile the module for {target}:\n{self.diagnostics}")


def compile_mlir(module_or_text, target: str, extra_flags: tuple[str, ...] = (),
                 parameters: str | None = None) -> bytes:
    """Compile an MLIR module (text or `ir.Module`) exporting `main` to sealed .vmfb bytes for
    `target` (einc.runtime.integrity). `extra_flags` go after the target's (tests pass IREE's
    executable dump flags). `parameters` is the digest of the module's parameter archive
    (einc.build.parameters), recorded for the runner."""
    flags = get_target(target).flags + tuple(extra_flags)
    text = module_or_text if isinstance(module_or_text, str) else _module_text(module_or_text)
    stamped = _stamp_target(text, target, parameters)
    with _captured_stderr() as read_stderr:
        vmfb = _run_compiler(stamped, flags)
        if vmfb is None:
            raise IreeCompileError(target, read_stderr())
    return seal(vmfb)


def _module_text(module) -> str:
    # Keep locations so IREE's diagnostics still point into the generated module's origins.
    return module.operation.get_asm(enable_debug_info=True)


def _stamp_target(text: str, target: str, parameters: str | None) -> str:
    """Add `einc.target` to `main`'s iree.reflection dictionary, `einc.parameters` when given,
    and for a target tuned to this CPU `einc.cpu_features` (its instruction set extensions,
    which the runner checks); returns the module as text.

    Edited in a private plain Context (dialects already loaded, unlike the Session's) and handed
    to the compiler as text, so no MLIR object crosses into the Session.
    """
    with ir.Context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as err:
            raise IreeCompileError(target, str(err)) from None
        main = _find_main(module)
        if main is None:
            raise IreeCompileError(target, "the module has no func.func @main")
        entries = {}
        if "iree.reflection" in main.attributes:
            entries = {a.name: a.attr for a in ir.DictAttr(main.attributes["iree.reflection"])}
        entries[TARGET_KEY] = ir.StringAttr.get(target)
        if parameters is not None:
            entries[PARAMETERS_KEY] = ir.StringAttr.get(parameters)
        if get_target(target).tuned_to_host:
            entries[CPU_FEATURES_KEY] = ir.StringAttr.get(" ".join(host_cpu.isa_features()))
        main.attributes["iree.reflection"] = ir.DictAttr.get(entries)
        return module.operation.get_asm(enable_debug_info=True)


def _find_main(module: ir.Module):
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            return op
    return None


def _run_compiler(text: str, flags: tuple[str, ...]) -> bytes | None:
    session = Session()
    try:
        session.set_flags(*flags)
        invocation = session.invocation()
        invocation.enable_console_diagnostics()
        source = Source.wrap_buffer(session, text.encode())
        if not (invocation.parse_source(source) and invocation.execute()):
            return None
        output = Output.open_membuffer()
        invocation.output_vm_bytecode(output)
        return bytes(output.map_memory())
    finally:
        session.close()


@contextmanager
def _captured_stderr() -> Iterator[Callable[[], str]]:
    """Point fd 2 at a temp file for the block; yields a function returning what was written so far."""
    with tempfile.TemporaryFile() as sink:
        def read() -> str:
            sink.seek(0)
            return sink.read().decode(errors="replace")

        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield read
        finally:
            os.dup2(saved, 2)
            os.close(saved)
