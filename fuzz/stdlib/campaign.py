"""The stdlib campaign: drawn standard-library calls through einc on llvm-cpu and (a sample of
the f32 and integer ones) vulkan-spirv, many to a module, against their NumPy meaning.
Building, running and blaming a failing module on one call are fuzz.programs.campaign's; this
module says what a case is and how its outputs are judged (fuzz.stdlib.compare)."""
from __future__ import annotations

import zlib

from fuzz.programs.campaign import Differential
from fuzz.programs.module import assemble, prefix
from fuzz.report import Report
from fuzz.stdlib.compare import disagreement
from fuzz.stdlib.generate import StdCase, generate_case
from fuzz.stdlib.newer_calls import CPU_ONLY
from fuzz.stdlib.spec import render_std
from fuzz.workers import Pool

TARGETS = ("llvm-cpu", "vulkan-spirv")
BATCH = 12
VULKAN_SHARE = 4                   # one call in this many of those Vulkan can run goes there too


def run_stdlib(n: int, seed: int, jobs: int = 2, targets: tuple = TARGETS, batch: int = BATCH,
               log=lambda line: print(line, flush=True), only: tuple = ()) -> Report:
    with Pool(jobs) as pool:
        return StdlibDifferential(seed, pool, targets, batch, log, only).run(range(n))


class StdlibDifferential(Differential):
    title = "standard-library calls against their ONNX / math-library meaning in NumPy"

    def __init__(self, seed, pool, targets, batch, log, only: tuple = ()):
        super().__init__(seed, pool, targets, batch, log)
        self.only = only

    def generate(self, k: int) -> StdCase:
        return generate_case(self.seed, k, self.only)

    def runs_on(self, case: StdCase, target: str) -> bool:
        if target != "vulkan-spirv":
            return True
        if case.program.function in CPU_ONLY:
            return False
        types = {i.dtype for i in case.program.inputs} | {w.dtype for w in case.meaning.values()}
        return types <= {"f32", "i32", "bool"} and \
            zlib.crc32(case.program.call.encode()) % VULKAN_SHARE == 0

    def assemble(self, keys: list):
        return assemble({k: self.cases[k].program for k in keys}, render_std)

    def check(self, target: str, k: int, outputs: dict, saved: dict) -> None:
        """Each output against its meaning, counted by function."""
        case = self.cases[k]
        problems = []
        for name, want in case.meaning.items():
            got = outputs.get(prefix(k) + name)
            problem = "missing" if got is None else disagreement(got, want)
            if problem:
                problems.append(f"{name} {problem}")
        self.report.counts[f"programs checked on {target}"] += 1
        self.report.counts[f"{case.program.function} checked on {target}"] += 1
        if problems:
            self.record(target, k, "mismatch", "; ".join(problems))

    def source(self, case: StdCase) -> str:
        shapes = ", ".join(f"{name}{list(a.shape)}" for name, a in case.inputs.items())
        return "\n".join(case.program.statements()) + f"\n// inputs: {shapes}\n"

    def saves(self, case: StdCase) -> tuple:
        return ()

    def index_errors(self, case: StdCase) -> frozenset:
        return frozenset()

    def index_error_optional(self, case: StdCase) -> bool:
        return False
