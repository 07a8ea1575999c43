"""The program fuzzer gives some recurrence groups a chain of four members with no start clause
before an f64 member x of two axes: `e[t, k] = x[t - 1, k] * 0.5`, a count through a cast
`c[t] = sum[k](if e[t, k] < v { 1.0 } else { 0.0 }) as i32`, `a[t] = e[t, c[t] % S]` and
`u[t, j] = a[t] + x[t - 1, j]`, read by x's steps, x starting at `(j as f64) * 0.25` or at
literals only (fuzz/programs/generate.py `with_chain`). Guessed one type for all four, they failed
with E002 (a float subscript) until the hold-out programs adaboost_stumps (a cast start) and
svm_smo_rbf (a literal start; tests/e2e/test_holdout_programs_8c.py); x's start types them in turn. They are drawn from a random stream of their own so that every
seed's other programs stay as they were, and a few such programs match their NumPy meaning
(fuzz/programs/meaning.py) on llvm-cpu (vulkan-spirv has no f64)."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import Cast, Group
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 10208          # its programs 17 (a cast start) and 32 (literals) were E002 (a float subscript) before the fixes


def _has_chain(program) -> bool:
    return any(isinstance(item, Group) and any(m.name.endswith(generate.CHAIN_SUFFIXES[1]) and isinstance(m.clauses[0].body, Cast)
                                               for m in item.members) for item in program.items)


def test_chains_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "CHAIN_SHARE", SEED, _has_chain)
    assert drawn and not changed, (drawn, changed)


def test_programs_with_chains_match_numpy():
    assert_drawn_match_numpy(SEED, _has_chain, "llvm-cpu", take=2, least=2, count=40)
