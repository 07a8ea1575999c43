"""The program fuzzer writes integer reductions whose body reads every element but folds to a
constant under MLIR's folders, `sum[k](x[k] * 0 + 3)`, `sum[k](e - e + 2)`, `sum[k]((e + 4) - e)`
(fuzz/programs/expressions.py `_folding`): IREE-264, llvm-cpu vectorized such a reduction to
one application of its body. They are drawn from a random stream of their own so that every
seed's other programs stay as they were, and a few such programs match their NumPy meaning
(fuzz/programs/meaning.py) on the CPU targets."""
from __future__ import annotations

import pytest

import fuzz.programs.expressions as expressions
from fuzz.programs.structure import Binary, Lit, Reduce
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, holds
from tests.tiers import GENERIC_FULL

SEED = 10278


def _is_folded_body(node) -> bool:
    if not isinstance(node, Reduce) or not isinstance(node.body, Binary) or not isinstance(node.body.left, Binary):
        return False
    outer, inner = node.body, node.body.left
    times_zero = inner.op == "*" and isinstance(inner.right, Lit) and inner.right.value == 0
    self_difference = inner.op == "-" and inner.left == inner.right
    shifted = outer.op == "-" and inner.op == "+" and inner.left == outer.right
    return (outer.op == "+" and (times_zero or self_difference)) or shifted


def _has_folded_body(program) -> bool:
    return holds(program, _is_folded_body)


def test_folded_bodies_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, _, changed = drawn_and_changed(monkeypatch, expressions, "FOLD_SHARE", SEED, _has_folded_body)
    assert len(changed) <= 3, changed      # a first attempt the meaning rejects, then another program


# the targets IREE-264 is on (vulkan-spirv sums such bodies right)
@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_programs_with_folded_bodies_match_numpy(target):
    assert_drawn_match_numpy(SEED, _has_folded_body, target)
