"""Mutation fuzzing of `einc run`: bad inputs and damaged modules must never crash einc.

Each mutant is one `einc run` command on a module built from a real program (the examples'
matmul, conv2d and Kalman filter, and a program of scalar inputs) with inputs derived from its
signature, then damaged by one operator: wrong sizes or ranks, empty arrays, NaN/inf, wrong
dtypes, corrupt .npy/.npz files, missing, unknown or repeated names, bad literals, or a module
with flipped bits, cut short, or with stray bytes. A mutant is clean when einc either runs
(exit 0, nothing on stderr) or refuses with exactly one `error: ...` line and exit 1 or 2. A
traceback, an "internal error", more lines, a signal or a hang is a bad outcome.

    python tools/fuzz_runner.py -n 500 --seed 1      # exit 1 if any mutant was bad

`run_runner_fuzz(n, seed)` returns the bad outcomes (make fuzz and tests/cli/test_fuzz_runner.py
call it). Mutants run in a worker process that runs the CLI in process, its fds 1 and 2
captured per mutant; a worker that dies or hangs is reported and replaced. `isolated=True`
runs each mutant as its own `python -m einc run` instead (slower, and sees exit-time output).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import selectors
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SCALARS_PROGRAM = """\
let x: [f32; N];
let s: f32;
let k: i32;
let flag: bool;
let y[i] = if flag { x[i] * s } else { x[i] + s };
let twice = k * 2;
"""
BASES = {
    "matmul": EXAMPLES / "basics" / "matmul.ein",
    "conv2d": EXAMPLES / "basics" / "conv2d.ein",
    "kalman": EXAMPLES / "filters" / "kalman_filter.ein",
    "scalars": SCALARS_PROGRAM,
}
CASE_TIMEOUT_S = 120


@dataclass
class Base:
    """A built module and the signature its valid inputs are drawn from."""
    name: str
    module: Path
    signature: object


@dataclass
class Mutant:
    operator: str
    base: str
    argv: list[str]


@dataclass
class Outcome:
    mutant: Mutant
    status: int | None          # exit status; None for a hang; negative for a signal
    stdout: str
    stderr: str
    problem: str | None = None  # why it is bad, None when clean


@dataclass
class FuzzReport:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def bad(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.problem is not None]

    def summary(self) -> str:
        counts: dict[str, list[int]] = {}
        for o in self.outcomes:
            row = counts.setdefault(o.mutant.operator, [0, 0, 0])
            row[0 if o.status == 0 else 1 if o.problem is None else 2] += 1
        lines = [f"{len(self.outcomes)} mutants of `einc run`: {len(self.outcomes) - len(self.bad)} clean, "
                 f"{len(self.bad)} bad", f"  {'operator':<18} ran  refused  bad"]
        lines += [f"  {op:<18} {r:>3}  {e:>7}  {b:>3}" for op, (r, e, b) in sorted(counts.items())]
        return "\n".join(lines)


def run_runner_fuzz(n: int, seed: int, bases: tuple[str, ...] = tuple(BASES), isolated: bool = False,
                    workdir: str | os.PathLike | None = None) -> list[Outcome]:
    """Run `n` mutants drawn with `seed`; the outcomes that were not clean."""
    return fuzz(n, seed, bases, isolated, workdir).bad


def fuzz(n: int, seed: int, bases: tuple[str, ...] = tuple(BASES), isolated: bool = False,
         workdir: str | os.PathLike | None = None) -> FuzzReport:
    with tempfile.TemporaryDirectory(prefix="einc-fuzz-", dir=workdir) as tmp:
        built = [build_base(name, Path(tmp)) for name in bases]
        rng = random.Random(seed)
        report = FuzzReport()
        runner = _Isolated() if isolated else _Worker()
        try:
            for number in range(n):
                case_dir = Path(tmp) / f"case{number}"
                case_dir.mkdir()
                mutant = make_mutant(rng, rng.choice(built), case_dir)
                report.outcomes.append(judge(mutant, *runner.run(mutant.argv)))
                shutil.rmtree(case_dir)
        finally:
            runner.close()
        return report


def build_base(name: str, folder: Path) -> Base:
    import einc
    source = BASES[name]
    artifact = einc.compile(source if isinstance(source, str) else str(source))
    module = folder / f"{name}.vmfb"
    artifact.save(module)
    return Base(name, module, artifact.signature)


# ------------------------------------------------------------------ judging

def judge(mutant: Mutant, status: int | None, stdout: str, stderr: str) -> Outcome:
    return Outcome(mutant, status, stdout, stderr, _problem(status, stderr))


# `error: ...`, or for a failed assert of the program `FILE:LINE:COL: error[E006]: ...`
_ONE_ERROR_LINE = re.compile(r"error: |\S+:\d+:\d+: error\[E\d{3}\]: ")


def _problem(status: int | None, stderr: str) -> str | None:
    if status is None:
        return f"no answer within {CASE_TIMEOUT_S} s"
    if status < 0:
        return f"killed by signal {-status}"
    if "Traceback" in stderr or "internal error" in stderr:
        return "internal error or traceback"
    if status == 0:
        return None if stderr == "" else "exit 0 with output on stderr"
    if status not in (1, 2):
        return f"exit status {status}"
    if not _ONE_ERROR_LINE.match(stderr) or stderr.count("\n") != 1 or not stderr.endswith("\n"):
        return "refused without exactly one `error:` line"
    return None


# ------------------------------------------------------------------ mutants

def make_mutant(rng: random.Random, base: Base, folder: Path) -> Mutant:
    operator = rng.choice(list(OPERATORS))
    inputs = valid_inputs(rng, base.signature)
    argv = OPERATORS[operator](rng, base, inputs, folder)
    return Mutant(operator, base.name, ["run", *map(str, argv)])


def valid_inputs(rng: random.Random, signature) -> dict[str, np.ndarray]:
    """Inputs that fit the signature: named dims agree, sizes from 1 to 6."""
    sizes: dict[str, int] = {}
    values = {}
    for spec in signature.inputs:
        dims = spec.dims if spec.dims is not None else [None] * rng.randint(1, 3)
        shape = [d if isinstance(d, int) else sizes.setdefault(d, rng.randint(1, 6)) if isinstance(d, str)
                 else rng.randint(1, 6) for d in dims]
        values[spec.name] = _random_array(rng, spec.dtype, shape)
    return values


def _random_array(rng: random.Random, dtype: str, shape: list[int]) -> np.ndarray:
    gen = np.random.default_rng(rng.getrandbits(32))
    if dtype == "bool":
        return gen.random(shape) < 0.5
    if dtype.startswith("int"):
        return gen.integers(-5, 6, shape).astype(dtype)
    return gen.standard_normal(shape).astype(dtype)


def _bindings(inputs: dict[str, np.ndarray], folder: Path) -> list[str]:
    argv = []
    for name, value in inputs.items():
        path = folder / f"{name}.npy"
        np.save(path, value)
        argv += ["--input", f"{name}={path}"]
    return argv


def _pick(rng: random.Random, inputs: dict, arrays_only: bool = False) -> str:
    names = [n for n, v in inputs.items() if v.ndim > 0] if arrays_only else list(inputs)
    return rng.choice(names or list(inputs))


def _wrong_size(rng, base, inputs, folder):
    name = _pick(rng, inputs, arrays_only=True)
    shape = list(inputs[name].shape)
    if shape:
        shape[rng.randrange(len(shape))] = rng.choice([0, 1, 2, 7, 13])
    inputs[name] = _random_array(rng, str(inputs[name].dtype), shape)
    return [base.module, *_bindings(inputs, folder)]


def _empty(rng, base, inputs, folder):
    name = _pick(rng, inputs, arrays_only=True)
    shape = list(inputs[name].shape) or [0]
    for axis in rng.sample(range(len(shape)), rng.randint(1, len(shape))):
        shape[axis] = 0
    inputs[name] = np.zeros(shape, inputs[name].dtype)
    return [base.module, *_bindings(inputs, folder)]


def _not_finite(rng, base, inputs, folder):
    floats = [n for n, v in inputs.items() if v.dtype.kind == "f"]
    for name in floats:
        flat = inputs[name].reshape(-1)
        for index in rng.sample(range(flat.size), min(flat.size, rng.randint(1, 3))):
            flat[index] = rng.choice([np.nan, np.inf, -np.inf])
    return [base.module, *_bindings(inputs, folder)]


def _wrong_dtype(rng, base, inputs, folder):
    name = _pick(rng, inputs)
    kind = rng.choice(["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool",
                       "complex64", "str", "object", "datetime64[s]", "structured"])
    value = inputs[name]
    if kind == "str":
        inputs[name] = value.astype(str)
    elif kind == "structured":
        inputs[name] = np.zeros(value.shape, dtype=[("a", "f4"), ("b", "i4")])
    elif kind == "object":
        path = folder / f"{name}.npy"
        np.save(path, np.array([object()] * max(1, value.size)), allow_pickle=True)
        rest = {n: v for n, v in inputs.items() if n != name}
        return [base.module, *_bindings(rest, folder), "--input", f"{name}={path}"]
    else:
        inputs[name] = value.astype(kind)
    return [base.module, *_bindings(inputs, folder)]


def _wrong_rank(rng, base, inputs, folder):
    name = _pick(rng, inputs)
    value = inputs[name]
    inputs[name] = value[..., None] if value.ndim == 0 or rng.random() < 0.5 else value.reshape(-1)[:1].reshape(())
    return [base.module, *_bindings(inputs, folder)]


def _corrupt_npy(rng, base, inputs, folder):
    argv = [base.module, *_bindings(inputs, folder)]
    path = folder / f"{_pick(rng, inputs)}.npy"
    path.write_bytes(_damaged(rng, path.read_bytes(), header=True))
    return argv


def _corrupt_npz(rng, base, inputs, folder):
    path = folder / "inputs.npz"
    np.savez(path, **inputs)
    choice = rng.randrange(4)
    if choice == 0:
        path.write_bytes(_damaged(rng, path.read_bytes(), header=False))
    elif choice == 1:
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr(rng.choice(["notes.txt", "x.npy", ".npy", "dir/"]), b"not an array")
    elif choice == 2:
        path.write_bytes(os.urandom(rng.randint(0, 200)))
    else:
        path = folder / "missing.npz"
    return [base.module, "--input", path]


def _names(rng, base, inputs, folder):
    argv = [base.module, *_bindings(inputs, folder)]
    name = _pick(rng, inputs)
    choice = rng.randrange(5)
    if choice == 0:                                     # missing
        at = argv.index(f"{name}={folder / (name + '.npy')}")
        del argv[at - 1:at + 1]
    elif choice == 1:                                   # unknown
        argv += ["--input", f"{name}_typo={folder / (name + '.npy')}"]
    elif choice == 2:                                   # given twice
        argv += ["--input", f"{name}={folder / (name + '.npy')}"]
    elif choice == 3:                                   # malformed
        argv += ["--input", rng.choice(["=", "x", "=1", "A=", "a.npz=1", "b.npz"])]
    else:                                               # a file that is not there
        argv += ["--input", f"{name}={folder / 'absent.npy'}"]
    return argv


def _literal(rng, base, inputs, folder):
    name = _pick(rng, inputs)
    text = rng.choice(["nan", "inf", "-inf", "1e400", "-1e400", "0x10", "1_0", "", " 1", "true", "False",
                       "2147483648", "-2147483649", "9" * 40, "1.5", "-0", "\u0661", "3+4j"])
    rest = {n: v for n, v in inputs.items() if n != name}
    return [base.module, *_bindings(rest, folder), "--input", f"{name}={text}"]


def _damaged_module(rng, base, inputs, folder):
    path = folder / "damaged.vmfb"
    path.write_bytes(_damaged(rng, base.module.read_bytes(), header=False))
    return [path, *_bindings(inputs, folder)]


def _not_a_module(rng, base, inputs, folder):
    choice = rng.randrange(4)
    if choice == 0:
        path = folder / "empty.vmfb"
        path.write_bytes(b"")
    elif choice == 1:
        path = folder
    elif choice == 2:
        path = folder / "array.vmfb"
        np.save(folder / "array.npy", np.ones(3))
        (folder / "array.npy").rename(path)
    else:
        path = folder / "absent.vmfb"
    return [path, *_bindings(inputs, folder)]


def _damaged(rng: random.Random, data: bytes, header: bool) -> bytes:
    """`data` with one kind of damage; `header` aims it at the first 128 bytes."""
    data = bytearray(data)
    span = min(len(data), 128) if header else len(data)
    kind = rng.randrange(5)
    if kind == 0 and data:                              # bit flips
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(span)] ^= 1 << rng.randrange(8)
    elif kind == 1:                                     # cut short
        del data[rng.randrange(len(data) + 1):]
    elif kind == 2:                                     # stray bytes inside
        at = rng.randrange(span + 1)
        data[at:at] = os.urandom(rng.randint(1, 16))
    elif kind == 3:                                     # stray bytes at the end
        data += os.urandom(rng.randint(1, 64))
    elif data:                                          # a zeroed run
        at, length = rng.randrange(span), rng.randint(1, 32)
        data[at:at + length] = bytes(len(data[at:at + length]))
    return bytes(data)


OPERATORS: dict[str, Callable] = {
    "wrong size": _wrong_size,
    "empty array": _empty,
    "nan/inf": _not_finite,
    "wrong dtype": _wrong_dtype,
    "wrong rank": _wrong_rank,
    "corrupt .npy": _corrupt_npy,
    "corrupt .npz": _corrupt_npz,
    "names": _names,
    "bad literal": _literal,
    "damaged module": _damaged_module,
    "not a module": _not_a_module,
}


# ------------------------------------------------------------------ running

def _child_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "EINC_TRACEBACK"}   # tracebacks are the bug


class _Isolated:
    """Each mutant as its own `python -m einc` process."""

    def run(self, argv: list[str]) -> tuple[int | None, str, str]:
        try:
            done = subprocess.run([sys.executable, "-m", "einc", *argv], capture_output=True, text=True,
                                  env=_child_env(), timeout=CASE_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as timeout:
            return None, _text(timeout.stdout), _text(timeout.stderr)
        return done.returncode, done.stdout, done.stderr

    def close(self) -> None:
        pass


class _Worker:
    """One long-lived process running the CLI in process; replaced when it dies or hangs."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None

    def run(self, argv: list[str]) -> tuple[int | None, str, str]:
        process = self._process = self._process or subprocess.Popen(
            [sys.executable, __file__, "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, env=_child_env())
        process.stdin.write(json.dumps(argv) + "\n")
        process.stdin.flush()
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(CASE_TIMEOUT_S)
        line = process.stdout.readline() if ready else ""
        if line:
            answer = json.loads(line)
            return answer["status"], answer["stdout"], answer["stderr"]
        if not ready:
            process.kill()
        status = process.wait()
        self._process = None
        return (status if ready else None), "", ""

    def close(self) -> None:
        if self._process is not None:
            self._process.stdin.close()
            self._process.wait(timeout=30)
            self._process = None


def _text(data) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def _worker_main() -> None:
    """Read argv lists (JSON lines) from stdin; answer each with status and captured output."""
    from einc.cli import _run_cli
    answers = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        status, stdout, stderr = _captured(_run_cli, json.loads(line))
        answers.write(json.dumps({"status": status, "stdout": stdout, "stderr": stderr}) + "\n")
        answers.flush()


def _captured(function, argv: list[str]) -> tuple[int, str, str]:
    """Call `function(argv)` with fds 1 and 2 going to files (native code writes there too)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            status = function(argv)
        except BaseException as escaped:  # noqa: BLE001 - an escape is exactly what is looked for
            print(f"Traceback: {type(escaped).__name__}: {escaped}", file=sys.stderr)
            status = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        return status, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="number of mutants (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bases", default=",".join(BASES), help=f"programs to mutate (default {','.join(BASES)})")
    parser.add_argument("--isolated", action="store_true", help="run each mutant as its own process")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker_main()
        return 0
    report = fuzz(args.n, args.seed, tuple(args.bases.split(",")), args.isolated)
    for outcome in report.bad:
        print(f"BAD ({outcome.problem}) [{outcome.mutant.operator} on {outcome.mutant.base}]: "
              f"einc {' '.join(outcome.mutant.argv)}\n  exit {outcome.status}; stderr: {outcome.stderr[-2000:]!r}")
    print(report.summary())
    return 1 if report.bad else 0


if __name__ == "__main__":
    sys.exit(main())
