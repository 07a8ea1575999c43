"""The program fuzzer writes some guarded sums, max and min over one plain range as that reduction
of a filtered comprehension (fuzz/programs/expressions.py `_filtered`, `max([x[k] | k in 0..N,
guard])`): `max` and `min` of such a filter were E011 inside an indexed definition, and one over a
recurrence step's state row was gathered before the loop ran (a KeyError in the lowering), found
by the hold-out program barrier_newton. It is drawn from a random stream of its own, so every
seed's other programs stay as they were; a few such programs match their NumPy meaning on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.expressions as expressions
from fuzz.programs.structure import Index, Reduce, walk
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 30111          # its programs 15 and 24 within the first 25 (24: a `min` per point, a `sum` in a step)


def filtered(program) -> bool:
    return holds(program, lambda node: isinstance(node, Reduce) and node.filtered)


def per_point_extremum(program) -> bool:
    """A filtered max or min whose filter reads an index of the definition around it."""
    return holds(program, lambda node: isinstance(node, Reduce) and node.filtered and node.op in ("max", "min") and
                 any(isinstance(n, Index) and n.name != node.ranges[0].var for n in walk(node.guard)))


def test_filtered_reductions_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, expressions, "FILTER_SHARE", SEED, filtered)
    assert drawn and not changed, (drawn, changed)


def test_filtered_reductions_match_numpy():
    assert_drawn_match_numpy(SEED, filtered, "llvm-cpu", take=2, least=2, count=25)
    assert_drawn_match_numpy(SEED, per_point_extremum, "llvm-cpu", take=1, least=1, count=25)
