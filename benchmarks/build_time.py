"""Build time against program length: a chain of definitions, each reading the one before.

    .venv/bin/python benchmarks/build_time.py [--sizes 100,1000,2000] [--iree]

Reports, per number of definitions, the seconds einc takes per definition to go from source to
MLIR (parse, elaboration, passes, lowering), and with --iree also IREE's compile of that MLIR.
Both should stay flat as the chain grows: a pass whose cost grows with the depth of the IR shows
as a rising column (issue 25: a pass keyed values by their whole tree; issue 21: walks recursed
once per value). Cheap: about 7 s of CPU without --iree, 40 s with it.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,2000", help="numbers of definitions, comma-separated")
    parser.add_argument("--iree", action="store_true", help="also time IREE's compile of the MLIR")
    args = parser.parse_args()
    time_build(10, False)           # warm-up: imports and the parser's tables
    print(f"{'definitions':>12} {'einc ms/def':>12} {'IREE ms/def':>12}")
    for n in (int(s) for s in args.sizes.split(",")):
        einc_seconds, iree_seconds = time_build(n, args.iree)
        iree = f"{1000 * iree_seconds / n:12.2f}" if iree_seconds is not None else f"{'-':>12}"
        print(f"{n:12d} {1000 * einc_seconds / n:12.2f} {iree}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
