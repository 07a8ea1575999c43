"""Differential testing: generated programs through einc on each target, against their NumPy
meaning.

Programs are built many to a module (fuzz.programs.module). When a module fails, the program
to blame is found: a diagnostic names its line; otherwise the batch is halved until the
failure is down to one program. Every bad outcome is a Finding; fuzz.known_issues says which
are known and owned elsewhere. A program whose run must fail with an index error (a stray
index, fuzz.programs.generate) is built alone, and its error is checked instead of outputs.
"""
from __future__ import annotations

import re
import time

import numpy as np

from fuzz.known_issues import explain
from fuzz.programs.compare import disagreement
from fuzz.programs.execute import build_and_run
from fuzz.programs.generate import Case, generate_case
from fuzz.programs.module import assemble, owner, prefix
from fuzz.programs.render import render_program
from fuzz.programs.structure import (NOT_ON_VULKAN, Derivative, types_used,
                                     widens_an_approximation)
from fuzz.report import Finding, Report
from fuzz.workers import Pool

TARGETS = ("llvm-cpu", "vulkan-spirv")
BATCH = 12
SECONDS_PER_MODULE = 90
SECONDS_PER_PROGRAM = 15
INDEX_ERROR = re.compile(r"index (-?\d+) out of range 0\.\.(\d+)")
RANGE_ERROR = re.compile(r"the range of `(\w+)` runs past the axes its reads index")


def run_differential(n: int, seed: int, jobs: int = 2, targets: tuple = TARGETS,
                     batch: int = BATCH, log=lambda line: print(line, flush=True)) -> Report:
    with Pool(jobs) as pool:
        return Differential(seed, pool, targets, batch, log).run(range(n))


def runs_on(case: Case, target: str) -> bool:
    """Whether einc compiles the case for `target`: vulkan-spirv has no f64, i64, f16 or bf16."""
    return target != "vulkan-spirv" or not types_used(case.program) & set(NOT_ON_VULKAN)


