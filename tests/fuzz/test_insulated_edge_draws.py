"""The program fuzzer gives some recurrence members insulated edges along their second axis,
clauses copying the step's neighbouring point at the same step (`r[t, 0, k] = r[t, 1, k]`,
`r[t, j in 3..4, k] = r[t, j - 1, k]`; fuzz/programs/generate.py `with_edges`, LANGUAGE.md
section 4). They are drawn from a random stream of their own so that every seed's other programs
stay as they were, and a few such programs match their NumPy meaning (fuzz/programs/meaning.py)
on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Group, Lit, Read
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed

SEED = 10027


def _has_edges(program) -> bool:
    return any(isinstance(item, Group) and any(_low_edge(m.name, c) for m in item.members for c in m.clauses)
               for item in program.items)


def _low_edge(name: str, clause) -> bool:
    """`r[t, 0, ..] = r[t, 1, ..]`."""
    body = clause.body
    return len(clause.slots) > 1 and clause.slots[1].var is None and clause.slots[1].lo.const == 0 \
        and isinstance(body, Read) and body.name == name and body.subs[1] == Lit(1, "i32")


def test_edges_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "EDGE_SHARE", SEED, _has_edges)
    assert len(drawn) >= 2 and not changed, (drawn, changed)      # 2 of the 25 the fast tier draws


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_insulated_edges_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_edges, target, take=5)
