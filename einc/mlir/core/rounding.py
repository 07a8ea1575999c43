"""Separately rounded float products in CPU kernels (`fp_contract=False`, the default).

IREE-19: IREE marks every float multiply, add and subtract in llvm-cpu kernels `contract`, so
LLVM fuses `a * b + c` into one FMA, unlike NumPy. A product written as `math.fma(a, b, -0.0)`
is the correctly rounded product, not an `fmul` the pass can mark, and LLVM turns it back into
a plain `fmul` without the flag. Host code (the VM) never fuses and is left alone.
"""
from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, math

DEVICE_CODE = ("linalg.generic", "flow.dispatch.region")


def round_products_separately(module: ir.Module) -> None:
    """Rewrite every `arith.mulf` inside a kernel of `module` as `math.fma(a, b, -0.0)`; one
    that nothing uses (a sum took it into an FMA of its own) goes."""
    products = []

    def collect(op):
        if op.name == "arith.mulf" and _in_kernel(op):
            products.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(collect)
    for op in products:
        if not list(op.result.uses):
            op.erase()
            continue
        with ir.InsertionPoint(op), op.location:
            a, b = op.operands
            product = math.fma(a, b, _negative_zero(a.type))
        op.result.replace_all_uses_with(product)
        op.erase()


def _in_kernel(op) -> bool:
    parent = op.parent
    while parent is not None:
        if parent.name in DEVICE_CODE:
            return True
        parent = parent.parent
    return False


def _negative_zero(t: ir.Type) -> ir.Value:
    if isinstance(t, ir.VectorType):
        return arith.constant(t, ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(t.element_type, -0.0)))
    return arith.constant(t, -0.0)
