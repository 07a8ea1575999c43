"""One step of a recurrence loop, shared by every lowering form (recurrence_region, recurrence_host, ..).

A step runs the members in group order and each member's clauses in source order, each clause
only when t_lo <= t < t_hi (a windowed member's slot is cleared first when clauses leave points
uncovered). A form supplies one primitive, writing a value at the points of some variables at
step t (scalar loops, or one linalg.generic); the step threads each member's storage tensor
through those writes in order.
"""
from __future__ import annotations

from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, scf, tensor

from einc.ir.nodes import IndexVar, RecClause, RecMember, RecurrenceGroup
from einc.ir.state_slices import is_state_history
from einc.ir.types import I8, DType, Lin
from einc.mlir.core import scalar_ops
from einc.mlir.recurrences.lanes import STEP_RULES
from einc.mlir.recurrences.scalars import Scope, Storage
from einc.passes.step_cost import step_reductions
from einc.mlir.core.shapes import converted, index_const
from einc.mlir.core.types import element_type

DYNAMIC = ir.ShapedType.get_dynamic_size()

# value(storage, coords) -> the scalar to store at one point (coords: IndexVar -> index)
PointValue = Callable[[Storage, dict], ir.Value]
# write(lw, member, storage, vars, active, value, clause) -> the member's storage with the points
# of `vars` at step t set to `value` where `active` (an i1, None for always) holds, or None in
# a form that keeps the member in registers only; `clause` is the clause `value` computes (None
# for the clearing of a slot)
WritePoints = Callable[[object, RecMember, Storage, list, Optional[ir.Value], PointValue, Optional[RecClause]],
                       Optional[ir.Value]]


def storage_shape(member: RecMember) -> tuple:
    """The whole shape, or `window` slots along axis 0 (what the member's RecValue holds)."""
    if member.window is None:
        return tuple(member.shape)
    return (Lin(member.window),) + tuple(member.shape[1:])


def stored_dtype(member: RecMember) -> DType:
    """The element type of a member's storage inside a dispatch: a bool member is kept as i8
    (IREE-80: IREE stores i1 tensors as i8 but leaves a tensor.insert of an i1 into one
    unconverted, which fails to verify); reads and writes convert (recurrence_scalars.load_element,
    store_element), and so does `as_member_type` after the dispatch."""
    return I8 if member.dtype.is_bool else member.dtype


def as_member_type(member: RecMember, stored: ir.Value) -> ir.Value:
    """A tensor of `member`'s storage (elements of `stored_dtype`, or already of the member's
    type in a form that keeps no storage inside a dispatch) with the member's own element type,
    converted by one elementwise op outside the dispatch."""
    if ir.RankedTensorType(stored.type).element_type == element_type(member.dtype):
        return stored
    return converted(stored, stored_dtype(member), member.dtype)


def sizes_of(lw, shape: tuple) -> list:
    """A shape of Lin sizes as ints (static sizes) and index values (run-time ones)."""
    return [size.const if size.is_const else lw.sizes.index(size) for size in shape]


def unit_axes(sizes) -> tuple:
    """The axes of static size 1 of `sizes` (Lin sizes, or ints and index values)."""
    return tuple(k for k, size in enumerate(sizes) if isinstance(size, (int, Lin)) and size == 1)


def compact(sizes) -> list:
    """`sizes` without its unit axes: the shape a form that loops inside a dispatch region keeps
    storage in (recurrence_region, recurrence_workgroup; `Storage.at` drops the indices of the
    unit axes). IREE-23: IREE's CollapseDimensionsPass drops such axes with a collapse_shape
    outside the region, where the loop-carried tensor does not exist. (Padding unit axes to 2
    instead left a strided view that a gather could not compile through.)"""
    units = unit_axes(sizes)
    return [size for k, size in enumerate(sizes) if k not in units]


