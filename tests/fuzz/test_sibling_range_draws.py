"""The program fuzzer writes reductions whose second index runs over an earlier one's value
(`sum[j in 0..n, k in 0..j + 1]`, fuzz/programs/expressions.py `_after_a_sibling`), drawn from a
random stream of their own so that every seed's other programs stay as they were; a few such
programs match their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.campaign import Differential, runs_on
from fuzz.programs.generate import generate_case
from fuzz.programs.module import assemble
from fuzz.programs.structure import Reduce, program_exprs, walk
from fuzz.workers import Pool

SEED = 9
TARGETS = ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)]


def _has_sibling_range(program) -> bool:
    return any(isinstance(node, Reduce) and any(r.hi.index in {s.var for s in node.ranges[:k]}
                                                for k, r in enumerate(node.ranges))
               for expr in program_exprs(program) for node in walk(expr))


def test_sibling_ranges_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    cases = [generate_case(SEED, k) for k in range(60)]
    monkeypatch.setattr(expressions, "SIBLING_SHARE", 0.0)
    plain = [generate_case(SEED, k) for k in range(60)]
    drawn = [k for k, c in enumerate(cases) if _has_sibling_range(c.program)]
    assert drawn, "no sibling range among the first 60 programs"
    for k, (case, before) in enumerate(zip(cases, plain)):
        if k not in drawn:
            assert assemble({k: case.program}).source == assemble({k: before.program}).source


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_sibling_ranges_match_numpy(target):
    cases = {k: generate_case(SEED, k) for k in range(150)}
    keys = [k for k, c in cases.items() if _has_sibling_range(c.program) and runs_on(c, target)][:4]
    assert len(keys) >= 3, keys
    with Pool(2) as pool:
        report = Differential(SEED, pool, (target,), 12, lambda _: None).run(keys)
    assert not report.bad, report.format()
    assert report.counts[f"programs checked on {target}"] == len(keys)
