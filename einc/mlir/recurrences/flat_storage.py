"""Recurrence storage that a host-level loop carries: one-dimensional, with a stated bound on its
length (recurrence_host, recurrence_workgroup, recurrence_tensor_steps).

IREE-11: IREE carries the tensors of a host loop in one allocation and folds the offset of
each after the first to 0 when its size is unbounded. A size known to be small keeps the
offsets right, and only a one-dimensional tensor's size is bounded by one value, so the loop
carries each storage as `length` elements, stated to be at most MAX_ELEMENTS
(util.assume.int), and indexes it row-major.
"""
from __future__ import annotations

from typing import Optional, Union

from iree.compiler import ir
from iree.compiler.dialects import arith, flow, tensor, util

from einc.mlir.recurrences.scalars import Storage
from einc.mlir.core.shapes import index_const

# No buffer holds 2^48 elements; 2^48 times the widest element (8 bytes) plus alignment stays
# far from the top of the index type, so sums of such sizes cannot wrap in the analysis either.
MAX_ELEMENTS = 2 ** 48
DYNAMIC = ir.ShapedType.get_dynamic_size()

Size = Union[int, ir.Value]


def product(sizes: list[Size]) -> Size:
    """The product of `sizes`: an int when every one is."""
    total: Size = 1
    for size in sizes:
        if isinstance(total, int) and isinstance(size, int):
            total *= size
        else:
            total = arith.muli(as_index(total), as_index(size))
    return total


def length(sizes: list[Size]) -> Size:
    """The number of elements of a tensor of `sizes`, as the loop states it."""
    total = product(sizes)
    if isinstance(total, int):
        return total
    bound = ir.Attribute.parse(f"[#util.int.assumption<umin = 0, umax = {MAX_ELEMENTS}>]")
    return util.assume_int([total.type], [total], ir.ArrayAttr.get([bound]))


def flat_empty(count: Size, element: ir.Type) -> ir.Value:
    return tensor.empty([count], element)


def tied(value: ir.Value, count: Size) -> ir.Value:
    """`value` with its length stated: IREE cannot resolve the sizes of loop-carried tensors
    on the host ("tensor.dim op unexpected during shape cleanup")."""
    return value if isinstance(count, int) else flow.tensor_tie_shape(value, [count])


def unflattened(value: ir.Value, sizes: list[Size]) -> ir.Value:
    """The one-dimensional `value` as a tensor of `sizes` (a view)."""
    element = ir.RankedTensorType(value.type).element_type
    static = [size if isinstance(size, int) else DYNAMIC for size in sizes]
    result = ir.RankedTensorType.get(static, element)
    if len(sizes) == 1:
        return value if value.type == result else tensor.cast(result, value)
    if not sizes:
        return tensor.collapse_shape(result, value, [])
    return tensor.expand_shape(result, value, [list(range(len(sizes)))],
                               [size for size in sizes if not isinstance(size, int)], static)


def block(lw, value: ir.Value, vars_: list) -> ir.Value:
    """The block of `value` that `vars_` run over along its axes (each from its `lo`, `extent`
    long; a view)."""
    def const(lin):
        return lin.const if lin.is_const else DYNAMIC
    los, extents = [v.lo for v in vars_], [v.extent for v in vars_]
    static = [const(n) for n in extents]
    result = ir.RankedTensorType.get(static, ir.RankedTensorType(value.type).element_type)
    return tensor.extract_slice(result, value, [lw.sizes.index(lo) for lo in los if not lo.is_const],
                                [lw.sizes.index(n) for n in extents if not n.is_const], [],
                                [const(lo) for lo in los], static, [1] * len(vars_))


def row_major(indices: list[ir.Value], sizes: list[Size]) -> ir.Value:
    """The position of the point `indices` in a row-major tensor of `sizes`."""
    position = indices[0]
    for index, size in zip(indices[1:], sizes[1:]):
        position = arith.addi(arith.muli(position, as_index(size)), index)
    return position


def row_major_coordinates(position: ir.Value, sizes: list[Size]) -> list[ir.Value]:
    """The point at `position` of a row-major tensor of `sizes` (the inverse of row_major)."""
    coords = []
    for size in reversed(sizes[1:]):
        coords.append(arith.remui(position, as_index(size)))
        position = arith.divui(position, as_index(size))
    return [position] + coords[::-1] if sizes else []


def as_index(size: Size) -> ir.Value:
    return index_const(size) if isinstance(size, int) else size


class FlatStorage(Storage):
    """Storage whose tensors are one-dimensional: `shapes` maps each member to the sizes its
    points are laid out in row-major (slots, then the member's other axes)."""

    def __init__(self, t_var, t: ir.Value, tensors: dict, shapes: dict, recent: Optional[dict] = None,
                 current: Optional[dict] = None):
        super().__init__(t_var, t, tensors, recent, current)
        self.shapes = shapes

    def with_tensor(self, member, value: ir.Value) -> "FlatStorage":
        return FlatStorage(self.t_var, self.t, {**self.tensors, member: value}, self.shapes, self.recent,
                           self.current)

    def at(self, member, indices: list[ir.Value]) -> list[ir.Value]:
        return [row_major(indices, self.shapes[member])]

    def row_elements(self, member) -> Size:
        """The number of elements one slot of `member` holds."""
        return product(self.shapes[member][1:])
