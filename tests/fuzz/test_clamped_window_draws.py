"""The program fuzzer writes reduction ranges clamped at the edges of an outer index's range
(`sum[k in max(0, i - 1)..min(n, i + 2)]`, fuzz/programs/expressions.py `_clamped_window`),
drawn from a random stream of their own so that every seed's other programs stay as they were;
a few such programs match their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.campaign import Differential, runs_on
from fuzz.programs.generate import generate_case
from fuzz.programs.module import assemble
from fuzz.programs.structure import Reduce, program_exprs, walk
from fuzz.workers import Pool

SEED = 5
TARGETS = ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)]


def _has_window(program) -> bool:
    return any(isinstance(node, Reduce) and any(r.lo.clamp for r in node.ranges)
               for expr in program_exprs(program) for node in walk(expr))


def test_windows_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    cases = [generate_case(SEED, k) for k in range(60)]
    monkeypatch.setattr(expressions, "WINDOW_SHARE", 0.0)
    plain = [generate_case(SEED, k) for k in range(60)]
    windowed = [k for k, c in enumerate(cases) if _has_window(c.program)]
    assert windowed, "no clamped window among the first 60 programs"
    for k, (case, before) in enumerate(zip(cases, plain)):
        if k not in windowed:
            assert assemble({k: case.program}).source == assemble({k: before.program}).source
    assert "max(0, " in assemble({windowed[0]: cases[windowed[0]].program}).source


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_clamped_windows_match_numpy(target):
    cases = {k: generate_case(SEED, k) for k in range(150)}
    keys = [k for k, c in cases.items() if _has_window(c.program) and runs_on(c, target)][:5]
    assert len(keys) >= 3, keys
    with Pool(2) as pool:
        report = Differential(SEED, pool, (target,), 12, lambda _: None).run(keys)
    assert not report.bad, report.format()
    assert report.counts[f"programs checked on {target}"] == len(keys)
