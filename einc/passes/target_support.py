"""What a target cannot run, reported as a user error before IREE fails on it."""
from __future__ import annotations

from einc import diagnostics
from einc.ir.nodes import Program, walk

# The default SPIR-V target (Vulkan baseline profile) has neither 64-bit floats nor 64-bit ints;
# 16-bit integers are refused too (IREE-05: odd-length 16-bit buffers lose their last element).
UNSUPPORTED_DTYPES = {"vulkan-spirv": {"f64": "f32", "i64": "i32", "u64": "u32",
                                       "i16": "i32", "u16": "i32"}}


def check_target(program: Program, target: str) -> None:
    values = walk(list(program.inputs) + program.roots())
    unsupported = UNSUPPORTED_DTYPES.get(target, {})
    for v in values:
        if v.dtype.name in unsupported:
            raise diagnostics.error(
                diagnostics.UNSUPPORTED,
                f"{v.dtype} is not supported on {target}; use {unsupported[v.dtype.name]} or --target llvm-cpu",
                v.span)

