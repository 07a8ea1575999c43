"""The program fuzzer gives some programs a 3-d input's copy at one position of its last axis and a
sum, row by row, of the copy's columns an index input picks (fuzz/programs/generate.py
`picked_column`): IREE loaded such a copy with strides inside the gathering kernel and failed in
LLVM translation on the CPU targets (IREE-105 through a copy; a rating migration program's default
column, tests/e2e/test_holdout_programs_9c.py). They are drawn from a random stream of their own so
that every seed's other programs stay as they were, and a few such programs match their NumPy
meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Read
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 10008          # its programs 0, 2 and 5 hold one


def _picked(node) -> bool:
    return isinstance(node, Read) and node.name == f"{generate.COLUMN_NAME}c" and isinstance(node.subs[1], Read)


def _has_column(program) -> bool:
    return holds(program, _picked)


def test_columns_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "COLUMN_SHARE", SEED, _has_column)
    assert drawn and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_picked_columns_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_column, target, take=3, least=2, count=60)   # 36 and 58 run on Vulkan
