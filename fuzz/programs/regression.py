"""A shrunk program kept as a regression test: readable Einlang with its inputs and expected
outputs (from the NumPy meaning) in comments at the top.

    // fuzz regression: a recurrence with no base clause is typed by its other clauses
    // targets: llvm-cpu vulkan-spirv
    // dims: N=32            (only where the program was built with `--dim N=32`)
    // input x1: f32[3] = [0.5, -1.25, 2.0]
    // expect r2: i32[4] = [0, 1, 3, 6]
    // expect y: f32[] = 0.25 within 1.5e-06
    use std::math::*;
    let ...

tests/fuzz/test_regressions.py builds each file for each target it names, with exactly the
expected names as outputs, and compares: integers and booleans exactly, floats within the
stated absolute error (the fuzzer's tolerance for that output, fuzz.programs.compare).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from fuzz.programs.compare import OUTPUT_TYPES, tolerance
from fuzz.programs.generate import Case
from fuzz.programs.module import header
from fuzz.programs.render import render_program
from fuzz.programs.structure import Derivative, widens_an_approximation

LINE = re.compile(r"// (input|expect) (\w+): (\w+)\[([\d, ]*)\] = (.*?)(?: within (\S+))?$")


@dataclass(frozen=True)
class Expectation:
    name: str
    value: np.ndarray
    within: float | None           # absolute error allowed; None: exact


@dataclass(frozen=True)
class Regression:
    description: str
    targets: tuple
    inputs: dict
    expectations: tuple
    dims: dict                     # named dims fixed at build time (`--dim`)


def regression_text(case: Case, description: str, targets: tuple) -> str:
    derivatives = {i.name for i in case.program.items if isinstance(i, Derivative)}
    lines = [f"// fuzz regression: {description}", f"// targets: {' '.join(targets)}"]
    if case.program.fixed:
        lines.append(f"// dims: {' '.join(f'{d}={v}' for d, v in case.program.dims)}")
    lines += [f"// input {name}: {_typed(value, inp.dtype)}"
              for inp in case.program.inputs for name, value in [(inp.name, case.inputs[inp.name])]]
    for name in case.program.outputs:
        want = case.meaning[name]
        line = f"// expect {name}: {_typed(np.asarray(want.ex), want.dtype)}"
        if want.dtype.startswith("f"):
            precision = widens_an_approximation(case.program)
            line += f" within {float(np.max(tolerance(want, name in derivatives, precision))):.3g}"
        lines.append(line)
    return "\n".join(lines + header([case.program])) + "\n" + render_program(case.program)


def _typed(value: np.ndarray, dtype: str) -> str:
    shape = ", ".join(str(n) for n in np.shape(value))
    return f"{dtype}[{shape}] = {_literal(np.asarray(value, OUTPUT_TYPES[dtype]))}"


def _literal(value: np.ndarray) -> str:
    if value.ndim:
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if value.dtype == np.bool_:
        return "true" if value else "false"
    if value.dtype == ml_dtypes.bfloat16:     # its shortest f32 text reads back to the same bf16
        value = value.astype(np.float32)
    if value.dtype.kind == "f":
        return np.format_float_positional(value[()], unique=True, trim="0")
    return str(int(value))


def parse_regression(text: str) -> Regression:
    description = re.search(r"^// fuzz regression: (.*)$", text, re.M).group(1)
    targets = tuple(re.search(r"^// targets: (.*)$", text, re.M).group(1).split())
    fixed = re.search(r"^// dims: (.*)$", text, re.M)
    dims = {d: int(v) for d, v in (item.split("=") for item in fixed.group(1).split())} if fixed else {}
    inputs, expectations = {}, []
    for line in text.splitlines():
        match = LINE.match(line)
        if not match:
            continue
        kind, name, dtype, shape, values, within = match.groups()
        value = np.asarray(json.loads(values), OUTPUT_TYPES[dtype])
        value = value.reshape(tuple(int(n) for n in shape.split(",") if n.strip()))
        if kind == "input":
            inputs[name] = value
        else:
            expectations.append(Expectation(name, value, float(within) if within else None))
    return Regression(description, targets, inputs, tuple(expectations), dims)
