"""In-process IREE compilation of an MLIR module to a .vmfb.

Uses `iree.compiler.api` (no subprocess). The compiler reports diagnostics only on fd 2, so the
call is wrapped in an fd-level redirect to a temporary file to recover the text on failure.
"""
from __future__ import annotations

import os
import sys
import tempfile
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

from iree.compiler.api import Invocation, Output, Session, Source

from einc.host_cpu import vector_unit
from einc.module_file import seal
from einc.backend.vm_branches import separate_repeated_refs
from einc.target import Target


class IreeCompileError(Exception):
    """IREE rejected MLIR that einc generated: a compiler bug, not a user error."""

    def __init__(self, target: str, diagnostics: str):
        self.target = target
        self.diagnostics = diagnostics.strip()
        super().__init__(f"IREE failed to compile the module for {target}:\n{self.diagnostics}")


def compile_mlir(module_or_text, target: Target, extra_flags: tuple[str, ...] = ()) -> bytes:
    """Compile an MLIR module (text or `ir.Module`, its reflection already saying what the runner
    needs: einc.mlir.signature) exporting `main` to sealed .vmfb bytes for `target`
    (einc.module_file). `extra_flags` go after the target's (tests pass IREE's executable dump
    flags)."""
    text = module_or_text if isinstance(module_or_text, str) else _module_text(module_or_text)
    with _captured_stderr() as read_stderr:
        vmfb = _on_a_deep_stack(_run_compiler, text, target.flags_on(vector_unit()) + tuple(extra_flags),
                                target.has_defect("IREE-251"))
        if vmfb is None:
            raise IreeCompileError(target.name, read_stderr())
    return seal(vmfb)


# IREE's passes recurse on the calling thread's stack: a program with a deep nest of matches and
# a long chain of sums needed 12-16 MiB, and the process died (SIGSEGV) on the main thread's 8.
# The compiler runs on a thread of its own with this much (virtual: only what is used is paged in).
COMPILER_STACK_BYTES = 256 << 20
_STACK_SIZE_LOCK = threading.Lock()


def _on_a_deep_stack(fn: Callable, *args):
    """fn(*args) run on a new thread with COMPILER_STACK_BYTES of stack; its result or its error."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = fn(*args)
        except BaseException as err:        # handed to the caller's thread below
            outcome["error"] = err
    with _STACK_SIZE_LOCK:
        before = threading.stack_size(COMPILER_STACK_BYTES)
        try:
            thread = threading.Thread(target=run, name="einc-iree-compile")
            thread.start()
        finally:
            threading.stack_size(before)
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _module_text(module) -> str:
    # Keep locations so IREE's diagnostics still point into the generated module's origins.
    return module.operation.get_asm(enable_debug_info=True)


def _run_compiler(text: str, flags: tuple[str, ...], separate_refs: bool) -> bytes | None:
    session = Session()
    try:
        session.set_flags(*flags)
        invocation = session.invocation()
        invocation.enable_console_diagnostics()
        source = Source.wrap_buffer(session, text.encode())
        if not (invocation.parse_source(source) and invocation.execute()):
            return None
        if separate_refs:
            invocation = _with_separate_refs(session, invocation)
        output = Output.open_membuffer()
        invocation.output_vm_bytecode(output)
        return bytes(output.map_memory())
    finally:
        session.close()


def _with_separate_refs(session: Session, compiled: Invocation) -> Invocation:
    """An invocation holding `compiled`'s VM module with its branches' repeated refs made values
    of their own (IREE-251, einc/backend/vm_branches.py), ready to serialize."""
    session.context     # the module is wrapped in the session's context, which Python then owns
    module = compiled.export_module()
    separate_repeated_refs(module)
    invocation = session.invocation()
    invocation.enable_console_diagnostics()
    invocation.import_module(module)
    return invocation


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
