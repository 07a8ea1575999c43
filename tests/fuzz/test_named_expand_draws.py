"""The stdlib fuzzer's expand draws (fuzz/stdlib/calls.py `expand`), in a call with named dims,
grow a length-1 axis to a named dim (`expand(bias, [R, C])`): that was an E004 inside the
library, a run-time choice between two shapes, until the hold-out program scatter_gather_ops
(tests/e2e/test_holdout_programs_4b.py) found it, and the fuzzer drew only literal sizes. The
draws before the named sizes are as they were, and a few such calls match NumPy on llvm-cpu."""
from __future__ import annotations

from fuzz.stdlib.campaign import run_stdlib
from fuzz.stdlib.generate import generate_case

SEED = 11


def test_expand_draws_grow_axes_to_named_sizes():
    calls = [generate_case(SEED, k, ("expand",)).program.call for k in range(40)]
    named = [c for c in calls if "$S" in c]
    assert 3 <= len(named) < len(calls), calls


def test_expands_to_named_sizes_match_numpy():
    report = run_stdlib(12, SEED, jobs=1, targets=("llvm-cpu",), log=lambda _: None, only=("expand",))
    assert report.counts["programs checked on llvm-cpu"] >= 6 and not report.bad, report.format()
