"""What the program fuzzer's draw tests share. A construct drawn from a random stream of its own
(fuzz/programs/expressions.py `Streams`) must leave every other program of a seed as it was, and
a few programs holding it must match their NumPy meaning (fuzz/programs/meaning.py) on each
target."""
from __future__ import annotations

from functools import cache

import pytest

from fuzz.programs.campaign import Differential, runs_on
from fuzz.programs.generate import generate_case
from fuzz.programs.module import assemble
from fuzz.programs.structure import program_exprs, walk
from fuzz.workers import Pool
from tests.tiers import VULKAN_FULL, by_tier

TARGETS = ["llvm-cpu", VULKAN_FULL]
VULKAN_TAKE = 2


def holds(program, test) -> bool:
    """Whether some node of some expression of `program` passes `test`."""
    return any(test(node) for expr in program_exprs(program) for node in walk(expr))


@cache
def drawn_case(seed: int, number: int):
    """`generate_case` as it is, kept for the file's later tests: a case's NumPy meaning (a
    derivative's by finite differences) is most of what a draw test costs. Never called with a
    share patched: those cases are generated afresh."""
    return generate_case(seed, number)


class _DrawnDifferential(Differential):
    def generate(self, k: int):
        return drawn_case(self.seed, k)


def drawn_and_changed(monkeypatch, module, share: str, seed: int, has, count: int | None = None):
    """The first `count` cases of `seed` (60; 25 in the fast tier), those of them that hold the
    construct (`has`), and the others whose source differs once `module.share` is 0 (the
    construct never drawn)."""
    count = count or by_tier(25, 60)
    cases = [drawn_case(seed, k) for k in range(count)]
    monkeypatch.setattr(module, share, 0.0)
    plain = [generate_case(seed, k) for k in range(count)]
    drawn = [k for k, c in enumerate(cases) if has(c.program)]
    assert drawn, f"none of the first {count} programs of seed {seed} holds it"
    changed = [k for k, (case, before) in enumerate(zip(cases, plain))
               if k not in drawn and source(k, case) != source(k, before)]
    return cases, drawn, changed


def source(key: int, case) -> str:
    return assemble({key: case.program}).source


def assert_drawn_match_numpy(seed: int, has, target: str, take: int = 5, least: int = 3, count: int = 150):
    """Up to `take` of the first `count` programs of `seed` that hold the construct and run on
    `target` (at least `least`) agree with their meaning there. On vulkan-spirv, whose builds and
    runs through lavapipe cost the most of the suite's time, the first VULKAN_TAKE of them, and
    in the fast tier the first one: the campaigns (`make fuzz`) check many more."""
    if target == "vulkan-spirv":
        take, least = min(take, VULKAN_TAKE), min(least, VULKAN_TAKE)
    take, least = by_tier(1, take), by_tier(1, least)
    keys = []
    for k in range(count):                # generated up to the last one taken, no further
        case = drawn_case(seed, k)
        if has(case.program) and runs_on(case, target):
            keys.append(k)
            if len(keys) == take:
                break
    assert len(keys) >= least, keys
    with Pool(2) as pool:
        report = _DrawnDifferential(seed, pool, (target,), 12, lambda _: None).run(keys)
    assert not report.bad, report.format()
    assert report.counts[f"programs checked on {target}"] == len(keys)
