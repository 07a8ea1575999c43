"""The program fuzzer gives some max, min and prod reductions a guard (`max[k](x[k]) where
x[k] > 0.5`, fuzz/programs/expressions.py `_extremum_guard`), drawn from a random stream of
their own so that every seed's other programs stay as they were (but where a guarded attempt
is rejected and the next attempt differs); a few such programs match
their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.structure import Reduce
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 5


def _guarded_extremum(program) -> bool:
    return holds(program, lambda node: isinstance(node, Reduce) and node.op != "sum" and node.guard is not None)


def test_guards_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, _, changed = drawn_and_changed(monkeypatch, expressions, "EXTREMUM_GUARD_SHARE", SEED, _guarded_extremum)
    # a guarded first attempt the meaning rejects (a max over no point for every input drawn)
    # is followed by another program: 2 of these 60
    assert len(changed) <= 6, changed


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_guarded_extrema_match_numpy(target):
    assert_drawn_match_numpy(SEED, _guarded_extremum, target)
