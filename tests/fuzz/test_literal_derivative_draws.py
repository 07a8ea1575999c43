"""The program fuzzer sometimes differentiates a value read back from a matrix literal of its
values, `@[[y, 0.5 * y], [y * y, -y]][1, 0] / @x` (fuzz/programs/structure.py `LITERAL_OUTER`):
the literal's rows are tensors even for a scalar y, and reverse mode left each row's adjoint
reading the literal's row axis unbound (an internal "index variable e0 is not iterated" or an
E011 naming `e0`; found by the hold-out program rts_smoother, a Kalman filter's process-noise
matrix `[[q / 3.0, q / 2.0], [q / 2.0, q]]`). It is drawn from a random stream of its own, so
every seed's programs without it stay as they were; a few match their NumPy meaning (central
differences, fuzz/programs/meaning.py) on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import LITERAL_OUTER, Define, Derivative, Input, Whole
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 10132          # (seed 10067, whose program 18 failed before the fix, draws too few now)


def reads_back_a_literal(program) -> bool:
    return any(isinstance(i, Derivative) and i.outer == LITERAL_OUTER for i in program.items)


def reads_back_a_scalar(program) -> bool:
    """A scalar read back: a gradient, whose reverse pass meets the literal's rows."""
    values = program.bindings()
    return any(isinstance(i, Derivative) and i.outer == LITERAL_OUTER and _scalar(values[i.of]) for i in program.items)


def _scalar(value) -> bool:
    return not value.shape if isinstance(value, (Input, Whole)) else \
        isinstance(value, Define) and len(value.clauses) == 1 and not value.clauses[0].slots


def test_literal_derivatives_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "LITERAL_SHARE", SEED, reads_back_a_literal)
    assert drawn and not changed, (drawn, changed)


def test_derivatives_read_back_from_a_matrix_literal_match_numpy():
    assert_drawn_match_numpy(SEED, reads_back_a_literal, "llvm-cpu", take=3, least=3, count=60)


def test_gradients_of_a_scalar_read_back_from_a_matrix_literal_match_numpy():
    assert_drawn_match_numpy(SEED, reads_back_a_scalar, "llvm-cpu", take=1, least=1, count=60)
