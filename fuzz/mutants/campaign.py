"""Mutation fuzzing of the front end: mutants of real programs (fuzz.mutants.corpus) must give a
proper diagnostic or build, never a traceback, a hang or a crash.

Mutants are checked in process, many to a job; every BUILD_EVERY-th valid-looking one is also
built with IREE, and every CLI_EVERY-th mutant goes through `einc build` as a subprocess (exit
status, rendered diagnostic, no output file left). A job that hangs or crashes is halved until
the mutant to blame is found.
"""
from __future__ import annotations

import os
import random
import shutil
import tempfile
import time

from fuzz.known_issues import explain
from fuzz.mutants.check import check_cli, check_in_process
from fuzz.mutants.corpus import corpus
from fuzz.mutants.mutate import COVERAGE_MUTATIONS, mutate
from fuzz.report import Finding, Report
from fuzz.workers import Pool

BATCH = 40
BUILD_EVERY = 10
CLI_EVERY = 25
SECONDS_PER_JOB = 60
SECONDS_PER_MUTANT = 10
GOOD = ("diagnostic", "valid", "built")
COVERAGE_SHARE = 0.05          # mutants that must be a diagnostic (mutate.COVERAGE_MUTATIONS)


def run_mutants(n: int, seed: int, jobs: int = 2, log=lambda line: print(line, flush=True)) -> Report:
    with tempfile.TemporaryDirectory(prefix="einc-mutants-") as root, Pool(jobs) as pool:
        return Mutants(seed, pool, root, log).run(n)


class Mutants:
    def __init__(self, seed: int, pool: Pool, root: str, log):
        self.seed, self.pool, self.root, self.log = seed, pool, root, log
        self.report = Report("mutants of real programs through the front end")
        self.seeds = corpus()
        self.folders: dict[str | None, str] = {}
        self.mutants: dict[int, tuple] = {}      # number -> (seed name, folder copy, bytes, original)
        self.coverage = {mutation: [s for s in self.seeds if applies(s.text)]
                         for mutation, applies in COVERAGE_MUTATIONS.items()}

    def run(self, n: int) -> Report:
        start = time.monotonic()
        for k in range(n):
            rng = random.Random(f"{self.seed}/mutant/{k}")
            original = rng.choice(self.seeds)
            self.mutants[k] = (original.name, self._folder(original.folder), mutate(original.text, rng), None)
            self._maybe_coverage_mutant(k)
        self.report.counts["mutants"] = n
        numbers = list(self.mutants)
        for first in range(0, n, BATCH):
            self._submit_in_process(numbers[first:first + BATCH])
        for k in numbers[::CLI_EVERY]:
            name, folder, data, _ = self.mutants[k]
            self.pool.submit(("cli", [k]), check_cli, (self._path(folder, k, "cli"), data), SECONDS_PER_JOB * 5)
        for (how, keys), outcome in self.pool.run():
            self._handle(how, keys, outcome)
        self.report.seconds = time.monotonic() - start
        return self.report

    def _maybe_coverage_mutant(self, k: int) -> None:
        """Now and then, from a stream of its own (the other mutants stay as they were), mutant
        k deletes a recurrence's base clause, narrows its step's range or misspells a type
        instead: a diagnostic is expected."""
        rng = random.Random(f"{self.seed}/coverage/{k}")
        if rng.random() >= COVERAGE_SHARE:
            return
        mutation = rng.choice(list(self.coverage))
        if not self.coverage[mutation]:
            return
        original = rng.choice(self.coverage[mutation])
        text = mutation(original.text, rng)
        self.mutants[k] = (original.name, self._folder(original.folder), text.encode(), original.text.encode())
        self.report.counts["coverage mutants"] += 1

    def _folder(self, folder: str | None) -> str:
        """A private copy of the folder a program lives in (its .ein and .npy files)."""
        if folder not in self.folders:
            copy = os.path.join(self.root, f"folder{len(self.folders)}")
            os.makedirs(copy)
            for entry in os.listdir(folder) if folder else ():
                if entry.endswith((".ein", ".npy")):
                    shutil.copy(os.path.join(folder, entry), copy)
            self.folders[folder] = copy
        return self.folders[folder]

    @staticmethod
    def _path(folder: str, k: int, how: str = "in_process") -> str:
        """Mutant k's file for one way of checking it: the in-process and the `einc build` checks of
        one mutant may run at once in two workers, and each deletes its file when done."""
        return os.path.join(folder, f"mutant{k}_{how}.ein")

    def _submit_in_process(self, keys: list) -> None:
        work = [(self._path(self.mutants[k][1], k), self.mutants[k][2], k % BUILD_EVERY == 0, self.mutants[k][3])
                for k in keys]
        self.pool.submit(("in process", keys), check_in_process, (work,),
                         SECONDS_PER_JOB + SECONDS_PER_MUTANT * len(keys))

    def _handle(self, how: str, keys: list, outcome) -> None:
        if outcome.kind == "raised":
            raise RuntimeError(f"the fuzzing job itself failed: {outcome.value}")
        if outcome.kind in ("hang", "crash"):
            if len(keys) > 1:
                half = len(keys) // 2
                self._submit_in_process(keys[:half])
                self._submit_in_process(keys[half:])
            else:
                self._record(how, keys[0], outcome.kind, outcome.value)
            return
        results = outcome.value if how == "in process" else [outcome.value]
        for k, result in zip(keys, results):
            self.report.counts[f"{how}: {result['kind']}"] += 1
            if result["kind"] not in GOOD:
                self._record(how, k, result["kind"], result.get("detail", ""))

    def _record(self, how: str, k: int, kind: str, detail: str) -> None:
        name, _, data, _ = self.mutants[k]
        text = data.decode("utf-8", "replace")
        self.report.findings.append(Finding(f"seed {self.seed} mutant {k} of {name} ({how})",
                                            "front-end" if how == "in process" else "einc-build",
                                            kind, detail, explain(None, kind, detail), text))

