"""Scalar values inside a recurrence step: one point of a clause, computed with plain scalar code.

Both lowering forms evaluate clause bodies here; they differ only in where the coordinates of a
clause's variables come from (scf.for induction variables, or linalg.index) and in the storage
tensors a `StateRead` sees. Program-level values were lowered before the loop and are captured
(a 0-d device tensor is read with tensor.extract). Reductions become scalar scf.for loops, since
a linalg op inside the step would be a kernel of its own.
"""
from __future__ import annotations

import itertools
from typing import Callable, Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, math, tensor

from einc.ir import affine
from einc.ir.nodes import IndexRef, IndexVar, Op, Read, Reduce, StateRead, Stack, Value
from einc.ir.types import Lin
from einc.mlir.core import scalar_ops
from einc.mlir.core.body_rules import BODY_RULES, operands_first
from einc.mlir.dense.kernels import reduce_combiner, reduce_identity
from einc.mlir.core.locations import location_of
from einc.mlir.core.loops import point_loops, var_bounds
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type, i32_type, index_type, is_tensor


class Storage:
    """The state at one step: the step variable `t_var`, its value `t` (an index) and
    member -> its current storage tensor. A form may also keep scalar states in registers:
    `recent` maps such a member to its values at t - 1, t - 2, .. and `current` to its value at
    t once written, so a step reads them without a round trip through memory (a small tensor
    state's value is a dict, point -> scalar). `units` maps a
    member whose tensor is kept without its axes of size 1 (recurrence_step.compact) to them.
    `steps` (lo, hi), Lin bounds, says t stays in lo <= t < hi (None: any step of the group).
    `last_rows` maps a member that ends before the loop to its last row (an index): the steps
    past its end keep that row, never an access past its storage, from which LLVM may infer
    that t stays below its end (and fold another member's guard `j <= t`). `known` maps the id
    of an IR value to its value, computed once before a clause's points (recurrence_step
    `with_step_values`), which every point's scope starts from."""

    def __init__(self, t_var: IndexVar, t: ir.Value, tensors: dict, recent: Optional[dict] = None,
                 current: Optional[dict] = None, units: Optional[dict] = None, steps: Optional[tuple] = None,
                 last_rows: Optional[dict] = None, known: Optional[dict] = None):
        self.known = known if known is not None else {}
        self.t_var = t_var
        self.steps = steps
        self.last_rows = last_rows if last_rows is not None else {}
        self.t = t
        self.tensors = tensors
        self.recent = recent if recent is not None else {}
        self.current = current if current is not None else {}
        self.units = units if units is not None else {}

    def with_tensor(self, member, value: ir.Value) -> "Storage":
        return Storage(self.t_var, self.t, {**self.tensors, member: value}, self.recent, self.current, self.units,
                       self.steps, self.last_rows, self.known)

    def at(self, member, indices: list[ir.Value]) -> list[ir.Value]:
        """The indices of a point (slot, axis 1, ..) of `member` in its storage tensor."""
        return without_axes(indices, self.units.get(member, ()))

    def slot(self, member, step: ir.Value) -> ir.Value:
        """The axis-0 position of `step` (an index) in `member`'s storage."""
        if member.window is not None:
            return arith.remui(step, index_const(member.window))
        if member in self.last_rows:
            return arith.minui(step, self.last_rows[member])
        return step


def load_element(source: ir.Value, indices: list[ir.Value], dtype) -> ir.Value:
    """The element of a member's storage at `indices`, as a value of `dtype`: a bool member kept
    in i8 storage (recurrence_region, IREE-80) reads back as an i1."""
    element = tensor.extract(source, indices)
    if dtype.is_bool and element.type != element_type(dtype):
        return arith.cmpi(arith.CmpIPredicate.ne, element, arith.constant(element.type, 0))
    return element


def store_element(scalar: ir.Value, dest: ir.Value, indices: list[ir.Value]) -> ir.Value:
    """`dest` with `scalar` at `indices`; an i1 stored into i8 storage is widened first (IREE-80)."""
    stored = ir.RankedTensorType(dest.type).element_type
    if scalar.type != stored:
        scalar = arith.extui(stored, scalar)
    return tensor.insert(scalar, dest, indices)


def without_axes(indices: list[ir.Value], axes: tuple) -> list[ir.Value]:
    return [index for k, index in enumerate(indices) if k not in axes]


