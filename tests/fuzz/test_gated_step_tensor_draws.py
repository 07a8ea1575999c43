"""The program fuzzer computes some float step tensors only at the steps a new index input lets,
their body reading a 1-d input at that index (fuzz/programs/generate.py `gated`, `if gt[t % 3] >=
0 { { let h[q in 0..2] = .. + 0.25 * x[gt[t % 3]]; .. } } else { 0.0 }`, gt's first value -1):
the run-time check of the read lost the branch's test, which names the group's step where the
read names the clause's steps, and failed the run at a step that skips it (found by the hold-out
program simplex_tableau, a ratio test under `if enter >= 0`). It is drawn from a random stream of
its own, so every seed's other programs stay as they were; a few such programs match their NumPy
meaning on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import IfElse, StepTensor
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 30202          # its programs 2 and 12 within the first 25


def gated(program) -> bool:
    return holds(program, lambda node: isinstance(node, IfElse) and isinstance(node.then, StepTensor))


def test_gated_step_tensors_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "GATE_SHARE", SEED, gated)
    assert drawn and not changed, (drawn, changed)


def test_gated_step_tensors_match_numpy():
    assert_drawn_match_numpy(SEED, gated, "llvm-cpu", take=2, least=2, count=25)
