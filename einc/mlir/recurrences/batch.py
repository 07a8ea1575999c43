"""A group of independent series along a batch axis (llvm-cpu): each block of lanes through every step.

`x[t in 1..T, b in 0..B] = r[b] * x[t - 1, b] * (1.0 - x[t - 1, b])` runs B series that never
read each other (what `jax.vmap` of a scan computes). recurrence_region sweeps the whole batch
at every step, storing each step and loading it back the next. Here the loops are interchanged:
for each block of BLOCK_VECTORS vectors of lanes along the batch axis, a loop over the steps
keeps the block's recent values in registers (the loop's iter_args) and only stores each step's
values into the member's storage, which the loop does not load again. (Where a member keeps
every step, the steps run in tiles of TILE_STEPS, each tile block by block, so the tile's rows
stay in cache; a block's registers start a tile from the storage.) The vectors of a block are
independent chains, so their latencies overlap. The lanes left after the whole blocks run
as one more block whose reads and writes past the axis are masked off.

It applies (`misfit`) where the batch axis is the last axis of every member, spanned whole by
every clause, read by every state read at the lane itself (`x[t - c, .., b]`), and every other
axis of a member has a small constant size (its points become separate registers, so their
subscripts must be known at build time; reductions that read the state are unrolled).
"""
from __future__ import annotations

import itertools
from typing import Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, scf, vector

from einc.ir import affine
from einc.ir.nodes import (IndexRef, IndexVar, Op, Read, RecClause, RecMember, RecurrenceGroup, Reduce, StateRead,
                           Value, free_vars, step_code)
from einc.mlir.core import scalar_ops
from einc.mlir.dense.kernels import reduce_identity
from einc.mlir.recurrences.lanes import (Lanes, counted_loop, has_vector_form, round_down, vector_type,
                                         width_of)
from einc.mlir.recurrences.region import in_one_dispatch
from einc.mlir.recurrences.scalars import Storage, step_accumulator
from einc.mlir.recurrences.step import active, clause_scope
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type

FORM = "one dispatch; each block of batch lanes runs every step in registers"   # `einc build --explain`
# Vectors (of VECTOR_BYTES) of lanes per block: independent chains whose latencies overlap, as
# many as the registers hold. Measured on one Zen 4 core (LLVM uses 512-bit registers): 8 ran
# 1,024 logistic maps (2 live values a lane) 1.4x faster than 4, but a 2-state Kalman filter
# (25 live values a lane) 1.8x slower than 4, which spilled less; 2 and 1 were slower still.
BLOCK_VECTORS = {True: 8, False: 4}     # few live values (<= FEW_LIVE) or more
FEW_LIVE = 8
MAX_POINTS = 16            # points of a member's other axes, each kept in its own registers
TILE_STEPS = 8             # steps of every block before the next: a tile of a kept history stays in cache
MAX_UNROLLED = 64          # points of a reduction that reads the state, unrolled at build time


# ------------------------------------------------------------------------------ where it applies

def misfit(group: RecurrenceGroup) -> Optional[str]:
    """Why the group cannot run as lane blocks (None when it can)."""
    members = group.members
    batch = members[0].shape[-1]
    for m in members:
        if len(m.shape) < 2 or m.shape[-1] != batch:
            return "its members do not share a last (batch) axis"
        if m.dtype.is_bool or m.plan.get("lookback") is None:
            return f"`{m.name}` is boolean or read at a step other than t - c"
        if not all(s.is_const for s in m.shape[1:-1]) or _count(m.shape[1:-1]) > MAX_POINTS:
            return f"`{m.name}` has more than {MAX_POINTS} points besides the batch axis"
    for m in members:
        for clause in m.clauses:
            why = _clause_misfit(group, m, clause, batch)
            if why:
                return why
    return None


def _live(group: RecurrenceGroup) -> int:
    """Values a step of one lane holds: each point of each member, at t and its lookback."""
    return sum(len(_points(m)) * (m.plan["lookback"] + 1) for m in group.members)


def _count(sizes) -> int:
    return int(np.prod([s.const for s in sizes], dtype=np.int64))


