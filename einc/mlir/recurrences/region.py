"""A recurrence group as ONE dispatch (llvm-cpu): `flow.dispatch.region` around scalar loops.

A host-level loop over steps would cost a device submission per step (and a readback when a
step reads a scalar); inside one dispatch the loop runs natively, hundreds of millions of steps
per second for a scalar state. IREE compiles such a region only when:
- it holds no tileable linalg op (linalg.fill, linalg.generic, ..): those get tiled into a
  workgroup loop that the step loop's writes fall outside of. Storage starts as tensor.empty,
  zeroed by a scalar loop;
- every loop-carried tensor is updated in place (tensor.insert into the iter_arg, yielded), so
  bufferization keeps one buffer per member.
The region runs as a single thread.
"""
from __future__ import annotations

import functools
import itertools
import math
from typing import Optional

import numpy as np

from iree.compiler import ir
from iree.compiler.dialects import arith, flow, scf, tensor, util

from einc.ir.nodes import RecClause, RecMember, RecurrenceGroup
from einc.ir.state_slices import is_state_slice
from einc.ir.types import Lin
from einc.mlir.core import scalar_ops
from einc.mlir.core.dispatch_captures import fence_captured_tensors, host_fence
from einc.mlir.core.loops import point_loops, var_bounds
from einc.mlir.recurrences.lanes import (Lanes, clause_lanes, clause_vector, counted_loop, in_order, in_order_sums,
                                        round_down, split_reduction, store_consecutive, sum_layout, width_of)
from einc.mlir.recurrences.alternate import streams_more_than_l2, summed_first
from einc.mlir.recurrences.packed_weights import pack_weights
from einc.mlir.recurrences.scalars import Storage, load_element, store_element
from einc.mlir.recurrences.step import (PointValue, as_member_type, clause_scope, compact, covers_every_step,
                                       emit_step, expanded, held_point, sizes_of, storage_shape, stored_dtype,
                                       unit_axes, when, with_step_values)
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type, tensor_type

PEELED_STEPS = 4          # clause bounds up to this step split the step loop (step_spans)
MAX_HELD_POINTS = 16      # points of a small tensor state kept in registers, one each (in_registers)
STACK_BYTES = 32768       # IREE's limit on a CPU dispatch's stack allocations
FORM = "one dispatch whose loops run every step"     # what `einc build --explain` calls it


