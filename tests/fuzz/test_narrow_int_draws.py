"""The program fuzzer makes some programs' integer type one of i8, i16, u8, u16, u32 and u64
instead of i32 or i64 (fuzz/programs/generate.py, from the `widths` stream), and writes integer
powers with an index exponent, `x[k] / 10 ** (i % 3)` with x i8 (expressions.py `_index_power`):
arithmetic wraps in the type, unsigned values divide and compare unsigned, and a literal base
takes the narrow type beside an i32 exponent. Both are drawn from a stream of their own so that
every seed's other programs stay as they were, and a few such programs match their NumPy meaning
(fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import numpy as np
import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.meaning import Pair, arithmetic
from fuzz.programs.structure import NARROW_INTS, Binary, Index, types_used
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, drawn_case, holds

SEED = 10021


def _is_index_power(node) -> bool:
    return isinstance(node, Binary) and node.op == "**" and isinstance(node.right, Binary) \
        and node.right.op == "%" and isinstance(node.right.left, Index)


def _narrow(program) -> bool:
    return bool(types_used(program) & set(NARROW_INTS))


def _drawn(program) -> bool:
    return _narrow(program) or holds(program, _is_index_power)


def _narrow_index_power(program) -> bool:
    return holds(program, lambda n: _is_index_power(n) and n.dtype in NARROW_INTS)


def test_narrow_arithmetic_wraps_as_numpy_does():
    q = Pair(np.array([-128, 100, -7], np.int8), np.array([-128, 100, -7], np.int8), "i8")
    three = Pair(np.array([3, 3, -2], np.int8), np.array([3, 3, -2], np.int8), "i8")
    active = np.ones(3, bool)
    np.testing.assert_array_equal(arithmetic("+", q, q, active).ex, q.ex + q.ex)
    np.testing.assert_array_equal(arithmetic("/", q, three, active).ex, [-42, 33, 3])     # toward zero
    np.testing.assert_array_equal(arithmetic("%", q, three, active).ex, [-2, 1, -1])      # the dividend's sign
    u = Pair(np.array([200, 3], np.uint8), np.array([200, 3], np.uint8), "u8")
    exponent = Pair(np.array([3, 2], np.int64), np.array([3, 2], np.int64), "i32")
    power = arithmetic("**", u, exponent, np.ones(2, bool)).ex
    assert power.dtype == np.uint8
    np.testing.assert_array_equal(power, np.power(u.ex, np.array([3, 2], np.uint8)))


def test_narrow_widths_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    [drawn_case(SEED, k) for k in range(60)]             # generated as they are, before any share is patched
    monkeypatch.setattr(expressions, "INDEX_POWER_SHARE", 0.0)
    _, drawn, changed = drawn_and_changed(monkeypatch, expressions, "NARROW_SHARE", SEED, _drawn)
    assert any(_narrow(drawn_case(SEED, k).program) for k in drawn)
    assert len(changed) <= 3, changed      # a first attempt the meaning rejects, then another program


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_narrow_integers_match_numpy(target):
    assert_drawn_match_numpy(SEED, _narrow, target)


def test_a_narrow_power_of_an_index_exponent_matches_numpy():
    assert_drawn_match_numpy(SEED, _narrow_index_power, "llvm-cpu", take=1, least=1)
