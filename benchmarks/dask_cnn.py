"""Throughput of the MNIST CNN (examples/mnist/cnn.ein) mapped over a chunked batch with
einc.dask.map_blocks, on a distributed.LocalCluster of 1 and of 2 worker processes.

    .venv/bin/python benchmarks/dask_cnn.py [--images 4096] [--chunk 512] [--repeat 3]

Each worker runs one thread and the module on local-sync (one core), so the rates compare one
core with two. The digits are checked against one call of the same module on the whole batch
in this process. Per cluster: one warm-up compute (the workers load the module then), then
the best of --repeat computes; images/s over the whole batch, scheduling and transfers included.
"""
from __future__ import annotations

import argparse
import io
import os
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
    print(f"MNIST CNN, {args.images} images in chunks of {args.chunk}, local-sync per worker")
    for workers in (1, 2):
        rate = _rate(workers, artifact, images, weights, args, expected)
        print(f"  {workers} worker{'s' * (workers > 1)}: {rate:,.0f} images/s")


def _rate(workers: int, artifact, images, weights, args, expected) -> float:
    with distributed.LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        X = da.from_array(images, chunks=(args.chunk,) + images.shape[1:])
        digits = einc.dask.map_blocks(artifact, batch_dim="B", device="local-sync", X=X, **weights)["digit"]
        np.testing.assert_array_equal(client.compute(digits, sync=True), expected)   # warm-up and check
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            client.compute(digits, sync=True)
            best = min(best, time.perf_counter() - start)
    return args.images / best


if __name__ == "__main__":
    main()
