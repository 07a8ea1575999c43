"""The program fuzzer writes reductions whose second index runs over an earlier one's value
(`sum[j in 0..n, k in 0..j + 1]`, fuzz/programs/expressions.py `_after_a_sibling`), drawn from a
random stream of their own so that every seed's other programs stay as they were; a few such
programs match their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.structure import Reduce
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 9


def _has_sibling_range(program) -> bool:
    return holds(program, lambda node: isinstance(node, Reduce) and any(
        r.hi.index in {s.var for s in node.ranges[:k]} for k, r in enumerate(node.ranges)))


def test_sibling_ranges_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, _, changed = drawn_and_changed(monkeypatch, expressions, "SIBLING_SHARE", SEED, _has_sibling_range)
    assert not changed


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_sibling_ranges_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_sibling_range, target, take=4)
