"""Options of the local-task CPU device einc opens: how many IREE task workers it may start.

By default IREE chooses (one worker per physical core); `EINC_CPU_WORKERS=N` caps it at N, for a
machine shared by several processes. A cap below the cores lost on this project's two-core
machine (docs/DECISIONS.md, IREE's CPU threads), so einc sets none of its own.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import iree.runtime as rt

from einc.runtime.errors import RunError

WORKERS_VARIABLE = "EINC_CPU_WORKERS"


@dataclass(frozen=True)
class CpuDeviceOptions:
    workers: int | None = None  # the most task workers IREE may start; None: IREE's own count

    @staticmethod
    def from_environment() -> CpuDeviceOptions:
        text = os.environ.get(WORKERS_VARIABLE)
        if not text:
            return CpuDeviceOptions()
        if not text.strip().isdigit() or int(text) < 1:
            raise RunError(f"{WORKERS_VARIABLE} must be a whole number of workers, at least 1 (it is {text!r})")
        return CpuDeviceOptions(int(text))

    def apply(self) -> None:
        """Sets IREE's process-wide task flags, which a local-task device reads when it is created
        (so before einc opens its first one). Without a cap it leaves them as they are."""
        if self.workers is not None:
            rt.flags.parse_flags(f"--task_topology_max_group_count={self.workers}")
