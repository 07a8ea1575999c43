"""A reduction inside a recurrence step, evaluated on vectors of consecutive points (llvm-cpu).

A scalar accumulation is one long dependency chain (a float add every ~4 cycles): an RNN's
`sum[j](W[i, j] * h[t - 1, j])` then runs far below the machine's speed. IREE's llvm-cpu pipeline
neither vectorises such hand-written loops nor keeps `reassoc` flags, so the vectors are written
here: the innermost reduction variable advances `width` points at a time, its reads become
`vector.transfer_read`s of consecutive elements, and `width` partial results are combined at the
end; the points left over run as the scalar loop. A float sum is then added in a different order
than a sequential loop (as in any vectorised or parallel reduction); integer, min and max results
are unchanged. Bodies with anything not listed below keep the scalar loop.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, scf, vector

from einc.ir import affine
from einc.ir.nodes import IndexRef, IndexVar, Op, Read, Reduce, StateRead, Value
from einc.mlir import scalar_ops
from einc.mlir.kernels import COMBINERS, IDENTITIES
from einc.mlir.recurrence_scalars import Scope, point_loops, var_bounds
from einc.mlir.shapes import index_const
from einc.mlir.types import element_type, i32_type

VECTOR_BYTES = 32             # one AVX2 register; LLVM splits or widens for other CPUs
UNROLL = 4                    # independent accumulators, so adds overlap instead of waiting in line
LANE_TARGETS = ("llvm-cpu", "llvm-cpu-generic")
KINDS = {"sum": vector.CombiningKind.ADD, "prod": vector.CombiningKind.MUL,
         "max": (vector.CombiningKind.MAXIMUMF, vector.CombiningKind.MAXSI),
         "min": (vector.CombiningKind.MINIMUMF, vector.CombiningKind.MINSI)}
# Ops whose scalar rule (scalar_ops) builds the same op on vectors: no scalar constants inside
ELEMENTWISE = ("add", "sub", "mul", "div", "rem", "min", "max", "select", "and", "or",
               "eq", "ne", "lt", "le", "gt", "ge")
FLOAT_ONLY = ("neg", "abs", "sqrt", "exp", "log", "sin", "cos", "tanh", "floor", "ceil")

# accumulate(scope at one point of the reduction variables, accumulator) -> with that point added
Accumulate = Callable[[Scope, ir.Value], ir.Value]


def lane_width(reduce: Reduce) -> int:
    return VECTOR_BYTES // np.dtype(reduce.dtype.numpy).itemsize


def vector_reduce(scope: Scope, reduce: Reduce, accumulate: Accumulate) -> Optional[ir.Value]:
    """The reduction with its innermost variable in vector lanes, or None where that does not
    apply (another target, too short a range, a body with an op that has no vector form)."""
    lane, width = reduce.vars[-1], lane_width(reduce)
    if (scope.lw.target not in LANE_TARGETS or reduce.kind not in KINDS or reduce.dtype.is_bool
            or (lane.extent.is_const and lane.extent.const < width)
            or not all(_vectorisable(scope, v, lane) for v in (reduce.body, reduce.guard) if v is not None)):
        return None
    vtype = ir.VectorType.get([width], element_type(reduce.dtype))
    identity = scalar_ops.constant(reduce.dtype, IDENTITIES[reduce.kind](reduce.dtype))
    combine = _combiner(reduce)
    (lo, hi), = var_bounds(scope.lw, [lane])
    block_end, vector_end = (_round_down(lo, hi, width * UNROLL), _round_down(lo, hi, width))

    def outer_point(ivs, carried):
        coords = dict(zip(reduce.vars[:-1], ivs))

        def add_chunk(base: ir.Value, acc: ir.Value) -> ir.Value:
            lanes = Lanes(scope.child({**coords, lane: base}), lane, width)
            value = lanes.value(reduce.body)
            if reduce.guard is not None:
                value = arith.select(lanes.value(reduce.guard), value, vector.broadcast(vtype, identity))
            return combine(value, acc)

        def add_block(base: ir.Value, accs: list) -> list:
            return [add_chunk(arith.addi(base, index_const(k * width)), a) for k, a in enumerate(accs)]
        accs = _loop(lo, block_end, width * UNROLL, [carried[0]] * UNROLL, add_block)
        while len(accs) > 1:
            accs = [combine(accs[k], accs[k + 1]) for k in range(0, len(accs), 2)]
        partial = _loop(block_end, vector_end, width, accs, lambda base, acc: [add_chunk(base, acc[0])])
        rest = _loop(vector_end, hi, 1, [carried[1]],
                     lambda j, acc: [accumulate(scope.child({**coords, lane: j}), acc[0])])
        return partial + rest
    partial, leftover = point_loops(var_bounds(scope.lw, list(reduce.vars[:-1])),
                                    [vector.broadcast(vtype, identity), identity], outer_point)
    return combine(vector.reduction(element_type(reduce.dtype), _kind(reduce), partial), leftover)


def _round_down(lo: ir.Value, hi: ir.Value, multiple: int) -> ir.Value:
    """The end of the whole multiples of `multiple` points from `lo` towards `hi`."""
    count = arith.divui(arith.subi(hi, lo), index_const(multiple))
    return arith.addi(lo, arith.muli(count, index_const(multiple)))


def _loop(lo: ir.Value, hi: ir.Value, step: int, carried: list,
          body: Callable[[ir.Value, list], list]) -> list:
    loop = scf.ForOp(lo, hi, index_const(step), carried)
    with ir.InsertionPoint(loop.body):
        scf.yield_(body(loop.induction_variable, list(loop.inner_iter_args)))
    return list(loop.results)


def _combiner(reduce: Reduce) -> Callable:
    float_name, int_name = COMBINERS[reduce.kind]
    return getattr(arith, float_name if reduce.dtype.is_float else int_name)


def _kind(reduce: Reduce):
    kind = KINDS[reduce.kind]
    return kind if not isinstance(kind, tuple) else kind[0 if reduce.dtype.is_float else 1]


class Lanes:
    """Values of a reduction body at `width` consecutive coordinates of `lane`, starting at the
    coordinate `scalar` gives it; values that do not vary with `lane` are scalars broadcast."""

    def __init__(self, scalar: Scope, lane: IndexVar, width: int):
        self.scalar = scalar
        self.lane = lane
        self.width = width
        self.memo: dict[int, ir.Value] = {}

    def value(self, v: Value) -> ir.Value:
        if id(v) not in self.memo:
            if not _varies(self.scalar, v, self.lane):
                scalar = self.scalar.value(v)
                self.memo[id(v)] = vector.broadcast(ir.VectorType.get([self.width], scalar.type), scalar)
            else:
                self.memo[id(v)] = LANE_RULES[type(v)](self, v)
        return self.memo[id(v)]

    def consecutive(self, source: ir.Value, indices: list[ir.Value], dtype) -> ir.Value:
        """`width` elements of `source` from `indices` along its last axis."""
        rank = len(indices)
        return vector.transfer_read(ir.VectorType.get([self.width], element_type(dtype)), source, indices,
                                    ir.AffineMap.get_minor_identity(rank, 1),
                                    scalar_ops.constant(dtype, 0), [True])


def _lane_index(lanes: Lanes, ref: IndexRef) -> ir.Value:
    start = arith.index_cast(i32_type(), lanes.scalar.coords[ref.var])
    vtype = ir.VectorType.get([lanes.width], i32_type())
    offsets = arith.constant(vtype, ir.DenseElementsAttr.get(np.arange(lanes.width, dtype=np.int32), type=vtype))
    return arith.addi(vector.broadcast(vtype, start), offsets)


def _lane_op(lanes: Lanes, op: Op) -> ir.Value:
    return scalar_ops.apply(op, [lanes.value(a) for a in op.args])


def _lane_read(lanes: Lanes, read: Read) -> ir.Value:
    scope = lanes.scalar
    indices = [scope.index(s) if read.in_bounds else scope.clamped(s, size)
               for s, size in zip(read.subs[:-1], read.tensor.shape[:-1])]
    return lanes.consecutive(scope.tensor(read.tensor), indices + [scope.index(read.subs[-1])], read.dtype)


def _lane_state_read(lanes: Lanes, read: StateRead) -> ir.Value:
    scope, member = lanes.scalar, read.member
    indices = [scope.storage.slot(member, scope.clamped(read.subs[0], member.shape[0]))]
    indices += [scope.clamped(s, size) for s, size in zip(read.subs[1:-1], member.shape[1:-1])]
    return lanes.consecutive(scope.storage.tensors[member], indices + [scope.index(read.subs[-1])], read.dtype)


LANE_RULES: dict[type, Callable] = {
    IndexRef: _lane_index,
    Op: _lane_op,
    Read: _lane_read,
    StateRead: _lane_state_read,
}


# ------------------------------------------------------------------------------ which bodies

def _varies(scope: Scope, v: Value, lane: IndexVar) -> bool:
    """Whether `v` depends on the coordinate of `lane`."""
    if isinstance(v, IndexRef):
        return v.var is lane
    if scope.lw.is_program_level(v):
        return False
    return any(_varies(scope, o, lane) for o in v.operands())


def _vectorisable(scope: Scope, v: Value, lane: IndexVar) -> bool:
    if not _varies(scope, v, lane):
        return True
    if isinstance(v, IndexRef):
        return True
    if isinstance(v, Op):
        return _has_vector_form(v) and all(_vectorisable(scope, a, lane) for a in v.args)
    if isinstance(v, Read):
        return scope.lw.is_program_level(v.tensor) and _along_last_axis(scope, v.subs, v.tensor.shape, lane)
    if isinstance(v, StateRead):
        return len(v.subs) > 1 and _along_last_axis(scope, v.subs, v.member.shape, lane)
    return False


def _has_vector_form(op: Op) -> bool:
    operand = op.args[0].dtype
    if op.op in ELEMENTWISE:
        return op.op not in ("div", "rem", "min", "max") or operand.is_float or operand.name == "i32"
    return op.op in FLOAT_ONLY and operand.name == "f32"


def _along_last_axis(scope: Scope, subs: tuple, shape: tuple, lane: IndexVar) -> bool:
    """Whether only the last subscript moves with `lane`, one element per lane, and it provably
    stays inside the axis (so a whole vector can be read without clamping)."""
    if any(_varies(scope, s, lane) for s in subs[:-1]):
        return False
    last = affine.affine_of(subs[-1])
    return last is not None and last.terms.get(lane) == 1 and scope.in_range(subs[-1], shape[-1])
