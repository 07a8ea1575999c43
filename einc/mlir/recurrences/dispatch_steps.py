"""A recurrence group whose steps compute whole tensors, as ONE dispatch (llvm-cpu).

The host loop (recurrence_tensor_steps) pays a few kernel launches a step, 10-40 µs, which a
step of small tensors (ADMM's 5-vectors, an inner loop of a few iterations) never earns back.
Here the step loop runs inside one dispatch region (recurrence_region) and each tensor of
`group.step_work` is computed once a step, before the points of the first member that needs
it, by scalar loops (sums in vector lanes, recurrence_lanes) into a tensor local to the step:
a state slice is a view of the storage's row, a loop nested in the step runs its own loops
there (its storage made anew each step), a scalar is an SSA value. Those tensors live on the
dispatch's stack, so the form takes only steps whose tensors have sizes known at build time
and fit STACK_BUDGET (`misfit`); the rest keep the host loop.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, tensor

from einc.ir import affine
from einc.ir.nodes import (Generic, IndexRef, Op, Read, RecValue, RecurrenceGroup, Reduce, Stack, StateRead, Value,
                           free_vars)
from einc.ir.traversal import fold
from einc.ir.state_slices import computable_after, is_state_history, is_state_slice
from einc.mlir.core.locations import location_of
from einc.mlir.core.loops import point_loops, var_bounds
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type, tensor_type
from einc.mlir.recurrences import region as recurrence_region
from einc.mlir.recurrences.lanes import STEP_RULES
from einc.mlir.recurrences.packed_weights import pack_weights
from einc.mlir.recurrences.scalars import Scope, Storage
from einc.mlir.recurrences.step import sizes_of, storage_shape

STACK_BUDGET = 16384      # bytes of a step's tensors, half IREE's 32 KB stack limit for a CPU dispatch
FORM = "one dispatch whose loops run every step, computing the step's tensors once a step with scalar loops"
POINT_NODES = (IndexRef, Op, Read, Reduce, StateRead, Stack)     # what a step's scalar code computes


def emit_group(lw, group: RecurrenceGroup) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order."""
    pack_weights(lw, group, streams=False)
    return recurrence_region.in_one_dispatch(
        lw, group, lambda units, tensors: recurrence_region.steps(lw, group, units, tensors, _step_lowering(lw, group)))


def _step_lowering(lw, group: RecurrenceGroup):
    """For recurrence_region.steps: a lowering for one step that knows the step's tensors, and
    what to compute before each member's points (a tensor once the members it reads at the
    current step are written, einc.ir.state_slices.computable_after)."""
    after = computable_after(group)

    def lowering(storage: Storage) -> tuple:
        step = lw.inside_step(group)
        step.in_dispatch = True
        step.loop_coordinates = {**lw.loop_coordinates, group.t_var: storage.t}
        pending = list(group.step_work)

        def before(member) -> None:
            written = group.members.index(member)
            for v in [v for v in pending if after[id(v)] <= written]:
                pending.remove(v)
                # with what it needs that the step lowering has not computed (a loop nested in
                # the step reads tensors of the slices that are not in `step_work`)
                for u in step.pending(v):
                    if not is_state_slice(u):
                        _refresh_histories(step, group, storage)
                    step.values[id(u)] = _computed(step, u, storage)
        return step, before
    return lowering


def _refresh_histories(step, group: RecurrenceGroup, storage: Storage) -> None:
    """Each whole history the step reads (is_state_history), as the storage holds it now: a
    tensor computed after a member is written reads that member's current step there, and a
    read of the storage as it was before a write would make bufferization copy it."""
    for v in group.step_work:
        if is_state_slice(v) and is_state_history(v) and id(v) in step.values:
            step.values[id(v)] = _slice(step, v, storage)


def _computed(step, v: Value, storage: Storage) -> ir.Value:
    """One tensor (or scalar) of the step, computed where the insertion point is."""
    if is_state_slice(v):
        return _slice(step, v, storage)
    if isinstance(v, RecValue):
        inner = v.group
        if id(inner) not in step.groups:
            step.groups[id(inner)] = recurrence_region.in_this_dispatch(
                step, inner, _step_lowering(step, inner) if inner.step_work else None)
        return step.groups[id(inner)][inner.members.index(v.member)]
    if isinstance(v, Generic):
        return _generic(step, v, storage)
    scope = Scope(step, storage, dict(step.loop_coordinates), {}, STEP_RULES)
    with location_of(v):      # by its rule: the step lowering counts `v` as computed before the loop
        return STEP_RULES[type(v)](scope, v)     # a scalar, or a Stack's tensor


def _slice(step, v: Generic, storage: Storage) -> ir.Value:
    """The member's state at step t - c (c >= 0), clamped to step 0 at the first steps (where
    no clause reading it is active): a copy of one row of its storage (a view would be read
    after the step writes the storage, and bufferization would then copy the whole storage);
    the whole history for a member stored whole (is_state_history)."""
    member = v.body.member
    if is_state_history(v):
        return recurrence_region.expanded(storage.tensors[member], sizes_of(step, storage_shape(member)))
    back = affine.affine_of(v.body.subs[0]).const
    slot = storage.slot(member, arith.maxsi(arith.addi(storage.t, index_const(back)), index_const(0)))
    rest = member.shape[1:]
    out = tensor.empty([size.const for size in rest], element_type(member.dtype))

    def point(ivs: list, carried: list) -> list:
        value = tensor.extract(storage.tensors[member], storage.at(member, [slot] + ivs))
        return [tensor.insert(value, carried[0], ivs)]
    return point_loops([(index_const(0), index_const(size.const)) for size in rest], [out], point)[0]


