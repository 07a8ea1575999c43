"""The process IREE's compiler runs in, so that a crash in it (a segfault: docs/IREE_DEFECTS.md)
ends this process and not the user's.

einc.backend.iree_compile starts it as `python -m einc.backend.compile_server` and sends it one
request at a time on its stdin: a pickled `Request`; the answer goes back pickled on its stdout:
("built", vmfb bytes) or ("rejected", None), IREE's diagnostics being in the request's log file
either way. It leaves when its stdin closes, and by itself when the process that started it is gone.
"""
from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable

from iree.compiler.api import Output, Session, Source


@dataclass(frozen=True)
class Request:
    mlir: str                     # the module's text
    flags: tuple[str, ...]        # iree-compile's flags
    separate_refs: bool           # IREE-251: einc.backend.vm_branches on the VM module
    log_path: str                 # where IREE's diagnostics (fd 2) go for this request


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's to handle: it ends this process
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)     # anything IREE prints on stdout must not mix with the answers
    _leave_when_orphaned(os.getppid())
    requests = sys.stdin.buffer
    while True:
        try:
            request = pickle.load(requests)
        except EOFError:
            return
        try:
            pickle.dump(_answer(request), answers, protocol=pickle.HIGHEST_PROTOCOL)
            answers.flush()
        except BrokenPipeError:     # the process that asked is gone
            return


def _answer(request: Request) -> tuple[str, bytes | None]:
    with open(request.log_path, "ab") as log:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            vmfb = on_a_deep_stack(_compile, request)
        except Exception as err:  # noqa: BLE001 - handed back as IREE's rejection, with its text
            os.write(2, f"{type(err).__name__}: {err}\n".encode())
            vmfb = None
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    return ("built", vmfb) if vmfb is not None else ("rejected", None)


def _compile(request: Request) -> bytes | None:
    session = Session()
    try:
        session.set_flags(*request.flags)
        invocation = session.invocation()
        invocation.enable_console_diagnostics()
        source = Source.wrap_buffer(session, request.mlir.encode())
        if not (invocation.parse_source(source) and invocation.execute()):
            return None
        if request.separate_refs:
            invocation = _with_separate_refs(session, invocation)
        output = Output.open_membuffer()
        invocation.output_vm_bytecode(output)
        return bytes(output.map_memory())
    finally:
        session.close()


def _with_separate_refs(session, compiled):
    """An invocation holding `compiled`'s VM module with its branches' repeated refs made values
    of their own (IREE-251, einc/backend/vm_branches.py), ready to serialize."""
    from einc.backend.vm_branches import separate_repeated_refs
    session.context     # the module is wrapped in the session's context, which Python then owns
    module = compiled.export_module()
    separate_repeated_refs(module)
    invocation = session.invocation()
    invocation.enable_console_diagnostics()
    invocation.import_module(module)
    return invocation


# IREE's passes recurse on the calling thread's stack: a program with a deep nest of matches and
# a long chain of sums needed 12-16 MiB, and the process died (SIGSEGV) on the main thread's 8.
# The compiler runs on a thread of its own with this much (virtual: only what is used is paged in).
COMPILER_STACK_BYTES = 256 << 20


def on_a_deep_stack(fn: Callable, *args):
    """fn(*args) run on a new thread with COMPILER_STACK_BYTES of stack; its result or its error."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = fn(*args)
        except BaseException as err:        # handed to the caller's thread below
            outcome["error"] = err
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


ORPHAN_CHECK_SECONDS = 1.0


def _leave_when_orphaned(parent: int) -> None:
    """Exit as soon as the starting process is gone (killed in the middle of a build, say), even
    while a compile is running: nobody is left to read the answer."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_CHECK_SECONDS)
        os._exit(0)
    threading.Thread(target=watch, name="einc-compile-orphan-watch", daemon=True).start()


if __name__ == "__main__":
    main()
