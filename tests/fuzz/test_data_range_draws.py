"""The program fuzzer writes reductions over a range with an end read from an index input
(`sum[k in idx[i]..idx[i + 1]](a[k] * ..)`, `max[k in 0..idx[2] + 1](a[k])`,
fuzz/programs/expressions.py `_data_range`), drawn from a random stream of their own so that every
seed's other programs stay as they were; a few such programs match their NumPy meaning
(fuzz/programs/meaning.py) on each target, and one whose range runs past its axis must fail."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.campaign import Differential
from fuzz.programs.generate import INDEX_INPUT
from fuzz.programs.meaning import Fragile, Invalid, evaluate
from fuzz.programs.structure import Reduce
from fuzz.workers import Pool
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, drawn_case, holds, source

SEED = 4


def _has_data_range(program) -> bool:
    return holds(program, lambda node: isinstance(node, Reduce) and any(r.within is not None for r in node.ranges))


def test_data_ranges_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    cases, drawn, changed = drawn_and_changed(monkeypatch, expressions, "DATA_RANGE_SHARE", SEED, _has_data_range)
    # a first attempt the meaning rejects, then another program (3 since a range end read at an
    # index decides that index's range: a left-out range meeting it is drawn written out)
    assert len(drawn) >= 2 and len(changed) <= 3, (drawn, changed)
    assert re.search(rf"\[\w+ in [^(]*{INDEX_INPUT}\d+\[", source(drawn[0], cases[drawn[0]]))     # `k in 0..idx0[2]`


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_data_ranges_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_data_range, target, take=3, least=2, count=40)


def _past_its_axis(case):
    """`case` with one value of an index input moved so that a range read from it runs past its
    axis where it matters (the meaning expects the run to fail naming that range's index)."""
    for inp in (i for i in case.program.inputs if i.name.startswith(INDEX_INPUT)):
        for at in range(case.inputs[inp.name].size):
            for value in (-1, int(inp.high) + 3):
                data = case.inputs[inp.name].copy()
                data[at] = value
                inputs, strays = {**case.inputs, inp.name: data}, []
                try:
                    meaning = evaluate(case.program, inputs, strays=strays)
                except (Fragile, Invalid):
                    continue
                if any(s[0] == "range" for s in strays):
                    return replace(case, inputs=inputs, meaning=meaning, index_errors=frozenset(strays))
    return None


class _PastDifferential(Differential):
    def generate(self, k: int):
        return self.past


def test_a_range_past_its_axis_fails_the_run():
    k = next(k for k in range(40) if _has_data_range(drawn_case(SEED, k).program)
             and _past_its_axis(drawn_case(SEED, k)) is not None)
    with Pool(1) as pool:
        differential = _PastDifferential(SEED, pool, ("llvm-cpu",), 1, lambda _: None)
        differential.past = _past_its_axis(drawn_case(SEED, k))
        report = differential.run([k])
    assert not report.bad, report.format()
    assert report.counts["index errors checked on llvm-cpu"] == 1
