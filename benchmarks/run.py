"""Benchmarks: einc next to NumPy and JAX on recurrences (issue 3) and dense programs (issue 10).

    .venv/bin/python benchmarks/run.py [--only SUBSTRING] [--device local-sync|local-task|vulkan] [--one-core]

Per case: build once with einc (llvm-cpu, or vulkan-spirv with --device vulkan; a second, shorter
build where the check runs at a smaller size), check the einc result against the NumPy version
with the case's tolerance (a mismatch stops the run), check JAX against it too, then time every
contender in this one process: einc on each device (the faster is reported), NumPy and JAX.
Timing is interleaved (one sample of each contender per round, so load on the machine hits all
alike; each sample after SETTLE_SECONDS of sleep, so the last one's idle threads have stopped
spinning), a sample repeats a fast call until it takes MIN_SAMPLE seconds, and a rate is taken from
the best sample after a warm-up call. Ratios are einc's rate over the other's; a case with named
dims is also built with them fixed (`--dim`, its `fixed_dims`) and timed in the same rounds, and
`named/--dim` is its time with named dims over its time with fixed ones (1: no cost). With --device
vulkan, JAX and NumPy still run on the CPU; a case the target cannot run (f64, E011) is skipped
with the reason, and a vector recurrence (one workgroup runs its steps; slow on lavapipe) is timed
at `vulkan_n`.

--one-core compares the work each contender does on one core, which other processes on the
machine disturb far less than wall-clock rates: the run is pinned to one CPU, NumPy's BLAS and
XLA run one thread, einc runs on local-sync, and a sample is the process CPU time.
"""
from __future__ import annotations

import argparse
import io
import math
import os
import sys
import time
from dataclasses import replace
from typing import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import einc  # noqa: E402
from einc.diagnostics import CompileError  # noqa: E402
from benchmarks.cases import CASES, Case  # noqa: E402
from benchmarks.dense_cases import DENSE_CASES  # noqa: E402

CPU_DEVICES = ("local-sync", "local-task")
MIN_SAMPLE = 0.05          # seconds of work in one timed sample
MIN_ROUNDS, MAX_ROUNDS = 3, 7
ROUND_BUDGET = 12.0        # seconds of sampling after which no round beyond MIN_ROUNDS starts
SLOW_BUDGET = 40.0         # ... and none beyond the first (calls of seconds each, lavapipe)
# OpenBLAS's idle threads keep spinning for about 0.1 s after a call (perf: blas_thread_server
# took a third of the samples of an einc local-task run timed right after NumPy), so a sample
# starts only once the last contender's threads have gone to sleep.
SETTLE_SECONDS = 0.15
PEERS = {"recurrence": ("NumPy loop", "JAX lax.scan"), "dense": ("NumPy", "JAX jit")}
ONE_CORE_MARK = "EINC_BENCH_ONE_CORE"     # set once the run is pinned, so it re-executes only once


def check(case: Case, got, expected, what: str) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    if case.tolerance:
        np.testing.assert_allclose(got, expected, err_msg=what, **case.tolerance)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)


class Builds:
    """einc builds by (source, output): cases that share a program (one CNN at three batch
    sizes, a named-dim matmul at three sizes) are built once."""

    def __init__(self, target: str):
        self.target = target
        self.vmfbs: dict[tuple, tuple[bytes, float]] = {}

    def get(self, source: str, output: str, unchecked_indices: bool = False,
            dims: dict | None = None) -> tuple[bytes, float]:
        key = (source, output, unchecked_indices, tuple(sorted((dims or {}).items())))
        if key not in self.vmfbs:
            start = time.perf_counter()
            vmfb = einc.compile(source, target=self.target, outputs=[output], dims=dims,
                                unchecked_indices=unchecked_indices).vmfb
            self.vmfbs[key] = (vmfb, time.perf_counter() - start)
        return self.vmfbs[key]


def load_jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)     # the Kalman case is float64; others stay f32
    return jax


def interleaved_seconds(runs: dict[str, Callable[[], object]], clock: Callable[[], float]) -> dict[str, float]:
    """Seconds per call of each run: warmed up, then sampled round by round."""
    repeats = {}
    for name, run in runs.items():
        start = clock()
        run()
        repeats[name] = max(1, math.ceil(MIN_SAMPLE / max(clock() - start, 1e-6)))
    best = {name: math.inf for name in runs}
    spent, rounds = 0.0, 0
    while _another_round(rounds, spent):
        for name, run in runs.items():
            time.sleep(SETTLE_SECONDS)
            start = clock()
            for _ in range(repeats[name]):
                run()
            elapsed = clock() - start
            spent += elapsed
            best[name] = min(best[name], elapsed / repeats[name])
        rounds += 1
    return best


