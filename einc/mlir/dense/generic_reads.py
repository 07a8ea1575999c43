"""What a `linalg.generic` reads and which op computes each operand: the facts the passes that
keep kernels IREE would fuse wrongly apart (batch_matmul_epilogues, broadcast_reductions,
packed_epilogues) ask."""
from __future__ import annotations

from iree.compiler import ir

from einc.mlir.core.dispatch_captures import RESHAPES


def generics(module: ir.Module, elementwise_only: bool = False) -> list:
    """The module's `linalg.generic` ops (only those with no reduction loop where asked), in
    walk order; collected first, so that a caller may insert barriers while it visits them."""
    found: list = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.generic" and (not elementwise_only or is_elementwise(op)):
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return found


def source(value: ir.Value):
    """The op computing `value`, looking through reshapes (None for a block argument)."""
    while isinstance(value.owner, (ir.Operation, ir.OpView)):
        op = value.owner.operation
        if op.name not in RESHAPES:
            return op
        value = op.operands[0]
    return None


def iterators(op) -> list[str]:
    return [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def is_elementwise(op) -> bool:
    return all("parallel" in it for it in iterators(op))


def is_reduction(op) -> bool:
    return op is not None and op.name == "linalg.generic" and any("reduction" in it for it in iterators(op))


def input_count(op) -> int:
    return len(op.operands) - len(op.results)
