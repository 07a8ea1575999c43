"""A fenced call's wait sleeps with a 1 us timer slack and gives the thread its own back
(einc/runtime/timer_slack.py), read from /proc, independently of the prctl the module uses."""
import sys
import threading

import pytest

from einc.runtime.timer_slack import fine_sleeps

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's timer slack")


def _slack_ns() -> int:
    with open(f"/proc/{threading.get_native_id()}/timerslack_ns") as f:
        return int(f.read())


def test_the_slack_is_fine_inside_and_the_threads_own_after():
    own = _slack_ns()
    with fine_sleeps():
        assert _slack_ns() == 1000
    assert _slack_ns() == own


def test_the_slack_comes_back_when_the_wait_is_interrupted():
    own = _slack_ns()
    with pytest.raises(KeyboardInterrupt):
        with fine_sleeps():
            raise KeyboardInterrupt
    assert _slack_ns() == own


def test_only_the_waiting_thread_changes():
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        if inside.wait(60):
            seen["other"] = _slack_ns()
        done.set()

    thread = threading.Thread(target=other, daemon=True)
    thread.start()
    own = _slack_ns()
    with fine_sleeps():
        inside.set()
        assert done.wait(60)
    assert seen["other"] == own
