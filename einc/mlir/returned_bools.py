"""Bool tensors `main` returns and kernels also read, kept apart from those kernels (IREE-261),
and returned tensors computed from 8-bit integers (IREE-270, the same failure).

IREE-261: on every target, an elementwise bool kernel whose result is returned and read by a
reduction (`let p[l, i] = i + l < N && all[k in 0..l + 1](..); let c[l] = sum[i](if p[l, i]
{ 1 } else { 0 });`, both outputs) is cloned into the reduction's dispatch, where its bool tile
over a run-time axis gets a stack (llvm-cpu) or shared-memory (vulkan-spirv) buffer of an
unbounded size and the build fails. Each reader gets the tensor through a barrier (`fence`), so
the reduction reads the stored result instead. IREE-270 (vulkan-spirv): the same for a returned
tensor a kernel computes from an 8-bit integer table (`s[i] = if c[i] == 0u8 { 0 } else { 1 }`
summed, s an output): the i8 tile is unbounded ("unexpected allocation without upper bound
shapes"); such a tensor is fenced the same way.
"""
from __future__ import annotations

from iree.compiler import ir

from einc.mlir.core.dispatch_captures import fence
from einc.target import Target


def fence_returned_bools(target: Target, module: ir.Module) -> None:
    """Route the kernels' reads of each bool tensor `main` returns (and, IREE-270, each tensor
    computed from 8-bit integers) through a barrier."""
    for function in module.body.operations:
        if function.operation.name != "func.func":
            continue
        block = function.regions[0].blocks[0]
        returned = list(block.operations)[-1]
        bytes_too = target.has_defect("IREE-270")
        for value in {v for v in returned.operands if _fenced(v, bytes_too)}:
            _fence_readers(target, value, block, returned)


def _fenced(value: ir.Value, bytes_too: bool) -> bool:
    """A bool tensor (IREE-261), or with `bytes_too` one computed from 8-bit integers (IREE-270:
    a kernel reading an i8 table, `s[i] = if c[i] == 0u8 { 0 } else { 1 }`, is cloned into the
    reduction's dispatch with that table's i8 tile over the run-time axis unbounded)."""
    kind = value.type
    if not (isinstance(kind, ir.RankedTensorType) and kind.rank > 0):
        return False
    return kind.element_type == ir.IntegerType.get_signless(1) or bytes_too and _computed_from_bytes(value, {}, 0)


_DEPTH = 8      # how many kernels back a returned tensor's producers are followed


def _computed_from_bytes(value: ir.Value, memo: dict, depth: int) -> bool:
    """Whether `value` is a tensor of 8-bit integers or a kernel's result computed from one."""
    kind = value.type
    if isinstance(kind, ir.RankedTensorType) and isinstance(kind.element_type, ir.IntegerType) \
            and kind.element_type.width == 8:
        return True
    if depth >= _DEPTH or isinstance(value.owner, ir.Block):      # an argument of main or of a region
        return False
    op = value.owner.operation
    if not op.name.startswith("linalg."):
        return False
    if op not in memo:
        memo[op] = False
        memo[op] = any(_computed_from_bytes(v, memo, depth + 1) for v in op.operands)
    return memo[op]


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
