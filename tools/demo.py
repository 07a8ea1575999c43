"""Build an example, generate random inputs that fit its signature, and run it with `einc run`.

    python tools/demo.py examples/basics/matmul.ein [--target llvm-cpu] [--build-dir build]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

from einc.runtime.program import read_signature

FREE_DIM_SIZE = 4  # size given to every `?` and named dim


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program")
    parser.add_argument("--target", default="llvm-cpu")
    parser.add_argument("--build-dir", default="build")
    args = parser.parse_args()
    build_dir = Path(args.build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    vmfb = build_dir / (Path(args.program).stem + ".vmfb")
    einc = [sys.executable, "-m", "einc"]
    _echo_run(einc + ["build", args.program, "-o", str(vmfb), "--target", args.target])
    input_options = _write_inputs(read_signature(vmfb.read_bytes(), str(vmfb)), build_dir / "inputs")
    _echo_run(einc + ["run", str(vmfb), *input_options, "--out", str(build_dir / "outputs")])
    return 0


def _write_inputs(signature, directory: Path) -> list[str]:
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    options = []
    for spec in signature.inputs:
        dims = [None, None] if spec.dims is None else spec.dims  # any rank: use a matrix
        shape = [d if isinstance(d, int) else FREE_DIM_SIZE for d in dims]
        if spec.dtype == "bool":
            value = rng.random(shape) < 0.5
        else:
            value = (rng.standard_normal(shape) * 4).astype(spec.dtype)
        path = directory / f"{spec.name}.npy"
        np.save(path, value)
        options += ["--input", f"{spec.name}={path}"]
    return options


def _echo_run(command: list[str]) -> None:
    print("$", " ".join(command[2:] if command[:2] == [sys.executable, "-m"] else command), flush=True)
    subprocess.run(command, check=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as failed:
        sys.exit(failed.returncode)
