"""The program fuzzer adds to some recurrence steps the member's extremum or mean over every
earlier step at the same point, `0.25 * max[i in 0..t](r[i, j])` (fuzz/programs/generate.py
`with_history`): a reduction whose range grows with the step. It is drawn from a random stream
of its own so that every seed's other programs stay as they were; vulkan-spirv refuses such
steps (E011), so they run on llvm-cpu, where a few match their NumPy meaning."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.campaign import runs_on
from fuzz.programs.generate import generate_case
from fuzz.programs.structure import reads_earlier_steps
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 10023


def test_step_histories_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, _, changed = drawn_and_changed(monkeypatch, generate, "HISTORY_SHARE", SEED, reads_earlier_steps)
    assert len(changed) <= 3, changed      # a first attempt the meaning rejects, then another program


def test_step_histories_are_not_sent_to_vulkan():
    case = next(c for c in (generate_case(SEED, k) for k in range(60)) if reads_earlier_steps(c.program))
    assert runs_on(case, "llvm-cpu") and not runs_on(case, "vulkan-spirv")


def test_programs_with_step_histories_match_numpy():
    assert_drawn_match_numpy(SEED, reads_earlier_steps, "llvm-cpu")
