"""The program fuzzer writes a clause's `where` bare after its body's trailing reduction where
the parser still gives it to the clause (docs/DECISIONS.md, "A `where` after a value ending in a
reduction"; fuzz/programs/render.py `_bare_where_stays`): a definition's guard naming nothing the
reduction reads (`sum[j](x[j]) where i < 2`), and a binding read outside the reduction, which
the generator draws from a stream of its own (`v + sum[j](..) where v = ..`,
fuzz/programs/generate.py `binding_beside_reduction`). Elsewhere it keeps the parentheses that
leave the `where` to the clause. Such programs match their NumPy meaning on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs import render
from fuzz.programs.structure import Binary, Bound, Clause, Index, Lit, Range, Read, Reduce, Slot, Var, Where, trailing_reduce
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed
from tests.tiers import by_tier

SEED = 12001


def _clauses(program):
    for item in program.items:
        yield from getattr(item, "clauses", ())
        for member in getattr(item, "members", ()):
            yield from getattr(member, "clauses", ())


def _bare(clause) -> bool:
    reduce = trailing_reduce(clause.body)
    return bool(clause.wheres) and reduce is not None and reduce.guard is None and render._bare_where_stays(clause)


def _has_binding_beside(program) -> bool:
    return any(isinstance(c.body, Binary) and isinstance(c.body.left, Var) and trailing_reduce(c.body) is not None
               and c.body.left.name in {w.name for w in c.wheres} for c in _clauses(program))


def _has_bare_where(program) -> bool:
    return any(_bare(c) for c in _clauses(program))


def test_bindings_beside_a_reduction_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "BARE_WHERE_SHARE", SEED,
                                          _has_binding_beside, count=by_tier(60, 150))
    assert len(drawn) >= 2 and not changed, (drawn, changed)


SUM_J = Reduce("sum", (Range("j", Bound(0), Bound(3)),), Read("x", (Index("j"),), "f32"), None, "f32")
I_SLOT = (Slot("i", Bound(0), Bound(2)),)


@pytest.mark.parametrize("slots, body, where, bare", [
    # a definition's guard naming nothing the reduction reads is the definition's
    (I_SLOT, SUM_J, Where(None, Binary("<", Index("i"), Lit(2, "i32"), "bool")), True),
    # one naming the reduction's index (or its tensor) would be the reduction's
    (I_SLOT, SUM_J, Where(None, Binary("<", Index("j"), Lit(2, "i32"), "bool")), False),
    (I_SLOT, SUM_J, Where(None, Binary("<", Read("x", (Lit(0, "i32"),), "f32"), Lit(2.0, "f32"), "bool")), False),
    # a scalar `let` has no such rule: its where goes to the reduction
    ((), SUM_J, Where(None, Binary("<", Lit(1, "i32"), Lit(2, "i32"), "bool")), False),
    # a binding read outside the reduction is the statement's, in a scalar `let` too
    ((), Binary("+", Var("v", "f32"), SUM_J, "f32"), Where("v", Lit(1.5, "f32")), True),
    # one read only inside it is the reduction's
    ((), Reduce("sum", SUM_J.ranges, Var("v", "f32"), None, "f32"), Where("v", Lit(1.5, "f32")), False),
])
def test_a_where_is_written_bare_only_where_the_parser_gives_it_to_the_clause(slots, body, where, bare):
    assert render._bare_where_stays(Clause(slots, body, (where,))) is bare


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_bare_wheres_after_a_reduction_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_bare_where, target, take=4)
