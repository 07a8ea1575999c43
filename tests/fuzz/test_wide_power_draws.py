"""The program fuzzer writes integer powers of two widths, an i64 base to an exponent typed i32
(`w ** 2i32`, fuzz/programs/expressions.py `power`): they were E002 (mismatched types i64 and
i32 in `**`) until the hold-out program base_convert (tests/e2e/test_holdout_programs_3a.py)
found it, so the fuzzer drew no i64 power. They are drawn from a random stream of their own so
that every seed's other programs stay as they were, and a few such programs match their NumPy
meaning (fuzz/programs/meaning.py) on llvm-cpu (programs of i64 do not run on vulkan-spirv)."""
from __future__ import annotations

import fuzz.programs.expressions as expressions
from fuzz.programs.structure import Binary, Lit
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 10061          # its programs 1, 9, 12, 65 and 67


def _is_wide_power(node) -> bool:
    return isinstance(node, Binary) and node.op == "**" and node.dtype == "i64" \
        and isinstance(node.right, Lit) and node.right.dtype == "i32"


def _has_wide_power(program) -> bool:
    return holds(program, _is_wide_power)


def test_wide_powers_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, _, changed = drawn_and_changed(monkeypatch, expressions, "WIDE_POWER_SHARE", SEED, _has_wide_power)
    assert not changed, changed


def test_programs_with_wide_powers_match_numpy():
    assert_drawn_match_numpy(SEED, _has_wide_power, "llvm-cpu")
