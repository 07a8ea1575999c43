"""The program fuzzer's reads of a member's earlier step (fuzz/programs/expressions.py
`step_read`) of three or more axes are sometimes written as a row first, `x[t - 1, j][k]`: a row
of the previous iterate at the clause's point, E011 "inside its recurrence read it at one point"
before einc read it from the whole iterate (found by the hold-out program optimizer_match, one
optimiser's state per row). It is drawn from a random stream of its own, so every seed's other
programs stay as they were; such programs match their NumPy meaning on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.expressions as expressions
from fuzz.programs.structure import Read
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 31200          # its programs 4 and 13 within the first 25


def row_first(program) -> bool:
    return holds(program, lambda node: isinstance(node, Read) and node.split)


def test_row_first_reads_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, expressions, "ROW_READ_SHARE", SEED, row_first, count=25)
    assert drawn and not changed, (drawn, changed)


def test_row_first_reads_match_numpy():
    assert_drawn_match_numpy(SEED, row_first, "llvm-cpu", take=2, least=2, count=25)
