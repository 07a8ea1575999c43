"""The program fuzzer sums some recurrence members of two axes or more over growing prefixes of
their last step, `let s = sum[j](sum[k in 0..j + 1](r[T - 1, k, 0, ..]));`, and leaves the member
out of the outputs, so that it keeps a window of steps (fuzz/programs/generate.py `tail_total`).
The read's far end along the steps was checked against the window's slots until the hold-out
program isotonic_pava (tests/e2e/test_holdout_programs_8c.py): an E005 at build time for fixed
sizes, a failed size check at every run otherwise. Such totals are drawn from a random stream of
their own so that every seed's other programs stay as they were, and a few such programs match
their NumPy meaning (fuzz/programs/meaning.py) on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import Define, Reduce
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 10203          # its program 17 was E005 (index 8 of an axis of 4) before the fix


def _has_tail(program) -> bool:
    def prefix_sum(item) -> bool:
        body = item.clauses[0].body if isinstance(item, Define) and len(item.clauses) == 1 else None
        return isinstance(body, Reduce) and isinstance(body.body, Reduce) and body.body.ranges[0].hi.index == "j"
    return any(prefix_sum(item) for item in program.items)


def test_tails_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "TAIL_SHARE", SEED, _has_tail)
    assert drawn and not changed, (drawn, changed)


def test_programs_with_tails_match_numpy():
    assert_drawn_match_numpy(SEED, _has_tail, "llvm-cpu", take=3, least=3, count=40)
