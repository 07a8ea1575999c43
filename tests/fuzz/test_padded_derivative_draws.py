"""The program fuzzer binds some derivatives of rank 1 or more first and reads them again under a
guard over one point more along their last axis (fuzz/programs/generate.py `padded`, `let g[pj0 in
0..n + 1] = if pj0 < n { g_j[pj0] } else { 0.0 };`): a Jacobian read under a guard was bounds-checked
as an unguarded read, E005 (found by the hold-out program newton_logreg, the augmented matrix
[H | g] of a Newton step). It is drawn from a random stream of its own, so every seed's other
programs stay as they were; a few such programs match their NumPy meaning on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import Derivative
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 30001          # its programs 0 (a Jacobian) and 63 within the first 90


def padded(program) -> bool:
    return any(isinstance(item, Derivative) and item.padded for item in program.items)


def test_padded_derivatives_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "PAD_SHARE", SEED, padded)
    assert drawn and not changed, (drawn, changed)


def test_padded_derivatives_match_numpy():
    assert_drawn_match_numpy(SEED, padded, "llvm-cpu", take=2, least=2, count=90)