class Scope:
    """Lowers body values at one point; `coords` maps each IndexVar in scope to its index value.
    A child scope (a reduction's loop body) sees its parent's values but keeps its own."""

    def __init__(self, lw, storage: Storage, coords: dict, ranges: dict, rules: dict,
                 parent: Optional["Scope"] = None):
        self.lw = lw
        self.storage = storage
        self.coords = coords
        self.ranges = ranges             # IndexVar -> a stand-in with the narrower range it has here
        self.rules = rules               # IR node type -> step rule(scope, node)
        self.memo: dict[int, ir.Value] = dict(parent.memo) if parent else {}

    def value(self, v: Value) -> ir.Value:
        if id(v) not in self.memo:
            operands_first(v, self.memo, lambda node: not self.lw.is_program_level(node), self._compute)
        return self.memo[id(v)]

    def _compute(self, v: Value) -> None:
        if self.lw.is_program_level(v):
            captured = self.lw.lower(v)
            self.memo[id(v)] = tensor.extract(captured, []) if is_tensor(captured) else captured
        else:
            with location_of(v):
                self.memo[id(v)] = self.rules[type(v)](self, v)

    def tensor(self, v: Value) -> ir.Value:
        """A whole tensor a Read reads: program-level, or a Stack of per-point scalars."""
        return self.lw.lower(v) if self.lw.is_program_level(v) else self.value(v)

    def child(self, coords: dict) -> "Scope":
        return Scope(self.lw, self.storage, {**self.coords, **coords}, self.ranges, self.rules, self)

    def index(self, sub: Value) -> ir.Value:
        """A subscript as an index. Affine ones are built from the coordinates directly: the
        round trip through i32 (sign extension) hides the address arithmetic from LLVM."""
        lin = affine.affine_of(sub)
        if lin is None or not all(k in self.coords or not isinstance(k, IndexVar) for k in lin.keys()):
            return arith.index_cast(index_type(), self.value(sub))
        sizes = Lin(lin.const, {k: c for k, c in lin.terms.items() if k not in self.coords})
        total = None if sizes == 0 else self.lw.sizes.index(sizes)
        for key, coeff in lin.terms.items():
            if key in self.coords:
                term = self.coords[key] if coeff == 1 else arith.muli(self.coords[key], index_const(coeff))
                total = term if total is None else arith.addi(total, term)
        return index_const(0) if total is None else total

    def in_range(self, sub: Value, size: Lin) -> bool:
        """Whether `sub` stays in [0, size) at every point of the ranges in scope."""
        lin = affine.affine_of(sub)
        if lin is None or any(getattr(k, "extent", 0) is None for k in lin.keys()):
            return False
        lo, hi = affine.bounds(lin.substitute({k: Lin.of(r) for k, r in self.ranges.items()}))
        return affine.surely_nonnegative(lo) and affine.surely_nonnegative(size - 1 - hi)

    def clamped(self, sub: Value, size: Lin) -> ir.Value:
        """`sub` as an index, clamped into [0, size - 1] unless proven there: points a guard
        discards (or a hull wider than the range) must still touch memory inside the tensor."""
        index = self.index(sub)
        if self.in_range(sub, size):
            return index
        return arith.minsi(arith.maxsi(index, index_const(0)), self.lw.sizes.index(size - 1))


# ------------------------------------------------------------------------------------ rules

def _index_ref(scope: Scope, ref: IndexRef) -> ir.Value:
    return arith.index_cast(i32_type(), scope.coords[ref.var])


def _op(scope: Scope, op: Op) -> ir.Value:
    return scalar_ops.apply(op, [scope.value(a) for a in op.args])


def _read(scope: Scope, read: Read) -> ir.Value:
    indices = [scope.index(s) if read.in_bounds else scope.clamped(s, size)
               for s, size in zip(read.subs, read.tensor.shape)]
    return load_element(scope.tensor(read.tensor), indices, read.tensor.dtype)


def _state_read(scope: Scope, read: StateRead) -> ir.Value:
    """The member's current storage at (slot of subs[0], subs[1:]): the front end only lets a
    step read earlier steps, so subs[0] is never ahead of t."""
    member = read.member
    held = _held(scope, read)
    if held is not None:
        return held
    step = scope.clamped(read.subs[0], member.shape[0])
    indices = [scope.storage.slot(member, step)]
    indices += [scope.clamped(s, size) for s, size in zip(read.subs[1:], member.shape[1:])]
    return load_element(scope.storage.tensors[member], scope.storage.at(member, indices), member.dtype)


def _held(scope: Scope, read: StateRead) -> Optional[ir.Value]:
    """The value read when its member is kept in registers and the step is t - c, else None."""
    storage = scope.storage
    recent = storage.recent.get(read.member)
    lin = affine.affine_of(read.subs[0])
    if recent is None or lin is None or lin.terms != {storage.t_var: 1} or lin.const > 0:
        return None
    back = -lin.const
    held = storage.current.get(read.member) if back == 0 else recent[back - 1] if back <= len(recent) else None
    return _held_point(scope, read, held) if isinstance(held, dict) else held


