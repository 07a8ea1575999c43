"""Recurrence step work in vector lanes (llvm-cpu): consecutive points computed as one vector.

A scalar accumulation is one long dependency chain (a float add every ~4 cycles), and scalar
math runs one point at a time: an RNN step `tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i])` then
runs far below the machine's speed. IREE's llvm-cpu pipeline neither vectorises hand-written
loops nor keeps `reassoc` flags, so vectors are written here, at two levels:
- a clause's last variable: `width` points of the clause at once, read with
  `vector.transfer_read` along the last axis and stored with one `vector.transfer_write`
  (recurrence_region asks `clause_lanes`);
- a reduction's innermost variable: `width` points of the sum at once into UNROLL independent
  vector accumulators, combined at the end (`vector_reduce`).
A reduction inside a clause in lanes keeps its own order where its body reads along the clause's
variable (a matrix power; the clause then takes `sum_layout` vectors at once, so their
in-order chains overlap: an LSTM's gate sums `h[t - 1, n, j] * U[q, j, i]`), else computes each
lane's partial vectors and sums them with a transpose tree. Reassociated float sums differ from a sequential loop in the last bits (as in any
vectorised reduction); integer, min and max results are unchanged. Anything else keeps the scalar
loops; so do the points left over after the whole vectors.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple, Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, scf, util, vector

from einc.host_cpu import vector_unit
from einc.ir import affine
from einc.ir.nodes import (IndexRef, IndexVar, Op, Read, RecClause, RecMember, Reduce, Stack, StateRead, Value,
                           step_code)
from einc.mlir.recurrences import scalars as recurrence_scalars
from einc.mlir.core import scalar_ops
from einc.mlir.dense.kernels import reduce_combiner, reduce_identity
from einc.mlir.core.loops import point_loops, var_bounds
from einc.mlir.recurrences.scalars import Scope, accumulate, load_element, scalar_reduce, step_accumulator
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type, i32_type

VECTOR_BYTES = 32             # one AVX2 register; LLVM splits or widens for other CPUs
UNROLL = 4                    # independent accumulators, so adds overlap instead of waiting in line
# Where a clause's sums run along its lanes (`in_order_sums`): the vectors of a clause computed at
# once, the interleaved accumulators of each, and the rows (points of the clause's last outer
# variable) whose sums share one loop, each row one accumulator a vector: independent chains of
# adds either way, and a weight vector loaded once for all the rows.
# LSTM step (H = 128, batch 32), one Zen 4 core: 1 vector 3.8 k steps/s, 4, 8, 16 vectors 7.7-8.0 k.
class SumLayout(NamedTuple):
    chains: int
    split: int
    rows: int
    packs: bool             # weights read across the lanes get a copy read along them (packed_weights)
    packed_chains: int      # `chains` of a clause whose sums read such a copy
    packs_streamed: bool    # ... also in a step that streams its matrices (recurrence_alternate)


PORTABLE_SUMS = SumLayout(chains=4, split=1, rows=1, packs=False, packed_chains=4, packs_streamed=False)
# AVX-512's 32 registers, 16 of them accumulators: 8 vectors (4 registers of 16 f32), 4
# accumulators each, or 4 rows (docs/DECISIONS.md: the RNN H = 64 step 5.9 -> 7.3 M steps/s).
AVX512_SUMS = SumLayout(chains=8, split=4, rows=4, packs=True, packed_chains=8, packs_streamed=True)
# AVX2's 16 registers: 8 accumulators, one each of 8 vectors, cover the FMA's latency (4 cycles
# on a Zen 3) times its 2 pipes where the weights are packed (the RNN H = 64 step ~200 -> 155
# ns); sums along weights as they are (an LSTM's) keep 4 vectors, and a step streaming its
# matrices from L3 (a GRU with H = 256) reads rows as they are: each was slower the other way.
AVX2_SUMS = SumLayout(chains=4, split=1, rows=1, packs=True, packed_chains=8, packs_streamed=False)
KINDS = {"sum": (vector.CombiningKind.ADD, vector.CombiningKind.ADD),
         "prod": (vector.CombiningKind.MUL, vector.CombiningKind.MUL),
         "max": (vector.CombiningKind.MAXIMUMF, vector.CombiningKind.MAXSI),
         "min": (vector.CombiningKind.MINIMUMF, vector.CombiningKind.MINSI)}
# Ops whose scalar rule (scalar_ops) builds the same op on vectors: no scalar constants inside
ELEMENTWISE = ("add", "sub", "mul", "div", "rem", "min", "max", "select", "and", "or",
               "eq", "ne", "lt", "le", "gt", "ge")
FLOAT_ONLY = ("neg", "abs", "sqrt", "exp", "log", "sin", "cos", "tanh", "floor", "ceil")

def width_of(dtype) -> int:
    return VECTOR_BYTES // np.dtype(dtype.numpy).itemsize


def vector_type(width: int, element: ir.Type) -> ir.VectorType:
    return ir.VectorType.get([width], element)


class Lanes:
    """Values at `width` consecutive coordinates of `lane` from `base`, in the scope `outer`
    (which does not bind `lane`); values that do not vary with `lane` are scalars broadcast."""

    def __init__(self, outer: Scope, lane: IndexVar, base: ir.Value, width: int):
        self.outer = outer
        self.lane = lane
        self.base = base
        self.width = width
        self.scalar = outer.child({lane: base})
        self.memo: dict[int, ir.Value] = {}

    def value(self, v: Value) -> ir.Value:
        if id(v) not in self.memo:
            if not varies(self.outer, v, self.lane):
                scalar = self.scalar.value(v)
                self.memo[id(v)] = vector.broadcast(vector_type(self.width, scalar.type), scalar)
            else:
                self.memo[id(v)] = LANE_RULES[type(v)](self, v)
        return self.memo[id(v)]

    def known(self, v: Value, value: ir.Value) -> None:
        """Use `value` (computed earlier, in lanes) for `v`."""
        self.memo[id(v)] = value

    def at_lane(self, k: int) -> Scope:
        """The scalar scope of lane k."""
        return self.outer.child({self.lane: arith.addi(self.base, index_const(k))})

    def consecutive(self, source: ir.Value, indices: list[ir.Value], dtype) -> ir.Value:
        """`width` elements of `source` from `indices` along its last axis. Booleans are read
        one element at a time (IREE-18: a vector read of i1 tensors, stored as i8, is rejected)."""
        if dtype.is_bool:
            *outer, last = indices
            elements = [load_element(source, outer + [arith.addi(last, index_const(k))], dtype)
                        for k in range(self.width)]
            return vector.from_elements(vector_type(self.width, element_type(dtype)), elements)
        return vector.transfer_read(vector_type(self.width, element_type(dtype)), source, indices,
                                    ir.AffineMap.get_minor_identity(len(indices), 1),
                                    scalar_ops.constant(dtype, 0), [True])


def store_consecutive(values: ir.Value, dest: ir.Value, indices: list[ir.Value]) -> ir.Value:
    """`dest` (a tensor) with `values` written from `indices` along its last axis. Where they
    are all of `dest` (a storage of one slot), they pass a barrier first: IREE folds a whole
    write of a vector read from another tensor (a tensor the step computed) into that tensor,
    and the loop's storage, no longer updated in place, fails to bufferize."""
    kind = ir.RankedTensorType(dest.type)
    if kind.has_static_shape and math.prod(kind.shape) == math.prod(ir.VectorType(values.type).shape):
        values = util.optimization_barrier([values.type], [values])
    return vector.transfer_write(dest.type, values, dest, indices,
                                 ir.AffineMap.get_minor_identity(len(indices), 1), [True])


