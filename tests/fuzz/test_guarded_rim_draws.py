"""The program fuzzer gives some recurrence members a rim: the step clause narrowed to the inside
of the second axis and a clause over the whole step box guarded by `j == 0 || j == N - 1`
(fuzz/programs/generate.py `with_rim`, LANGUAGE.md section 10), the shape of a grid's boundary
clause beside its interior, E011 in einc until the hold-out program wave_membrane
(tests/e2e/test_holdout_programs_4a.py). They are drawn from a random stream of their own so that
every seed's other programs stay as they were, and a few such programs match their NumPy meaning
(fuzz/programs/meaning.py) on each target. Some rims copy the interior's next point of their step
(`if j == 0 { r[t, 1] } else { r[t, N - 2] }`, drawn from a stream of their own): E011 in einc
until a rim reading its own step ran after the interior."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Bound, Group, IfElse, Lit, Read
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed

SEED = 10102


def _has_rim(program) -> bool:
    return any(isinstance(item, Group) and any(_rim(m.clauses) for m in item.members) for item in program.items)


def _rim(clauses: tuple) -> bool:
    """The last clause a literal (or a copy of the interior) under a guard, the one before it
    starting its second axis at 1."""
    return len(clauses) > 1 and isinstance(clauses[-1].body, (Lit, IfElse)) \
        and any(w.name is None for w in clauses[-1].wheres) \
        and len(clauses[-2].slots) > 1 and clauses[-2].slots[1].lo == Bound(1)


def test_rims_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "RIM_SHARE", SEED, _has_rim)
    assert len(drawn) >= 2 and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_guarded_rims_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_rim, target, take=5)


def _copies_interior(program) -> bool:
    """A rim clause whose body reads its own member at the step (the `copies` stream's)."""
    return any(isinstance(item, Group) and any(_rim_copy(m.name, m.clauses) for m in item.members)
               for item in program.items)


def _rim_copy(name: str, clauses: tuple) -> bool:
    last = clauses[-1]
    return len(clauses) > 1 and any(w.name is None for w in last.wheres) and isinstance(last.body, IfElse) \
        and isinstance(last.body.then, Read) and last.body.then.name == name


def test_rims_copying_the_interior_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "RIM_COPY_SHARE", SEED, _copies_interior, count=60)
    assert len(drawn) >= 2 and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_rims_copying_the_interior_match_numpy(target):
    assert_drawn_match_numpy(SEED, _copies_interior, target, take=3, count=120)