def _held_point(scope: Scope, read: StateRead, points: dict) -> Optional[ir.Value]:
    """The point a read picks from a small tensor state kept as point -> value (a form keeping
    one, recurrence_region): looked up where its subscripts are constants (a clause's points
    unrolled), else chosen by selects on its flat position; None (read it from storage) where
    the step has not computed every point yet."""
    sizes = [size.const for size in read.member.shape[1:]]
    indices = [scope.clamped(s, size) for s, size in zip(read.subs[1:], read.member.shape[1:])]
    constants = [_constant(index) for index in indices]
    if None not in constants:
        return points.get(tuple(constants))
    if len(points) < int(np.prod(sizes)):
        return None
    flat = None
    for index, size in zip(indices, sizes):
        flat = index if flat is None else arith.addi(arith.muli(flat, index_const(size)), index)
    ordered = [points[p] for p in sorted(points)]
    picked = ordered[-1]
    for k in range(len(ordered) - 2, -1, -1):
        picked = arith.select(arith.cmpi(arith.CmpIPredicate.eq, flat, index_const(k)), ordered[k], picked)
    return picked


def _constant(index: ir.Value) -> Optional[int]:
    """The value of an index built as a constant, else None."""
    owner = index.owner if isinstance(index, ir.OpResult) else None
    if owner is None or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


UNROLLED_POINTS = 16      # a reduction over at most this many points of constant ranges is unrolled


def scalar_reduce(scope: Scope, reduce: Reduce) -> ir.Value:
    """A scalar accumulation over the (hull) ranges, in order. Over at most UNROLLED_POINTS
    points of constant ranges it is unrolled at build time, in the same order: each point's
    reads then have constant subscripts (a small tensor state's point is its register,
    recurrence_region.small_points, not a select on its flat position), and no loop of two
    iterations sits on the step's dependent chain (the 2-state Kalman filter's sums over k)."""
    identity = reduce_identity(reduce)
    points = _constant_points(reduce.vars)
    if points is not None:
        for point in points:
            identity = accumulate(scope.child({v: index_const(c) for v, c in zip(reduce.vars, point)}), reduce, identity)
        return identity

    def step(ivs, carried):
        return [accumulate(scope.child(dict(zip(reduce.vars, ivs))), reduce, carried[0])]
    return point_loops(var_bounds(scope.lw, list(reduce.vars)), [identity], step)[0]


def _constant_points(vars_) -> Optional[list]:
    """Every point of `vars_` in lexicographic order, where their ranges are constant and hold
    at most UNROLLED_POINTS points; else None."""
    if not all(v.lo.is_const and v.extent.is_const for v in vars_) or \
            int(np.prod([max(v.extent.const, 0) for v in vars_])) > UNROLLED_POINTS:
        return None
    return list(itertools.product(*(range(v.lo.const, v.lo.const + v.extent.const) for v in vars_)))


def accumulate(inner: Scope, reduce: Reduce, acc: ir.Value) -> ir.Value:
    """`acc` combined with the reduction's body at the point of `inner`; guarded points add
    the identity."""
    value = inner.value(reduce.body)
    if reduce.guard is not None:
        value = arith.select(inner.value(reduce.guard), value, reduce_identity(reduce))
    return step_accumulator(inner.lw, reduce)(value, acc)


def step_accumulator(lw, reduce: Reduce) -> Callable:
    """How a step's loop adds a value to a reduction's accumulator. A float sum adds a product
    with one rounding (`math.fma(a, b, acc)`), as IREE's matmul and matvec kernels do: the
    order of a sum's terms is already not the program's (lanes, unrolled accumulators), and a
    recurrence's matrix-vector step takes 20-25% more CPU time with the product rounded first. Products
    outside sums keep their own rounding (docs/DECISIONS.md). Only on targets that fuse step sums
    (`fuses_step_sums`: the CPU, where products are otherwise rounded on their own, einc.mlir.core.rounding)."""
    combine = reduce_combiner(reduce)
    if reduce.kind != "sum" or not reduce.dtype.is_float or not lw.target.fuses_step_sums:
        return combine

    def add(value: ir.Value, acc: ir.Value) -> ir.Value:
        producer = value.owner if isinstance(value, ir.OpResult) else None
        if producer is not None and producer.name == "arith.mulf":
            return math.fma(*producer.operands, acc)     # the product, now unused, is dropped as dead code
        return combine(value, acc)
    return add


# the step rules in scalar code; recurrence_lanes builds the table the forms use from it, with a
# `Reduce` rule that uses vector lanes where it can
SCALAR_STEP_RULES: dict[type, Callable] = {
    IndexRef: _index_ref,
    Op: _op,
    Read: _read,
    Reduce: scalar_reduce,
    StateRead: _state_read,
    Stack: BODY_RULES[Stack],
}
