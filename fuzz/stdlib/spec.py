"""A drawn standard-library call as a program: its inputs, the call, and its meaning.

Top-level names are written `$name`, so a module of many calls gives each its own prefix by
replacing `$` (as fuzz.dense does). An output that is a tuple (topk, split) is run as `y.0`,
`y.1`, .. (its outputs), each with its meaning.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Input:
    name: str                      # without `$`
    dtype: str                     # einlang type: f32, f64, i32, i64, bool
    dims: tuple                    # each an int or a named dim (str, without `$`)


@dataclass(frozen=True)
class Want:
    """One output's meaning: `value` in float64 (or the exact integers), the einlang type the
    output must have, and `scale`, the magnitude the allowed error is relative to (None: the
    output must be exact)."""
    value: np.ndarray
    dtype: str
    scale: np.ndarray | None = None


@dataclass(frozen=True)
class StdProgram:
    function: str                  # the called function's path, for counts and reports
    dtype: str                     # the element type the call computes in
    inputs: tuple                  # Inputs
    call: str                      # the call, with `$` names
    outputs: tuple = ("y",)        # `y`, or a tuple's `y.0`, `y.1`, ..

    def statements(self, prefix: str = "") -> list[str]:
        lines = [f"let ${i.name}: [{i.dtype}; {', '.join(_dim(d) for d in i.dims)}];" for i in self.inputs]
        lines.append(f"let $y = {self.call};")
        return [line.replace("$", prefix) for line in lines]


def _dim(d) -> str:
    return d if isinstance(d, str) else str(d)


def render_std(program: StdProgram, prefix: str = "") -> list[str]:
    return program.statements(prefix)