def expanded(value: ir.Value, sizes: list) -> ir.Value:
    """A storage kept in its `compact` shape reshaped to `sizes` (a view, no copy)."""
    units = unit_axes(sizes)
    if not units:
        return value
    kept = [k for k in range(len(sizes)) if k not in units]
    # each unit axis joins the group of the kept axis before it (the first one's if none is)
    groups = [[k] for k in kept]
    for k in units:
        if groups:    # none when every axis is a unit: the compact storage has rank 0
            groups[max(sum(1 for j in kept if j < k) - 1, 0)].append(k)
    groups = [sorted(g) for g in groups]
    static = [size if isinstance(size, int) else DYNAMIC for size in sizes]
    element = ir.RankedTensorType(value.type).element_type
    return tensor.expand_shape(ir.RankedTensorType.get(static, element), value, groups,
                               [size for size in sizes if not isinstance(size, int)], static)


def emit_step(lw, group: RecurrenceGroup, storage: Storage, write: WritePoints, before=None) -> None:
    """Updates `storage.tensors` with every member's storage after step `storage.t`;
    `before(member)`, when given, runs before the member's points are written."""
    for member in group.members:
        if before is not None:
            before(member)
        def write_at(vars_: list, t_lo: Lin, t_hi: Lin, value: PointValue, clause=None) -> None:
            on = active(lw, group, storage, t_lo, t_hi)
            storage.tensors[member] = write(lw, member, storage, vars_, on, value, clause)
        steps = storage.steps or (Lin(0), member.shape[0])
        if member.window is not None and not covers_steps(member, *steps):
            # the slot still holds step t - window, and uncovered points must read as 0
            zero = scalar_ops.constant(member.dtype, 0)
            axes = [IndexVar("p", Lin(0), size) for size in member.shape[1:]]
            write_at(axes, Lin(0), member.shape[0], lambda _storage, _coords: zero)
        for clause in filter(lambda c: runs_in(group, storage, c.t_lo, c.t_hi), member.clauses):
            def value(current: Storage, coords: dict, clause=clause, member=member) -> ir.Value:
                return clause_value(clause_scope(lw, clause, current, coords), clause, member.dtype)
            write_at(list(clause.vars), clause.t_lo, clause.t_hi, value, clause)


def active(lw, group: RecurrenceGroup, storage: Storage, t_lo: Lin, t_hi: Lin) -> Optional[ir.Value]:
    """t_lo <= t < t_hi as an i1, or None when it holds at every step the loop runs (`storage.steps`)."""
    lo, hi = storage.steps or (Lin(0), group.t_var.extent)
    t = storage.t
    conditions = []
    if not _at_most(t_lo, lo):
        conditions.append(arith.cmpi(arith.CmpIPredicate.sge, t, lw.sizes.index(t_lo)))
    if not _at_most(hi, t_hi):
        conditions.append(arith.cmpi(arith.CmpIPredicate.slt, t, lw.sizes.index(t_hi)))
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else arith.andi(*conditions)


def runs_in(group: RecurrenceGroup, storage: Storage, t_lo: Lin, t_hi: Lin) -> bool:
    """Whether steps t_lo .. t_hi - 1 may meet the steps the loop runs (`storage.steps`): a
    clause that cannot is left out of the step (as if inactive)."""
    lo, hi = storage.steps or (Lin(0), group.t_var.extent)
    return not (_at_most(t_hi, lo) or _at_most(hi, t_lo))


def _at_most(a: Lin, b: Lin) -> bool:
    """Whether a <= b for every size (step bounds are never negative)."""
    return a == b or a == 0 or (a.is_const and b.is_const and a.const <= b.const)


def covers_every_step(member: RecMember) -> bool:
    """Whether clauses spanning every point of their step (all other axes whole) cover steps
    0 .. extent - 1 back to back, so no point of a slot keeps an older step's value."""
    return covers_steps(member, Lin(0), member.shape[0])