def _clause_misfit(group: RecurrenceGroup, member: RecMember, clause: RecClause, batch) -> Optional[str]:
    lane = clause.vars[-1]
    if lane.lo != 0 or lane.extent != batch or not all(v.lo.is_const and v.extent.is_const for v in clause.vars[:-1]):
        return f"a clause of `{member.name}` does not span the batch axis whole"
    known = set(clause.vars[:-1])       # variables whose value each unrolled point knows
    for v in step_code([clause.body, clause.guard]):
        if isinstance(v, Reduce):
            if lane in free_vars(v) or _reads_state(v):
                if not all(x.lo.is_const and x.extent.is_const for x in v.vars) or \
                        _count([x.extent for x in v.vars]) > MAX_UNROLLED:
                    return "a reduction along the batch axis has no small constant range"
                known |= set(v.vars)
        elif lane in free_vars(v) or isinstance(v, StateRead):     # a state read elsewhere reads across
            why = _lane_misfit(group, member, v, lane, batch)
            if why:
                return why
    for read in (v for v in step_code([clause.body, clause.guard]) if isinstance(v, StateRead)):
        if not all(_affine_in(s, known) for s in read.subs[1:-1]):
            return "a state read's subscript is not known at build time"
    return None


def _reads_state(reduce: Reduce) -> bool:
    return any(isinstance(v, StateRead) for v in step_code([reduce.body, reduce.guard]))


def _lane_misfit(group: RecurrenceGroup, member: RecMember, v: Value, lane: IndexVar, batch) -> Optional[str]:
    """Why `v`, which varies along the lanes, has no lane form here (None when it has)."""
    if isinstance(v, StateRead):
        step = affine.affine_of(v.subs[0])
        if step is None or step.terms != {group.t_var: 1} or step.const > 0 or \
                (step.const == 0 and group.members.index(v.member) >= group.members.index(member)):
            return "a step reads the state at a step other than t - c, or its own member at t"
        return None if _at_lane(v.subs, lane) else "a step reads the state across the batch axis"
    if isinstance(v, Read):
        if v.tensor.shape[-1] != batch or not _at_lane(v.subs, lane) or free_vars(v.tensor):
            return "a step reads an input across the batch axis"
        return None
    if isinstance(v, Op):
        integer_division = v.op in ("div", "rem") and not v.dtype.is_float   # masked lanes would divide by 0
        if integer_division or not has_vector_form(v):
            return f"`{v.op}` has no vector form here"
        return None
    return None if isinstance(v, IndexRef) else f"a step computes a {type(v).__name__} along the batch axis"


def _at_lane(subs: tuple, lane: IndexVar) -> bool:
    """The last subscript is the lane itself and no other one moves with it."""
    return affine.affine_of(subs[-1]) == affine.Lin.of(lane) and \
        not any(lane in free_vars(s) for s in subs[:-1])


def _affine_in(sub: Value, known: set) -> bool:
    lin = affine.affine_of(sub)
    return lin is not None and all(k in known for k in lin.terms)


# ------------------------------------------------------------------------------ the loops

def emit_group(lw, group: RecurrenceGroup) -> list[ir.Value]:
    """Every member's storage after the last step, in `group.members` order."""
    return in_one_dispatch(lw, group, lambda units, tensors: _blocks(lw, group, units, tensors))


def _blocks(lw, group: RecurrenceGroup, units: dict, tensors: list) -> list:
    """The steps in tiles of TILE_STEPS, each tile block by block, where a member keeps every
    step; else all steps in one tile."""
    steps = lw.sizes.index(group.t_var.extent)
    if all(m.window is not None for m in group.members):
        return _tile(lw, group, units, index_const(0), steps, tensors)

    def tile(first: ir.Value, tensors: list) -> list:
        return _tile(lw, group, units, first, arith.minui(arith.addi(first, index_const(TILE_STEPS)), steps), tensors)
    return counted_loop(index_const(0), steps, TILE_STEPS, tensors, tile)


def _tile(lw, group: RecurrenceGroup, units: dict, first: ir.Value, last: ir.Value, tensors: list) -> list:
    """Steps first .. last - 1 of the whole blocks of lanes, then of the rest as one masked block."""
    batch = lw.sizes.index(group.members[0].shape[-1])
    block = width_of(group.members[0].dtype) * BLOCK_VECTORS[_live(group) <= FEW_LIVE]
    whole = round_down(index_const(0), batch, block)
    tensors = counted_loop(index_const(0), whole, block, tensors,
                           lambda base, tensors: _steps(lw, group, units, LaneBlock(base, block, None), first, last,
                                                        tensors))
    rest = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, whole, batch), [t.type for t in tensors], has_else=True)
    with ir.InsertionPoint(rest.then_block):
        scf.yield_(_steps(lw, group, units, LaneBlock(whole, block, batch), first, last, tensors))
    with ir.InsertionPoint(rest.else_block):
        scf.yield_(tensors)
    return list(rest.results)


