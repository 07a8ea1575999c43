"""The program fuzzer's row functions (fuzz/programs/generate.py `row_map`) sometimes fold each
row by a recurrence over the matrix of rows whose row index has no range (`let a[i, 0] = m[i, 0];
let a[i, k in 1..n] = a[i, k - 1] + m[i, k];`): the row index takes its extent from m's rows,
E004 before einc inferred a recurrence's unranged first index from a plain read (found by the
hold-out program hash_mix, a hash per row of a byte table). It is drawn from a random stream of
its own, so every seed's other programs stay as they were; such programs match their NumPy
meaning on llvm-cpu. vulkan-spirv runs each step of a clause as one kernel, so such a fold reads
its own step there (E011): the campaigns leave those programs to the CPU targets."""
from __future__ import annotations

import fuzz.programs.generate as generate
from fuzz.programs.campaign import runs_on
from fuzz.programs.structure import RowMap
from tests.fuzz.stream_draws import assert_drawn_match_numpy, drawn_and_changed, drawn_case

SEED = 31004          # its program 17 within the first 25


def scanned(program) -> bool:
    return any(isinstance(item, RowMap) and item.scanned for item in program.items)


def test_scanned_rows_leave_the_other_programs_of_a_seed_as_they_were(monkeypatch):
    _, drawn, changed = drawn_and_changed(monkeypatch, generate, "SCAN_SHARE", SEED, scanned, count=25)
    assert drawn and not changed, (drawn, changed)


def test_scanned_rows_match_numpy():
    assert_drawn_match_numpy(SEED, scanned, "llvm-cpu", take=1, least=1, count=25)


def test_scanned_rows_are_not_run_on_vulkan():
    """A campaign counted the E011 vulkan-spirv gives such a fold as a bad outcome (fuzz seed
    19701 programs 6 and 35)."""
    case = next(c for c in (drawn_case(SEED, k) for k in range(25)) if scanned(c.program))
    assert runs_on(case, "llvm-cpu") and not runs_on(case, "vulkan-spirv")