def covers_steps(member: RecMember, lo: Lin, hi: Lin) -> bool:
    """Whether such clauses cover steps lo .. hi - 1, one of them all, or back to back: a loop
    over those steps only (one span of recurrence_region's) then needs no clearing of the
    member's slot each step (a GRU's gates z[t in 1..T, i]: 3 x 256 scalar stores a step, in
    the span after step 0)."""
    whole = [c for c in member.clauses
             if all(v.lo == 0 and v.extent == size for v, size in zip(c.vars, member.shape[1:]))]
    if any(_at_most(c.t_lo, lo) and _at_most(hi, c.t_hi) for c in whole):
        return True
    reached, grew = lo, True
    while grew and reached != hi:
        grew = False
        for c in whole:
            if c.t_lo == reached and c.t_hi != reached:
                reached, grew = c.t_hi, True
    return reached == hi


def held_point(member: RecMember, storage: Storage, active: Optional[ir.Value], value: PointValue,
               kept: Callable[[], ir.Value]) -> ir.Value:
    """A scalar state's value at step t after one of its clauses: `value` where `active`
    holds, else what it was (written earlier in the step, or `kept()`, what its slot holds). It
    becomes `storage.current` for later reads in the step."""
    if active is None:
        scalar = value(storage, {})
    else:
        branch = scf.IfOp(active, [element_type(member.dtype)], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.yield_([value(storage, {})])
        with ir.InsertionPoint(branch.else_block):
            before = storage.current.get(member)
            scf.yield_([before if before is not None else kept()])
        scalar = branch.results[0]
    storage.current[member] = scalar
    return scalar


def clause_scope(lw, clause: RecClause, storage: Storage, coords: dict) -> Scope:
    """The scope of one point of `clause` at step t; `coords` gives the clause variables. Bounds
    proofs see t over the clause's own steps. A loop nested in another's step sees that step's
    index too (lw.loop_coordinates)."""
    t_var = storage.t_var
    steps = IndexVar(t_var.name, clause.t_lo, clause.t_hi - clause.t_lo)
    scope = Scope(lw, storage, {**lw.loop_coordinates, t_var: storage.t, **coords}, {t_var: steps}, STEP_RULES)
    scope.memo.update(storage.known)
    return scope


def with_step_values(lw, member: RecMember, clause: RecClause, storage: Storage) -> Storage:
    """`storage`, knowing the value of each of the clause's `step_reductions`, computed here
    once, before its points: each point computed them again before (a softmax's max and sum
    over the step's row, at every point of the row: N^2 work a step for a row of N)."""
    found = step_reductions(clause, member, storage.t_var, frozenset(lw.loop_coordinates))
    if not found:
        return storage
    scope = clause_scope(lw, clause, storage, {})
    for reduction in found:
        scope.value(reduction)
    known = storage.with_tensor(member, storage.tensors[member])
    known.known = scope.memo
    return known


def clause_value(scope: Scope, clause: RecClause, dtype) -> ir.Value:
    """The clause's body at the scope's point, 0 where its guard is false (a Generic, which has
    a body and a guard too, at one of its points)."""
    value = scope.value(clause.body)
    if clause.guard is None:
        return value
    return arith.select(scope.value(clause.guard), value, scalar_ops.constant(dtype, 0))


def when(active: Optional[ir.Value], unchanged: ir.Value, update: Callable[[], ir.Value]) -> ir.Value:
    """`update()` where `active` holds, else `unchanged` (of the same type)."""
    if active is None:
        return update()
    branch = scf.IfOp(active, [unchanged.type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.yield_([update()])
    with ir.InsertionPoint(branch.else_block):
        scf.yield_([unchanged])
    return branch.results[0]


def refresh_histories(lw, group: RecurrenceGroup, cut: Callable) -> None:
    """Each whole history of a member the step has taken (einc.ir.state_slices.is_state_history),
    taken again as the storage holds it now (`cut(v)`), before a tensor of the step is computed:
    one computed after a member is written reads that member's current step there (and in one
    dispatch, a read of the storage as it was before a write makes bufferization copy it)."""
    for v in group.step_work:
        if is_state_history(v) and id(v) in lw.values:
            lw.values[id(v)] = cut(v)
