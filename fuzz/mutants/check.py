"""What einc makes of one mutant: the jobs worker processes run (fuzz.workers).

In process (fast; most mutants never get past the parser): the front end and the lowering to
verified MLIR, and for some valid mutants the IREE build too. A mistake in the program must be a
CompileError whose diagnostics all have a code (E001..E011) and a location inside the text, and
that renders; anything else raised is a bug (`traceback`). A mutant that must be a mistake (a
recurrence's base clause deleted, a type misspelled: fuzz.mutants.mutate.COVERAGE_MUTATIONS) and is valid where its
original is, is a bug too (`missed-diagnostic`). Through the command line (a sample):
`einc build` must exit 1 with a rendered diagnostic and no output file, or 0 with the module.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import traceback
import warnings

from einc import driver
from einc.backend import compile_mlir
from einc.diagnostics import BuildWarning, CompileError
from einc.target import get

CODES = re.compile(r"E00[1-79]|E01[01]")
CLI_SECONDS = 240


def check_in_process(mutants: list) -> list[dict]:
    """`mutants`: (path to write it to, bytes, build with IREE too, the original's bytes when
    the mutant must be a diagnostic, else None) each."""
    return [_expected(path, original, _check(path, data, build)) for path, data, build, original in mutants]


def _expected(path: str, original: bytes | None, result: dict) -> dict:
    """`result`, or a missed diagnostic when the mutant was valid and its original is too."""
    if original is None or result["kind"] not in ("valid", "built"):
        return result
    if _check(path, original, False)["kind"] != "valid":
        return result
    return {"kind": "missed-diagnostic", "detail": "a mutation that must be a diagnostic (a clause left out, "
                                                   "a type misspelled) left a valid program"}


def _check(path: str, data: bytes, build: bool) -> dict:
    with open(path, "wb") as file:
        file.write(data)
    try:
        module = driver.lower(path, "llvm-cpu")
        if build:
            with warnings.catch_warnings():     # IREE's compiler crashed: a finding, though einc built again
                warnings.simplefilter("error", BuildWarning)
                compile_mlir(module, get("llvm-cpu"))
    except CompileError as err:
        problem = diagnostic_problem(err, path, data)
        return {"kind": "bad-diagnostic", "detail": problem} if problem else {"kind": "diagnostic"}
    except Exception as err:  # noqa: BLE001 - every other failure is the finding
        return {"kind": "traceback", "detail": _describe(err)}
    finally:
        os.unlink(path)
    return {"kind": "built" if build else "valid"}


def diagnostic_problem(err: CompileError, path: str, data: bytes) -> str | None:
    lines = data.count(b"\n") + 1
    for diag in err.diagnostics:
        if not CODES.fullmatch(diag.code or ""):
            return f"code {diag.code!r}: {diag.message}"
        if diag.span is None or not diag.span.file or any(n.span is None for n in diag.notes):
            return f"{diag.code} without a location: {diag.message}"
        if diag.span.line < 1 or diag.span.col < 1 or (diag.span.file == path and diag.span.line > lines):
            return f"{diag.code} at {diag.span.line}:{diag.span.col}, outside the text: {diag.message}"
    try:
        text = err.render()
    except Exception as render_err:  # noqa: BLE001
        return f"the diagnostic does not render: {_describe(render_err)}"
    if "-->" not in text or "error[E" not in text:
        return f"rendered without its location: {text[:200]}"
    return None


def _describe(err: Exception) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    where = next((f"{os.path.relpath(f.filename)}:{f.lineno}" for f in reversed(frames)
                  if "/einc/" in f.filename), "?")
    message = str(err).splitlines()[0] if str(err) else ""
    return f"{type(err).__name__} at {where}: {message[:200]}"


def check_cli(path: str, data: bytes) -> dict:
    """`einc build` on the mutant: exit 1 with a diagnostic and no module, or 0 with one."""
    out = path[:-len(".ein")] + ".vmfb"
    with open(path, "wb") as file:
        file.write(data)
    try:
        run = subprocess.run([sys.executable, "-m", "einc", "build", path, "-o", out], capture_output=True,
                             timeout=CLI_SECONDS, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return {"kind": "hang", "detail": f"einc build ran over {CLI_SECONDS} s"}
    finally:
        os.unlink(path)
    made = os.path.exists(out)
    if made:
        os.unlink(out)
    return {"kind": cli_problem(run.returncode, run.stderr, made) or ("built" if made else "diagnostic"),
            "detail": f"exit {run.returncode}: {run.stderr.strip()[-600:]}"}


def cli_problem(status: int, stderr: str, made: bool) -> str | None:
    if status < 0 or "IREE's compiler crashed" in stderr:
        return "crash"
    if "Traceback" in stderr or "internal error" in stderr:
        return "traceback"
    if status == 0:
        return None if made else "no-module"
    if status != 1:
        return "exit-status"
    if made:
        return "left-output"
    if not re.search(r"error\[E0\d\d\]", stderr) or "-->" not in stderr:
        return "bad-diagnostic"
    return None
