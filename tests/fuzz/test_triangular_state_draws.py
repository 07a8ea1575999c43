"""The program fuzzer makes some recurrence members triangular: a second axis as long as the
steps, of which each step defines the points `j in 0..t + 1` (fuzz/programs/generate.py
`triangular`; LANGUAGE.md section 4: the points past a step's range are 0). They are drawn from
a random stream of their own so that every seed's other programs stay as they were, and a few
such programs match their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Bound, Group
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed

SEED = 10025


def _has_triangle(program) -> bool:
    return any(isinstance(item, Group) and any(len(c.slots) > 1 and c.slots[1].hi == Bound(1, index="t")
                                               for m in item.members for c in m.clauses)
               for item in program.items)


def test_triangles_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, _, changed = drawn_and_changed(monkeypatch, generate, "TRIANGLE_SHARE", SEED, _has_triangle)
    assert len(changed) <= 3, changed      # a first attempt the meaning rejects, then another program


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_triangular_states_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_triangle, target, take=4)
