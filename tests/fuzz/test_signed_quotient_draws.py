"""The program fuzzer writes subscripts that divide or reduce an index shifted below 0,
`x[(i - 3) / 2 + 1]`, `x[(j - 2) % 3 + 2]` (fuzz/programs/expressions.py `_signed_quotient`):
integer `/` truncates toward zero and `%` takes the dividend's sign, which a floor division
would get wrong at the negative operands. They are drawn from a random stream of their own so
that every seed's other programs stay as they were, and a few such programs match their NumPy
meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.expressions import _truncated
from fuzz.programs.structure import Binary, Index, Lit
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 10021


def _is_signed_quotient(node) -> bool:
    return isinstance(node, Binary) and node.op in "/%" and isinstance(node.left, Binary) \
        and node.left.op == "-" and isinstance(node.left.left, Index) and isinstance(node.left.right, Lit)


def _has_signed_quotient(program) -> bool:
    return holds(program, _is_signed_quotient)


def test_truncation_is_cs():
    assert [_truncated(a, 2, "/") for a in (-3, -2, -1, 0, 1, 3)] == [-1, -1, 0, 0, 0, 1]
    assert [_truncated(a, 3, "%") for a in (-4, -3, -1, 0, 2, 4)] == [-1, 0, -1, 0, 2, 1]


def test_signed_quotients_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, _, changed = drawn_and_changed(monkeypatch, expressions, "SIGNED_SHARE", SEED, _has_signed_quotient)
    assert len(changed) <= 3, changed      # a first attempt the meaning rejects, then another program


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_signed_quotients_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_signed_quotient, target)
