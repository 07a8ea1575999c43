"""The program fuzzer's insulated edges (fuzz/programs/generate.py `with_edges`) of a member of
three or more axes sometimes read their step's row first, `r[t, 1][k]`: a row of points of the
step being computed, read at a point as that point. It was E007 "`r[t]` is read inside its own
definition" (found by the hold-out program mwg_hierarchical, a Gibbs sweep reading `z[t, k - 1]`).
It is drawn from a random stream of its own, so every seed's other programs stay as they were;
such programs match their NumPy meaning on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import Index, Read
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 33037          # its programs 7 and 23 within the first 25


def step_row_first(program) -> bool:
    return holds(program, lambda node: isinstance(node, Read) and node.split == 2 and node.subs[0] == Index("t"))


def test_step_rows_read_first_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "STEP_ROW_SHARE", SEED, step_row_first, count=25)
    assert drawn and not changed, (drawn, changed)


def test_step_rows_read_first_match_numpy():
    assert_drawn_match_numpy(SEED, step_row_first, "llvm-cpu", take=2, least=2, count=25)
