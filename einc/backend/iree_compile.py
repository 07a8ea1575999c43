"""IREE compilation of an MLIR module to a .vmfb, in a child process.

IREE's compiler runs in einc.backend.compile_server, a process of its own kept for the next build,
so that a crash in it (a segfault, docs/IREE_DEFECTS.md) is an error here, not the end of the
user's process. Its diagnostics (fd 2 there) come back through a log file per build.
"""
from __future__ import annotations

import atexit
import os
import pickle
import signal
import site
import subprocess
import sys
import tempfile
import threading
import warnings
from functools import partial
from typing import Callable

from einc.backend.compile_server import Request
from einc.diagnostics import BuildWarning
from einc.host_cpu import vector_unit
from einc.module_file import seal
from einc.target import Target


class IreeCompileError(Exception):
    """IREE rejected MLIR that einc generated: a compiler bug, not a user error."""

    def __init__(self, target: str, diagnostics: str):
        self.target = target
        self.diagnostics = diagnostics.strip()
        super().__init__(f"IREE failed to compile the module for {target}:\n{self.diagnostics}")


class IreeCompilerCrash(IreeCompileError):
    """IREE's compiler died (a signal) building a module einc generated."""

    def __init__(self, target: str, how: str, diagnostics: str):
        self.target, self.how = target, how
        self.diagnostics = diagnostics.strip()
        Exception.__init__(self, f"IREE's compiler crashed ({how}) building the module for {target}"
                           + (f":\n{self.diagnostics}" if self.diagnostics else ""))


def compile_mlir(module_or_text, target: Target, extra_flags: tuple[str, ...] = ()) -> bytes:
    """Compile an MLIR module (text or `ir.Module`, its reflection already saying what the runner
    needs: einc.mlir.signature) exporting `main` to sealed .vmfb bytes for `target`
    (einc.module_file). `extra_flags` go after the target's (tests pass IREE's executable dump
    flags). Where IREE's compiler crashes, the target's flags_after_a_crash get a second try, with
    a BuildWarning."""
    text = module_or_text if isinstance(module_or_text, str) else _module_text(module_or_text)
    flags = target.flags_on(vector_unit()) + tuple(extra_flags)
    request = partial(Request, text, separate_refs=target.has_defect("IREE-251"))
    try:
        return seal(_compile(target, request, flags))
    except IreeCompilerCrash as crash:
        if not target.flags_after_a_crash:
            raise
        how = crash.how
    vmfb = _compile(target, request, flags + target.flags_after_a_crash)
    warnings.warn(BuildWarning(f"IREE's compiler crashed ({how}) building the module for {target.name}; "
                               f"built again with {' '.join(target.flags_after_a_crash)}, its kernels "
                               f"possibly slower (an IREE defect: please report the program)"), stacklevel=2)
    return seal(vmfb)


def _compile(target: Target, request: Callable[..., Request], flags: tuple[str, ...]) -> bytes:
    with tempfile.NamedTemporaryFile(prefix="einc-iree-", suffix=".log") as log:
        server = _SERVERS.take()
        try:
            answer = server.ask(request(flags=flags, log_path=log.name))
        except _ServerDied as died:
            raise IreeCompilerCrash(target.name, died.how, _read(log.name)) from None
        except BaseException:       # interrupted mid-build: its answer would be read by the next
            server.kill()
            raise
        _SERVERS.give_back(server)
        if answer[0] != "built":
            raise IreeCompileError(target.name, _read(log.name))
        return answer[1]


def start_compiler() -> None:
    """Have a compiler process starting (it imports IREE's compiler, a fraction of a second) while
    the caller lowers the program it is about to build."""
    _SERVERS.give_back(_SERVERS.take())


def _read(path: str) -> str:
    with open(path, "rb") as log:
        return log.read().decode(errors="replace")


class _ServerDied(Exception):
    def __init__(self, how: str):
        super().__init__(how)
        self.how = how


def _environment() -> dict[str, str]:
    """The compiler process's environment: this one's, with einc importable there as it is here
    (a checkout on sys.path but not on PYTHONPATH, say)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root in site.getsitepackages() + [site.getusersitepackages()]:
        return dict(os.environ)
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH")))))


class _Server:
    """One compiler process (einc.backend.compile_server) and the pipes to it."""

    def __init__(self):
        # a session of its own: a terminal's Ctrl-C reaches only the parent, which ends this
        # process; one arriving while the server's interpreter started killed it loudly
        self.process = subprocess.Popen([sys.executable, "-m", "einc.backend.compile_server"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_environment(),
                                        start_new_session=True)

    def ask(self, request: Request) -> tuple:
        try:
            pickle.dump(request, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
            return pickle.load(self.process.stdout)
        except (EOFError, OSError, pickle.UnpicklingError):
            raise _ServerDied(self._how_it_ended()) from None

    def _how_it_ended(self) -> str:
        status = self.process.wait()
        self.close()
        if status < 0:
            try:
                return signal.Signals(-status).name
            except ValueError:
                return f"signal {-status}"
        return f"exit status {status}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.kill()
        self.close()

    def close(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _Servers:
    """Compiler processes kept between builds: one per build running at once, at most KEEP idle."""
    KEEP = 2

    def __init__(self):
        self.idle: list[_Server] = []
        self.lock = threading.Lock()
        atexit.register(self.close_all)
        if hasattr(os, "register_at_fork"):     # POSIX
            os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        """In a forked child: the idle processes' pipes are the parent's to use."""
        self.idle, self.lock = [], threading.Lock()

    def take(self) -> _Server:
        with self.lock:
            while self.idle:
                server = self.idle.pop()
                if server.alive():
                    return server
                server.close()
        return _Server()

    def give_back(self, server: _Server) -> None:
        with self.lock:
            if server.alive() and len(self.idle) < self.KEEP:
                self.idle.append(server)
                return
        server.close()

    def close_all(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for server in idle:
            server.close()


_SERVERS = _Servers()


def _module_text(module) -> str:
    # Keep locations so IREE's diagnostics still point into the generated module's origins.
    return module.operation.get_asm(enable_debug_info=True)
