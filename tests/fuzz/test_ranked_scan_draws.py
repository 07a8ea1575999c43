"""The program fuzzer's scanned row folds (fuzz/programs/render.py `_scanned_rows`) sometimes read
the previous step through a member of one more axis (`let d[i, k in 1..n, c in 0..2] = a[i, k -
1]; let a[i, k in 1..n] = d[i, k, 1] + m[i, k];`): a group of members of different ranks whose
step is their second axis, E007 (definitions read each other at the same step) before
einc.semantics.forms.step_axis accepted members of different ranks (found by the hold-out
program lq_policy_clip, a state x[s, t, i] and a control u[s, t]). It is drawn from a random
stream of its own, so every seed's other programs stay as they were; such programs match their
NumPy meaning on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import RowMap
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 31004          # its program 17 within the first 25


def ranked(program) -> bool:
    return any(isinstance(item, RowMap) and item.ranked for item in program.items)


def test_ranked_scans_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "RANKED_SHARE", SEED, ranked, count=25)
    assert drawn and not changed, (drawn, changed)


def test_ranked_scans_match_numpy():
    assert_drawn_match_numpy(SEED, ranked, "llvm-cpu", take=1, least=1, count=25)
