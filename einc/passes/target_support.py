"""What a target cannot run, reported as a user error before IREE fails on it."""
from __future__ import annotations

from einc import diagnostics
from einc.ir.nodes import Program, walk
from einc.target import DEFAULT, Target


def check_target(program: Program, target: Target) -> None:
    for v in walk(list(program.inputs) + program.roots()):
        instead = target.replacement_for(v.dtype.name)
        if instead is not None:
            raise diagnostics.error(
                diagnostics.UNSUPPORTED,
                f"{v.dtype} is not supported on {target.name}; use {instead} or --target {DEFAULT.name}",
                v.span)
