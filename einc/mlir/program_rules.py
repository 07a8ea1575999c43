"""Program-level rules: one per IR node kind, each returning the node's function-level value.

Scalars that depend only on inputs, constants and sizes are computed on the host with arith/math.
Anything that depends on tensor data stays on the device as a tensor (0-d for a scalar), so the
program never waits on a device-to-host read except for an assert's condition.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.ir.nodes import (Compact, Const, Generic, Input, Op, Piecewise, Read, RecValue, Reduce, Size,
                           Stack, Value)
from einc.ir.types import BOOL, I8, Lin
from einc.mlir.core import host_floats, scalar_ops
from einc.mlir.compaction import compact_value
from einc.mlir.core.dispatch_captures import written_shifted
from einc.mlir.dense import attention, row_gathers
from einc.mlir.dense.kernels import generic_tensor, reduction_tensor
from einc.mlir.recurrences.forms import rec_value
from einc.mlir.core.shapes import converted
from einc.mlir.core.types import element_type, is_tensor, tensor_type
from einc.mlir.write_order import write_order

DYNAMIC = ir.ShapedType.get_dynamic_size()


def _input(lw, v: Input) -> ir.Value:
    return lw.arg(v)


def _const(lw, v: Const) -> ir.Value:
    if v.array.ndim == 0:
        return scalar_ops.constant(v.dtype, v.array.item())
    if lw.weights.takes(v):
        return lw.weights.load(v)
    if v.dtype.is_bool and lw.target.has_defect("IREE-274"):
        return _bytes_as_bools(v)
    t = tensor_type(v.dtype, v.shape)
    return arith.constant(t, ir.DenseElementsAttr.get(v.array, type=t.element_type))


def _bytes_as_bools(v: Const) -> ir.Value:
    """A bool constant as an i8 constant compared with 0 by an elementwise op. IREE-274: a
    kernel reading an i1 constant of some hundreds of elements never finishes on vulkan-spirv."""
    stored = arith.constant(tensor_type(I8, v.shape), ir.DenseElementsAttr.get(v.array.astype(np.int8)))
    return converted(stored, I8, BOOL)


def _size(lw, v: Size) -> ir.Value:
    return lw.sizes.i32(v.lin)


def _op(lw, v: Op) -> ir.Value:
    args = [lw.lower(a) for a in v.args]
    if any(is_tensor(a) for a in args) or not scalar_ops.runs_on_host(v):
        return _device_scalar(lw, v)
    if lw.target.has_defect("IREE-102"):
        return host_floats.apply(v, args)
    return scalar_ops.apply(v, args)


def _read(lw, v: Read) -> ir.Value:
    return _device_scalar(lw, v)


def _device_scalar(lw, v: Value) -> ir.Value:
    """Scalar work on tensor data: a 0-d kernel whose body is `v` itself."""
    kernel = lw.keep(Generic((), v, span=v.span))
    return generic_tensor(lw, kernel, inline=frozenset([id(v)]))


def _reduce(lw, v: Reduce) -> ir.Value:
    return reduction_tensor(lw, v, [])[0]


def _generic(lw, v: Generic) -> ir.Value:
    if (fused := lw.fused_form(v)) is not None:
        return attention.emitted(lw, fused, v)
    if (gathered := row_gathers.emitted(lw, v)) is not None:
        return gathered
    if _is_whole_reduction(lw, v):
        # the reduction's own kernel (or named op) already has this shape: no copy around it
        return reduction_tensor(lw, v.body, list(v.vars))[0]
    return generic_tensor(lw, v)


def _is_whole_reduction(lw, v: Generic) -> bool:
    return (isinstance(v.body, Reduce) and v.guard is None and id(v.body) not in lw.reductions
            and all(var.lo == 0 for var in v.vars) and lw.free_vars(v.body) == frozenset(v.vars))


def _piecewise(lw, v: Piecewise) -> ir.Value:
    """Zeros, then each clause written over it in order, so later clauses win (clauses that do
    not overlap in ascending order, see write_order)."""
    zero = scalar_ops.constant(v.dtype, 0)
    out = linalg.fill(zero, outs=[lw.sizes.empty(v.shape, element_type(v.dtype))])
    for clause in write_order(v.clauses, v.shape):
        out = _write(lw, lw.lower(clause.value), clause.value.shape, out, list(clause.offsets))
    return out


def _stack(lw, v: Stack) -> ir.Value:
    elems = [lw.lower(e) for e in v.elems]
    # IREE-17: tensor.from_elements of i1 is mis-converted (see Sizes.scalar_tensor)
    if not v.dtype.is_bool and not any(is_tensor(e) for e in elems):
        return tensor.from_elements(tensor_type(v.dtype, v.shape), elems)
    out = lw.sizes.empty(v.shape, element_type(v.dtype))
    for k, (node, elem) in enumerate(zip(v.elems, elems)):
        offsets = [Lin(k)] + [Lin(0)] * node.rank
        out = _write(lw, elem, (Lin(1),) + tuple(node.shape), out, offsets)
    return out


def _write(lw, value: ir.Value, shape: tuple, dest: ir.Value, offsets: list[Lin]) -> ir.Value:
    """`value` (a host scalar, or a tensor of `shape`, padded with unit axes on the left to the
    rank of `dest`) stored into `dest` at `offsets`."""
    if not is_tensor(value):
        return tensor.insert(value, dest, [lw.sizes.index(o) for o in offsets])
    if not (offsets[-1].is_const and offsets[-1].const == 0):
        value = written_shifted(lw.target, value)
    sizes = [Lin(1)] * (len(offsets) - len(shape)) + list(shape)
    dyn_offsets, static_offsets = _mixed(lw, offsets)
    dyn_sizes, static_sizes = _mixed(lw, sizes)
    ones = [1] * len(offsets)
    return tensor.insert_slice(value, dest, dyn_offsets, dyn_sizes, [], static_offsets, static_sizes, ones)


def _mixed(lw, lins: list[Lin]) -> tuple[list[ir.Value], list[int]]:
    """Static/dynamic split of offsets or sizes, as tensor.insert_slice takes them."""
    dynamic = [lw.sizes.index(x) for x in lins if not x.is_const]
    static = [x.const if x.is_const else DYNAMIC for x in lins]
    return dynamic, static


RULES: dict[type, Callable] = {
    Input: _input,
    Const: _const,
    Size: _size,
    Op: _op,
    Read: _read,
    Reduce: _reduce,
    Generic: _generic,
    Piecewise: _piecewise,
    Stack: _stack,
    RecValue: rec_value,
    Compact: compact_value,
}
