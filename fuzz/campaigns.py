"""The fuzzing campaigns `python -m fuzz` (and `make fuzz`) runs.

A campaign is a function `run(n, seed, jobs=..)` returning a fuzz.report.Report; registering one
is one line here. `n` is how many cases it tries: `full` for `make fuzz`, `sample` for the
fixed-seed run in the test suite (tests/fuzz/test_sample.py; the runner's sample is
tests/cli/test_fuzz_runner.py).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Campaign:
    name: str
    function: str                  # "module:function"
    full: int
    sample: int

    def run(self, n: int, seed: int, jobs: int):
        module, name = self.function.split(":")
        return getattr(importlib.import_module(module), name)(n, seed, jobs=jobs)


CAMPAIGNS = (
    Campaign("programs", "fuzz.programs.campaign:run_differential", full=2000, sample=100),
    Campaign("mutants", "fuzz.mutants.campaign:run_mutants", full=5000, sample=400),
    Campaign("runner", "fuzz.runner_campaign:run_runner", full=2000, sample=120),
    Campaign("dense", "fuzz.dense.campaign:run_dense", full=600, sample=40),
    Campaign("stdlib", "fuzz.stdlib.campaign:run_stdlib", full=1000, sample=48),
)


def campaign(name: str) -> Campaign:
    return next(c for c in CAMPAIGNS if c.name == name)
