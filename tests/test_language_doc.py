"""Every ```ein block of docs/LANGUAGE.md is a whole program that `einc check` accepts, so the
language reference cannot drift from what einc compiles."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from einc.driver import check_program

DOC = Path(__file__).resolve().parents[1] / "docs" / "LANGUAGE.md"
BLOCKS = re.findall(r"^```ein\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def test_the_reference_has_examples():
    assert len(BLOCKS) >= 15


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_example_checks(index, tmp_path):
    source = tmp_path / f"example_{index}.ein"
    source.write_text(BLOCKS[index])
    check_program(str(source))
