"""Tensors a hand-written dispatch region reads from outside it, passed in as they are.

IREE-26: IREE clones cheap producers of captured tensors (a fill) into the region, where a
recurrence region must hold no tileable linalg op. Each captured tensor goes through a
`util.optimization_barrier`, which IREE does not clone, and has its dynamic sizes tied back on
(`flow.tensor.tie_shape`): IREE cannot see through the barrier to them.
"""
from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import flow, tensor, util

from einc.mlir.core.shapes import index_const
from einc.target import Target


def fence_captured_tensors(region_op) -> None:
    """Route every tensor that ops inside `region_op` read from outside it through a barrier."""
    inside: set = set()
    readers: list[tuple[ir.Operation, int, ir.Value]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        for block in (b for region in op.regions for b in region.blocks):
            inside.update(block.arguments)
        inside.update(op.results)
        readers.extend((op, k, value) for k, value in enumerate(op.operands)
                       if isinstance(value.type, ir.RankedTensorType))
        return ir.WalkResult.ADVANCE
    for block in region_op.regions[0].blocks:
        for op in block.operations:
            op.operation.walk(visit)
    fenced: dict = {}
    with ir.InsertionPoint(region_op):
        for op, k, value in readers:
            if value in inside:
                continue
            if value not in fenced:
                fenced[value] = fence(value)
            op.operands[k] = fenced[value]


def fence(value: ir.Value) -> ir.Value:
    """`value` through an optimization barrier, its dynamic sizes tied back on."""
    return fence_together([value])[0]


def fence_together(values: list[ir.Value]) -> list[ir.Value]:
    """`values` through one optimization barrier, their dynamic sizes tied back on. IREE ends its
    stream of work at each barrier (a queue submission of its own), so values fenced at one
    point share one barrier."""
    barrier = util.OptimizationBarrierOp([v.type for v in values], values).results
    return [_tied(value, result) for value, result in zip(values, barrier)]


def is_fenced(value: ir.Value) -> bool:
    """Whether `value` is what `fence` returns: a barrier's result, its sizes tied back on or
    not."""
    op = value.owner
    if not isinstance(op, ir.Block) and op.name == "flow.tensor.tie_shape":
        op = op.operands[0].owner
    return not isinstance(op, ir.Block) and op.name == "util.optimization_barrier"


def _tied(value: ir.Value, result: ir.Value) -> ir.Value:
    shape = ir.RankedTensorType(value.type).shape
    sizes = [tensor.dim(value, index_const(k)) for k, n in enumerate(shape) if n == ir.ShapedType.get_dynamic_size()]
    return flow.tensor_tie_shape(result, sizes) if sizes else result


def written_shifted(target: Target, value: ir.Value) -> ir.Value:
    """`value`, about to be written at a nonzero offset on its last axis (the interior of a padded
    tensor, a clause of a piecewise definition). IREE-42: on vulkan-spirv, with static sizes, IREE
    fuses its producer into a kernel that vectorizes the store to the aligned-down address; behind
    a barrier the write is a copy."""
    return fence(value) if target.has_defect("IREE-42") else value
