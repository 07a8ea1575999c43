"""The transformer examples (examples/transformer) against NumPy and JAX `jit` of the same
network: DeiT-tiny and the Whisper-tiny encoder at batch 1 and 8. Each network is built once
(`einc build`, in a child process whose wall time and peak memory are reported), its result at
every batch checked against the float64 NumPy reference (tests/examples/transformers.py) before
timing; NumPy and JAX then run that reference's code in float32. Timings are interleaved rounds,
the best round of each kept. `--one-core` compares the work on one pinned core, which other
processes disturb far less (as benchmarks/run.py's): single-threaded NumPy and JAX, einc on
local-sync, process CPU time.

    .venv/bin/python benchmarks/transformers.py [--only deit|whisper] [--batches 1,8] [--rounds 3] [--one-core]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "examples"))

import einc  # noqa: E402
import transformers  # noqa: E402
from benchmarks.run import ONE_CORE_MARK, run_on_one_core  # noqa: E402

FOLDER = REPO / "examples" / "transformer"
NETWORKS = {  # name: (program, input name, input shape after the batch, output, reference, blocks)
    "deit": ("deit_tiny.ein", "X", (3, 224, 224), "logits", transformers.deit, 12),
    "whisper": ("whisper_encoder.ein", "mel", (80, 3000), "states", transformers.whisper, 4),
}


def _make_weights(folder: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_weights", FOLDER / "make_weights.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.save(folder / "weights" / "deit", module.deit_weights())
    module.save(folder / "weights" / "whisper", module.whisper_weights())


def build(source: Path) -> tuple[Path, float, float]:
    """The .vmfb of `source`, the build's seconds and its peak resident memory in MB."""
    out = source.with_suffix(".vmfb")
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "einc", "build", str(source), "-o", str(out)],
                             env=os.environ | {"PYTHONPATH": str(REPO)})
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"einc build {source} failed")
    return out, seconds, usage.ru_maxrss / 1024


def best_seconds(runs: dict, rounds: int, clock=time.perf_counter) -> dict[str, float]:
    """Each run warmed up, then `rounds` interleaved rounds; the fastest of each by `clock`."""
    for run in runs.values():
        run()
    best = {name: float("inf") for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            time.sleep(0.15)     # OpenBLAS's spinning idle threads slow whatever runs next
            start = clock()
            run()
            best[name] = min(best[name], clock() - start)
    return best


def bench(name: str, folder: Path, batches: list[int], rounds: int, jax, one_core: bool) -> list[dict]:
    program, input_name, shape, output, reference, blocks = NETWORKS[name]
    vmfb, build_s, build_mb = build(folder / program)
    run = einc.load(str(vmfb), "local-sync" if one_core else None)
    weights = {f.stem: np.load(f) for f in (folder / "weights" / name).glob("*.npy")}
    rows = []
    for batch in batches:
        x = np.random.default_rng(batch).standard_normal((batch, *shape)).astype(np.float32)
        expected = reference(x, weights, blocks)
        got = run(**{input_name: x})[output]
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
        runs = {"einc": lambda: run(**{input_name: x}),
                "numpy": partial(reference, x, weights, blocks, np, np.float32)}
        if jax is not None:
            jitted = jax.jit(partial(reference, blocks=blocks, xp=jax.numpy, dtype=np.float32))
            jx, jw = jax.numpy.asarray(x), {k: jax.numpy.asarray(v) for k, v in weights.items()}
            np.testing.assert_allclose(np.asarray(jitted(jx, jw)), expected, rtol=1e-3,
                                       atol=1e-3 * np.abs(expected).max())
            runs["jax"] = lambda: jitted(jx, jw).block_until_ready()
        seconds = best_seconds(runs, rounds, time.process_time if one_core else time.perf_counter)
        rows.append(dict(network=name, batch=batch, build_s=build_s, build_mb=build_mb, **seconds))
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| network | batch | build s | build peak MB | einc ms | NumPy ms | JAX ms | vs NumPy | vs JAX |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        jax_ms = f"{r['jax'] * 1e3:.0f}" if "jax" in r else "-"
        vs_jax = f"{r['jax'] / r['einc']:.2f}x" if "jax" in r else "-"
        lines.append(f"| {r['network']} | {r['batch']} | {r['build_s']:.1f} | {r['build_mb']:.0f} | "
                     f"{r['einc'] * 1e3:.0f} | {r['numpy'] * 1e3:.0f} | {jax_ms} | "
                     f"{r['numpy'] / r['einc']:.2f}x | {vs_jax} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(NETWORKS))
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one-core", action="store_true",
                        help="one pinned core, single-threaded peers, process CPU time (einc on local-sync)")
    args = parser.parse_args()
    if args.one_core:
        run_on_one_core()
    try:
        import jax
    except ImportError:
        jax = None
        print("JAX is not installed: no JAX column (make bench installs it)")
    batches = [int(b) for b in args.batches.split(",")]
    pinned = f"; one core (CPU {os.environ[ONE_CORE_MARK]}), process CPU time" if args.one_core else ""
    print(f"load average before: {os.getloadavg()[0]:.1f}{pinned}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for source in FOLDER.glob("*.ein"):
            shutil.copy(source, folder)
        _make_weights(folder)
        rows = [row for name in NETWORKS if args.only in (None, name)
                for row in bench(name, folder, batches, args.rounds, jax, args.one_core)]
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
