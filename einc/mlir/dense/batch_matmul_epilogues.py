"""Reductions an elementwise op combines with a batch matmul's result, kept out of its dispatch.

IREE-53: CPU data tiling fuses a batch matmul with an elementwise consumer and with a reduction
of another tensor that consumer also reads (attention's `P V / sum[t](P)`), and reads the
batches after the first wrong (rows not a whole tile; sizes fixed or not). Such a reduction
passes a barrier (`fence`) before the consumer; the consumer itself still fuses into the
matmul's dispatch.
"""
from __future__ import annotations

from iree.compiler import ir

from einc.mlir.core.dispatch_captures import RESHAPES, fence
from einc.target import Target



def fence_reductions_beside_batch_matmuls(target: Target, module: ir.Module) -> None:
    """Put a barrier on each reduction an elementwise op reads beside a batch matmul's result,
    where the reduction does not itself read that result."""
    consumers: list = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.generic" and _is_elementwise(op):
            consumers.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    for consumer in consumers:
        inputs = list(consumer.operands)[:_input_count(consumer)]
        matmuls = [m for m in map(_source, inputs) if _is_batch_matmul(m)]
        if not matmuls:
            continue
        for k, value in enumerate(inputs):
            source = _source(value)
            if _is_reduction(source) and not any(_reads(source, m) for m in matmuls):
                with ir.InsertionPoint(consumer):
                    consumer.operands[k] = fence(target, value)


def _source(value: ir.Value):
    """The op computing `value`, looking through reshapes (None for a block argument)."""
    while isinstance(value.owner, (ir.Operation, ir.OpView)):
        op = value.owner.operation
        if op.name not in RESHAPES:
            return op
        value = op.operands[0]
    return None


def _is_batch_matmul(op) -> bool:
    return op is not None and op.name == "linalg.batch_matmul"


def _iterators(op) -> list[str]:
    return [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _is_elementwise(op) -> bool:
    return all("parallel" in it for it in _iterators(op))


def _is_reduction(op) -> bool:
    return op is not None and op.name == "linalg.generic" and any("reduction" in it for it in _iterators(op))


def _input_count(op) -> int:
    return len(op.operands) - len(op.results)


def _reads(op, matmul) -> bool:
    """Whether `op` reads `matmul`'s result directly (through reshapes)."""
    return any(_same(_source(v), matmul) for v in list(op.operands)[:_input_count(op)])


def _same(op, other) -> bool:
    return op is not None and op == other
