"""What a target cannot run, reported as a user error before IREE fails on it."""
from __future__ import annotations

from einc import diagnostics
from einc.ir.nodes import Op, Print, Program, walk

# The default SPIR-V target (Vulkan baseline profile) has neither 64-bit floats nor 64-bit ints.
UNSUPPORTED_DTYPES = {"vulkan-spirv": {"f64": "f32", "i64": "i32"}}
# IREE 3.13's llvm-cpu backend turns these f64 functions into libm calls it cannot link (checked).
# (tanh is expanded through expm1 instead: einc.mlir.scalar_ops._tanh_f64)
LLVM_CPU_MISSING_F64 = ("log2", "sin", "cos", "tan", "asin", "acos", "atan", "erf", "atan2")


def check_target(program: Program, target: str) -> None:
    values = walk(_roots(program))
    if target.startswith("llvm-cpu"):
        _check_f64_functions(values, target)
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


def _check_f64_functions(values: list, target: str) -> None:
    for v in values:
        if isinstance(v, Op) and v.op in LLVM_CPU_MISSING_F64 and v.args[0].dtype.name == "f64":
            raise diagnostics.error(diagnostics.UNSUPPORTED,
                                    f"`{v.op}` on f64 is not supported on {target}",
                                    v.span, hint=f"cast the argument to f32: `{v.op}(x as f32)`")
