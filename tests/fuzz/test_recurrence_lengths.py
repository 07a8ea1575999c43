"""The differential fuzzer generates recurrence groups whose last member stops a step early (the
Kalman filter's v[t in 0..T] beside a[t in 1..T + 1]), derivatives through them included, and
einc agrees with their NumPy meaning on llvm-cpu."""
from __future__ import annotations

from fuzz.programs.compare import disagreement
from fuzz.programs.execute import build_and_run
from fuzz.programs.generate import generate_case
from fuzz.programs.module import HEADER
from fuzz.programs.render import render_program
from fuzz.programs.structure import Derivative, Group, widens_an_approximation

SEED = 2026


def step_ends(group: Group) -> list:
    """Where each member's step clause ends (the last clause over the step variable)."""
    return [[c for c in m.clauses if c.slots[0].var][-1].slots[0].hi for m in group.members]


def uneven(case) -> bool:
    return any(isinstance(item, Group) and len(set(step_ends(item))) > 1 for item in case.program.items)


def test_some_groups_have_a_member_one_step_shorter_than_the_others():
    cases = [generate_case(SEED, k) for k in range(120)]
    shorter = [c for c in cases if uneven(c)]
    assert len(shorter) > 5
    for case in shorter:
        for item in case.program.items:
            if isinstance(item, Group):
                ends = step_ends(item)
                assert all(e == ends[0] for e in ends[:-1]) and ends[-1] in (ends[0], ends[0].plus(-1))


def test_einc_agrees_with_the_meaning_of_groups_of_uneven_lengths():
    # program 115 also differentiates the shorter member, 79 and 89 have three members
    for k in (35, 79, 89, 115):
        case = generate_case(SEED, k)
        assert uneven(case)
        source = "\n".join(HEADER) + "\n" + render_program(case.program)
        out = build_and_run(source, "llvm-cpu", list(case.program.outputs), case.inputs)
        assert out["kind"] == "ok", (k, out)
        derivatives = {i.name for i in case.program.items if isinstance(i, Derivative)}
        for name in case.program.outputs:
            problem = disagreement(out["outputs"][name], case.meaning[name], name in derivatives,
                                   widens_an_approximation(case.program))
            assert problem is None, (k, name, problem)
