"""Options of the local-task CPU device einc opens: how many IREE task workers it gets.

While a call runs, the calling thread waits on the call's fence, and IREE's semaphore wait spins
(about 1.5 ms of CPU per wait, measured) before it sleeps: the caller holds a core for most of
a short call. With one worker per core the workers share their cores with that spinning caller,
so einc gives IREE one worker fewer than the CPUs the process may use (at least one). Figures:
docs/DECISIONS.md, IREE's CPU threads. `EINC_CPU_WORKERS` sets the count instead.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import iree.runtime as rt

from einc.runtime.errors import RunError

WORKERS_VARIABLE = "EINC_CPU_WORKERS"


@dataclass(frozen=True)
class CpuDeviceOptions:
    workers: int  # the most task workers IREE may start (its topology picks up to this many cores)

    @staticmethod
    def from_environment() -> CpuDeviceOptions:
        text = os.environ.get(WORKERS_VARIABLE)
        if not text:
            return CpuDeviceOptions(max(1, len(os.sched_getaffinity(0)) - 1))
        if not text.strip().isdigit() or int(text) < 1:
            raise RunError(f"{WORKERS_VARIABLE} must be a whole number of workers, at least 1 (it is {text!r})")
        return CpuDeviceOptions(int(text))

    def apply(self) -> None:
        """Sets IREE's process-wide task flags; a local-task device reads them when it is created."""
        rt.flags.parse_flags(f"--task_topology_max_group_count={self.workers}")
