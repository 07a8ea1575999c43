"""The program fuzzer writes some derivatives with a factor before them and no parentheses
(fuzz/programs/generate.py `scaled`, `0.5 * @y / @x`), which is `0.5 * (@y / @x)`: einc read it
as the tangent `0.5 * @y` divided by `@x`, an E011 when y reads several inputs (found by the
hold-out program mlp2_train, `W1[s - 1] - lr * @L / @W1[s - 1]`). It is drawn from a random
stream of its own, so every seed's other programs stay as they were; a few such programs match
their NumPy meaning (central differences) on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import Derivative
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 31002          # its programs 6, 8, 26 and 48 within the first 60


def scaled(program) -> bool:
    return any(isinstance(item, Derivative) and item.scale for item in program.items)


def test_scaled_derivatives_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "SCALE_SHARE", SEED, scaled)
    assert drawn and not changed, (drawn, changed)


def test_scaled_derivatives_match_numpy():
    assert_drawn_match_numpy(SEED, scaled, "llvm-cpu", take=2, least=2, count=60)
