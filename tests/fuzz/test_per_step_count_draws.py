"""The program fuzzer makes some count members (fuzz/programs/generate.py `with_tally`) count
their own step, `c[t] = sum[k in 0..S](if x[t, k] < v { 1 } else { 0 })`, with no range on t, which
x's steps read back, `x[t - 1, c[t - 1] % S]`: t's steps are x's. einc took no read of another
member of the loop as a range (E004 "needs an explicit range") until the hold-out program lbm_d2q9
(`rho[t, y, x] = sum[q](f[t, q, y, x])`, tests/e2e/test_holdout_programs_8b.py). They are drawn
from a random stream of their own so that every seed's other programs stay as they were, and a few
such programs match their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Group
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed

SEED = 10021          # its programs 2, 119, 124 and 146 hold one


def _has_per_step_count(program) -> bool:
    return any(isinstance(item, Group) and any(m.name.endswith(generate.TALLY_SUFFIX) and len(m.clauses) == 1
                                               and not m.clauses[0].slots[0].explicit for m in item.members)
               for item in program.items)


def test_per_step_counts_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "PER_STEP_SHARE", SEED, _has_per_step_count)
    assert drawn and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_per_step_counts_match_numpy(target):
    # programs 2, 119, 124 and 146 (119 and 146 on vulkan-spirv too) since the chains, tails,
    # filtered and gates streams
    assert_drawn_match_numpy(SEED, _has_per_step_count, target, take=3, least=2, count=160)
