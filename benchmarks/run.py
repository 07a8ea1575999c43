"""Recurrence benchmarks (issue 3): einc next to a NumPy/Python loop and JAX `lax.scan`.

    .venv/bin/python benchmarks/run.py [--only SUBSTRING] [--device local-sync|local-task]

Per case: build once with einc (llvm-cpu; a second, shorter build where the check runs at a
smaller size), check the einc result against the NumPy loop with the case's tolerance (a
mismatch stops the run), then time einc on both CPU devices (the faster one is reported), the
NumPy loop, and JAX when it is installed, all in this one process. Times are the best of a few
runs; rates are steps (or cells) per second, ratios are einc's rate over the other's.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import einc  # noqa: E402
from benchmarks.cases import CASES, Case  # noqa: E402

DEVICES = ("local-sync", "local-task")


def best_time(run, budget: float = 3.0, most: int = 5) -> float:
    """The fastest of up to `most` calls, stopping once `budget` seconds have been spent."""
    times, spent = [], 0.0
    while len(times) < most and (spent < budget or not times):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
        spent += times[-1]
    return min(times)


def check(case: Case, got, expected, what: str) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    if case.tolerance:
        np.testing.assert_allclose(got, expected, err_msg=what, **case.tolerance)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)


def einc_build(case: Case, n: int) -> bytes:
    return einc.compile(case.source(n), target="llvm-cpu", outputs=[case.output]).vmfb


def load_jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)     # the Kalman case is float64; others stay f32
    return jax


def bench_case(case: Case, jax, devices: tuple) -> dict:
    row = {"case": case.name, "unit": case.unit}
    inputs = case.inputs(case.n)
    start = time.perf_counter()
    vmfb = einc_build(case, case.n)
    row["build"] = time.perf_counter() - start
    programs = {d: einc.load(vmfb, device=d) for d in devices}

    # correctness first: at the timed size, or at check_n when the loop would take too long
    check_n = case.check_n or case.n
    check_inputs = case.inputs(check_n)
    checked = programs[devices[0]] if check_n == case.n else einc.load(einc_build(case, check_n), devices[0])
    got = checked(**check_inputs)[case.output]
    numpy_n = case.numpy_n or case.n
    start = time.perf_counter()
    expected = case.numpy(check_n, check_inputs)
    numpy_seconds = time.perf_counter() - start
    check(case, got, expected, f"einc vs NumPy, {case.name}, n = {check_n}")
    row["checked_at"] = check_n
    if numpy_n != check_n:
        numpy_seconds = best_time(lambda: case.numpy(numpy_n, inputs), most=1)
    row["numpy"] = case.steps(numpy_n) / numpy_seconds
    row["numpy_scaled"] = numpy_n != case.n

    rates = {}
    for device, program in programs.items():
        result = program(**inputs)[case.output]
        if check_n == case.n:
            check(case, result, expected, f"einc on {device}")
        rates[device] = case.steps(case.n) / best_time(lambda: program(**inputs))
    row["device"] = max(rates, key=rates.get)
    row["einc"] = rates[row["device"]]

    if jax is not None:
        run_jax = case.jax()
        jax_inputs = {k: jax.numpy.asarray(v) for k, v in inputs.items()}
        jax_result = jax.block_until_ready(run_jax(case.n, jax_inputs))    # compiles
        if check_n == case.n:
            check(case, jax_result, expected, "JAX vs NumPy")
        row["jax"] = case.steps(case.n) / best_time(lambda: jax.block_until_ready(run_jax(case.n, jax_inputs)))
    return row


def rate(value: float) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {suffix}/s"
    return f"{value:.3g} /s"


def table(rows: list[dict]) -> str:
    head = ["case", "einc (device)", "NumPy loop", "JAX lax.scan", "einc/JAX", "einc/NumPy"]
    lines = []
    for r in rows:
        jax_rate = r.get("jax")
        lines.append([
            f"{r['case']} ({r['unit']}s/s)",
            f"{rate(r['einc'])} ({r['device']})",
            rate(r["numpy"]) + (" *" if r["numpy_scaled"] else ""),
            rate(jax_rate) if jax_rate else "n/a",
            f"{r['einc'] / jax_rate:.2f}" if jax_rate else "n/a",
            f"{r['einc'] / r['numpy']:.0f}",
        ])
    widths = [max(len(x) for x in col) for col in zip(head, *lines)]
    fmt = "| " + " | ".join(f"{{:<{w}}}" for w in widths) + " |"
    out = [fmt.format(*head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    return "\n".join(out + [fmt.format(*line) for line in lines])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose name contains this text")
    parser.add_argument("--device", choices=DEVICES, help="time einc on this device only")
    args = parser.parse_args()
    jax = load_jax()
    if jax is None:
        print("JAX is not installed: its column is skipped (make bench installs it)")
    print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores are shared; busy machines give noisy rates)")
    cases = [c for c in CASES if args.only is None or args.only.lower() in c.name.lower()]
    devices = (args.device,) if args.device else DEVICES
    rows = []
    for case in cases:
        print(f"{case.name} ...", flush=True)
        rows.append(bench_case(case, jax, devices))
        r = rows[-1]
        within = ", ".join(f"{k}={v:g}" for k, v in case.tolerance.items()) or "bit for bit"
        print(f"  built in {r['build']:.1f} s; einc matches the NumPy loop at n = {r['checked_at']} ({within})",
              flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}\n")
    print(table(rows))
    if any(r["numpy_scaled"] for r in rows):
        print("* NumPy loop timed on fewer steps (see benchmarks/cases.py) and scaled per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
