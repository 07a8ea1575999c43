"""The program fuzzer gives some recurrence groups a count member: `c[t] = sum[k in 0..S](if
x[t - 1, k] < v { 1 } else { 0 })` after a start of 0, read by a float member x's steps as a row
index, `x[t - 1, c[t] % S]` (fuzz/programs/generate.py `with_tally`). The count's int literals keep
i32 while x's float literals take the type of the data they meet: E002 (a float subscript) in einc
until the hold-out program particle_filter (tests/e2e/test_holdout_programs_5a.py). They are drawn
from a random stream of their own so that every seed's other programs stay as they were, and a few
such programs match their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Group, IfElse, Reduce
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed

SEED = 10072          # its program 2 was E002 (a float subscript) before the fix


def _has_tally(program) -> bool:
    return any(isinstance(item, Group) and any(m.name.endswith(generate.TALLY_SUFFIX) and isinstance(m.clauses[-1].body, Reduce)
                                               and isinstance(m.clauses[-1].body.body, IfElse)
                                               for m in item.members) for item in program.items)


def test_tallies_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "TALLY_SHARE", SEED, _has_tally)
    assert drawn and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_tallies_match_numpy(target):
    # on vulkan-spirv the first two are programs 66 and 175 (most tallies' programs take a type it lacks)
    assert_drawn_match_numpy(SEED, _has_tally, target, take=5, count=200)
