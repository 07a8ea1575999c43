"""Reductions a later kernel reads broadcast along one of its parallel loops, kept out of its
dispatch on the targets with IREE-90.

IREE-90: on vulkan-spirv, a reduction (`let y2[n, h, w] = sum[k](w2[k] * x[n, h, w + k]);`)
fused into a kernel that reads it along fewer parallel loops than it has (`let y3[n, o, h, w]
= w3[o] * y2[n, h, w];`, a new axis o) gives about a third of the elements wrong. Such a
reduction passes a barrier (`fence`) before the kernel that broadcasts it; so does an elementwise
kernel over a reduction's own loops (`sqrt(sum[c](x[c, h] ** 2))`), which IREE fuses into the
reduction's dispatch and which is then as wrong when broadcast.

IREE-267: on the CPU targets, a reduction fused into a kernel that reads it through two operands
along different loops (`let deg[i] = sum[j](a[i, j]); let an[i, j] = a[i, j] / (deg[i] *
deg[j]);`) gives wrong values once the kernel is tiled: the reduction is computed only for the
tile's rows, and the read along the other loop sees the rest unwritten. Such a reduction passes
one barrier before that kernel; so does an elementwise kernel computed from one (`p[i, j] = a[i, j]
/ sum[k](a[i, k])` read as `p[i, j] + p[j, i]`: every entry off the diagonal was 0).
"""
from __future__ import annotations

import re

from iree.compiler import ir

from einc.mlir.core.dispatch_captures import fence
from einc.mlir.dense.generic_reads import generics, input_count, is_elementwise, is_reduction, iterators, source
from einc.target import Target


def fence_broadcast_reductions(target: Target, module: ir.Module) -> None:
    """Put a barrier on each reduction's result (or an elementwise kernel's that IREE fuses into
    a reduction's dispatch) that a `linalg.generic` reads without one of its parallel loops."""
    kernels = generics(module)
    reduced = _computed_with_a_reduction(kernels)
    for kernel in kernels:
        parallel = {d for d, it in enumerate(iterators(kernel)) if "parallel" in it}
        maps = list(ir.ArrayAttr(kernel.attributes["indexing_maps"]))
        for k, value in enumerate(list(kernel.operands)[:input_count(kernel)]):
            if source(value) in reduced and parallel - _loops_read(maps[k]):
                with ir.InsertionPoint(kernel):
                    kernel.operands[k] = fence(target, value)


def _computed_with_a_reduction(kernels: list) -> set:
    """The reductions among `kernels` (walk order, producers first), and the elementwise ones
    reading, along all of their loops, a kernel of this set: those IREE fuses into the
    reduction's dispatch."""
    found: set = set()
    for op in kernels:
        loops = set(range(len(iterators(op))))
        maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
        if is_reduction(op) or is_elementwise(op) and any(
                source(value) in found and _loops_read(maps[k]) == loops
                for k, value in enumerate(list(op.operands)[:input_count(op)])):
            found.add(op)
    return found


def _loops_read(indexing_map: ir.Attribute) -> set:
    """The loop dimensions an operand's indexing map uses."""
    results = ir.AffineMapAttr(indexing_map).value.results
    return {int(d) for expr in results for d in re.findall(r"d(\d+)", str(expr))}


def fence_reductions_read_along_two_loops(target: Target, module: ir.Module) -> None:
    """Put one barrier on each reduction's result, or an elementwise kernel's computed from one,
    that a `linalg.generic` reads through operands with different indexing maps."""
    kernels = generics(module)
    from_reduction = _computed_from_a_reduction(kernels)
    for kernel in kernels:
        maps = list(ir.ArrayAttr(kernel.attributes["indexing_maps"]))
        reads: dict = {}
        for k, value in enumerate(list(kernel.operands)[:input_count(kernel)]):
            if source(value) in from_reduction:
                reads.setdefault(value, []).append(k)
        for value, operands in reads.items():
            if len({str(maps[k]) for k in operands}) > 1:
                with ir.InsertionPoint(kernel):
                    fenced = fence(target, value)
                for k in operands:
                    kernel.operands[k] = fenced


def _computed_from_a_reduction(kernels: list) -> set:
    """The reductions among `kernels` (walk order, producers first) and the elementwise kernels
    reading one of this set along any loops: IREE fuses such a chain into a kernel that reads
    its end, and the read along a second loop then sees the reduction's other rows unwritten
    (`p[i, j] = a[i, j] / sum[k](a[i, k])` read as `p[i, j] + p[j, i]`)."""
    found: set = set()
    for op in kernels:
        if is_reduction(op) or is_elementwise(op) and any(
                source(value) in found for value in list(op.operands)[:input_count(op)]):
            found.add(op)
    return found
