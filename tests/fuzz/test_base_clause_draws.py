"""Every recurrence member the program fuzzer draws has its first steps defined: one drawn with
no start clause gets a zero clause for them (fuzz/programs/generate.py `member`): its steps read
the values they read before, when a step no clause defined read 0, which is E005 now
(einc.semantics.forms.recurrence_coverage). The clause draws nothing itself, but the clause
layout's draws after it shift, so a seed's later programs change."""
from __future__ import annotations

import pytest

from einc.diagnostics import CompileError
from einc.driver import front_end
from fuzz.programs.module import assemble
from tests.fuzz.stream_draws import drawn_case


@pytest.mark.parametrize("seed", [10001, pytest.param(10031, marks=pytest.mark.full)])
def test_no_drawn_recurrence_reads_a_step_no_clause_defines(tmp_path, seed):
    """The first programs of the seed, and every one among its first 60 with a zero start clause,
    pass the front end without the coverage diagnostic."""
    path = tmp_path / "prog.ein"
    zero_starts = 0
    for k in range(60):
        source = assemble({k: drawn_case(seed, k).program}).source
        zeros = source.count("] = 0.0;") + source.count("] = 0;") + source.count("] = false;")
        if k >= 10 and not zeros:
            continue
        zero_starts += zeros
        path.write_text(source, encoding="utf-8")
        try:
            front_end(str(path))
        except CompileError as err:
            assert "no clause of" not in err.diagnostics[0].message, (k, err.render(err.sources))
    assert zero_starts, "no member of these programs was drawn without a start clause"