def _generic(step, v: Generic, storage: Storage) -> ir.Value:
    """`v` point by point into a tensor of the step, each point its body (0 where its guard
    fails) at the coordinates minus each variable's `lo`."""
    vars_ = list(v.vars)
    out = tensor.empty([size.const for size in v.shape], element_type(v.dtype))

    def point(ivs: list, carried: list) -> list:
        scope = Scope(step, storage, {**step.loop_coordinates, **dict(zip(vars_, ivs))}, {}, STEP_RULES)
        value = scope.value(v.body)
        if v.guard is not None:
            value = arith.select(scope.value(v.guard), value, arith.constant(value.type, 0 if v.dtype.is_int else 0.0))
        at = [iv if var.lo == 0 else arith.subi(iv, step.sizes.index(var.lo)) for iv, var in zip(ivs, vars_)]
        return [tensor.insert(value, carried[0], at)]
    return point_loops(var_bounds(step, vars_), [out], point)[0]


def misfit(group: RecurrenceGroup, target) -> Optional[str]:
    """Why the group's steps cannot run in one dispatch, or None when they can."""
    if not target.loops_in_dispatch:
        return f"{target.name} runs no loops inside a dispatch"
    used, why = _stack_bytes(group, frozenset())
    if why is None and used > STACK_BUDGET:
        why = f"its step's tensors take {used:,} bytes, more than the {STACK_BUDGET:,} a dispatch's stack gives them"
    return why


def _stack_bytes(group: RecurrenceGroup, outer_work: frozenset) -> tuple:
    """(the bytes the step's tensors and nested storage take, why they cannot be made in a
    dispatch or None); `outer_work`: the ids of the tensors of the steps `group` runs in."""
    work = outer_work | {id(v) for v in group.step_work}
    used, why, groups = 0, None, set()
    for v in group.step_work:
        if isinstance(v, RecValue):
            if id(v.group) not in groups:
                groups.add(id(v.group))
                more, why = _nested_bytes(v.group, work)
                used += more
        elif is_state_slice(v):
            why = _tensor_misfit(v.body.member.dtype, v.shape, "reads a slice of a state")
            used += _bytes(v.dtype, v.shape) if why is None and not is_state_history(v) else 0
        elif isinstance(v, (Generic, Stack)):
            why = _tensor_misfit(v.dtype, v.shape, "computes a tensor")
            used += _bytes(v.dtype, v.shape) if why is None else 0
        elif v.rank > 0 or not isinstance(v, POINT_NODES):
            why = f"its step computes a {type(v).__name__} whole"
        if why is not None:
            return used, why
    more, why = _code_misfit(group.code() + [v for v in group.step_work if not isinstance(v, RecValue)], work)
    return used + more, why


def _nested_bytes(inner: RecurrenceGroup, work: frozenset) -> tuple:
    """`_stack_bytes` of a loop nested in a step, its own storage included."""
    if any(m.dtype.is_bool for m in inner.members):
        return 0, "a loop nested in its step keeps bools"
    shapes = [storage_shape(m) for m in inner.members]
    if not all(s.is_const for shape in shapes for s in shape):
        return 0, "a loop nested in its step keeps a run-time size"
    used, why = _stack_bytes(inner, work)
    return used + sum(_bytes(m.dtype, shape) for m, shape in zip(inner.members, shapes)), why


def _bytes(dtype, shape) -> int:
    return int(np.prod([s.const for s in shape])) * dtype.numpy.itemsize


def _tensor_misfit(dtype, shape, what: str) -> Optional[str]:
    if dtype.is_bool:
        return f"its step {what} of bools"
    if not all(s.is_const for s in shape):
        return f"its step {what} of a run-time size"
    return None


def _code_misfit(roots: list, work: frozenset) -> tuple:
    """(the bytes of the tensors the step computes whole on demand, why the step's scalar code
    cannot compute a value under `roots` or None). A value is the step's own where it has free
    variables (computed at each point: it needs a scalar rule, which a kernel of the host loop
    would not) or depends on the state or a tensor of the step (`work`) without being one
    (computed whole, before the loop nested in the step that reads it); the rest is lowered
    before the loop."""
    memo: dict = {}
    reads: dict = {}
    used, stack, seen = 0, list(roots), set()
    while stack:
        v = stack.pop()
        if id(v) in seen or isinstance(v, RecValue) or is_state_slice(v):
            continue
        seen.add(id(v))
        if id(v) not in work:
            if free_vars(v, memo):
                if not isinstance(v, POINT_NODES):
                    return used, f"its step computes a {type(v).__name__} at each point"
            elif not _in_step(v, work, reads):
                continue
            elif isinstance(v, (Generic, Stack)):
                why = _tensor_misfit(v.dtype, v.shape, "computes a tensor")
                if why is not None:
                    return used, why
                used += _bytes(v.dtype, v.shape)
            elif v.rank > 0 or not isinstance(v, POINT_NODES):
                return used, f"its step computes a {type(v).__name__} whole"
        stack.extend(v.operands())
    return used, None


def _in_step(v: Value, work: frozenset, memo: dict) -> bool:
    """Whether `v` reads the state or a tensor of the step (`work`); a step index is a free variable."""
    def parts(u: Value) -> tuple:
        return () if id(u) in work or isinstance(u, RecValue) else u.operands()

    def of(u: Value, below: list) -> bool:
        return id(u) in work or isinstance(u, StateRead) or (
            isinstance(u, RecValue) and u.group.enclosing is not None) or any(below)
    return fold(v, parts, of, memo)
