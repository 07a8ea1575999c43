"""Float scalar ops of function-level (host) code in a form IREE's VM computes right.

IREE-102: the VM's folders rewrite `x == x` to true, `x != x` to false, `x <= x` and `x >= x` to
true, `x * 0.0` and `0.0 * x` to 0 and `0.0 / x` to 0, all wrong for NaN (and `x * 0.0` for
infinities), and it lowers an ordered `a >= b` as `!(a < b)`, which holds for NaN. Kernels
(LLVM, SPIR-V) are right. So on the host an operand that would be folded passes an optimization
barrier, and `a >= b` is written `b <= a`.
"""
from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import util

from einc.ir.nodes import Op
from einc.mlir.core import scalar_ops


def apply(op: Op, args: list[ir.Value]) -> ir.Value:
    """scalar_ops.apply(op, args) for host code on a target whose VM has IREE-102."""
    dtype = op.args[0].dtype
    if not dtype.is_float or op.op not in scalar_ops.FLOAT_PREDICATES and op.op not in ("mul", "div"):
        return scalar_ops.apply(op, args)
    a, b = args
    if op.op in ("mul", "div"):
        return scalar_ops.apply(op, [_opaque(v) if _is_constant(v) else v for v in (a, b)])
    if b == a:
        b = _opaque(b)
    if op.op == "ge":
        return scalar_ops.compare("le", dtype, b, a)
    return scalar_ops.compare(op.op, dtype, a, b)


def _is_constant(v: ir.Value) -> bool:
    owner = v.owner
    return not isinstance(owner, ir.Block) and getattr(owner, "operation", owner).name == "arith.constant"


def _opaque(v: ir.Value) -> ir.Value:
    return util.optimization_barrier([v.type], [v])
