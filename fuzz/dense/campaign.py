"""The dense campaign: generated dense programs through einc on llvm-cpu, llvm-cpu-generic and
(f32 ones) vulkan-spirv, many to a module, against their float64 NumPy meaning. Building,
running and blaming a failing module on one program are fuzz.programs.campaign's; this module
says what a case is and how its outputs are judged (fuzz.dense.compare)."""
from __future__ import annotations

from fuzz.dense.compare import disagreement
from fuzz.dense.generate import DenseCase, generate_case
from fuzz.dense.spec import render_dense
from fuzz.programs.campaign import Differential
from fuzz.programs.module import assemble
from fuzz.report import Report
from fuzz.workers import Pool

TARGETS = ("llvm-cpu", "llvm-cpu-generic", "vulkan-spirv")
BATCH = 10


def run_dense(n: int, seed: int, jobs: int = 2, targets: tuple = TARGETS, batch: int = BATCH,
              log=lambda line: print(line, flush=True)) -> Report:
    with Pool(jobs) as pool:
        return DenseDifferential(seed, pool, targets, batch, log).run(range(n))


class DenseDifferential(Differential):
    title = "dense programs (named linalg ops and their near misses) against NumPy"

    def generate(self, k: int) -> DenseCase:
        return generate_case(self.seed, k)

    def runs_on(self, case: DenseCase, target: str) -> bool:
        return target != "vulkan-spirv" or case.program.dtype == "f32"

    def assemble(self, keys: list):
        return assemble({k: self.cases[k].program for k in keys}, render_dense)

    def disagreement(self, case: DenseCase, name: str, got) -> str | None:
        return disagreement(got, case.meaning[name], case.program.dtype)

    def source(self, case: DenseCase) -> str:
        shapes = ", ".join(f"{name}{list(a.shape)}" for name, a in case.inputs.items())
        return "\n".join(case.program.statements()) + f"\n// inputs uniform in [-1, 1]: {shapes}\n"

    def saves(self, case: DenseCase) -> tuple:
        return ()                   # dense programs write no files

    def index_errors(self, case: DenseCase) -> frozenset:
        return frozenset()          # dense programs read through no data-dependent index

    def index_error_optional(self, case: DenseCase) -> bool:
        return False
