"""Bool tensors `main` returns and kernels also read, kept apart from those kernels (IREE-261).

IREE-261: on every target, an elementwise bool kernel whose result is returned and read by a
reduction (`let p[l, i] = i + l < N && all[k in 0..l + 1](..); let c[l] = sum[i](if p[l, i]
{ 1 } else { 0 });`, both outputs) is cloned into the reduction's dispatch, where its bool tile
over a run-time axis gets a stack (llvm-cpu) or shared-memory (vulkan-spirv) buffer of an
unbounded size and the build fails. Each reader gets the tensor through a barrier (`fence`), so
the reduction reads the stored result instead.
"""
from __future__ import annotations

from iree.compiler import ir

from einc.mlir.core.dispatch_captures import fence
from einc.target import Target


def fence_returned_bools(target: Target, module: ir.Module) -> None:
    """Route the kernels' reads of each bool tensor `main` returns through a barrier."""
    for function in module.body.operations:
        if function.operation.name != "func.func":
            continue
        block = function.regions[0].blocks[0]
        returned = list(block.operations)[-1]
        for value in {v for v in returned.operands if _is_bool_tensor(v)}:
            _fence_readers(target, value, block, returned)


def _is_bool_tensor(value: ir.Value) -> bool:
    kind = value.type
    return isinstance(kind, ir.RankedTensorType) and kind.rank > 0 and kind.element_type == ir.IntegerType.get_signless(1)


def _fence_readers(target: Target, value: ir.Value, block: ir.Block, returned) -> None:
    """Each kernel of `block` reading `value` (in its own regions too) gets it through a barrier
    placed just before it."""
    uses = [(use.owner, use.operand_number) for use in value.uses]
    for owner, number in uses:
        top = _top_level(owner, block)
        # kernels only: a barrier before a host transfer (`save_npy`'s) fails IREE's stream lowering
        if top is None or top == returned.operation or not top.name.startswith("linalg."):
            continue
        with ir.InsertionPoint(top):
            owner.operands[number] = fence(target, value)


def _top_level(op, block: ir.Block):
    """The op of `block` that is `op` or holds it in its regions."""
    op = op.operation
    while op is not None and op.block != block:
        op = op.parent
    return op
