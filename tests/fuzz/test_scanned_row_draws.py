"""The program fuzzer's row functions (fuzz/programs/generate.py `row_map`) sometimes fold each
row by a recurrence over the matrix of rows whose row index has no range (`let a[i, 0] = m[i, 0];
let a[i, k in 1..n] = a[i, k - 1] + m[i, k];`): the row index takes its extent from m's rows,
E004 before einc inferred a recurrence's unranged first index from a plain read (found by the
hold-out program hash_mix, a hash per row of a byte table). It is drawn from a random stream of
its own, so every seed's other programs stay as they were; such programs match their NumPy
meaning on llvm-cpu, and on vulkan-spirv, where the fold steps along the row (its second axis)
with the rows as batch axes (einc.semantics.forms.step_axis): E011 before, as each step of a
clause is one parallel kernel there (fuzz seed 19701 programs 6 and 35)."""
from __future__ import annotations

import pytest

import fuzz.programs.generate as generate
from fuzz.programs.structure import RowMap
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed

SEED = 31004          # its program 17 within the first 25
VULKAN_SEED = 31006   # its program 24: one that vulkan-spirv runs (31004's program 17 reads an i64)


def scanned(program) -> bool:
    return any(isinstance(item, RowMap) and item.scanned for item in program.items)


def test_scanned_rows_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "SCAN_SHARE", SEED, scanned, count=25)
    assert drawn and not changed, (drawn, changed)


def test_scanned_rows_match_numpy():
    assert_drawn_match_numpy(SEED, scanned, "llvm-cpu", take=1, least=1, count=25)


@pytest.mark.vulkan
def test_scanned_rows_match_numpy_on_vulkan():
    assert_drawn_match_numpy(VULKAN_SEED, scanned, "vulkan-spirv", take=1, least=1, count=25)
