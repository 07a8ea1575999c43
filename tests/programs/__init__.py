"""Einlang programs that several tests and the benchmarks share, one `.ein` file each, so a
program is written once: `source("rnn")` is the text of tests/programs/rnn.ein. (A file read
for its line numbers, kalman_local_level.ein, starts with its first statement.)"""
from pathlib import Path

FOLDER = Path(__file__).parent


def source(name: str) -> str:
    return (FOLDER / f"{name}.ein").read_text(encoding="utf-8")
