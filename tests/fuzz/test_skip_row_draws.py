"""The program fuzzer writes row functions applied to rows an index input picks, -1 skipping one
(`[if s[i] >= 0 { f_row(x[s[i]]) } else { 0.0 } | i in 0..len(s)]`, fuzz/programs/generate.py
`skipping`): the row's whole arithmetic is read only under the guard, so a -1 is no index error
(einc/passes/index_checks.py moves the guard onto the whole tensor it reads). Drawn from a
random stream of their own so that every seed's other programs stay as they were; a few such
programs match their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import RowMap
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, source

SEED = 4


def _skips(program) -> bool:
    return any(isinstance(item, RowMap) and item.through for item in program.items)


def test_skipped_rows_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    cases, drawn, changed = drawn_and_changed(monkeypatch, generate, "SKIP_SHARE", SEED, _skips, count=60)
    assert drawn and not changed, (drawn, changed)
    assert "[i] >= 0 {" in source(drawn[0], cases[drawn[0]])


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_skipped_rows_match_numpy(target):
    assert_drawn_match_numpy(SEED, _skips, target, take=4, least=1, count=150)
