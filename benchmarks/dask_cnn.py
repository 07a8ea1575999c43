"""Throughput of the MNIST CNN (examples/mnist/cnn.ein) mapped over a chunked batch with
einc.dask.map_blocks, on a distributed.LocalCluster of 1 and of 2 worker processes.

    .venv/bin/python benchmarks/dask_cnn.py [--images 4096] [--chunk 512] [--repeat 3]

Each worker runs one thread and the module on local-sync (one core), so the rates compare one
core with two. The digits are checked against one call of the same module on the whole batch
in this process. Per cluster: one warm-up compute (the workers load the module then), then
--repeat computes: images/s over the whole batch (the best and the mean compute, wall clock,
scheduling and transfers included), and each worker's CPU time per compute (user + system,
read in the worker process) and its share of the mean compute's wall time, and the same for
this process (the client and the LocalCluster's scheduler: graphs, serialising the blocks). A worker busy much
less than 100% waited for a core or for the scheduler: on a loaded machine 2 workers cannot be
twice 1. images per CPU second is the rate the workers' own work allows, whatever the load;
the machine's load average is printed first.
"""
from __future__ import annotations

import argparse
import io
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dask.array as da  # noqa: E402
import distributed  # noqa: E402

import einc  # noqa: E402
import einc.dask  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MNIST = ROOT.parent / "shared" / "data" / "mnist"
WEIGHTS = {"W1": "conv1_w", "b1": "conv1_b", "W2": "conv2_w", "b2": "conv2_b", "Wf": "fc_w", "bf": "fc_b"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=4096)
    parser.add_argument("--chunk", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    weights = {name: np.load(MNIST / f"{stem}.npy") for name, stem in WEIGHTS.items()}
    samples = np.load(MNIST / "samples.npy")
    images = np.resize(samples, (args.images,) + samples.shape[1:])
    artifact = einc.compile(ROOT / "examples" / "mnist" / "cnn.ein", outputs=["digit"])
    with einc.load(artifact.vmfb, device="local-sync") as program:
        expected = program.run({"X": images, **weights}, stdout=io.StringIO())["digit"]
    print(f"MNIST CNN, {args.images} images in chunks of {args.chunk}, local-sync per worker; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    for workers in (1, 2):
        walls, cpu, here = _measure(workers, artifact, images, weights, args, expected)
        mean = sum(walls) / len(walls)
        busy = ", ".join(_share(seconds, mean) for seconds in cpu)
        print(f"  {workers} worker{'s' * (workers > 1)}: {args.images / min(walls):,.0f} images/s best, "
              f"{args.images / mean:,.0f} mean; CPU per compute: worker{'s' * (workers > 1)} {busy}, "
              f"client and scheduler {_share(here, mean)}; {args.images / sum(cpu):,.0f} images per "
              f"worker CPU second")


def _share(seconds: float, wall: float) -> str:
    return f"{seconds * 1000:.0f} ms ({100 * seconds / wall:.0f}%)"


def _cpu_seconds() -> float:
    """The CPU time (user + system) of the process this runs in: a worker, by client.run."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _measure(workers: int, artifact, images, weights, args, expected) -> tuple[list[float], list[float], float]:
    """The wall seconds of each of --repeat computes, each worker's CPU seconds per compute, and
    this process's."""
    with distributed.LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        X = da.from_array(images, chunks=(args.chunk,) + images.shape[1:])
        digits = einc.dask.map_blocks(artifact, batch_dim="B", device="local-sync", X=X, **weights)["digit"]
        np.testing.assert_array_equal(client.compute(digits, sync=True), expected)   # warm-up and check
        before, here, walls = client.run(_cpu_seconds), _cpu_seconds(), []
        for _ in range(args.repeat):
            start = time.perf_counter()
            client.compute(digits, sync=True)
            walls.append(time.perf_counter() - start)
        here, after = _cpu_seconds() - here, client.run(_cpu_seconds)
    return walls, [(after[worker] - before[worker]) / args.repeat for worker in sorted(before)], here / args.repeat


if __name__ == "__main__":
    main()