def emit_group(lw, group: RecurrenceGroup) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order."""
    pack_weights(lw, group, streams=bool(summed_first(lw, group, step_spans(group)[-1], _held(group))))
    return in_one_dispatch(lw, group, lambda units, tensors: steps(lw, group, units, tensors))


def steps(lw, group: RecurrenceGroup, units: dict, tensors: list, work=None) -> list:
    """The loops over the steps, from the members' initial storage `tensors` to their final one:
    one loop per span between the clauses' first steps (`step_spans`), each carrying the last
    one's storage and registers. `work`, when given, is a step that computes tensors first
    (recurrence_dispatch_steps.StepWork): the loops carry its `carried` tensors too (left there
    after the last step), `work.begin(storage, carried)` makes the lowering a step's points use
    and what to run before each member's points (recurrence_step.emit_step's `before`), and
    `work.end()` gives what the step leaves carried; its members' sums are then never computed
    ahead of the step (recurrence_alternate)."""
    members = group.members
    held = _held(group)
    steps = lw.sizes.index(group.t_var.extent)
    last_rows = {m: lw.sizes.index(m.shape[0] - 1) for m in members
                 if m.window is None and m.shape[0] != group.t_var.extent}
    # values before step 0 are never used: reads there sit in inactive clauses or guards
    carried = tensors + [scalar_ops.constant(m.dtype, 0) for m, n in held.items() for _ in range(n * _held_count(m))]
    extra = len(work.carried) if work is not None else 0
    carried += work.carried if work is not None else []
    for lo, hi in step_spans(group):
        bounds = [index_const(b.const) if b.is_const else steps for b in (lo, hi)]
        first = summed_first(lw, group, (lo, hi), held) if work is None else []
        large = streams_more_than_l2(lw, first) if first else None
        loop = scf.ForOp(*[arith.minui(b, steps) for b in bounds], index_const(1), carried)
        with ir.InsertionPoint(loop.body):
            inner = list(loop.inner_iter_args)
            tensors, registers = inner[:len(members)], iter(inner[len(members):len(inner) - extra])
            recent = {m: [_registers(m, registers) for _ in range(n)] for m, n in held.items()}

            def step(summed: list) -> list:
                """The carried values after step t, the sums of `summed` computed first, in order."""
                storage = Storage(group.t_var, loop.induction_variable, dict(zip(members, tensors)), recent,
                                  units=units, steps=(lo, hi), last_rows=last_rows)
                for m in summed:
                    clause, = m.clauses
                    storage.tensors[m] = _write_points(lw, m, storage, list(clause.vars), None, None, clause,
                                                       sums_only=True)
                step_lw, before = work.begin(storage, inner[len(inner) - extra:]) if work else (lw, None)
                emit_step(step_lw, group, storage, functools.partial(_write_points, summed=frozenset(summed)), before)
                shifted = [v for m, n in held.items() for value in ([_at_step(m, storage)] + recent[m])[:n]
                           for v in _flat(value)]
                return [storage.tensors[m] for m in members] + shifted + (work.end() if work else [])
            scf.yield_(_by_parity(loop, large, lambda: step(first), lambda: step([])) if first else step([]))
        carried = list(loop.results)
    if work is not None:
        work.carried = carried[len(carried) - extra:]
    return carried[:len(members)]


def _held(group: RecurrenceGroup) -> dict:
    """The members kept in registers (`in_registers`), each with the steps it keeps; not one a
    tensor of the step reads whole (a state slice reads its storage)."""
    sliced = _sliced(group)
    return {m: m.plan["lookback"] for m in group.members if in_registers(m) and id(m) not in sliced}


def _sliced(group: RecurrenceGroup) -> set:
    """The ids of the members a tensor of the step reads whole (a state slice)."""
    return {id(v.body.member) for v in group.step_work if is_state_slice(v)}


def _by_parity(loop: scf.ForOp, enabled: ir.Value, odd, even) -> list:
    """The loop's carried values that `odd()` builds where its step is odd and `enabled` holds,
    else those of `even()`."""
    t = loop.induction_variable
    is_odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(t, index_const(1)), index_const(0))
    is_odd = arith.andi(is_odd, enabled)
    branch = scf.IfOp(is_odd, [v.type for v in loop.inner_iter_args], has_else=True)
    with ir.InsertionPoint(branch.else_block):
        scf.yield_(even())
    with ir.InsertionPoint(branch.then_block):
        scf.yield_(odd())
    return list(branch.results)


def step_spans(group: RecurrenceGroup) -> list[tuple]:
    """The steps as spans (lo, hi) split where a clause starts or ends at one of the first
    PEELED_STEPS steps: inside a span each such clause runs at every step or at none, so the loop
    of the long last span tests no step against them (a Kalman filter's `t == 0` selects and
    branches, which lengthened its dependent chain). One span when a member ends before the
    loop does: each step past its end keeps its row (read and written back), and with the loop
    split IREE's bufferization copies the carried storage into a stack allocation of unbounded
    size, which fails to compile."""
    extent = group.t_var.extent
    if not all(any(c.t_hi == extent for c in m.clauses) for m in group.members):
        return [(Lin(0), extent)]
    cuts = sorted({b.const for m in group.members for c in m.clauses for b in (c.t_lo, c.t_hi)
                   if b.is_const and 0 < b.const <= PEELED_STEPS
                   and not (extent.is_const and b.const >= extent.const)})
    bounds = [Lin(0)] + [Lin(c) for c in cuts] + [extent]
    return list(zip(bounds, bounds[1:]))


def _held_count(member: RecMember) -> int:
    """The registers one step of a member kept in registers takes."""
    return len(small_points(member) or [()])


def _registers(member: RecMember, registers) -> object:
    """One step of `member` taken from the loop's `registers`: a scalar state's value, or a
    small tensor state's dict point -> value."""
    points = small_points(member)
    return next(registers) if points is None else {p: next(registers) for p in points}


def _flat(value) -> list:
    return list(value.values()) if isinstance(value, dict) else [value]


def _at_step(member: RecMember, storage: Storage) -> object:
    """The member's value at step t, every point of a small tensor state (what no clause wrote
    this step is what its slot holds)."""
    points = small_points(member)
    if member in storage.current and points is None:
        return storage.current[member]
    slot = storage.slot(member, storage.t)
    if points is None:      # none of its clauses runs in this loop's steps (recurrence_step.runs_in)
        return load_element(storage.tensors[member], storage.at(member, [slot]), member.dtype)
    current = storage.current.get(member, {})
    return {p: current[p] if p in current else
            load_element(storage.tensors[member], storage.at(member, [slot] + [index_const(c) for c in p]),
                         member.dtype)
            for p in points}


