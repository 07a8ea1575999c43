"""The mutation fuzzer of `einc run` (tools/fuzz_runner.py, a script beside the package) as a
campaign of `python -m fuzz`: its bad outcomes as Findings."""
from __future__ import annotations

import importlib.util
import pathlib
import sys
import time
from collections import Counter

from fuzz.known_issues import explain
from fuzz.report import Finding, Report

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "tools" / "fuzz_runner.py"


def _load():
    spec = importlib.util.spec_from_file_location("fuzz_runner", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_runner"] = module          # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def run_runner(n: int, seed: int, jobs: int = 1) -> Report:
    """`jobs` is ignored: the runner fuzzer keeps one worker of its own."""
    fuzz_runner = sys.modules.get("fuzz_runner") or _load()
    start = time.monotonic()
    found = fuzz_runner.fuzz(n, seed)
    report = Report("mutants of `einc run` (bad inputs, damaged modules)",
                    Counter(f"{o.mutant.operator}: {'ran' if o.status == 0 else 'refused'}"
                            for o in found.outcomes if o.problem is None))
    report.counts["mutants"] = len(found.outcomes)
    report.seconds = time.monotonic() - start
    for o in found.bad:
        report.findings.append(Finding(f"seed {seed}, {o.mutant.operator} of {o.mutant.base}", "einc run",
                                       o.problem, o.stderr.strip()[-400:],
                                       explain(None, o.problem, o.stderr), "einc " + " ".join(o.mutant.argv)))
    return report