def _another_round(rounds: int, spent: float) -> bool:
    if rounds == 0:
        return True
    if rounds < MIN_ROUNDS:
        return spent < SLOW_BUDGET
    return rounds < MAX_ROUNDS and spent < ROUND_BUDGET


def bench_case(case: Case, jax, devices: tuple, builds: Builds, clock: Callable[[], float]) -> dict:
    row = {"case": case.name, "unit": case.unit, "group": case.group}
    inputs = case.inputs(case.n)
    vmfb, row["build"] = builds.get(case.source(case.n), case.output, case.unchecked_indices)
    sink = io.StringIO()              # what the program prints is not part of the benchmark
    programs = {d: einc.load(vmfb, device=d) for d in devices}
    call = {d: (lambda p=p, x=inputs: p.run(x, stdout=sink)) for d, p in programs.items()}

    # correctness first: at the timed size, or at check_n when the NumPy loop would take too long
    check_n = case.check_n or case.n
    check_inputs = case.inputs(check_n)
    checked = programs[devices[0]] if check_n == case.n else \
        einc.load(builds.get(case.source(check_n), case.output, case.unchecked_indices)[0], devices[0])
    expected = case.numpy(check_n, check_inputs)
    check(case, checked.run(check_inputs, stdout=sink)[case.output], expected,
          f"einc vs NumPy, {case.name}, n = {check_n}")
    row["checked_at"] = check_n
    if check_n == case.n:
        for device in devices:
            check(case, call[device]()[case.output], expected, f"einc on {device}")
    fixed = _fixed_twin(case, devices, builds, inputs, sink)
    for device, run in fixed.items():
        check(case, run()[case.output], expected, f"einc built with --dim on {device}")

    numpy_n = case.numpy_n or case.n
    numpy_inputs = inputs if numpy_n == case.n else case.inputs(numpy_n)
    runs = {f"einc {d}": call[d] for d in devices}
    runs.update({f"fixed {d}": run for d, run in fixed.items()})
    runs["numpy"] = lambda: case.numpy(numpy_n, numpy_inputs)
    work = {name: case.steps(case.n) for name in runs}
    work["numpy"] = case.steps(numpy_n)
    row["numpy_scaled"] = numpy_n != case.n
    if jax is not None:
        run_jax = case.jax()
        jax_inputs = {k: jax.numpy.asarray(v) for k, v in inputs.items()}
        jax_result = jax.block_until_ready(run_jax(case.n, jax_inputs))    # compiles
        if check_n == case.n:
            check(case, jax_result, expected, "JAX vs NumPy")
        runs["jax"] = lambda: jax.block_until_ready(run_jax(case.n, jax_inputs))
        work["jax"] = case.steps(case.n)

    seconds = interleaved_seconds(runs, clock)
    rates = {name: work[name] / s for name, s in seconds.items()}
    row["device"] = max(devices, key=lambda d: rates[f"einc {d}"])
    row["einc"] = rates[f"einc {row['device']}"]
    row["numpy"] = rates["numpy"]
    row["jax"] = rates.get("jax")
    # time with named dims over time with them fixed, each on its faster device
    row["named_over_fixed"] = max(rates[f"fixed {d}"] for d in fixed) / row["einc"] if fixed else None
    return row


def _fixed_twin(case: Case, devices: tuple, builds: Builds, inputs: dict, sink) -> dict:
    """Per device, a call of the case's program built with its named dims fixed (none without)."""
    if not case.fixed_dims:
        return {}
    vmfb = builds.get(case.source(case.n), case.output, case.unchecked_indices, case.fixed_dims)[0]
    programs = {d: einc.load(vmfb, device=d) for d in devices}
    return {d: (lambda p=p: p.run(inputs, stdout=sink)) for d, p in programs.items()}


def rate(value: float) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {suffix}/s"
    return f"{value:.3g} /s"


def ratio(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.2f}" if value >= 0.1 else f"{value:.2g}"


