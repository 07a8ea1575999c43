"""Build time against program length, and build memory against the size of the weights.

    .venv/bin/python benchmarks/build_time.py [--sizes 100,1000,2000] [--iree] [--weights 64,256]

Reports, per number of definitions of a chain (each definition reading the one before), the
seconds einc takes per definition to go from source to MLIR (parse, elaboration, passes,
lowering), and with --iree also IREE's compile of that MLIR. Both should stay flat as the chain
grows: a pass whose cost grows with the depth of the IR shows as a rising column (issue 25: a
pass keyed values by their whole tree; issue 21: walks recursed once per value). Cheap: about
7 s of CPU without --iree, 40 s with it.

Then, per weight size in MiB, the wall time and peak resident memory of a child process that
builds and saves a layer reading a `load_npy` weight of that size (its .irpa beside the module):
the peak should not grow with the weight (issue 20). About 5 s per 256 MiB, and twice the
weights' size of disk in a temporary folder.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from einc import driver  # noqa: E402
from einc.backend import compile_mlir  # noqa: E402
from einc.target import get  # noqa: E402


def definition_chain(n: int) -> str:
    """`n` definitions of a 4x4 tensor: h0 is the input x, then h{k} = h{k-1} * 0.5 + 1.0, with a
    matmul of h{k-1} by itself (times 0.1) every fourth definition. Only the last is an output."""
    lines = ["let x: [f32; 4, 4];", "let h0[i in 0..4, j in 0..4] = x[i, j];"]
    for k in range(1, n):
        if k % 4 == 0:
            lines.append(f"let h{k}[i in 0..4, j in 0..4] = sum[l in 0..4](h{k - 1}[i, l] * h{k - 1}[l, j]) * 0.1;")
        else:
            lines.append(f"let h{k}[i, j] = h{k - 1}[i, j] * 0.5 + 1.0;")
    return "\n".join(lines + [f"let out = h{n - 1};"]) + "\n"


def time_build(n: int, with_iree: bool) -> tuple[float, float | None]:
    """Seconds (einc to MLIR, IREE or None) for the chain of `n` definitions."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"chain{n}.ein")
        with open(path, "w", encoding="utf-8") as f:
            f.write(definition_chain(n))
        start = time.perf_counter()
        module = driver.lower(path, "llvm-cpu", outputs=["out"])
        einc_seconds = time.perf_counter() - start
    if not with_iree:
        return einc_seconds, None
    start = time.perf_counter()
    compile_mlir(module, get("llvm-cpu"))
    return einc_seconds, time.perf_counter() - start


WEIGHTS_PROGRAM = 'let w = load_npy("w.npy");\nlet x: [f32; 7];\nlet y[j] = sum[k](w[k, j] * x[k % 7]);\n'

# The child's own peak is VmHWM, its address space's high-water mark: getrusage's ru_maxrss
# would not do, since Linux carries the parent's peak over fork and exec into the child.
_BUILD_CHILD = """
import json, sys, time
import einc
start = time.perf_counter()
einc.compile(sys.argv[1], outputs=["y"]).save(sys.argv[2])
seconds = time.perf_counter() - start
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({"peak_mib": int(status["VmHWM"].split()[0]) / 1024, "seconds": seconds}))
"""


def weights_build(folder: Path, mib: int) -> dict:
    """Write a random `mib` MiB f32 weight (1024 columns) and WEIGHTS_PROGRAM into `folder`
    (created), build and save it in a child process; {"peak_mib", "seconds"} of the child (the
    build alone for seconds), and "module": the saved .vmfb."""
    folder.mkdir()
    rows = mib * 256
    weight = np.lib.format.open_memmap(folder / "w.npy", mode="w+", dtype=np.float32, shape=(rows, 1024))
    rng = np.random.default_rng(mib)
    for start in range(0, rows, 8192):                      # 32 MiB at a time
        weight[start:start + 8192] = rng.standard_normal((min(8192, rows - start), 1024), dtype=np.float32)
    weight.flush()
    del weight
    (folder / "p.ein").write_text(WEIGHTS_PROGRAM)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", _BUILD_CHILD, "p.ein", "p.vmfb"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the build of a {mib} MiB weight failed:\n{done.stderr}")
    return {**json.loads(done.stdout.splitlines()[-1]), "module": folder / "p.vmfb"}


def weights_reference(weight: np.ndarray, x: np.ndarray) -> np.ndarray:
    """WEIGHTS_PROGRAM's y in float64: y[j] = sum over k of w[k, j] * x[k % 7]."""
    return sum(x[r] * weight[r::7].astype(np.float64).sum(axis=0) for r in range(7))


def report_weights(sizes: list[int]) -> None:
    print(f"\n{'weight MiB':>12} {'build s':>12} {'peak MiB':>12}")
    with tempfile.TemporaryDirectory() as folder:
        for mib in sizes:
            built = weights_build(Path(folder) / str(mib), mib)
            print(f"{mib:12d} {built['seconds']:12.2f} {built['peak_mib']:12.0f}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,2000", help="numbers of definitions, comma-separated")
    parser.add_argument("--iree", action="store_true", help="also time IREE's compile of the MLIR")
    parser.add_argument("--weights", default="64,256", help="weight sizes in MiB, comma-separated ('' for none)")
    args = parser.parse_args()
    time_build(10, False)           # warm-up: imports and the parser's tables
    print(f"{'definitions':>12} {'einc ms/def':>12} {'IREE ms/def':>12}")
    for n in (int(s) for s in args.sizes.split(",")):
        einc_seconds, iree_seconds = time_build(n, args.iree)
        iree = f"{1000 * iree_seconds / n:12.2f}" if iree_seconds is not None else f"{'-':>12}"
        print(f"{n:12d} {1000 * einc_seconds / n:12.2f} {iree}", flush=True)
    if args.weights:
        report_weights([int(s) for s in args.weights.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
