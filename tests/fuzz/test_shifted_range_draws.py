"""The program fuzzer gives some float recurrence members over two axes or more a mean over their
steps from the second index on, read backward over a range that starts at that index,
`0.25 * sum[q in j..t](r[t - 1 - q + j, j, ..]) / t` (fuzz/programs/generate.py `with_shifted`):
the read stays before the step only through both q and j. einc took q's bound through j and j's
own bound apart and reported E007 for such reads (an interval DP, `C[r - i, i]` with r in
i..i + l: tests/e2e/test_recurrences.py). Drawn from a random stream of its own so that every
seed's other programs stay as they were; a few such programs match their NumPy meaning
(fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Reduce
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 10064


def _has_shifted(program) -> bool:
    return holds(program, lambda n: isinstance(n, Reduce) and any(
        r.lo.index == "j" and r.hi.index not in (None, "j") for r in n.ranges))


def test_shifted_ranges_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "SHIFT_SHARE", SEED, _has_shifted)
    assert len(drawn) >= 2 and not changed, (drawn, changed)      # 4 of the 25 the fast tier draws


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_shifted_ranges_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_shifted, target, take=5)
