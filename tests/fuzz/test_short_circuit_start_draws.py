"""The program fuzzer's bool recurrence members (fuzz/programs/generate.py `member`) whose start
over `t in 0..s` and steps from s are alike are sometimes written as one clause of short-circuit
operators, `(t < s && start) || (t >= s && steps)`: the `&&` guards the steps' reads of `t - s`.
It was E005 "at its first step 0 this clause reads .. before the start", though the same read
under `if t >= s { .. }` was accepted (found by the hold-out program slice_sampler, `k > 0 &&
ok[k - 1]`). It is drawn from a random stream of its own, so every seed's other programs stay as
they were; such programs match their NumPy meaning on llvm-cpu."""
from __future__ import annotations

import dataclasses

import fuzz.programs.generate as generate
from fuzz.programs.render import _start_then_steps
from fuzz.programs.structure import Define
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 33304          # its program 5 within the first 25


def short_start(node) -> bool:
    if isinstance(node, Define) and node.short and len(node.clauses) == 2 and _start_then_steps(*node.clauses):
        return True
    if dataclasses.is_dataclass(node):
        return any(short_start(getattr(node, f.name)) for f in dataclasses.fields(node))
    return isinstance(node, (tuple, list)) and any(short_start(x) for x in node)


def test_short_circuit_starts_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "SHORT_CIRCUIT_SHARE", SEED, short_start, count=25)
    assert drawn and not changed, (drawn, changed)


def test_short_circuit_starts_match_numpy():
    assert_drawn_match_numpy(SEED, short_start, "llvm-cpu", take=1, least=1, count=25)
