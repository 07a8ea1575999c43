"""Rows of a tensor at data-dependent positions (`y[i, d] = E[tokens[i], d]`, an embedding
lookup) as IREE's `iree_linalg_ext.gather`.

Written as a generic, the read is a `tensor.extract` whose first subscript comes from data, and
IREE's CPU code reads it one element at a time (each element's address computed, masked,
inserted into a vector). The gather op copies each row with whole vector loads and stores. Its
indices are a small kernel of their own over the leading variables: the data-dependent
subscript clamped into the axis, as every gathered read is (body_rules), so a position outside
it reads memory inside the tensor while the run's index check reports it.

A definition matches when its body is one read of a program-level tensor whose first subscript
varies only with the definition's leading variables and whose other subscripts are its trailing
variables in order, each from 0 over the whole axis.

IREE-150: a kernel reading the gathered rows at a fixed column (`g[i, 0] + j`, an indexing map
with a constant) or at computed positions (`tensor.extract` in its body) is fused with the
gather into one dispatch whose tiling fails on the CPU targets; the rows pass a barrier
(`fence`) before such a kernel (`fence_gathered_rows`).
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith

from einc.ir.nodes import Generic, IndexRef, Read
from einc.ir.types import BOOL, I32
from einc.mlir.core.dispatch_captures import fence
from einc.mlir.core.types import element_type
from einc.mlir.dense.kernels import Domain, build_kernel
from einc.target import Target


def emitted(lw, g: Generic) -> Optional[ir.Value]:
    """`g` as a gather of rows, or None where it is not one or the target has no such op."""
    if not lw.target.row_gathers or not _is_row_gather(lw, g):
        return None
    read = g.body
    leading = list(g.vars[:len(g.vars) - (read.tensor.rank - 1)])
    positions = _positions(lw, leading, read)
    init = lw.sizes.empty(g.shape, element_type(g.dtype))
    source = lw.lower(read.tensor)
    op = ir.Operation.create(
        "iree_linalg_ext.gather", results=[init.type], operands=[source, positions, init],
        attributes={"dimension_map": ir.DenseI64ArrayAttr.get([0]),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([2, 1])})
    return op.result


def _is_row_gather(lw, g: Generic) -> bool:
    read = g.body
    if g.guard is not None or not isinstance(read, Read) or read.in_bounds or read.dtype == BOOL:
        return False
    if not lw.is_program_level(read.tensor) or not 2 <= read.tensor.rank <= len(g.vars):
        return False
    row = len(g.vars) - (read.tensor.rank - 1)
    first, *rest = read.subs
    trailing = g.vars[row:]
    whole_axes = all(isinstance(s, IndexRef) and s.var is v and v.lo == 0 and v.extent == size
                     for s, v, size in zip(rest, trailing, read.tensor.shape[1:]))
    return whole_axes and first.dtype == I32 and not lw.free_vars(first) & frozenset(trailing)


def _positions(lw, leading: list, read: Read) -> ir.Value:
    """The clamped first subscript at every point of the leading variables: the rows to copy."""
    domain = Domain(leading, len(leading))
    init = lw.sizes.empty(tuple(v.extent for v in leading), ir.IntegerType.get_signless(32))
    last = read.tensor.shape[0] - 1

    def clamp(value, _guard, _out):
        zero = arith.constant(value.type, 0)
        return arith.minsi(arith.maxsi(value, zero), lw.sizes.i32(last))
    return build_kernel(lw, domain, read.subs[0], None, init, ir.AffineMap.get_identity(len(leading)), clamp)


def fence_gathered_rows(target: Target, module: ir.Module) -> None:
    """Put a barrier between each gather of rows and the kernels IREE-150 cannot fuse with it."""
    readers: list = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "iree_linalg_ext.gather":
            result = op.results[0]
            for use in result.uses:
                kernel = _kernel_reading_apart(use.owner, use.operand_number)
                if kernel is not None:
                    readers.append((result, kernel, use.owner, use.operand_number))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    fenced: dict = {}
    for rows, kernel, reader, number in readers:
        key = (rows, kernel)
        if key not in fenced:
            with ir.InsertionPoint(kernel):
                fenced[key] = fence(target, rows)
        reader.operands[number] = fenced[key]


def _kernel_reading_apart(user, number: int):
    """The kernel of `user` (an operand `number` of it is the gathered rows) where it reads them
    other than point by point along its loops: through a map with a constant, or by
    `tensor.extract` inside its body; else None."""
    op = user.operation
    if op.name == "linalg.generic" and number < len(op.attributes["indexing_maps"]):
        return None if op.attributes["indexing_maps"][number].value.is_projected_permutation else op
    parent = op.parent
    if op.name == "tensor.extract" and parent is not None and parent.name == "linalg.generic":
        return parent
    return None
