"""The source of einc holds no fuzz seeds or program numbers.

Where a defect was found belongs to its regression test and to docs/IREE_DEFECTS.md; the code
says what it does and cites the defect's id (`IREE-07: ...`).
"""
from __future__ import annotations

import re
from pathlib import Path

import einc

PACKAGE_ROOT = Path(einc.__file__).parent

# `seed 7`, `seeds 3 and 4`, `program 223`, `programs 12-14`, `programs-0014` (a campaign's folder)
FINDING = re.compile(r"\b(?:fuzz\s+)?seeds?\s*#?\d+|\bprograms?\s*#?\d+|\bprograms-\d+", re.I)


def findings(text: str) -> list[str]:
    """`line N: text` for each line of `text` naming a fuzz seed or a program number."""
    return [f"line {number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
            if FINDING.search(line)]


def test_no_fuzz_seed_or_program_number_in_einc():
    found = [f"{path.relative_to(PACKAGE_ROOT.parent)} {line}"
             for path in sorted(PACKAGE_ROOT.rglob("*.py")) for line in findings(path.read_text())]
    assert not found, "\n".join(found)


def test_the_check_finds_seeds_and_program_numbers_and_nothing_else():
    flagged = ["# found by the differential fuzzer (seed 7)",
               "(fuzz seed 41 program 397): they are disjoint",
               "programs-0014, seed 1 program 223",
               "a wrong result (Seed 13)",
               "seeds 3 and 4 hit it"]
    assert [len(findings(line)) for line in flagged] == [1] * len(flagged)
    legitimate = ["MAX_UNSEEDED = 3", "rdseed", "seed = const(1.0, y)", "def seed(subs):",
                  "from einc.autodiff.seeds import basis",
                  "a program 's inputs", "the program reads 2 inputs", "seed(())",
                  "a module file found by path"]
    assert [line for line in legitimate if findings(line)] == []
