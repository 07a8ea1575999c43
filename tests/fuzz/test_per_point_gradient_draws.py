"""The program fuzzer's row functions (fuzz/programs/generate.py `per_point`) sometimes read a
float input `p` passed beside each row and are followed by their gradient by it asked per row,
as jax's vmap of grad (`let g[i in 0..m, j] = { let l = r_row(x[i], p); (@l / @p)[j] };`),
summed over the rows (`sum[i in 0..m](..)`), through a function of the row returning `@l / @q`,
or through a loss folding the row by a recurrence (LANGUAGE.md section 5). It is drawn from a
random stream of its own, so every seed's other programs stay as they were; the per-point values
are the row map's Jacobian by `p`, and such programs match it on llvm-cpu (seed 41001's program 44,
a max over a piecewise definition, was E011)."""
from __future__ import annotations

import re

import fuzz.programs.generate as generate
from fuzz.programs.module import assemble
from fuzz.programs.structure import Derivative, RowMap
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, drawn_case

SEED = 41007          # its programs 0 (a scalar p) and 9 (summed over the rows) within the first 10
FORMS_SEED = 41006    # its programs 13 and 24 (a called gradient) and 28 (a recurrence in the loss)


def per_point(program) -> list:
    return [item for item in program.items if isinstance(item, Derivative) and item.per_point]


def test_per_point_gradients_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "PER_POINT_SHARE", SEED, per_point, count=25)
    assert drawn and not changed, (drawn, changed)


FORMS = {
    "per row": r"let p0_\w+_g\[i in 0\.\.\w+(, j)?\] = ",
    "summed over the rows": r"let p0_\w+_g(\[j\])? = sum\[i in 0\.\.\w+\]\(",
    "in a block": r"\{ let l = p0_\w+\(p0_\w+\[i\], p0_\w+_p\); (@l / @p0_\w+_p|\(@l / @p0_\w+_p\)\[j\]) \}",
    "in a called function": r"fn p0_\w+_g_grad\(x, q\) \{ let l = p0_\w+\(x, q\); @l / @q \}",
    "through a recurrence": r"fn p0_\w+_g_loss\(x, q\) \{ let w = p0_\w+_row\(x, q\); let a\[0\] = w\[0\]; "
                            r"let a\[k in 1\.\.\w+\] = ",
    "a scalar p": r"let p0_\w+_p: \w+;",
    "a vector p": r"let p0_\w+_p: \[\w+; [2-4]\];",
}


def test_per_point_gradients_are_drawn_in_each_form_with_the_shape_of_their_meaning():
    cases = [drawn_case(SEED, k) for k in range(10)] + [drawn_case(FORMS_SEED, k) for k in range(30)]
    sources = []
    for case in cases:
        rows = {item.name: item for item in case.program.items if isinstance(item, RowMap)}
        for gradient in per_point(case.program):
            source = assemble({0: case.program}).source
            sources.append(source)
            points = case.meaning[gradient.of].ex.shape
            p = case.meaning[rows[gradient.of].param].ex.shape
            assert case.meaning[gradient.name].ex.shape == (points if gradient.per_point == "each" else ()) + p
    missing = [form for form, pattern in FORMS.items() if not any(re.search(pattern, s) for s in sources)]
    assert len(sources) >= 5 and not missing, missing


def test_per_point_gradients_match_numpy():
    assert_drawn_match_numpy(SEED, per_point, "llvm-cpu", take=3, least=3, count=25)
