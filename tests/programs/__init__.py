"""Einlang programs that several tests and the benchmarks share, one `.ein` file each, so a
program is written once: `source("rnn")` is the text of tests/programs/rnn.ein."""
from pathlib import Path

FOLDER = Path(__file__).parent


def source(name: str) -> str:
    return (FOLDER / f"{name}.ein").read_text(encoding="utf-8")
