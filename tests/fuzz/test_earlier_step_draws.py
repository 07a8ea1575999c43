"""The program fuzzer makes some loops run inside a recurrence step read a member of the step's
group at the outer step minus their own step, `x[t - k, ..]` under `k <= t` (fuzz/programs/
generate.py `reading_earlier_steps`): a step the loop's range puts before the outer one, read from
the member's history. It was E011 until the hold-out program arnoldi_gmres
(tests/e2e/test_holdout_programs_6a.py). It is drawn from a random stream of its own so that
every seed's other programs stay as they were, and a few such programs match their NumPy meaning
(fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Binary, Index, Read, Recur, program_exprs, walk
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed

SEED = 19603


def _reads_earlier_steps(program) -> bool:
    return any(isinstance(r, Read) and r.subs and isinstance(r.subs[0], Binary) and r.subs[0].op == "-"
               and isinstance(r.subs[0].right, Index) and r.subs[0].right.name == loop.var
               for expr in program_exprs(program) for loop in walk(expr) if isinstance(loop, Recur)
               for r in walk(loop.step))


def test_earlier_step_reads_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "EARLIER_SHARE", SEED, _reads_earlier_steps)
    assert drawn and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_reading_earlier_steps_in_an_inner_loop_match_numpy(target):
    assert_drawn_match_numpy(SEED, _reads_earlier_steps, target, take=4, count=60)
