"""Sleeping without Linux's default timer slack, for a caller polling work it waits for.

Linux lets a thread's timed sleep end up to its timer slack late (50 us by default), so a poll
asking for 20 us woke after ~70-95 us on this project's machines, longer than a short call's
whole work (docs/DECISIONS.md, "The caller waits without spinning"). `fine_sleeps` sets the
calling thread's slack to 1 us for the duration of a wait and gives it back its own after;
elsewhere than Linux it changes nothing.
"""
from __future__ import annotations

import contextlib
import ctypes
import sys

_PR_SET_TIMERSLACK = 29
_PR_GET_TIMERSLACK = 30
_FINE_SLACK_NS = 1000


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


@contextlib.contextmanager
def fine_sleeps():
    """The calling thread's sleeps end within ~1 us of their time (plus the scheduler's own
    wake-up) while inside."""
    if _PRCTL is None:
        yield
        return
    own = _PRCTL(_PR_GET_TIMERSLACK, 0, 0, 0, 0)
    changed = own > _FINE_SLACK_NS and _PRCTL(_PR_SET_TIMERSLACK, _FINE_SLACK_NS, 0, 0, 0) == 0
    try:
        yield
    finally:
        if changed:
            _PRCTL(_PR_SET_TIMERSLACK, own, 0, 0, 0)