def in_this_dispatch(lw, group: RecurrenceGroup, work=None, buffers: Optional[dict] = None) -> tuple:
    """(every member's storage tensor after the group's loops, in its shape; and in the compact
    form the loops keep it), emitted at the insertion point, inside the dispatch of a group
    whose step runs this one (recurrence_dispatch_steps). A member's storage is `buffers[member]`
    (a buffer of that dispatch, `storage_buffer`) cleared, or made anew on the stack."""
    buffers = buffers or {}
    units = {m: unit_axes(storage_shape(m)) for m in group.members}
    initial = [cleared(lw, m, group, buffers[m]) if m in buffers else _initial_storage(lw, m, group)
               for m in group.members]
    final = steps(lw, group, units, initial, work)
    return [expanded(result, sizes_of(lw, storage_shape(m))) for m, result in zip(group.members, final)], final


def in_one_dispatch(lw, group: RecurrenceGroup, loops, scratch: tuple = ()) -> list[ir.Value]:
    """Every member's storage tensor after `loops(units, initial storage tensors)`, which emits
    the group's loops inside one dispatch region (units: member -> its unit axes, dropped from
    its storage there) and returns their final storage, then the final value of each tensor
    `scratch` lists (dtype, shape): more results of the region, which nothing outside reads
    (buffers for tensors the loops compute, of any size)."""
    members = group.members
    kinds = [(stored_dtype(m), compact(storage_shape(m))) for m in members] + list(scratch)
    dims = [d for _, shape in kinds for d in lw.sizes.dynamic_dims(shape)]
    region = flow.DispatchRegionOp([tensor_type(dtype, shape) for dtype, shape in kinds], dims, [])
    units = {m: unit_axes(storage_shape(m)) for m in members}
    with ir.InsertionPoint(region.body.blocks.append()):
        flow.ReturnOp(loops(units, [_initial_storage(lw, m, group) for m in members]))
    # IREE-260: inside a host loop's step, a reshaped row of the state behind a host barrier
    # left another row's point, read before the region, 0
    in_a_step = bool(lw.given_step_tensors) and lw.target.has_defect("IREE-260")
    fence_captured_tensors(region, packs_scalars=lw.target.has_defect("IREE-220"),
                           reshapes_on=lw.target if in_a_step else None)
    results = list(region.results)
    for k, result in enumerate(results):
        if k >= len(members) or not _fits_the_stack(members[k]):
            util.OptimizationBarrierOp([result.type], [result])
    results = results[:len(members)]
    # IREE-16: results pass a barrier before a member with unit axes is reshaped back to its shape
    results = [host_fence(r) for r in results] if any(units.values()) else results
    return [as_member_type(m, expanded(result, sizes_of(lw, storage_shape(m))))
            for m, result in zip(members, results)]


def _fits_the_stack(member: RecMember) -> bool:
    """Whether the member's storage may become a stack allocation in the dispatch. IREE drops a
    region result nothing reads (a windowed member no output reads), and its storage then lives
    on the stack: unbounded for a run-time size, rejected beyond 32 KB. Such a result is read by
    an optimization barrier instead. Not every one (IREE-38: a barrier on a value IREE evaluates
    at build time mixes up the hoisted results)."""
    shape = compact(storage_shape(member))
    return all(s.is_const for s in shape) and \
        int(np.prod([s.const for s in shape])) * member.dtype.numpy.itemsize <= STACK_BYTES


def in_registers(member: RecMember) -> bool:
    """Scalar states read at t - c keep their last `lookback` values (none when only read at t)
    in registers, and their value at t for the rest of the step: a step then never waits on a
    store and reload of a value it just computed. So do small tensor states of a fixed size
    (`small_points`: a Kalman filter's 2 x 2 covariance), one register per point."""
    return member.plan.get("lookback") is not None and (len(member.shape) == 1 or small_points(member) is not None)


def small_points(member: RecMember) -> Optional[list[tuple]]:
    """Every point of a tensor state's axes after the step, where there are at most
    MAX_HELD_POINTS of a size known at build time and every clause spans constant ranges (its
    points are then unrolled, each computed as a scalar); None otherwise, and for a scalar state."""
    sizes = member.shape[1:]
    ranges = [v for c in member.clauses for v in c.vars]
    if not sizes or not all(s.is_const for s in sizes) or \
            not all(v.lo.is_const and v.extent.is_const for v in ranges):
        return None
    if math.prod(s.const for s in sizes) > MAX_HELD_POINTS:
        return None              # counted first: listing 2^31 points would exhaust the memory
    return list(itertools.product(*(range(s.const) for s in sizes)))


