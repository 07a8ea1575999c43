"""Derivatives through a recurrence whose step reads every earlier step (`0.25 * max[i in
0..t](r[i, j])`, test_step_history_draws.py): the generator kept them out while reverse mode
refused such reads (E011); it draws them now, and the ones of a seed match their NumPy meaning
(central differences, fuzz/programs/meaning.py) on llvm-cpu."""
from __future__ import annotations

from fuzz.programs.structure import Derivative, Group, group_reads_earlier_steps, reads_of
from tests.fuzz.stream_draws import assert_drawn_match_numpy

SEED = 10130          # (10023, then 10027, drew too few once the generator drew more constructs)


def differentiates_through_a_history(program) -> bool:
    """A derivative of a value that a step reading every earlier step computes, or reads."""
    reached = set()
    for item in program.items:
        if isinstance(item, Derivative):
            if item.of in reached:
                return True
        elif isinstance(item, Group):
            if group_reads_earlier_steps(item) or reads_of(item) & reached:
                reached |= {m.name for m in item.members}
        elif hasattr(item, "name") and reads_of(item) & reached:
            reached.add(item.name)
    return False


def test_derivatives_through_step_histories_match_numpy():
    assert_drawn_match_numpy(SEED, differentiates_through_a_history, "llvm-cpu", take=2, least=2)
