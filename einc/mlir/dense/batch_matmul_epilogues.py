"""Reductions an elementwise op combines with a batch matmul's result, kept out of its dispatch.

IREE-53: CPU data tiling fuses a batch matmul with an elementwise consumer and with a reduction
of another tensor that consumer also reads (attention's `P V / sum[t](P)`), and reads the
batches after the first wrong (rows not a whole tile; sizes fixed or not). Such a reduction
passes a barrier (`fence`) before the consumer; the consumer itself still fuses into the
matmul's dispatch.
"""
from __future__ import annotations

from iree.compiler import ir

from einc.mlir.core.dispatch_captures import fence
from einc.mlir.dense.generic_reads import generics, input_count, is_reduction, source
from einc.target import Target


def fence_reductions_beside_batch_matmuls(target: Target, module: ir.Module) -> None:
    """Put a barrier on each reduction an elementwise op reads beside a batch matmul's result,
    where the reduction does not itself read that result."""
    for consumer in generics(module, elementwise_only=True):
        inputs = list(consumer.operands)[:input_count(consumer)]
        matmuls = [m for m in map(source, inputs) if _is_batch_matmul(m)]
        if not matmuls:
            continue
        for k, value in enumerate(inputs):
            producer = source(value)
            if is_reduction(producer) and not any(_reads(producer, m) for m in matmuls):
                with ir.InsertionPoint(consumer):
                    consumer.operands[k] = fence(target, value)


def _is_batch_matmul(op) -> bool:
    return op is not None and op.name == "linalg.batch_matmul"


def _reads(op, matmul) -> bool:
    """Whether `op` reads `matmul`'s result directly (through reshapes)."""
    return any(_same(source(v), matmul) for v in list(op.operands)[:input_count(op)])


def _same(op, other) -> bool:
    return op is not None and op == other