def _initial_storage(lw, member: RecMember, group: RecurrenceGroup) -> ir.Value:
    """A tensor.empty that IREE turns into the dispatch's output buffer (`storage_buffer`),
    `cleared`. Not an `arith.constant` of zeros: writing into a constant makes a stack copy, and
    large ones exceed the 32 KB stack limit."""
    return cleared(lw, member, group, storage_buffer(lw, member))


def storage_buffer(lw, member: RecMember) -> ir.Value:
    """An uninitialised tensor of the member's storage inside a dispatch (compact, bools as i8)."""
    empty = lw.sizes.empty(compact(storage_shape(member)), element_type(stored_dtype(member)))
    # CSE would merge the members' identical tensor.empty ops, and one buffer cannot back two
    # results: IREE then copies into an unbounded stack allocation. The attribute keeps them apart.
    empty.owner.attributes["einc.storage"] = ir.StringAttr.get(member.name)
    return empty


def cleared(lw, member: RecMember, group: RecurrenceGroup, storage: ir.Value) -> ir.Value:
    """`storage` zeroed by a scalar loop, unless every point gets written and no tensor of the
    step reads it whole (a slice at t - 1, cut at step 0 too, where nothing uses it: a read of a
    tensor.empty makes IREE copy it onto the stack)."""
    if member.window is None and covers_every_step(member) and id(member) not in _sliced(group):
        return storage
    zero = scalar_ops.constant(stored_dtype(member), 0)
    bounds = [(index_const(0), lw.sizes.index(size)) for size in compact(storage_shape(member))]
    return point_loops(bounds, [storage], lambda ivs, out: [tensor.insert(zero, out[0], ivs)])[0]


def _write_points(lw, member: RecMember, storage: Storage, vars_: list, active: Optional[ir.Value],
                  value: PointValue, clause: Optional[RecClause], summed: frozenset = frozenset(),
                  sums_only: bool = False) -> ir.Value:
    """The points in lexicographic order, each stored before the next is computed; a clause
    that allows it computes its last variable in vector lanes (recurrence_lanes). With
    `sums_only`, only its split sums (stored where its points go); for a member in `summed`,
    whose sums are already there, only the rest."""
    if member in storage.recent:
        if vars_:
            return _write_held_points(member, storage, vars_, active, value)
        return _write_held(member, storage, active, value)

    def update() -> ir.Value:
        nonlocal storage
        if clause is not None:
            storage = with_step_values(lw, member, clause, storage)
        slot = storage.slot(member, storage.t)

        def point(ivs, out):
            # same-step reads of this member see the points already written
            scalar = value(storage.with_tensor(member, out[0]), dict(zip(vars_, ivs)))
            return [store_element(scalar, out[0], storage.at(member, [slot] + ivs))]
        width = None if clause is None else clause_lanes(lw, member, clause, storage.t_var)
        if width is None:
            return point_loops(var_bounds(lw, vars_), [storage.tensors[member]], point)[0]
        lane = vars_[-1]
        (lo, hi), = var_bounds(lw, [lane])
        # chunks of `width`, then of one vector where `width` is several (recurrence_lanes)
        sizes = sorted({width, width_of(member.dtype)}, reverse=True)
        split = split_reduction(lw, member, clause, lane)
        rows = _tile_rows(lw, clause, storage, vars_, split)

        def lanes(ivs, base, out, size):
            scope = clause_scope(lw, clause, storage.with_tensor(member, out[0]), dict(zip(vars_, ivs)))
            return Lanes(scope, lane, base, size)

        def at(ivs, base):
            return storage.at(member, [slot] + ivs + [base])

        def sums(ivs, out, count):
            """The split's sums of `count` rows from `ivs` (along the last outer variable), stored
            where the rows' points go; several rows as one register tile."""
            row_ivs = [ivs[:-1] + [arith.addi(ivs[-1], index_const(r))] for r in range(count)] if count > 1 else [ivs]

            def chunk(base, out, size):
                points = [lanes(r, base, out, size) for r in row_ivs]
                values = in_order_sums(points, split, 1) if count > 1 else [points[0].value(split)]
                out = out[0]
                for r, value in zip(row_ivs, values):
                    out = store_consecutive(value, out, at(r, base))
                return [out]
            start = lo
            for size in sizes:
                end = round_down(start, hi, size)
                out = counted_loop(start, end, size, out, lambda base, out, size=size: chunk(base, out, size))
                start = end
            return out

        def row(ivs, out):
            def chunk(base, out, size):
                points = lanes(ivs, base, out, size)
                if split is not None:       # the first loop's sums, where this chunk's points go
                    points.known(split, points.consecutive(out[0], at(ivs, base), member.dtype))
                return [store_consecutive(clause_vector(points, clause, member.dtype), out[0], at(ivs, base))]
            if split is not None and rows == 1 and member not in summed:
                out = sums(ivs, out, 1)
            if sums_only:
                return out
            start = lo
            for size in sizes:
                end = round_down(start, hi, size)
                out = counted_loop(start, end, size, out, lambda base, out, size=size: chunk(base, out, size))
                start = end
            return counted_loop(start, hi, 1, out, lambda j, out: point(ivs + [j], out))
        out = [storage.tensors[member]]
        if rows > 1 and member not in summed:
            out = _row_tiles(lw, vars_[:-1], rows, out, sums)
        if sums_only and rows > 1:
            return out[0]
        return point_loops(var_bounds(lw, vars_[:-1]), out, row)[0]
    return when(active, storage.tensors[member], update)


