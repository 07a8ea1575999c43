"""What a target cannot run, reported as a user error before IREE fails on it."""
from __future__ import annotations

from einc import diagnostics
from einc.ir.nodes import Print, Program, walk

# The default SPIR-V target (Vulkan baseline profile) has neither 64-bit floats nor 64-bit ints.
UNSUPPORTED_DTYPES = {"vulkan-spirv": {"f64": "f32", "i64": "i32"}}


def check_target(program: Program, target: str) -> None:
    values = walk(_roots(program))
    unsupported = UNSUPPORTED_DTYPES.get(target, {})
    for v in values:
        if v.dtype.name in unsupported:
            raise diagnostics.error(
                diagnostics.UNSUPPORTED,
                f"{v.dtype} is not supported on {target}; use {unsupported[v.dtype.name]} or --target llvm-cpu",
                v.span)


def _roots(program: Program) -> list:
    roots = list(program.inputs) + [v for _, v in program.outputs]
    for effect in program.effects:
        roots += list(effect.args) if isinstance(effect, Print) else [effect.cond]
    return roots
