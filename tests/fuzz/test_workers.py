"""The fuzzers' worker pool: a job that spins past its CPU-time limit is a hang, one that kills
its process is a crash, and neither stops the jobs after it."""
from __future__ import annotations

import os
import signal

from fuzz.workers import Pool


def add(a: int, b: int) -> int:
    return a + b


def spin() -> None:
    while True:
        pass


def die() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def fail() -> None:
    raise ValueError("bad input")


def test_hangs_and_crashes_are_outcomes_and_later_jobs_still_run():
    with Pool(2) as pool:
        outcomes = pool.run_all([(add, (2, 3), 60, False), (spin, (), 2, False), (die, (), 60, False),
                                 (fail, (), 60, False), (add, (4, 5), 60, True)])
    kinds = [o.kind for o in outcomes]
    assert kinds == ["ok", "hang", "crash", "raised", "ok"]
    assert outcomes[0].value == 5 and outcomes[4].value == 9
    assert outcomes[2].value == "signal 11" and "ValueError: bad input" in outcomes[3].value
