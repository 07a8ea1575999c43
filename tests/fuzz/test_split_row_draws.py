"""The program fuzzer's row functions (fuzz/programs/generate.py `row_map`, called per row in a
comprehension) sometimes copy the row by two clauses guarded by the parity of its index first
(`let u[k] = w[k] where k % 2 == 0; let u[k] = w[k] where k % 2 == 1;`): a piecewise definition
inside a function called per point, E011 before einc batched such definitions over the caller's
indices (found by the hold-out program rnn_train_epochs, `let curve[e in 0..8] = loss(P[e],
U[e]);` with `let pred[t in 1..T] = ..;` in loss). It is drawn from a random stream of its own,
so every seed's other programs stay as they were; a few such programs match their NumPy meaning
on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import RowMap
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 31002          # its programs 6 and 11 within the first 60


def split(program) -> bool:
    return any(isinstance(item, RowMap) and item.split for item in program.items)


def test_split_rows_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "SPLIT_SHARE", SEED, split)
    assert drawn and not changed, (drawn, changed)


def test_split_rows_match_numpy():
    assert_drawn_match_numpy(SEED, split, "llvm-cpu", take=2, least=2, count=60)