class Differential:
    """Generated cases, many to a module, through einc on each target against their meaning.
    What a case is, how it is written and how its outputs are judged are the hooks below, which
    other differential campaigns (fuzz.dense) override; building, running and blaming are shared."""
    title = "generated programs against NumPy"

    def __init__(self, seed: int, pool: Pool, targets: tuple, batch: int, log):
        self.seed, self.targets, self.batch, self.log = seed, targets, batch, log
        self.pool = pool
        self.report = Report(self.title)
        self.cases: dict[int, Case] = {}

    # -- hooks

    def generate(self, k: int):
        return generate_case(self.seed, k)

    def runs_on(self, case, target: str) -> bool:
        return runs_on(case, target)

    def assemble(self, keys: list):
        return assemble({k: self.cases[k].program for k in keys})

    def disagreement(self, case, name: str, got) -> str | None:
        derivatives = {i.name for i in case.program.items if isinstance(i, Derivative)}
        return disagreement(got, case.meaning[name], derivative=name in derivatives,
                            approximated_in=widens_an_approximation(case.program))

    def source(self, case) -> str:
        return render_program(case.program) + _dims_comment(case.program) + _inputs_comment(case.inputs)

    def explain(self, case, kind: str, detail: str, target: str) -> str | None:
        return explain(case.program, kind, detail, target)

    def saves(self, case) -> tuple:
        """The outputs the case also writes with `save_npy`, each to `<its name>.npy`."""
        return case.program.saves

    def index_errors(self, case) -> frozenset:
        """(index, axis size) pairs, or ("range", index) for a range read from data past its axis,
        one of which the run must fail with; empty: it must not."""
        return case.index_errors

    def index_error_optional(self, case) -> bool:
        """Whether outputs matching the meaning are as good as the index error."""
        return case.index_error_optional

    # -- the run

    def run(self, numbers) -> Report:
        start = time.monotonic()
        self.cases = {k: self.generate(k) for k in numbers}
        self.report.counts["programs generated"] = len(self.cases)
        for target in self.targets:
            keys = [k for k, case in self.cases.items() if self.runs_on(case, target)]
            failing = [k for k in keys if self.index_errors(self.cases[k])]
            keys = [k for k in keys if k not in failing]
            for first in range(0, len(keys), self.batch):
                self.submit(target, keys[first:first + self.batch])
            for k in failing:
                self.submit(target, [k])
        done = 0
        for (target, module), outcome in self.pool.run():
            self.handle(target, module, outcome)
            done += 1
            if done % 10 == 0:
                self.log(f"  {done} modules, {len(self.report.bad)} bad so far")
        self.report.seconds = time.monotonic() - start
        return self.report

    def submit(self, target: str, keys: list) -> None:
        module = self.assemble(keys)
        inputs = {prefix(k) + name: value for k in keys for name, value in self.cases[k].inputs.items()}
        timeout = SECONDS_PER_MODULE + SECONDS_PER_PROGRAM * len(keys)
        self.report.counts[f"modules built for {target}"] += 1
        self.pool.submit((target, module), build_and_run, (module.source, target, module.outputs, inputs, module.dims),
                         timeout, alone=target == "vulkan-spirv")

    def handle(self, target: str, module, outcome) -> None:
        keys = list(module.lines)
        if outcome.kind == "raised":
            raise RuntimeError(f"the fuzzing job itself failed: {outcome.value}")
        if outcome.kind in ("hang", "crash"):
            return self.blame(target, keys, outcome.kind, outcome.value)
        result = outcome.value
        if len(keys) == 1 and self.index_errors(self.cases[keys[0]]):
            return self.check_index_error(target, keys[0], result)
        if result["kind"] == "ok":
            for k in keys:
                self.check(target, k, result["outputs"], result.get("saved", {}))
            return None
        detail = result.get("error") or f"{result['code']}: {result['message']}"
        culprit = owner(module, result.get("line"))
        if culprit is None:
            return self.blame(target, keys, result["kind"], detail)
        self.record(target, culprit, result["kind"], detail)
        rest = [k for k in keys if k != culprit]
        if rest:
            self.submit(target, rest)
        return None

    def blame(self, target: str, keys: list, kind: str, detail: str) -> None:
        """Halve a failing batch until the failure is down to one program."""
        if len(keys) == 1:
            return self.record(target, keys[0], kind, detail)
        half = len(keys) // 2
        self.submit(target, keys[:half])
        self.submit(target, keys[half:])
        return None

    def check(self, target: str, k: int, outputs: dict, saved: dict) -> None:
        """The outputs, and the files written by `save_npy` (an output saved), against the meaning."""
        case = self.cases[k]
        problems = []
        values = [(name, name, outputs.get(prefix(k) + name)) for name in case.program.outputs]
        values += [(f"save_npy of {name}", name, saved.get(prefix(k) + name)) for name in self.saves(case)]
        for label, name, got in values:
            if got is None:
                problems.append(f"{label}: missing")
                continue
            problem = self.disagreement(case, name, got)
            if problem:
                problems.append(f"{label} {problem}")
        self.report.counts[f"programs checked on {target}"] += 1
        if problems:
            self.record(target, k, "mismatch", "; ".join(problems))

    def check_index_error(self, target: str, k: int, result: dict) -> None:
        """A run that must fail naming one of the case's stray indices and its axis size."""
        expected = self.index_errors(self.cases[k])
        error = result.get("error", "") if result["kind"] == "run-error" else ""
        found, past = INDEX_ERROR.search(error), RANGE_ERROR.search(error)
        if found and (int(found.group(1)), int(found.group(2))) in expected or \
                past and ("range", past.group(1)) in expected:
            self.report.counts[f"programs checked on {target}"] += 1
            self.report.counts[f"index errors checked on {target}"] += 1
            return
        if result["kind"] == "ok" and self.index_error_optional(self.cases[k]):
            return self.check(target, k, result["outputs"], result["saved"])
        got = result.get("error") or result.get("message") or "outputs"
        self.record(target, k, "mismatch", f"expected an index error naming one of {sorted(expected)}, got {got}")

    def record(self, target: str, k: int, kind: str, detail: str) -> None:
        case = self.cases[k]
        finding = Finding(f"seed {self.seed} program {k}", target, kind, detail,
                          self.explain(case, kind, detail, target), self.source(case), case)
        self.report.findings.append(finding)


def _dims_comment(program) -> str:
    return f"// built with {' '.join(f'--dim {d}={v}' for d, v in program.dims)}\n" if program.fixed else ""


def _inputs_comment(inputs: dict) -> str:
    return "".join(f"// {name} = {np.array2string(value, separator=', ', max_line_width=1000)}\n"
                   for name, value in inputs.items())