# ------------------------------------------------------------------------------ a clause in lanes

def clause_lanes(lw, member: RecMember, clause: RecClause, t_var: IndexVar) -> Optional[int]:
    """The width to compute `clause` with in lanes along its last variable, or None: it must
    not read its own member at the same step (that is a dependence along the lanes)."""
    if not lw.target.has_vector_lanes or not clause.vars or member.dtype.is_bool:
        return None
    lane, width = clause.vars[-1], width_of(member.dtype)
    probe = _Probe(lw, {t_var: IndexVar(t_var.name, clause.t_lo, clause.t_hi - clause.t_lo)})
    if lane.extent.is_const and lane.extent.const < width:
        return None
    values = [v for v in (clause.body, clause.guard) if v is not None]
    if reads_now(values, member, t_var) or not all(vectorisable(probe, v, lane) for v in values):
        return None
    layout = sum_layout(lw)
    wide = width * (layout.packed_chains if _reads_packed(probe, values, lane) else layout.chains)
    if _sums_along(probe, values, lane) and not (lane.extent.is_const and lane.extent.const < wide):
        return wide
    return width


def sum_layout(lw) -> SumLayout:
    unit = vector_unit() if lw.target.tuned_to_host else None
    return {"avx512": AVX512_SUMS, "avx2": AVX2_SUMS}.get(unit, PORTABLE_SUMS)


