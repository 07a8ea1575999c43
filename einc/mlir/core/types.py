"""MLIR types of IR values: element types by dtype, ranked tensor types by IR shape.

Every tensor type in the module comes from `tensor_type`, so a value's type always matches the
function signature built from the same IR shapes (static where a size is constant, `?` elsewhere).
"""
from __future__ import annotations

from iree.compiler import ir

from einc.ir.types import DType, Shape

def element_type(dtype: DType) -> ir.Type:
    if dtype.name == "f16":
        return ir.F16Type.get()
    if dtype.name == "bf16":
        return ir.BF16Type.get()
    if dtype.name == "f32":
        return ir.F32Type.get()
    if dtype.name == "f64":
        return ir.F64Type.get()
    return ir.IntegerType.get_signless(dtype.bits)


def tensor_type(dtype: DType, shape: Shape) -> ir.RankedTensorType:
    dynamic = ir.ShapedType.get_dynamic_size()
    dims = [d.const if d.is_const else dynamic for d in shape]
    return ir.RankedTensorType.get(dims, element_type(dtype))


def index_type() -> ir.Type:
    return ir.IndexType.get()


def i32_type() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def is_tensor(value: ir.Value) -> bool:
    """Whether a lowered program-level value lives on the device (a tensor, possibly 0-d)."""
    return isinstance(value.type, ir.RankedTensorType)
