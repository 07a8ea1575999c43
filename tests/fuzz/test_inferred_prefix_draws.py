"""The program fuzzer writes some prefix totals, `let s = sum[j](sum[k in 0..j + 1](r[T - 1, k, ..]));`,
with no range for j: einc infers it through k's range, which depends on j (LANGUAGE.md sections 3
and 9, the largest range keeping every read in bounds); it was E004 ("cannot infer the range of
index `j`") before. Drawn from a random stream of their own (fuzz/programs/generate.py
`tail_total`), so that every seed's other programs stay as they were; a few such programs match
their NumPy meaning on llvm-cpu, and the shrinker keeps them well formed."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import Define, Reduce
from fuzz.programs.wellformed import ranges_decided
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, drawn_case

SEED = 11           # its programs 9 and 10 draw one in the first 25


def _has_inferred_prefix(program) -> bool:
    def inferred(item) -> bool:
        body = item.clauses[0].body if isinstance(item, Define) and len(item.clauses) == 1 else None
        return isinstance(body, Reduce) and isinstance(body.body, Reduce) and \
            body.body.ranges[0].hi.index == "j" and not body.ranges[0].explicit
    return any(inferred(item) for item in program.items)


def test_inferred_prefixes_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    cases, drawn, changed = drawn_and_changed(monkeypatch, generate, "PREFIX_SHARE", SEED, _has_inferred_prefix)
    assert drawn and not changed, (drawn, changed)
    assert all(ranges_decided(cases[k].program) for k in drawn)


def test_programs_with_inferred_prefixes_match_numpy():
    assert_drawn_match_numpy(SEED, _has_inferred_prefix, "llvm-cpu", take=2, least=2, count=60)
