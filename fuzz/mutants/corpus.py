"""Real programs to mutate: the examples, the standard library's modules, the programs the
tests compile (string constants in tests/**/*.py that read as Einlang) and the fuzzers' own
regressions. Each keeps the folder it lives in, so `mod name;` and `load_npy("..")` in a mutant
still find their files."""
from __future__ import annotations

import ast
import pathlib
import textwrap
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Seed:
    name: str                      # where it comes from, e.g. examples/ode/lorenz.ein
    text: str
    folder: str | None             # the folder its relative paths resolve in


def corpus() -> list[Seed]:
    seeds = []
    for pattern in ("examples/**/*.ein", "einc/stdlib/**/*.ein", "tests/**/*.ein"):
        for path in sorted(ROOT.glob(pattern)):
            seeds.append(Seed(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"),
                              str(path.parent)))
    for path in sorted(ROOT.glob("tests/**/*.py")):
        for k, text in enumerate(_programs_in(path)):
            seeds.append(Seed(f"{path.relative_to(ROOT)}#{k}", text, None))
    return seeds


def _programs_in(path: pathlib.Path) -> list[str]:
    """String constants of a test file that look like Einlang programs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = textwrap.dedent(node.value).strip()
            if ";" in text and ("let " in text or "fn " in text) and "\n" in text:
                found.append(text + "\n")
    return found