def table(rows: list[dict], group: str) -> str:
    numpy_name, jax_name = PEERS[group]
    head = ["case", "einc (device)", numpy_name, jax_name, "einc/JAX", "einc/NumPy", "named/--dim", "build"]
    lines = []
    for r in rows:
        jax_rate = r.get("jax")
        lines.append([
            f"{r['case']} ({r['unit']}s/s)",
            f"{rate(r['einc'])} ({r['device']})",
            rate(r["numpy"]) + (" *" if r["numpy_scaled"] else ""),
            rate(jax_rate) if jax_rate else "n/a",
            ratio(r["einc"] / jax_rate) if jax_rate else "n/a",
            ratio(r["einc"] / r["numpy"]),
            ratio(r["named_over_fixed"]) if r.get("named_over_fixed") else "",
            f"{r['build']:.1f} s",
        ])
    widths = [max(len(x) for x in col) for col in zip(head, *lines)]
    fmt = "| " + " | ".join(f"{{:<{w}}}" for w in widths) + " |"
    out = [fmt.format(*head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    return "\n".join(out + [fmt.format(*line) for line in lines])


def runs_on(case: Case, device: str) -> str | None:
    """Why `case` cannot run on `device`, or None."""
    if device == "vulkan" and any(np.asarray(v).dtype == np.float64 for v in case.inputs(2).values()):
        return "f64 (the vulkan-spirv target is f32, i32 and bool only)"
    return None


def run_on_one_core() -> None:
    """Re-execute this run pinned to one CPU with single-threaded BLAS and XLA (their thread
    counts are read when they load)."""
    if os.environ.get(ONE_CORE_MARK):
        return
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    xla_flags = os.environ.get("XLA_FLAGS", "")
    os.environ.update({ONE_CORE_MARK: str(cpu), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                       "XLA_FLAGS": f"{xla_flags} --xla_cpu_multi_thread_eigen=false "
                                    "intra_op_parallelism_threads=1".strip()})
    os.execv(sys.executable, [sys.executable, *sys.argv])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose name contains this text")
    parser.add_argument("--device", choices=CPU_DEVICES + ("vulkan",), help="time einc on this device only")
    parser.add_argument("--one-core", action="store_true",
                        help="one pinned core, single-threaded peers, process CPU time (einc on local-sync)")
    args = parser.parse_args()
    if args.one_core:
        if args.device not in (None, "local-sync"):
            parser.error("--one-core times einc on local-sync")
        run_on_one_core()
    jax = load_jax()
    if jax is None:
        print("JAX is not installed: its column is skipped (make bench installs it)")
    devices = ("local-sync",) if args.one_core else (args.device,) if args.device else CPU_DEVICES
    clock = time.process_time if args.one_core else time.perf_counter
    builds = Builds("vulkan-spirv" if args.device == "vulkan" else "llvm-cpu")
    print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores are shared; busy machines give noisy rates)")
    if args.one_core:
        print(f"one core (CPU {os.environ[ONE_CORE_MARK]}), single-threaded NumPy and JAX, process CPU time")
    cases = [c for c in CASES + DENSE_CASES if args.only is None or args.only.lower() in c.name.lower()]
    rows = []
    for case in cases:
        reason = runs_on(case, devices[0])
        if reason:
            print(f"{case.name}: skipped on {devices[0]}: {reason}", flush=True)
            continue
        if devices == ("vulkan",) and case.vulkan_n:
            case = replace(case, name=f"{case.name} (n = {case.vulkan_n} on Vulkan)", n=case.vulkan_n)
        print(f"{case.name} ...", flush=True)
        try:
            rows.append(bench_case(case, jax, devices, builds, clock))
        except CompileError as err:          # a program the target cannot lower (E011)
            print(f"  skipped on {devices[0]}: {str(err).splitlines()[0]}", flush=True)
            continue
        r = rows[-1]
        within = ", ".join(f"{k}={v:g}" for k, v in case.tolerance.items()) or "bit for bit"
        print(f"  built in {r['build']:.1f} s; einc matches NumPy at n = {r['checked_at']} ({within})", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}\n")
    for group in PEERS:
        if any(r["group"] == group for r in rows):
            print(table([r for r in rows if r["group"] == group], group) + "\n")
    if any(r["numpy_scaled"] for r in rows):
        print("* NumPy loop timed on fewer steps (see benchmarks/cases.py) and scaled per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