def swapped(items: tuple) -> tuple:
    """Subscripts or sizes with the last two swapped (a packed copy's axis order,
    recurrence_packed_weights)."""
    return (*items[:-2], items[-1], items[-2])


def _sums_along(probe, values: list, lane: IndexVar) -> bool:
    """Whether the clause's code sums and every sum reads along the lanes: each lane's sum is
    then one chain of adds in order (`_lane_reduce`), and UNROLL vectors of lanes at once make
    UNROLL independent chains instead of one waiting on the add before it."""
    sums = [v for v in step_code(values) if isinstance(v, Reduce)]
    return bool(sums) and all(vectorisable(probe, part, lane) for r in sums for part in (r.body, r.guard)
                              if part is not None)


def _reads_packed(probe, values: list, lane: IndexVar) -> bool:
    """Whether a sum in the clause's code reads along `lane` from a packed copy."""
    sums = [v for v in step_code(values) if isinstance(v, Reduce)]
    reads = [v for v in step_code([p for r in sums for p in (r.body, r.guard) if p is not None])
             if isinstance(v, Read)]
    layouts = [_read_layout(probe, read, lane) for read in reads]
    return any(layout is not None and layout[2] for layout in layouts)


def clause_vector(lanes: Lanes, clause: RecClause, dtype) -> ir.Value:
    """The clause's body in lanes, 0 where its guard is false (a Generic's too)."""
    value = lanes.value(clause.body)
    if clause.guard is None:
        return value
    zero = vector.broadcast(value.type, scalar_ops.constant(dtype, 0))
    return arith.select(lanes.value(clause.guard), value, zero)


def split_reduction(lw, member: RecMember, clause: RecClause, lane: IndexVar) -> Optional[Reduce]:
    """The reduction to compute for every lane group of a row before the rest of the body, or
    None. A body like tanh(sum[j](..) + ..) is then two loops over the row: the sums (stored
    where the row's points go), then the activation of each group: no group's activation waits
    on its sum's latency chain, so the groups overlap (the RNN H = 64 step: ~25% less time).
    Only one reduction that varies along the lanes, of the member's type, under more work."""
    found, seen, stack = {}, set(), [v for v in (clause.body, clause.guard) if v is not None]
    while stack:
        v = stack.pop()
        if id(v) in seen or v.rank != 0 or lane not in lw.free_vars(v):
            continue
        seen.add(id(v))
        if isinstance(v, Reduce):
            found[id(v)] = v
        elif not isinstance(v, Stack):
            stack.extend(v.operands())
    if len(found) != 1:
        return None
    reduce, = found.values()
    return reduce if reduce.dtype == member.dtype and reduce is not clause.body else None


class _Probe:
    """Enough of a Scope to ask which reads stay in range, before any scope exists."""

    def __init__(self, lw, ranges: dict):
        self.lw = lw
        self.ranges = ranges

    in_range = Scope.in_range


def reads_now(values: list, member: RecMember, t_var: IndexVar, inside_tensors: bool = False) -> bool:
    """Whether `values` read `member` at a step that may be t (anything but t - c, c >= 1); with
    `inside_tensors`, reads inside the tensors they compute count too (else those tensors close
    over their own loops)."""
    seen, stack = set(), list(values)
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, StateRead) and v.member is member:
            lin = affine.affine_of(v.subs[0])
            if lin is None or lin.terms != {t_var: 1} or lin.const > -1:
                return True
        if inside_tensors or v.rank == 0 or isinstance(v, Stack):
            stack.extend(v.operands())
    return False


# ------------------------------------------------------------------------------ reductions

def vector_reduce(scope: Scope, reduce: Reduce) -> Optional[ir.Value]:
    """The reduction with its innermost variable in lanes, or None where that does not apply."""
    if not _reducible_in_lanes(scope, reduce):
        return None
    (partial,), (leftover,) = _partials([scope], reduce, UNROLL)
    kind = KINDS[reduce.kind][0 if reduce.dtype.is_float else 1]
    return reduce_combiner(reduce)(vector.reduction(element_type(reduce.dtype), kind, partial), leftover)


