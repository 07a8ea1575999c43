"""The program fuzzer follows some derivatives with a second one of the same value by another
input (fuzz/programs/generate.py `sibling_derivative`, `@L / @W1` and `@L / @W2`): through a
recurrence both reach one adjoint loop, which einc builds once (einc.passes.shared_values). It
is drawn from a random stream of its own, so every seed's other programs stay as they were; a
few such programs match their NumPy meaning (central differences) on llvm-cpu."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Derivative, Group, reads_of
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 10131


def pair_through_a_recurrence(program) -> bool:
    """Two derivatives of one value that a recurrence computes or reads."""
    reached, ofs = set(), []
    for item in program.items:
        if isinstance(item, Derivative):
            ofs.append(item.of)
        elif isinstance(item, Group):
            reached |= {m.name for m in item.members}
        elif hasattr(item, "name") and reads_of(item) & reached:
            reached.add(item.name)
    return len(ofs) == 2 and ofs[0] == ofs[1] and ofs[0] in reached


def test_second_derivatives_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "PAIR_SHARE", SEED,
                                          lambda p: sum(isinstance(i, Derivative) for i in p.items) == 2)
    assert drawn and not changed, (drawn, changed)


def test_two_derivatives_of_a_value_through_a_recurrence_match_numpy():
    assert_drawn_match_numpy(SEED, pair_through_a_recurrence, "llvm-cpu", take=2, least=2, count=150)
