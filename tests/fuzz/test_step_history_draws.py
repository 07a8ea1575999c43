"""The program fuzzer adds to some recurrence steps the member's extremum or mean over every
earlier step at the same point, `0.25 * max[i in 0..t](r[i, j])` (fuzz/programs/generate.py
`with_history`): a reduction whose range grows with the step. It is drawn from a random stream
of its own so that every seed's other programs stay as they were. A host loop of parallel
kernels (vulkan-spirv's, and every target's for a group whose steps compute a tensor) keeps the
member whole for it, so such programs run on both targets and a few match their NumPy meaning."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.campaign import runs_on
from fuzz.programs.structure import Group, StepTensor, item_exprs, reads_earlier_steps, walk
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, drawn_case

SEED = 10023


def test_step_histories_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, _, changed = drawn_and_changed(monkeypatch, generate, "HISTORY_SHARE", SEED, reads_earlier_steps)
    assert len(changed) <= 3, changed      # a first attempt the meaning rejects, then another program


def test_step_histories_are_sent_to_vulkan():
    # those of Vulkan's types: the first of the seed's is a bf16 program since the `long` and
    # `pairs` draws, which Vulkan is never given
    cases = [c for c in (drawn_case(SEED, k) for k in range(60)) if reads_earlier_steps(c.program)]
    assert cases and all(runs_on(c, "llvm-cpu") for c in cases)
    assert any(runs_on(c, "vulkan-spirv") for c in cases)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_step_histories_match_numpy(target):
    assert_drawn_match_numpy(SEED, reads_earlier_steps, target)


def _history_beside_a_step_tensor(program) -> bool:
    """A step history in a group whose steps compute a tensor (a host loop on every target)."""
    return reads_earlier_steps(program) and any(
        isinstance(item, Group) and any(isinstance(n, StepTensor) for e in item_exprs(item) for n in walk(e))
        for item in program.items)


def test_step_histories_beside_step_tensors_match_numpy():
    """Such a group was E011 on every target before its host loop kept the member whole."""
    assert_drawn_match_numpy(SEED, _history_beside_a_step_tensor, "llvm-cpu", least=1, count=300)