class LaneBlock:
    """A block of `width` lanes from `base`; `end`, the end of the batch axis, in the masked
    block whose lanes past it read 0 and are not written (None in a whole block)."""

    def __init__(self, base: ir.Value, width: int, end: Optional[ir.Value]):
        self.base = base
        self.width = width
        self.end = end

    def read(self, source: ir.Value, indices: list[ir.Value], dtype) -> ir.Value:
        return vector.transfer_read(vector_type(self.width, element_type(dtype)), source, indices,
                                    ir.AffineMap.get_minor_identity(len(indices), 1),
                                    scalar_ops.constant(dtype, 0), [self.end is None])

    def write(self, values: ir.Value, dest: ir.Value, indices: list[ir.Value]) -> ir.Value:
        return vector.transfer_write(dest.type, values, dest, indices,
                                     ir.AffineMap.get_minor_identity(len(indices), 1), [self.end is None])


def _steps(lw, group: RecurrenceGroup, units: dict, lanes: LaneBlock, first: ir.Value, last: ir.Value,
           tensors: list) -> list:
    """Steps first .. last - 1 of a block of lanes. Its registers start from the steps before
    `first` in storage (0 before step 0, as recurrence_region starts them)."""
    members = group.members
    zeros = {m: _zero(m, lanes.width) for m in members}
    before = Storage(group.t_var, first, dict(zip(members, tensors)), units=units)
    held = [_earlier(before, m, p, back, lanes, zeros[m])
            for m in members for p in _points(m) for back in range(1, m.plan["lookback"] + 1)]
    loop = scf.ForOp(first, last, index_const(1), tensors + held)
    with ir.InsertionPoint(loop.body):
        carried = list(loop.inner_iter_args)
        storage = Storage(group.t_var, loop.induction_variable, dict(zip(members, carried)), units=units)
        registers = iter(carried[len(members):])
        recent = {m: {p: [next(registers) for _ in range(m.plan["lookback"])] for p in _points(m)} for m in members}
        block = Block(lw, storage, lanes, recent)
        for m in members:
            block.current[m] = _member_step(block, group, m, zeros[m])
            storage.tensors[m] = _stored_within_steps(lw, group, block, m)
        shifted = [v for m in members for p in _points(m)
                   for v in ([block.current[m][p]] + recent[m][p])[:len(recent[m][p])]]
        scf.yield_([storage.tensors[m] for m in members] + shifted)
    return list(loop.results)[:len(members)]


