"""In-region rules: the scalar value of a body node at the current point of a kernel's domain.

Program-level scalars used by a body are computed once at function level and captured; device
values and affine reads arrive as block arguments (planned in kernels.py). What is left is
computed per point: coordinates, scalar ops, and reads through `tensor.extract`.
"""
from __future__ import annotations

import itertools
from typing import Callable

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc import diagnostics
from einc.ir.nodes import IndexRef, IndexVar, Op, Read, Stack, Value
from einc.ir.traversal import run_in_order
from einc.mlir.core import scalar_ops
from einc.mlir.core.f64_math import constant
from einc.mlir.core.locations import location_of
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import i32_type, index_type, tensor_type


class Region:
    """Lowers body values inside one kernel's region, each once."""

    def __init__(self, lw, domain, bound: dict, inline: frozenset, aliases: dict):
        self.lw = lw
        self.domain = domain
        self.memo: dict[int, ir.Value] = dict(bound)
        self.inline = inline
        self.aliases = aliases          # id(node) -> the node computed in its place
        self.coordinates: dict = {}     # IndexVar -> its i32 coordinate, shared by all IndexRefs

    def value(self, v: Value) -> ir.Value:
        if id(v) not in self.memo:
            operands_first(v, self.memo, self._by_rule, self._compute)
        return self.memo[id(v)]

    def _by_rule(self, v: Value) -> bool:
        """Whether `v` is computed in this region by its rule (not in place of another node, not
        at function level)."""
        return id(v) not in self.aliases and (id(v) in self.inline or not self.lw.is_program_level(v))

    def _compute(self, v: Value) -> None:
        if id(v) in self.aliases:
            self.memo[id(v)] = self.value(self.aliases[id(v)])
        elif not self._by_rule(v):
            self.memo[id(v)] = self.lw.lower(v)
        else:
            with location_of(v):
                self.memo[id(v)] = BODY_RULES[type(v)](self, v)

    def take_coordinates(self) -> None:
        """The coordinate of every domain variable, computed here: linalg.index must sit in the
        kernel's own block, not in loops inside it (see inside_loops)."""
        for var in self.domain.vars:
            if var not in self.coordinates:
                self.coordinates[var] = _coordinate(self, var)

    def inside_loops(self, coordinates: dict) -> "Region":
        """This region inside scalar loops over variables outside the domain: `coordinates` maps
        each to its index value. It sees the values computed so far (take_coordinates first);
        what it computes stays inside the loops."""
        inner = Region(self.lw, self.domain, dict(self.memo), self.inline, self.aliases)
        inner.coordinates = {**self.coordinates,
                             **{v: arith.index_cast(i32_type(), c) for v, c in coordinates.items()}}
        return inner

    def tensor(self, v: Value) -> ir.Value:
        """The whole tensor a body reads from: program-level, or built in this region (Stack)."""
        return self.lw.lower(v) if self.lw.is_program_level(v) else self.value(v)


def operands_first(v: Value, memo: dict, by_rule: Callable, compute: Callable) -> None:
    """compute(v), which sets memo[id(v)], after the operands of every scalar operation that
    `by_rule` says is computed here by its rule, in the order that rule asks for them: a sum of
    thousands of terms is a chain of operations that deep, so they are tasks, not a recursion."""
    def visit(node: Value) -> list:
        if id(node) in memo:
            return []
        if isinstance(node, Op) and by_rule(node):
            return list(node.args) + [lambda: compute(node)]
        compute(node)
        return []
    run_in_order([v], visit)


def _index_ref(region: Region, ref: IndexRef) -> ir.Value:
    if ref.var not in region.coordinates:
        region.coordinates[ref.var] = _coordinate(region, ref.var)
    return region.coordinates[ref.var]


def _coordinate(region: Region, var: IndexVar) -> ir.Value:
    pos = region.domain.pos(var)
    if pos is None and var in region.lw.loop_coordinates:
        return arith.index_cast(i32_type(), region.lw.loop_coordinates[var])   # a step's own index
    if pos is None:
        raise ValueError(f"index variable {var!r} is not iterated by the enclosing kernel")
    coord = linalg.IndexOp(pos).result   # linalg.index is the OpDSL helper, not the op
    if var.lo != 0:
        coord = arith.addi(coord, region.lw.sizes.index(var.lo))
    return arith.index_cast(i32_type(), coord)


def _op(region: Region, op: Op) -> ir.Value:
    return scalar_ops.apply(op, [region.value(a) for a in op.args])


def _read(region: Region, read: Read) -> ir.Value:
    """A gather: each subscript is clamped into [0, size - 1], so reads that a guard discards
    (zero padding, a hull larger than the range) still touch memory inside the tensor."""
    if isinstance(read.tensor, Stack) and region.lw.target.has_defect("IREE-89"):
        return _stack_element(region, read.tensor, [region.value(s) for s in read.subs])
    return _gather(region, read.tensor, [region.value(s) for s in read.subs])


def _gather(region: Region, v: Value, at: list) -> ir.Value:
    """The element of tensor `v` at the i32 subscripts `at`, each clamped into its axis."""
    indices = []
    for axis, sub in enumerate(at):
        if region.lw.target.has_defect("IREE-272"):     # an index-typed clamp, vectorized, is not lowered
            last = region.lw.sizes.i32(v.shape[axis] - 1)
            clamped = arith.minsi(arith.maxsi(sub, arith.constant(sub.type, 0)), last)
            indices.append(arith.index_cast(index_type(), clamped))
            continue
        index = arith.index_cast(index_type(), sub)
        last = region.lw.sizes.index(v.shape[axis] - 1)
        indices.append(arith.minsi(arith.maxsi(index, index_const(0)), last))
    return tensor.extract(region.tensor(v), indices)


def _stack(region: Region, stack: Stack) -> ir.Value:
    """A small literal array of per-point values, built in the region to be read by subscript;
    a literal of literals (a matrix `[[a, b], [c, d]]`) row by row."""
    return tensor.from_elements(tensor_type(stack.dtype, stack.shape), _scalars(region, stack))


def _scalars(region: Region, v: Value) -> list:
    """The scalars of `v` in row-major order: a literal's elements, or each point of a row that
    is a whole tensor (a row of constants is one) of a size known at build time."""
    if not v.rank:
        return [region.value(v)]
    if isinstance(v, Stack):
        return [x for e in v.elems for x in _scalars(region, e)]
    if not all(n.is_const for n in v.shape):
        raise diagnostics.error(diagnostics.UNSUPPORTED, "an array literal with a row of a run-time size "
                                "inside an indexed definition is not supported", v.span)
    source = region.tensor(v)
    return [tensor.extract(source, [index_const(k) for k in point])
            for point in itertools.product(*(range(n.const) for n in v.shape))]


def _stack_element(region: Region, stack: Value, at: list) -> ir.Value:
    """IREE-89: an element of a literal of per-point values chosen by selects on each (clamped)
    subscript in turn, not extracted from its `tensor.from_elements` (a row that is a whole
    tensor is read as any tensor)."""
    if not at:
        return region.value(stack)
    if not isinstance(stack, Stack):
        return _gather(region, stack, at)
    elems = [_stack_element(region, e, at[1:]) for e in stack.elems]
    value = elems[-1]
    for k in range(len(elems) - 2, -1, -1):
        value = arith.select(arith.cmpi(arith.CmpIPredicate.sle, at[0], constant(k, at[0])), elems[k], value)
    return value


BODY_RULES: dict[type, Callable] = {
    IndexRef: _index_ref,
    Op: _op,
    Read: _read,
    Stack: _stack,
}
