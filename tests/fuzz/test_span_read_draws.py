"""The program fuzzer binds, in some triangular recurrence members' step clauses (`r[t in s..T,
j in 0..t + 1]`), a read of an earlier tensor at the step minus the point, `w = x[t - j]`, added
to the body (fuzz/programs/generate.py `with_span_read`, from a stream of its own): in bounds at
every point of the step's range, not over the hull of those ranges, over which einc bounds-checked
a clause's where-bindings (every run of such a program failed its size check; the hold-out
program nussinov_fold). Such programs match their NumPy meaning on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import Binary, Index, Read
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed
from tests.tiers import by_tier

SEED = 12017


def _spans_read(program) -> bool:
    return any(isinstance(w.expr, Read) and w.expr.subs and w.expr.subs[0] == Binary("-", Index("t"), Index("j"), "i32")
               for item in program.items for member in getattr(item, "members", ())
               for clause in getattr(member, "clauses", ()) for w in clause.wheres)


def test_span_reads_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "SPAN_SHARE", SEED, _spans_read, count=by_tier(60, 150))
    assert len(drawn) >= 1 and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_binding_a_read_at_the_step_minus_the_point_match_numpy(target):
    assert_drawn_match_numpy(SEED, _spans_read, target, take=3, least=1)