def _stored_within_steps(lw, group: RecurrenceGroup, block: "Block", member: RecMember) -> ir.Value:
    """The member's storage with its vectors at step t written, unless the member has fewer
    steps than the loop and t is past its last: that write would land past its storage (in the
    next member's first row)."""
    if member.shape[0] == group.t_var.extent:
        return block.store(member)
    old = block.storage.tensors[member]
    inside = arith.cmpi(arith.CmpIPredicate.ult, block.storage.t, lw.sizes.index(member.shape[0]))
    branch = scf.IfOp(inside, [old.type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.yield_([block.store(member)])
    with ir.InsertionPoint(branch.else_block):
        scf.yield_([old])
    return branch.results[0]


def _earlier(storage: Storage, member: RecMember, point: tuple, back: int, lanes: LaneBlock,
             zero: ir.Value) -> ir.Value:
    """The block's vector of `member` at step storage.t - back, from storage (`zero` before step 0)."""
    exists = arith.cmpi(arith.CmpIPredicate.uge, storage.t, index_const(back))
    step = arith.select(exists, arith.subi(storage.t, index_const(back)), index_const(0))
    indices = storage.at(member, [storage.slot(member, step)] + [index_const(c) for c in point] + [lanes.base])
    return arith.select(exists, lanes.read(storage.tensors[member], indices, member.dtype), zero)


def _points(member: RecMember) -> list[tuple]:
    """The points of the member's axes between the step and the batch axis."""
    return list(itertools.product(*(range(s.const) for s in member.shape[1:-1])))


def _zero(member: RecMember, width: int) -> ir.Value:
    return vector.broadcast(vector_type(width, element_type(member.dtype)), scalar_ops.constant(member.dtype, 0))


def _member_step(block: "Block", group: RecurrenceGroup, member: RecMember, zero: ir.Value) -> dict:
    """The member's vectors at step t, point -> vector: 0 where no clause writes, else the last
    clause active at t that covers the point."""
    values = {p: zero for p in _points(member)}
    for clause in member.clauses:
        on = active(block.lw, group, block.storage, clause.t_lo, clause.t_hi)
        covered = list(itertools.product(*(range(v.lo.const, (v.lo + v.extent).const) for v in clause.vars[:-1])))
        if on is None:
            values.update({p: block.clause_vector(clause, member, p) for p in covered})
            continue
        branch = scf.IfOp(on, [values[p].type for p in covered], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.yield_([block.clause_vector(clause, member, p) for p in covered])
        with ir.InsertionPoint(branch.else_block):
            scf.yield_([values[p] for p in covered])
        values.update(zip(covered, branch.results))
    return values


class Block:
    """One step of a block of lanes: members' vectors at t - 1, t - 2, .. (`recent`) and at t
    once computed (`current`), member -> point -> vector."""

    def __init__(self, lw, storage: Storage, lanes: LaneBlock, recent: dict):
        self.lw = lw
        self.storage = storage
        self.lanes = lanes
        self.recent = recent
        self.current: dict = {}

    def clause_vector(self, clause: RecClause, member: RecMember, point: tuple) -> ir.Value:
        coords = dict(zip(clause.vars[:-1], point))
        scope = clause_scope(self.lw, clause, self.storage, {v: index_const(c) for v, c in coords.items()})
        lanes = BlockLanes(self, scope, clause.vars[-1], coords)
        value = lanes.value(clause.body)
        if clause.guard is None:
            return value
        zero = vector.broadcast(value.type, scalar_ops.constant(member.dtype, 0))
        return arith.select(lanes.value(clause.guard), value, zero)

    def store(self, member: RecMember) -> ir.Value:
        """The member's storage with its vectors at step t written."""
        storage = self.storage
        out, slot = storage.tensors[member], storage.slot(member, storage.t)
        for point, value in self.current[member].items():
            out = self.lanes.write(value, out, storage.at(member, [slot] + [index_const(c) for c in point] +
                                                          [self.lanes.base]))
        return out


class BlockLanes(Lanes):
    """Lanes whose state reads come from the block's registers; `coords` gives the value of
    each variable a point knows at build time (the clause's other axes, unrolled reductions)."""

    def __init__(self, block: Block, outer, lane: IndexVar, coords: dict):
        super().__init__(outer, lane, block.lanes.base, block.lanes.width)
        self.block = block
        self.coords = coords

    def value(self, v: Value) -> ir.Value:
        if id(v) not in self.memo:
            if isinstance(v, StateRead):
                self.memo[id(v)] = self._state(v)
            elif isinstance(v, Reduce) and (self.lane in free_vars(v) or _reads_state(v)):
                self.memo[id(v)] = self._unrolled(v)
            else:
                return super().value(v)
        return self.memo[id(v)]

    def consecutive(self, source: ir.Value, indices: list[ir.Value], dtype) -> ir.Value:
        return self.block.lanes.read(source, indices, dtype)

    def _state(self, read: StateRead) -> ir.Value:
        member = read.member
        sizes = [s.const for s in member.shape[1:-1]]
        point = tuple(min(max(self._at(s), 0), n - 1) for s, n in zip(read.subs[1:-1], sizes))
        back = -affine.affine_of(read.subs[0]).const
        if back == 0:
            return self.block.current[member][point]
        return self.block.recent[member][point][back - 1]     # back <= the member's lookback

    def _at(self, sub: Value) -> int:
        lin = affine.affine_of(sub)
        return lin.const + sum(c * self.coords[k] for k, c in lin.terms.items())

    def _unrolled(self, reduce: Reduce) -> ir.Value:
        """A reduction over a small constant range, point by point in its order."""
        add = step_accumulator(self.block.lw, reduce)
        acc = vector.broadcast(vector_type(self.width, element_type(reduce.dtype)), reduce_identity(reduce))
        ranges = [range(v.lo.const, (v.lo + v.extent).const) for v in reduce.vars]
        for point in itertools.product(*ranges):
            coords = dict(zip(reduce.vars, point))
            inner = BlockLanes(self.block, self.outer.child({v: index_const(c) for v, c in coords.items()}),
                               self.lane, {**self.coords, **coords})
            value = inner.value(reduce.body)
            if reduce.guard is not None:
                identity = vector.broadcast(value.type, reduce_identity(reduce))
                value = arith.select(inner.value(reduce.guard), value, identity)
            acc = add(value, acc)
        return acc
