"""The program fuzzer's loops run inside a step sometimes start from a member's row at an earlier
step times the step's index, `0.25 / n * sum(r[t - 1] * (t as f32))` (fuzz/programs/generate.py
`by_step`): a tensor the step computes from its index, read by the inner loop. Lowered as state
the inner loop computes at its points, it was an internal KeyError on Generic (found by the
hold-out program kalman_nd, `update_mean(m[t - 1], P[t - 1], y[t])` solving in each step; seed
19603 programs 5 and 43 before the fix). It is drawn from a random stream of its own, so every
seed's programs without it stay as they were; a few match their NumPy meaning on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import Prelude
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 19603          # its programs 5, 43 and 60


def _has_stepped_row(program) -> bool:
    return holds(program, lambda node: isinstance(node, Prelude) and node.by_step)


def test_stepped_rows_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "STEPPED_SHARE", SEED, _has_stepped_row)
    assert drawn and not changed, (drawn, changed)


def test_loops_in_a_step_reading_a_row_times_the_steps_index_match_numpy():
    assert_drawn_match_numpy(SEED, _has_stepped_row, "llvm-cpu", take=3, least=2, count=80)
