"""The program fuzzer adds to some recurrence steps the last value of a loop run whole inside the
step (fuzz/programs/generate.py `with_nesting`): a block holding a scalar recurrence, or a call
of the program's function whose body is one, started from a member at an earlier step. It is
drawn from a random stream of its own, with names of its own, so that every seed's other
programs stay as they were; a few such programs match their NumPy meaning on each target. Some
loops (from a stream of their own, `current`) also read members computed earlier in the step at
that step, E011 until such a loop ran after them; some (from `points`) read the clause's other
indices, one loop per point of the step, E011 until such loops ran batched over the points."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.render import render_program
from fuzz.programs.structure import (Call, Function, Group, Index, Read, Recur, clause_exprs, runs_loops_in_steps,
                                     walk)
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, drawn_case

SEED = 19603


def test_loops_inside_steps_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "NESTING_SHARE", SEED, runs_loops_in_steps)
    assert len(drawn) >= 5, drawn
    assert len(changed) <= 3, changed      # a first attempt the meaning rejects, then another program


def _inner_loops(program):
    """(loop, the clause's indices other than its step's) for each loop run inside a step."""
    fns = {f.name for f in program.items if isinstance(f, Function) and isinstance(f.body, Recur)}
    for item in program.items:
        for clause in (c for m in (item.members if isinstance(item, Group) else ()) for c in m.clauses):
            points = {s.var for s in clause.slots if s.var not in (None, "t")}
            for expr in clause_exprs(clause):
                for node in walk(expr):
                    if isinstance(node, Recur) or (isinstance(node, Call) and node.fn in fns):
                        yield node, points


def _reads_a_point(loop, points) -> bool:
    return any(isinstance(n, Index) and n.name in points for n in walk(loop))


def test_both_forms_are_drawn_and_some_read_a_point_index_of_their_clause():
    """A block and a call; the inner loop reads the step `t`, and some (the `points` stream's)
    read the clause's other indices too: one loop per point, which einc runs for every point at
    once (E011 before)."""
    cases = [drawn_case(SEED, k) for k in range(150)]
    loops = [found for case in cases for found in _inner_loops(case.program)]
    assert any(isinstance(loop, Recur) for loop, _ in loops) and any(isinstance(loop, Call) for loop, _ in loops)
    assert 0 < sum(_reads_a_point(*found) for found in loops) < len(loops)
    program = next(c.program for c in cases if any(isinstance(loop, Recur) for loop, _ in _inner_loops(c.program)))
    assert "let ns" in render_program(program)             # the draw's own names


def _loop_per_point(program) -> bool:
    return any(_reads_a_point(*found) for found in _inner_loops(program))


def test_loops_per_point_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "POINTS_SHARE", SEED, _loop_per_point, count=60)
    assert len(drawn) >= 2 and len(changed) <= 2, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_a_loop_per_point_of_a_step_match_numpy(target):
    # vulkan-spirv: one of the seed's first 150 programs holding it runs there
    assert_drawn_match_numpy(SEED, _loop_per_point, target, take=3, least=2 if target == "llvm-cpu" else 1)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_a_loop_inside_a_step_match_numpy(target):
    assert_drawn_match_numpy(SEED, runs_loops_in_steps, target)


def _reads_the_step_inside_a_loop(program) -> bool:
    """A loop inside a step reading a member at that step (`r[t, ..]`, the `current` stream's)."""
    return any(isinstance(loop, Recur) and any(isinstance(n, Read) and n.subs and n.subs[0] == Index("t")
                                               for n in walk(loop))
               for loop, _ in _inner_loops(program))


def test_loops_reading_the_step_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "CURRENT_SHARE", SEED, _reads_the_step_inside_a_loop,
                                          count=40)
    assert len(drawn) >= 2 and not changed, (drawn, changed)


def test_programs_with_a_loop_reading_its_step_match_numpy():
    # llvm-cpu: of the seed's first 300 programs, none holding it runs on vulkan-spirv
    assert_drawn_match_numpy(SEED, _reads_the_step_inside_a_loop, "llvm-cpu", take=3, count=120)
