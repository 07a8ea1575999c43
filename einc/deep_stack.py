"""The pipeline's stages run on a deep stack.

Elaboration recurses once per call of a recursive Einlang function (about 15 Python frames a
level, up to einc.semantics.evaluator.MAX_CALL_DEPTH levels) and the later stages once per level
of the values such calls build (`x * p(x, n - 1)`). Python's default of 1,000 frames on the main
thread's 8 MiB stack allowed 64 levels; a stage runs on a thread with STACK_BYTES of stack
(virtual: only what is used is paged in) under a limit of FRAMES frames.
"""
from __future__ import annotations

import functools
import sys
import threading
from typing import Callable

STACK_BYTES = 512 << 20
FRAMES = 100_000

_limit_lock = threading.Lock()
_running = 0        # deep stages running; the frame limit is restored when none is
_saved_limit = 0


def on_a_deep_stack(fn: Callable) -> Callable:
    """`fn` run on a thread of its own with a deep stack, its result or its error handed back; a
    call made on such a thread already runs there."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        if getattr(threading.current_thread(), "einc_deep_stack", False):
            return fn(*args, **kwargs)
        outcome: dict = {}

        def body() -> None:
            try:
                outcome["value"] = fn(*args, **kwargs)
            except BaseException as err:        # handed to the caller's thread below
                outcome["error"] = err
        thread = threading.Thread(target=body, name="einc-deep-stack", daemon=True)
        thread.einc_deep_stack = True
        _raise_limit()
        try:
            before = threading.stack_size(STACK_BYTES)     # the size a thread gets when started
            try:
                thread.start()
            finally:
                threading.stack_size(before)
            thread.join()
        finally:
            _restore_limit()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]
    return run


def _raise_limit() -> None:
    global _running, _saved_limit
    with _limit_lock:
        if _running == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, FRAMES))
        _running += 1


def _restore_limit() -> None:
    global _running
    with _limit_lock:
        _running -= 1
        if _running == 0:
            sys.setrecursionlimit(_saved_limit)
