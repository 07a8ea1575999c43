"""The program fuzzer writes reduction ranges clamped at the edges of an outer index's range
(`sum[k in max(0, i - 1)..min(n, i + 2)]`, fuzz/programs/expressions.py `_clamped_window`),
drawn from a random stream of their own so that every seed's other programs stay as they were;
a few such programs match their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.structure import Reduce
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, holds, source

SEED = 5


def _has_window(program) -> bool:
    return holds(program, lambda node: isinstance(node, Reduce) and any(r.lo.clamp for r in node.ranges))


def test_windows_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    cases, windowed, changed = drawn_and_changed(monkeypatch, expressions, "WINDOW_SHARE", SEED, _has_window)
    assert not changed
    assert "max(0, " in source(windowed[0], cases[windowed[0]])


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_clamped_windows_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_window, target, count=300)   # vulkan takes few of the first 150
