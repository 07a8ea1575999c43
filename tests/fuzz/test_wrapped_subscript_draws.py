"""The program fuzzer writes some subscripts as a cyclic stencil's wrap around their axis, `(sub +
N) % N` with its value unchanged (fuzz/programs/expressions.py `_wrapped`), which einc keys by its
point mod N (einc/ir/affine.py `periodic_of`: the reverse-mode derivative of Lorenz-96 by RK4,
reading each stage at `(i + 1) % N`, `(i + N - 2) % N`, .., inlined a point once per path to it and
gave 320 MB of MLIR, tests/e2e/test_holdout_programs_8b.py). They are drawn from a random stream
of their own so that every seed's other programs stay as they were, and a few such programs match
their NumPy meaning (fuzz/programs/meaning.py) on each target."""
from __future__ import annotations

import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.structure import Binary, DimRef, Lit
from tests.fuzz.stream_draws import TARGETS, assert_drawn_match_numpy, drawn_and_changed, holds

SEED = 10005          # its programs 2, 3 and 7 hold some


def _wrapped(node) -> bool:
    return (isinstance(node, Binary) and node.op == "%" and isinstance(node.right, (DimRef, Lit))
            and isinstance(node.left, Binary) and node.left.op == "+" and node.left.right == node.right)


def _has_wrap(program) -> bool:
    return holds(program, _wrapped)


def test_wraps_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, expressions, "WRAP_SHARE", SEED, _has_wrap)
    assert drawn and not changed, (drawn, changed)


@pytest.mark.parametrize("target", TARGETS)
def test_programs_with_wraps_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_wrap, target, take=4, least=2, count=40)
