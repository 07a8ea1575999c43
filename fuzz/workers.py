"""Run jobs in child processes, so that a hang or a crash of the compiler is an outcome, not the
end of the fuzzing run.

Workers are spawned (not forked: IREE's compiler and runtime hold threads and global state) and
reused across jobs. A job that uses more than its time limit in CPU time is a `hang` and its
worker is killed; CPU time, since on a loaded machine a build's wall time is many times its CPU
time (a job stuck without computing is caught at WALL_FACTOR times the limit in wall time). A
worker that dies (a signal, an abort inside native code) is a `crash`; both are replaced.
A job is a module-level function and its arguments; its result must pickle.
"""
from __future__ import annotations

import multiprocessing
import os
import time
import traceback
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait

CONTEXT = multiprocessing.get_context("spawn")
WALL_FACTOR = 20
POLL_SECONDS = 2.0
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Outcome:
    kind: str                      # "ok", "raised", "hang", "crash"
    value: object = None           # the result ("ok") or a description


@dataclass
class Job:
    key: object
    fn: object
    args: tuple
    timeout: float
    alone: bool = False            # run in a fresh worker, retired after it


def _serve(conn) -> None:
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        fn, args = job
        try:
            conn.send(Outcome("ok", fn(*args)))
        except Exception as err:  # noqa: BLE001 - reported to the parent as the job's outcome
            conn.send(Outcome("raised", f"{type(err).__name__}: {err}\n{traceback.format_exc()}"))


class Worker:
    def __init__(self):
        self.conn, child = CONTEXT.Pipe()
        self.process = CONTEXT.Process(target=_serve, args=(child,), daemon=True)
        self.process.start()
        child.close()
        self.job: Job | None = None
        self.jobs_done = 0
        self.started = self.cpu_at_start = 0.0

    def start(self, job: Job) -> None:
        self.job = job
        self.jobs_done += 1
        self.started = time.monotonic()
        self.cpu_at_start = self.cpu_seconds()
        self.conn.send((job.fn, job.args))

    def cpu_seconds(self) -> float:
        """CPU time of the worker and the processes it waited for (Linux /proc; else 0)."""
        try:
            with open(f"/proc/{self.process.pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return sum(int(f) for f in fields[11:15]) / TICKS

    def over_time(self) -> bool:
        limit = self.job.timeout
        return (self.cpu_seconds() - self.cpu_at_start > limit
                or time.monotonic() - self.started > limit * WALL_FACTOR)

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()


class Pool:
    """`run()` yields (key, Outcome) as the submitted jobs finish (`submit` may add jobs while it
    runs); workers stay up between runs until `close()` (the pool is a context manager)."""

    def __init__(self, size: int):
        self.size = max(1, size)
        self.pending: deque[Job] = deque()
        self.workers: list[Worker] = []

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def submit(self, key, fn, args: tuple, timeout: float, alone: bool = False) -> None:
        """`alone`: a fresh process for this job (Vulkan: a lost device stays lost in a process,
        and the next module would fail for it)."""
        self.pending.append(Job(key, fn, args, timeout, alone))

    def run(self):
        while self.pending or any(w.job for w in self.workers):
            self._fill()
            yield from self._collect()

    def run_all(self, jobs: list) -> list:
        """Outcomes of (fn, args, timeout, alone) jobs, in their order."""
        for k, (fn, args, timeout, alone) in enumerate(jobs):
            self.submit(k, fn, args, timeout, alone)
        outcomes = dict(self.run())
        return [outcomes[k] for k in range(len(jobs))]

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = []

    def _fill(self) -> None:
        """Start pending jobs on idle workers, spawning up to `size` of them."""
        while self.pending:
            idle = next((w for w in self.workers if w.job is None), None)
            if idle is None:
                if len(self.workers) >= self.size:
                    return
                idle = Worker()
                self.workers.append(idle)
            elif self.pending[0].alone and idle.jobs_done:
                idle.stop()                    # it has run something: not fresh
                self.workers.remove(idle)
                continue
            idle.start(self.pending.popleft())

    def _collect(self):
        busy = [w for w in self.workers if w.job is not None]
        ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], POLL_SECONDS)
        for worker in busy:
            outcome = self._outcome(worker, ready)
            if outcome is None:
                continue
            key, alone = worker.job.key, worker.job.alone
            worker.job = None
            if outcome.kind in ("hang", "crash") or alone:
                worker.stop()
                self.workers.remove(worker)
            yield key, outcome

    @staticmethod
    def _outcome(worker: Worker, ready: list) -> Outcome | None:
        if worker.conn in ready:
            try:
                return worker.conn.recv()
            except (EOFError, OSError):
                pass
        if worker.conn in ready or worker.process.sentinel in ready:
            worker.process.join(timeout=5)
            code = worker.process.exitcode
            return Outcome("crash", f"signal {-code}" if code is not None and code < 0 else f"exit status {code}")
        if worker.over_time():
            return Outcome("hang", f"no result in {worker.job.timeout:.0f} s of CPU time")
        return None
