"""Gathers from a strided slice, kept apart from it on the targets with IREE-105.

IREE-105: on llvm-cpu and llvm-cpu-generic a `tensor.extract` at a computed position inside a
`linalg.generic`, from a tensor that is a strided `tensor.extract_slice` (stride above 1) or a
copy of one (a generic that only moves elements, a transpose, a reshape), fails in LLVM
translation ("unrealized_conversion_cast (i64) -> index"): IREE folds the copies and loads the
slice with strides in the gathering dispatch. `std::ml::slice` with a step of 2 and then one of
-2 reaches it, and so does a copy at one position of the last axis (`pd[h, i] = Mh[h, i, 7]`),
which IREE loads as such a slice. The gathered tensor passes a barrier (`fence`) before such a kernel, so the
slice is copied by a dispatch of its own.

IREE-269: on llvm-cpu and llvm-cpu-generic, a strided `tensor.extract_slice` (`u[2 * k + 1, m]`)
of an elementwise kernel's result that widens its input (`(st[k, m] as f64) + 0.5` with st i32,
i16 -> f32, f32 -> f64) is compiled into one dispatch with the kernel, which then keeps the whole
widened tensor on the stack: "exceeded stack allocation limit of 32768 bytes" past 32 KiB (a
per-path random generator's uniforms read two by two). The widened tensor passes a barrier
before the slice, so the kernel stores it and the slice reads it.
"""
from __future__ import annotations

from iree.compiler import ir

from einc.mlir.core.dispatch_captures import RESHAPES, fence
from einc.target import Target

# ops IREE folds into a reader of their result as a change of indexing only
_MOVES = RESHAPES | {"linalg.transpose", "linalg.broadcast", "linalg.copy", "tensor.extract_slice"}


def fence_strided_gathers(target: Target, module: ir.Module) -> None:
    """Put a barrier on each tensor a kernel gathers from that is a strided slice's copy."""
    gathers: list = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "tensor.extract" and _kernel_of(op) is not None:
            gathers.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    fenced: dict = {}
    for gather in gathers:
        kernel, source = _kernel_of(gather), gather.operands[0]
        if _defined_inside(source, kernel) or not _copies_a_strided_slice(source):
            continue
        key = (source, kernel)
        if key not in fenced:
            with ir.InsertionPoint(kernel):
                fenced[key] = fence(target, source)
        gather.operands[0] = fenced[key]


def _kernel_of(op: ir.Operation):
    """The `linalg.generic` whose region holds `op` directly, or None."""
    parent = op.parent
    return parent if parent is not None and parent.name == "linalg.generic" else None


def _defined_inside(value: ir.Value, kernel) -> bool:
    owner = value.owner
    while isinstance(owner, (ir.Operation, ir.OpView)):
        if owner.operation == kernel.operation:
            return True
        owner = owner.operation.parent
    return isinstance(owner, ir.Block) and owner.owner.operation == kernel.operation


def _copies_a_strided_slice(value: ir.Value) -> bool:
    """Whether `value` is a strided slice, through ops that only move elements."""
    while isinstance(value.owner, (ir.Operation, ir.OpView)):
        op = value.owner.operation
        if op.name == "tensor.extract_slice" and _strided(op):
            return True
        if _moves_elements(op) and _fixes_last_axis(op):
            return True
        if op.name not in _MOVES and not _moves_elements(op):
            return False
        value = op.operands[0]
    return False


def _fixes_last_axis(op) -> bool:
    """Whether an element-moving `linalg.generic` reads its input at one position of the input's
    last axis (`m[h, i, 7]`): IREE loads such a copy as a slice whose elements lie apart."""
    source = ir.RankedTensorType(op.operands[0].type)
    if source.rank == 0 or source.shape[-1] == 1:
        return False
    last = ir.AffineMapAttr(ir.ArrayAttr(op.attributes["indexing_maps"])[0]).value.results[-1]
    return isinstance(last, ir.AffineConstantExpr)


def _strided(op) -> bool:
    return any(s != 1 for s in ir.DenseI64ArrayAttr(op.attributes["static_strides"]))


def _moves_elements(op) -> bool:
    """A `linalg.generic` of one input whose body yields that input's element as it is."""
    if op.name != "linalg.generic" or len(op.regions[0].blocks) != 1:
        return False
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    return len(body) == 1 and len(body[0].operands) == 1 and body[0].operands[0] == block.arguments[0] \
        and len(block.arguments) == len(op.results) + 1


def fence_widened_strided_slices(target: Target, module: ir.Module) -> None:
    """Put a barrier between each strided slice and the widening kernel whose result it cuts."""
    slices: list = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "tensor.extract_slice" and _strided(op) and _widens(op.operands[0]):
            slices.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    fenced: dict = {}
    for op in slices:
        source = op.operands[0]
        if source not in fenced:
            with ir.InsertionPoint(op):
                fenced[source] = fence(target, source)
        op.operands[0] = fenced[source]


def _widens(value: ir.Value) -> bool:
    """Whether `value` is a `linalg.generic`'s result with more bits per element than one of its
    tensor inputs."""
    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or owner.operation.name != "linalg.generic":
        return False
    bits = _bits(value.type)
    return bits is not None and any(
        isinstance(v.type, ir.RankedTensorType) and (_bits(v.type) or bits) < bits for v in owner.operation.operands)


def _bits(kind) -> int | None:
    """The bits of a tensor type's element (None: no tensor, or an element without a width)."""
    return getattr(ir.RankedTensorType(kind).element_type, "width", None) if isinstance(kind, ir.RankedTensorType) else None