def reduce_in_step(scope: Scope, reduce: Reduce) -> ir.Value:
    """The step rule of a reduction: in vector lanes where it can be, else scalar loops."""
    lanes = vector_reduce(scope, reduce)
    return lanes if lanes is not None else scalar_reduce(scope, reduce)


# the step rules every recurrence form uses: the scalar ones, with reductions in lanes
STEP_RULES = {**recurrence_scalars.SCALAR_STEP_RULES, Reduce: reduce_in_step}


def _reducible_in_lanes(scope: Scope, reduce: Reduce) -> bool:
    lane = reduce.vars[-1]
    return (scope.lw.target.has_vector_lanes and reduce.kind in KINDS and not reduce.dtype.is_bool
            and not reduce.dtype.is_unsigned
            and not (lane.extent.is_const and lane.extent.const < width_of(reduce.dtype))
            and all(vectorisable(scope, v, lane) for v in (reduce.body, reduce.guard) if v is not None))


def _partials(scopes: list[Scope], reduce: Reduce, unroll: int) -> tuple[list, list]:
    """The reduction at each of `scopes` as (a vector whose lanes together hold the vectorised
    points, the scalar rest), one pair per scope. The scopes share one loop nest, so their
    accumulators are independent chains and reads they have in common are loaded once; `unroll`
    more accumulators per scope do the same for a single scope."""
    lane, width = reduce.vars[-1], width_of(reduce.dtype)
    identity = reduce_identity(reduce)
    combine, add = reduce_combiner(reduce), step_accumulator(scopes[0].lw, reduce)
    (lo, hi), = var_bounds(scopes[0].lw, [lane])
    vector_end = round_down(lo, hi, width)
    identities = vector.broadcast(vector_type(width, element_type(reduce.dtype)), identity)

    def outer_point(ivs, carried):
        outers = [scope.child(dict(zip(reduce.vars[:-1], ivs))) for scope in scopes]

        def add_chunk(n: int, base: ir.Value, acc: ir.Value) -> ir.Value:
            return add(_guarded(Lanes(outers[n], lane, base, width), reduce), acc)
        vectors, start = carried[:len(scopes)], lo
        if unroll > 1:
            start = round_down(lo, hi, width * unroll)
            # what earlier outer points carried goes into one accumulator of each scope only
            fresh = [v if u == 0 else identities for v in vectors for u in range(unroll)]
            accs = counted_loop(lo, start, width * unroll, fresh,
                                lambda base, accs: [add_chunk(k // unroll, arith.addi(base, index_const(k % unroll * width)), a)
                                                    for k, a in enumerate(accs)])
            vectors = [_fold(accs[n * unroll:(n + 1) * unroll], combine) for n in range(len(scopes))]
        vectors = counted_loop(start, vector_end, width, vectors,
                               lambda base, accs: [add_chunk(n, base, a) for n, a in enumerate(accs)])
        rest = counted_loop(vector_end, hi, 1, carried[len(scopes):],
                            lambda j, accs: [accumulate(outers[n].child({lane: j}), reduce, a)
                                             for n, a in enumerate(accs)])
        return vectors + rest
    results = point_loops(var_bounds(scopes[0].lw, list(reduce.vars[:-1])),
                          [identities] * len(scopes) + [identity] * len(scopes), outer_point)
    return results[:len(scopes)], results[len(scopes):]


def _fold(values: list, combine: Callable) -> ir.Value:
    """The values combined pairwise, as a balanced tree."""
    while len(values) > 1:
        values = [combine(values[k], values[k + 1]) if k + 1 < len(values) else values[k]
                  for k in range(0, len(values), 2)]
    return values[0]


def _lane_reduce(lanes: Lanes, reduce: Reduce) -> ir.Value:
    """A reduction at each lane of an enclosing clause."""
    outer = lanes.outer
    if in_order(outer, reduce, lanes.lane):
        return in_order_sums([lanes], reduce, sum_layout(outer.lw).split)[0]
    scopes = [lanes.at_lane(k) for k in range(lanes.width)]
    if lanes.width != width_of(reduce.dtype) or not _reducible_in_lanes(scopes[0], reduce):
        scalars = [scope.value(reduce) for scope in scopes]
        return vector.from_elements(vector_type(lanes.width, element_type(reduce.dtype)), scalars)
    partials, rests = _partials(scopes, reduce, 1)
    rest = vector.from_elements(partials[0].type, rests)
    return reduce_combiner(reduce)(_transpose_sum(partials, reduce_combiner(reduce)), rest)


def in_order(scope, reduce: Reduce, lane: IndexVar) -> bool:
    """Whether the reduction's body reads along `lane` (`in_order_sums` gives it)."""
    return all(vectorisable(scope, v, lane) for v in (reduce.body, reduce.guard) if v is not None)


def in_order_sums(rows: list[Lanes], reduce: Reduce, split: int) -> list[ir.Value]:
    """The reduction at each of `rows` (Lanes at one base, in scopes that differ in outer
    coordinates), its body read along the lanes: its own loops stay scalar, its innermost
    variable split over `split` interleaved accumulators per row (coordinate j into accumulator
    (j - lo) mod `split`, the points after the last whole round into the first), combined once
    at the end. Each accumulator is a chain of adds in order; several let the adds overlap
    instead of waiting on the one before (the RNN H = 64 step: two chains of 64 dependent FMAs
    with one). The rows share one loop nest, so a read they have in common (a weight row) is
    loaded once for all of them: a register tile of rows x lanes."""
    lw, add = rows[0].outer.lw, step_accumulator(rows[0].outer.lw, reduce)
    *outer_vars, inner = reduce.vars
    (lo, hi), = var_bounds(lw, [inner])
    split_end = round_down(lo, hi, split)

    def point(ivs, accs):
        coords = dict(zip(outer_vars, ivs))

        def add_at(row: Lanes, j: ir.Value, acc: ir.Value) -> ir.Value:
            at = Lanes(row.outer.child({**coords, inner: j}), row.lane, row.base, row.width)
            return add(_guarded(at, reduce), acc)
        accs = counted_loop(lo, split_end, split, accs, lambda j, accs: [
            add_at(rows[k // split], arith.addi(j, index_const(k % split)), acc) for k, acc in enumerate(accs)])
        firsts = counted_loop(split_end, hi, 1, accs[::split], lambda j, firsts: [
            add_at(row, j, acc) for row, acc in zip(rows, firsts)])
        return [firsts[k // split] if k % split == 0 else acc for k, acc in enumerate(accs)]
    start = vector.broadcast(vector_type(rows[0].width, element_type(reduce.dtype)), reduce_identity(reduce))
    accs = point_loops(var_bounds(lw, outer_vars), [start] * (split * len(rows)), point)
    return [_fold(accs[r * split:(r + 1) * split], reduce_combiner(reduce)) for r in range(len(rows))]


def _transpose_sum(vectors: list[ir.Value], combine: Callable) -> ir.Value:
    """The vector whose lane k is the combination of the lanes of vectors[k] (len(vectors) ==
    their width, a power of two): log2(width) rounds of pairwise shuffles, as in a transpose."""
    width, span = len(vectors), 1
    while len(vectors) > 1:
        low, high = [], []
        for block in range(0, width, 2 * span):
            low += [block + q for q in range(span)] + [width + block + q for q in range(span)]
            high += [block + span + q for q in range(span)] + [width + block + span + q for q in range(span)]
        vectors = [combine(vector.shuffle(a, b, low), vector.shuffle(a, b, high))
                   for a, b in zip(vectors[0::2], vectors[1::2])]
        span *= 2
    return vectors[0]


def _guarded(lanes: Lanes, reduce: Reduce) -> ir.Value:
    value = lanes.value(reduce.body)
    if reduce.guard is None:
        return value
    return arith.select(lanes.value(reduce.guard), value, vector.broadcast(value.type, reduce_identity(reduce)))


def round_down(lo: ir.Value, hi: ir.Value, multiple: int) -> ir.Value:
    """The end of the whole multiples of `multiple` points from `lo` towards `hi`."""
    count = arith.divui(arith.subi(hi, lo), index_const(multiple))
    return arith.addi(lo, arith.muli(count, index_const(multiple)))


def counted_loop(lo: ir.Value, hi: ir.Value, step: int, carried: list,
          body: Callable[[ir.Value, list], list]) -> list:
    loop = scf.ForOp(lo, hi, index_const(step), carried)
    with ir.InsertionPoint(loop.body):
        scf.yield_(body(loop.induction_variable, list(loop.inner_iter_args)))
    return list(loop.results)


# ------------------------------------------------------------------------------ rules

def _lane_index(lanes: Lanes, ref: IndexRef) -> ir.Value:
    start = arith.index_cast(i32_type(), lanes.scalar.coords[ref.var])
    vtype = vector_type(lanes.width, i32_type())
    offsets = arith.constant(vtype, ir.DenseElementsAttr.get(np.arange(lanes.width, dtype=np.int32), type=vtype))
    return arith.addi(vector.broadcast(vtype, start), offsets)


def _lane_op(lanes: Lanes, op: Op) -> ir.Value:
    return scalar_ops.apply(op, [lanes.value(a) for a in op.args])


def _lane_read(lanes: Lanes, read: Read) -> ir.Value:
    scope = lanes.scalar
    subs, shape, packed = _read_layout(lanes.outer, read, lanes.lane)
    indices = [scope.index(s) if read.in_bounds else scope.clamped(s, size) for s, size in zip(subs[:-1], shape[:-1])]
    source = scope.lw.packed[id(read.tensor)] if packed else scope.tensor(read.tensor)
    return lanes.consecutive(source, indices + [scope.index(subs[-1])], read.dtype)


def _read_layout(scope, read: Read, lane: IndexVar) -> Optional[tuple]:
    """(subscripts, sizes, whether from the packed copy) that read `read` along the last axis
    with `lane`: its own, else those of its copy with the last two axes swapped
    (recurrence_packed_weights), or None."""
    if _along_last_axis(scope, read.subs, read.tensor.shape, lane):
        return read.subs, read.tensor.shape, False
    if id(read.tensor) not in scope.lw.packed:
        return None
    subs, shape = swapped(read.subs), swapped(tuple(read.tensor.shape))
    return (subs, shape, True) if _along_last_axis(scope, subs, shape, lane) else None


def _lane_state_read(lanes: Lanes, read: StateRead) -> ir.Value:
    scope, member = lanes.scalar, read.member
    indices = [scope.storage.slot(member, scope.clamped(read.subs[0], member.shape[0]))]
    indices += [scope.clamped(s, size) for s, size in zip(read.subs[1:-1], member.shape[1:-1])]
    indices = scope.storage.at(member, indices + [scope.index(read.subs[-1])])
    return lanes.consecutive(scope.storage.tensors[member], indices, read.dtype)


LANE_RULES: dict[type, Callable] = {
    IndexRef: _lane_index,
    Op: _lane_op,
    Read: _lane_read,
    StateRead: _lane_state_read,
    Reduce: _lane_reduce,
}


# ------------------------------------------------------------------------------ which values

def varies(scope, v: Value, lane: IndexVar) -> bool:
    """Whether `v` depends on the coordinate of `lane`."""
    return lane in scope.lw.free_vars(v)


def vectorisable(scope, v: Value, lane: IndexVar) -> bool:
    """Whether the LANE_RULES give `v` along `lane` (a reduction always has a per-lane form)."""
    if not varies(scope, v, lane) or isinstance(v, (IndexRef, Reduce)):
        return True
    if isinstance(v, Op):
        return has_vector_form(v) and all(vectorisable(scope, a, lane) for a in v.args)
    if isinstance(v, Read):
        return scope.lw.is_program_level(v.tensor) and _read_layout(scope, v, lane) is not None
    if isinstance(v, StateRead):
        return len(v.subs) > 1 and _along_last_axis(scope, v.subs, v.member.shape, lane)
    return False


def has_vector_form(op: Op) -> bool:
    operand = op.args[0].dtype
    if op.op in ELEMENTWISE:
        return op.op not in ("div", "rem", "min", "max") or operand.is_float or operand.name == "i32"
    return op.op in FLOAT_ONLY and operand.name == "f32"


def _along_last_axis(scope, subs: tuple, shape: tuple, lane: IndexVar) -> bool:
    """Whether only the last subscript moves with `lane`, one element per lane, and it provably
    stays inside the axis (so a whole vector can be read without clamping). A 0-d tensor (a
    scalar slice of a state) has no such axis."""
    if not subs or any(varies(scope, s, lane) for s in subs[:-1]):
        return False
    last = affine.affine_of(subs[-1])
    return last is not None and last.terms.get(lane) == 1 and scope.in_range(subs[-1], shape[-1])
