"""The program fuzzer writes some guarded i32 sums over one plain range as counts, the length of a
filtered comprehension (fuzz/programs/expressions.py `_counted`, `[k | k in 0..N, guard].length`):
inside an indexed definition, whose points keep different numbers of elements, `.length` was E011
while `len([..])` counted (found by the hold-out program naive_bayes, a confusion matrix by nested
comprehensions). It is drawn from a random stream of its own, so every seed's other programs stay
as they were; a few such programs match their NumPy meaning on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.expressions as expressions
from fuzz.programs.structure import Reduce
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 30002          # its programs 10, 21 and 51 within the first 60


def counted(program) -> bool:
    return holds(program, lambda node: isinstance(node, Reduce) and node.counted)


def test_counts_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, expressions, "COUNT_SHARE", SEED, counted)
    assert drawn and not changed, (drawn, changed)


def test_counts_match_numpy():
    assert_drawn_match_numpy(SEED, counted, "llvm-cpu", take=2, least=2, count=60)
