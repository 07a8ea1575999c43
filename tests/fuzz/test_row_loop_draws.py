"""The program fuzzer draws some loops (a function's body, a loop run inside a recurrence step)
with a row for a state, `let s[k in 1..n, j in 0..w] = ..`, whose step reads the row one step
back at its lane, at the next one and reduced whole (fuzz/programs/generate.py `with_lanes`, from
a stream of its own). Inside a step, einc runs such a loop's rows in the step's one dispatch (in
vector lanes, w from below to past a vector's width); called per point of a clause, the loop is
batched over the points, whose ranges may start past 0 (a slice of such a loop was once the whole
row, not its block of rows: NaN). Such programs match their NumPy meaning on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Recur
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, holds
from tests.tiers import by_tier

SEED = 12019


def _row_loop(program) -> bool:
    return holds(program, lambda node: isinstance(node, Recur) and node.lanes > 0)


def test_row_loops_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "LANES_SHARE", SEED, _row_loop, count=by_tier(30, 80))
    assert len(drawn) >= 2 and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_running_a_loop_of_rows_match_numpy(target):
    assert_drawn_match_numpy(SEED, _row_loop, target, take=5, least=3)
