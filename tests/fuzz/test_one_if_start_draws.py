"""The program fuzzer writes some recurrence members' start and steps as one clause with an `if`
on the step (`let r[t in 0..T] = if t >= 2 { .. r[t - 2] .. } else { .. };`, fuzz/programs/render.py
`_member_clause`): the steps' reads before the start are in the branch the test keeps from the
first steps. Drawn from a random stream of their own so that every seed's other programs stay as
they were; a few such programs match their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.module import assemble
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed

SEED = 10049


def _has_one_if(program) -> bool:
    text = assemble({0: program}).source
    return "[t in 0.." in text and ("= if t == 0 {" in text or "= if t >= " in text)


def test_one_if_starts_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "ONE_IF_SHARE", SEED, _has_one_if, count=150)
    assert len(drawn) >= 4 and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_one_if_starts_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_one_if, target, take=4)
