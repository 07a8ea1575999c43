"""The program fuzzer's row functions (fuzz/programs/generate.py `row_map`) sometimes take their
row converted by `as` first (`f((x[i] as [f32]) as [f16])`, `f(x[i] as [f64])`): a row of the
comprehension's matrix converted point by point, E011 "a sub-array used whole inside an indexed
definition" before einc lifted the conversion over the row (found by the hold-out program
bf16_conv_train, a bf16 copy of each epoch's f32 filters). It is drawn from a random stream of
its own, so every seed's other programs stay as they were; such programs match their NumPy
meaning on llvm-cpu."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.structure import RowMap
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 31119          # its programs 3 (f16), 12 and 13 (f32) within the first 25


def converted(program) -> bool:
    return any(isinstance(item, RowMap) and item.converted for item in program.items)


def test_converted_rows_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "CAST_SHARE", SEED, converted, count=25)
    assert drawn and not changed, (drawn, changed)


def test_converted_rows_match_numpy():
    assert_drawn_match_numpy(SEED, converted, "llvm-cpu", take=3, least=2, count=25)
