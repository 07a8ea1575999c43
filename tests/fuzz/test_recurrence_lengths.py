"""The differential fuzzer generates recurrence groups whose last member stops a step early (the
Kalman filter's v[t in 0..T] beside a[t in 1..T + 1]) and totals of recurrence members that
gradients reach through the group in reverse mode (also through the tensors a step computes),
and einc agrees with their NumPy meaning on llvm-cpu (one program of each in the fast tier)."""
from __future__ import annotations

from fuzz.programs.compare import disagreement
from fuzz.programs.execute import build_and_run
from fuzz.programs.generate import generate_case
from fuzz.programs.module import header
from fuzz.programs.render import render_program
from fuzz.programs.structure import Derivative, Group, StepTensor, clause_exprs, walk, widens_an_approximation
from tests.tiers import by_tier

SEED = 2026
GRADIENT_SEED = 2027       # two totals of a group within its first 400 programs (none in SEED's)


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


def agrees_with_its_meaning(k: int, seed: int = SEED) -> None:
    case = generate_case(seed, k)
    source = "\n".join(header([case.program])) + "\n" + render_program(case.program)
    out = build_and_run(source, "llvm-cpu", list(case.program.outputs), case.inputs)
    assert out["kind"] == "ok", (k, out)
    derivatives = {i.name for i in case.program.items if isinstance(i, Derivative)}
    for name in case.program.outputs:
        problem = disagreement(out["outputs"][name], case.meaning[name], name in derivatives,
                               widens_an_approximation(case.program))
        assert problem is None, (k, name, problem)


def first_cases(wanted, count: int, limit: int = 400, seed: int = SEED) -> list:
    """The numbers of the first `count` generated programs (of the first `limit`) that `wanted`
    accepts and that run (no index the inputs send outside its axis: test_data_range_draws.py):
    found, not fixed, so that a change to the generator's draws keeps the test's meaning."""
    found = []
    for k in range(limit):
        case = generate_case(seed, k)
        if wanted(case) and not case.index_errors:
            found.append(k)
            if len(found) == count:
                break
    return found


def total_derivative(case) -> bool:
    return any(isinstance(i, Derivative) and i.of.startswith("s") and case.meaning[i.of].ex.shape == ()
               for i in case.program.items)


def test_einc_agrees_with_the_meaning_of_groups_of_uneven_lengths():
    numbers = first_cases(uneven, by_tier(1, 4))
    assert len(numbers) == by_tier(1, 4)
    for k in numbers:
        agrees_with_its_meaning(k)


def test_gradients_of_a_recurrence_total_reach_through_the_group():
    # (a gradient of a total that gave 0 is kept in
    # tests/fuzz/regressions/derivative_with_respect_to_a_scalar_a_recurrence_clause_uses_whole.ein)
    numbers = first_cases(lambda case: total_derivative(case) and any(isinstance(i, Group) for i in case.program.items),
                          by_tier(1, 2), limit=800, seed=GRADIENT_SEED)
    assert len(numbers) == by_tier(1, 2)
    for k in numbers:
        agrees_with_its_meaning(k, GRADIENT_SEED)


def through_a_step_tensor(case) -> bool:
    """A derivative in a program whose recurrence steps hold an indexed `let` (a step tensor)."""
    items = case.program.items
    lets = any(isinstance(node, StepTensor) for item in items if isinstance(item, Group)
               for m in item.members for c in m.clauses for e in clause_exprs(c) for node in walk(e))
    return lets and any(isinstance(item, Derivative) for item in items)


def test_derivatives_through_a_step_tensor_agree_with_central_differences():
    numbers = first_cases(through_a_step_tensor, by_tier(1, 2), limit=800, seed=GRADIENT_SEED)
    assert len(numbers) == by_tier(1, 2)
    for k in numbers:
        agrees_with_its_meaning(k, GRADIENT_SEED)