def _tile_rows(lw, clause: RecClause, storage: Storage, vars_: list, split) -> int:
    """The rows of the clause's last outer variable whose split sums are computed together
    (recurrence_lanes.in_order_sums), where the sums read along the lanes: 1 otherwise."""
    if split is None or len(vars_) < 2 or not in_order(clause_scope(lw, clause, storage, {}), split, vars_[-1]):
        return 1
    return sum_layout(lw).rows


def _row_tiles(lw, outer_vars: list, rows: int, out: list, sums) -> list:
    """`sums(ivs, out, count)` over the points of `outer_vars`: `rows` points of the last at a
    time, then the rest one by one."""
    *first, last = outer_vars
    (lo, hi), = var_bounds(lw, [last])
    end = round_down(lo, hi, rows)

    def tiles(ivs, out):
        out = counted_loop(lo, end, rows, out, lambda n, out: sums(ivs + [n], out, rows))
        return counted_loop(end, hi, 1, out, lambda n, out: sums(ivs + [n], out, 1))
    return point_loops(var_bounds(lw, first), out, tiles)


def _write_held(member: RecMember, storage: Storage, active: Optional[ir.Value], value: PointValue) -> ir.Value:
    """A scalar state's point at step t, kept as `storage.current` and stored at its slot
    (an inactive clause stores back what the slot held). Not stored where nothing after the
    loop reads the member (its plan's `read_outside`): its reads in the loop are all of
    registers, and a step no clause covers reads its slot's 0 (a window member's cleared
    value is kept as `current`). A local-trend Kalman step: 11 stores fewer, ~6% faster."""
    old, slot = storage.tensors[member], storage.slot(member, storage.t)
    scalar = held_point(member, storage, active, value,
                        lambda: load_element(old, storage.at(member, [slot]), member.dtype))
    if not member.plan.get("read_outside", True):
        return old
    return store_element(scalar, old, storage.at(member, [slot]))



def _write_held_points(member: RecMember, storage: Storage, vars_: list, active: Optional[ir.Value],
                       value: PointValue) -> ir.Value:
    """The points of a small tensor state at step t, unrolled in lexicographic order: each is
    kept in `storage.current[member]` (point -> value), where later points and members read it,
    and stored at its slot. An inactive clause keeps what the points were."""
    old, slot = storage.tensors[member], storage.slot(member, storage.t)
    before = dict(storage.current.get(member, {}))
    points = list(itertools.product(*(range(v.lo.const, (v.lo + v.extent).const) for v in vars_)))

    def at(point: tuple) -> list:
        return storage.at(member, [slot] + [index_const(c) for c in point])

    def computed() -> list:
        storage.current[member], out = dict(before), old
        for point in points:
            scalar = value(storage.with_tensor(member, out), {v: index_const(c) for v, c in zip(vars_, point)})
            storage.current[member][point] = scalar
            out = store_element(scalar, out, at(point))
        return [storage.current[member][p] for p in points] + [out]
    if active is None:
        results = computed()
    else:
        branch = scf.IfOp(active, [element_type(member.dtype)] * len(points) + [old.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.yield_(computed())
        with ir.InsertionPoint(branch.else_block):
            scf.yield_([before[p] if p in before else load_element(old, at(p), member.dtype) for p in points] + [old])
        results = list(branch.results)
    storage.current[member] = {**before, **dict(zip(points, results))}
    return results[-1]
