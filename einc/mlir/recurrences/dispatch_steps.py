"""A recurrence group whose steps compute whole tensors, as ONE dispatch (llvm-cpu).

The host loop (recurrence_tensor_steps) pays a few kernel launches a step, 10-40 µs, which a
step of small tensors (ADMM's 5-vectors, an inner loop of a few iterations) never earns back.
Here the step loop runs inside one dispatch region (recurrence_region) and each tensor of
`group.step_work` is computed once a step, before the points of the first member that needs
it, by scalar loops (sums in vector lanes, recurrence_lanes): a state slice is a copy of the
storage's row, a loop nested in the step runs its own loops there (its storage made anew each
step), a scalar is an SSA value. A tensor of a size known at build time lives on the
dispatch's stack (all of them within STACK_BUDGET); one of a run-time size or larger is kept in
a buffer of the dispatch, a result nothing outside reads, and so is the storage of a loop nested
directly in the step (a loop nested deeper keeps its storage on the stack). What does not fit
(MAX_BINDINGS, MAX_CONSTANTS) keeps the host loop (`misfit`), and so does a step whose work
outweighs the host loop's kernel launches (LAUNCH_OPS each): those kernels run on every core.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith

from einc.ir import affine
from einc.ir.nodes import (Generic, IndexRef, Op, Read, RecMember, RecValue, RecurrenceGroup, Reduce, Stack, StateRead,
                           Value, free_vars)
from einc.ir.traversal import fold
from einc.ir.state_slices import computable_after, is_part_of_row, is_state_history, is_state_slice
from einc.mlir.core.locations import location_of
from einc.mlir.core.loops import point_loops, var_bounds
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type, tensor_type
from einc.mlir.recurrences import region as recurrence_region
from einc.mlir.recurrences.flat_storage import block
from einc.mlir.recurrences.lanes import (STEP_RULES, Lanes, clause_vector, counted_loop, round_down,
                                        store_consecutive, vectorisable, width_of)
from einc.mlir.recurrences.packed_weights import pack_weights
from einc.mlir.recurrences.scalars import Scope, Storage, load_element, store_element
from einc.passes.step_cost import step_operations
from einc.mlir.recurrences.step import (clause_value, compact, refresh_histories, runs_in, sizes_of, storage_shape,
                                       stored_dtype)

STACK_BUDGET = 8192       # a step's tensors on the stack: a quarter of IREE's 32 KB (bufferization adds copies)
FORM = "one dispatch whose loops run every step, computing the step's tensors once a step with scalar loops"
POINT_NODES = (IndexRef, Op, Read, Reduce, StateRead, Stack)     # what a step's scalar code computes
LAUNCH_OPS = 20_000       # scalar operations a host loop's kernel launch is worth (measured 5-40 us a launch)
MAX_BINDINGS = 28         # buffers a dispatch binds, with a margin below IREE's 32 (IREE-220)
MAX_CONSTANTS = 40        # words of push constants (a binding's offset, a run-time size): IREE takes 64 at most


def emit_group(lw, group: RecurrenceGroup) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order."""
    pack_weights(lw, group, streams=False)
    work = StepWork(lw, group, in_results=True)

    def loops(units: dict, tensors: list) -> list:
        work.carried = [_buffer(lw, key, k) for k, key in enumerate(work.results)]
        return recurrence_region.steps(lw, group, units, tensors, work) + work.carried
    return recurrence_region.in_one_dispatch(lw, group, loops, tuple(map(_buffer_type, work.results)))


class StepWork:
    """The tensors a group's step computes, for recurrence_region.steps: a lowering for one step
    that knows them, and what to compute before each member's points (a tensor once the members
    it reads at the current step are written, einc.ir.state_slices.computable_after). A tensor
    of a run-time size or past STACK_BUDGET (`_placement`; in the group's own dispatch only,
    `in_results`) is computed into a buffer of the dispatch, a result nothing outside reads,
    carried by the loops (`carried`), and so is the storage of such a member of a loop nested
    in the step; the others are made on the stack each step."""

    def __init__(self, lw, group: RecurrenceGroup, in_results: bool):
        self.lw, self.group = lw, group
        self.after = computable_after(group)
        self.results = _placement(group)[0] if in_results else []
        self.carried: list = []
        self.current: dict = {}      # id of a tensor or member of `results` -> its buffer in this step

    def begin(self, storage: Storage, carried: list) -> tuple:
        group = self.group
        self.current = {id(v): value for v, value in zip(self.results, carried)}
        step = self.lw.inside_step(group)
        step.in_dispatch = True
        step.loop_coordinates = {**self.lw.loop_coordinates, group.t_var: storage.t}
        needed = _needed(group, storage)
        pending = [v for v in group.step_work if id(v) in needed]

        def before(member) -> None:
            written = group.members.index(member)
            for v in [v for v in pending if self.after[id(v)] <= written]:
                pending.remove(v)
                # with what it needs that the step lowering has not computed (a loop nested in
                # the step reads tensors of the slices that are not in `step_work`)
                for u in step.pending(v):
                    if not is_state_slice(u):
                        refresh_histories(step, group, lambda h: _slice(step, h, storage, None))
                    step.values[id(u)] = self._computed(step, u, storage)
        return step, before

    def end(self) -> list:
        return [self.current[id(v)] for v in self.results]

    def _computed(self, step, v: Value, storage: Storage) -> ir.Value:
        """One tensor (or scalar) of the step, computed where the insertion point is."""
        if isinstance(v, RecValue):
            inner = v.group
            if id(inner) not in step.groups:
                work = StepWork(step, inner, in_results=False) if inner.step_work else None
                buffers = {m: self.current[id(m)] for m in inner.members if id(m) in self.current}
                shaped, final = recurrence_region.in_this_dispatch(step, inner, work, buffers)
                self.current.update((id(m), f) for m, f in zip(inner.members, final) if m in buffers)
                step.groups[id(inner)] = shaped
            return step.groups[id(inner)][inner.members.index(v.member)]
        if is_state_slice(v) and is_state_history(v):
            return _slice(step, v, storage, None)
        if is_state_slice(v) or isinstance(v, Generic):
            out = self.current.get(id(v))
            value = (_slice if is_state_slice(v) else _generic)(
                step, v, storage, out if out is not None else _buffer(step, v))
            if id(v) in self.current:
                self.current[id(v)] = value
            return value
        scope = Scope(step, storage, dict(step.loop_coordinates), {}, STEP_RULES)
        with location_of(v):      # by its rule: the step lowering counts `v` as computed before the loop
            return STEP_RULES[type(v)](scope, v)     # a scalar, or a Stack's tensor


def _needed(group: RecurrenceGroup, storage: Storage) -> set:
    """The ids of the values the clauses that run in the loop's steps (`storage.steps`) read,
    loops nested in the step included: the tensors of the step computed there (at step 0 a
    slice at t - 1 would read a row nothing wrote)."""
    roots = [u for m in group.members for c in m.clauses if runs_in(group, storage, c.t_lo, c.t_hi)
             for u in (c.body, c.guard) if u is not None]
    seen: set = set()
    while roots:
        v = roots.pop()
        if id(v) not in seen:
            seen.add(id(v))
            if isinstance(v, RecValue):      # a loop nested in the step; another is computed before it
                roots.extend(v.group.code() if v.group.enclosing is not None else ())
            else:
                roots.extend(v.operands())
    return seen


def _movable(v: Value) -> bool:
    """Whether a tensor of the step may be kept in a buffer of the dispatch (`_placement`)."""
    return isinstance(v, Generic) and v.rank > 0 and not v.dtype.is_bool and \
        not (is_state_slice(v) and is_state_history(v))


def _buffer(lw, key, result: Optional[int] = None) -> ir.Value:
    """An uninitialised tensor for a tensor of the step or a nested loop's member (`key`), its
    own op (CSE would merge equal ones, and one buffer cannot back two results): the buffer of
    the dispatch's `result`-th extra result is marked with that number, since two tensors of one
    call's span, or members of one function's loop called twice, are otherwise marked alike."""
    tag = "" if result is None else f" (result {result})"
    if isinstance(key, RecMember):
        empty = recurrence_region.storage_buffer(lw, key)
        empty.owner.attributes["einc.storage"] = ir.StringAttr.get(f"{key.name}{tag}")
        return empty
    empty = lw.sizes.empty(tuple(key.shape), element_type(stored_dtype(key)))
    empty.owner.attributes["einc.storage"] = ir.StringAttr.get(f"step tensor at {key.span}{tag}")
    return empty


def _buffer_type(key) -> tuple:
    """(element type, shape) of `_buffer(key)`."""
    if isinstance(key, RecMember):
        return stored_dtype(key), tuple(compact(storage_shape(key)))
    return stored_dtype(key), tuple(key.shape)


def _buffer_bytes(key) -> Optional[int]:
    dtype, shape = _buffer_type(key)
    return _bytes(dtype, shape) if all(s.is_const for s in shape) else None


def _slice(step, v: Generic, storage: Storage, out: Optional[ir.Value]) -> ir.Value:
    """The member's state at step t - c (c >= 0), clamped to step 0 at the first steps (where
    no clause reading it is active): one row of its storage (the block of it that the slice's
    variables run over, is_part_of_row) copied into `out` (a view would be read after the step
    writes the storage, and bufferization would then copy the whole storage); the whole history
    for a member stored whole (is_state_history)."""
    member = v.body.member
    if is_state_history(v):
        whole = recurrence_region.expanded(storage.tensors[member], sizes_of(step, storage_shape(member)))
        return block(step, whole, v.vars) if is_part_of_row(v) else whole
    back = affine.affine_of(v.body.subs[0]).const
    slot = storage.slot(member, arith.maxsi(arith.addi(storage.t, index_const(back)), index_const(0)))
    starts = [step.sizes.index(var.lo) for var in v.vars]      # the row's block its variables run over

    def point(ivs: list, carried: list) -> list:
        at = [arith.addi(iv, lo) for iv, lo in zip(ivs, starts)]
        value = load_element(storage.tensors[member], storage.at(member, [slot] + at), member.dtype)
        return [store_element(value, carried[0], ivs)]
    return point_loops([(index_const(0), step.sizes.index(var.extent)) for var in v.vars], [out], point)[0]


def _generic(step, v: Generic, storage: Storage, out: ir.Value) -> ir.Value:
    """`v` point by point into `out`, each point its body (0 where its guard fails) at the
    coordinates minus each variable's `lo`; along its last variable in vector lanes where the
    body has a vector form (a gradient's `sum[n](d[n] * X[n, j])` reads rows of X in lanes)."""
    vars_ = list(v.vars)

    def scope_at(ivs: list) -> Scope:
        return Scope(step, storage, {**step.loop_coordinates, **dict(zip(vars_, ivs))}, {}, STEP_RULES)

    def at(ivs: list) -> list:
        return [iv if var.lo == 0 else arith.subi(iv, step.sizes.index(var.lo)) for iv, var in zip(ivs, vars_)]

    def point(ivs: list, carried: list) -> list:
        return [store_element(clause_value(scope_at(ivs), v, v.dtype), carried[0], at(ivs))]
    width = _lanes(step, v)
    if width is None:
        return point_loops(var_bounds(step, vars_), [out], point)[0]
    lane = vars_[-1]
    (lo, hi), = var_bounds(step, [lane])

    def row(ivs: list, carried: list) -> list:
        def chunk(base: ir.Value, carried: list) -> list:
            value = clause_vector(Lanes(scope_at(ivs), lane, base, width), v, v.dtype)
            return [store_consecutive(value, carried[0], at(ivs + [base]))]
        end = round_down(lo, hi, width)
        carried = counted_loop(lo, end, width, carried, chunk)
        return counted_loop(end, hi, 1, carried, lambda j, carried: point(ivs + [j], carried))
    return point_loops(var_bounds(step, vars_[:-1]), [out], row)[0]


def _lanes(step, v: Generic) -> Optional[int]:
    """The vector width to compute `v` with along its last variable, or None."""
    if not step.target.has_vector_lanes or not v.vars or v.dtype.is_bool:
        return None
    lane, width = v.vars[-1], width_of(v.dtype)
    if lane.extent.is_const and lane.extent.const < width:
        return None
    scope = Scope(step, None, dict(step.loop_coordinates), {}, STEP_RULES)
    return width if all(vectorisable(scope, u, lane) for u in (v.body, v.guard) if u is not None) else None


def misfit(group: RecurrenceGroup, target) -> Optional[str]:
    """Why the group's steps cannot run in one dispatch, or None when they can."""
    if not target.loops_in_dispatch:
        return f"{target.name} runs no loops inside a dispatch"
    results, used, why = _placement(group)
    why = why or _heavier_than_launches(group)
    if why is None and used > STACK_BUDGET:
        why = f"its step's tensors take {used:,} bytes, more than the {STACK_BUDGET:,} a dispatch's stack gives them"
    captured = _captured_tensors(group)
    bindings = len(group.members) + len(results) + len(captured) + 1    # + packed scalars
    shapes = [storage_shape(m) for m in group.members] + [_buffer_type(k)[1] for k in results] + \
        [v.shape for v in captured]
    sizes = {str(s) for shape in shapes for s in shape if not s.is_const}
    words = 2 * bindings + 2 * len(sizes)
    if why is None and (bindings > MAX_BINDINGS or words > MAX_CONSTANTS):
        why = (f"its dispatch would bind about {bindings} buffers ({len(results)} for tensors of its step) and "
               f"take about {words} words of constants, more than {MAX_BINDINGS} or {MAX_CONSTANTS}")
    return why


def _captured_tensors(group: RecurrenceGroup) -> list:
    """The tensors computed before the loop that the dispatch reads (a binding each; 0-d ones
    are packed, dispatch_captures): those its code and its nested loops' code read."""
    work = {id(v) for v in group.step_work}
    stack, seen, tensors = group.code() + list(group.step_work), set(), {}
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, Read) and v.tensor.rank > 0 and id(v.tensor) not in work and not is_state_slice(v.tensor) \
                and not (isinstance(v.tensor, RecValue) and v.tensor.group.enclosing is not None):
            tensors[id(v.tensor)] = v.tensor
        if isinstance(v, RecValue):
            stack.extend(v.group.code() + list(v.group.step_work) if v.group.enclosing is not None else ())
        else:
            stack.extend(v.operands())
    return list(tensors.values())


def _heavier_than_launches(group: RecurrenceGroup) -> Optional[str]:
    """Why the host loop would run the step faster, or None: its kernels run on every core and in
    vector lanes, so a step whose work (einc.passes.step_cost; unknown at run-time sizes, which
    keeps the dispatch) outweighs what the host loop pays to launch them, LAUNCH_OPS a kernel,
    runs there. The estimate is rough, and the dispatch wins by far more where it wins (a step
    of 136 k operations in one dispatch 2.9 against 20 ms a call, one of 110 k 150 against 87 us
    a step), so the line is drawn where the host loop clearly wins (a TCN's adjoint: 1.8 M in 3
    kernels, 5.3 against 8.5 ms; docs/DECISIONS.md)."""
    work = step_operations(group)
    launches = _host_launches(group)
    if work is None or work <= launches * LAUNCH_OPS:
        return None
    return (f"a step runs about {work:,} scalar operations, more than the {launches} kernel launches of a host "
            f"loop's step cost ({LAUNCH_OPS:,} each)")


def _host_launches(group: RecurrenceGroup) -> int:
    """The kernels a host loop launches a step: one per tensor of the step (not a slice, a view
    there), per loop nested in it, per clause."""
    tensors = [v for v in group.step_work if not is_state_slice(v) and not isinstance(v, RecValue)]
    loops = {id(v.group) for v in group.step_work if isinstance(v, RecValue)}
    return len(tensors) + len(loops) + sum(len(m.clauses) for m in group.members)


def _placement(group: RecurrenceGroup) -> tuple:
    """(the tensors of the step and members of loops nested in it kept in buffers of the
    dispatch, the bytes of those made on its stack, why the step cannot run in a dispatch or
    None). One of a run-time size goes to a buffer, and so does one that would take the stack
    past STACK_BUDGET (after what must be there: what the nested loops compute and read)."""
    on_demand: list = []
    used, why = _stack_bytes(group, frozenset(), in_results=True, on_demand=on_demand)
    nested = {id(v.group): v.group for v in group.step_work if isinstance(v, RecValue)}
    movable = [v for v in group.step_work if _movable(v)] + [m for g in nested.values() for m in g.members] + on_demand
    results, placed = [], set()
    for key in movable:
        if id(key) in placed:       # a tensor two nested loops read
            continue
        placed.add(id(key))
        size = _buffer_bytes(key)
        if size is None or used + size > STACK_BUDGET:
            results.append(key)
        else:
            used += size
    return results, used, why


def _stack_bytes(group: RecurrenceGroup, outer_work: frozenset, in_results: bool, on_demand=None) -> tuple:
    """(the bytes of the step's tensors and nested storage made on the stack, why they cannot be
    made in a dispatch or None); `outer_work`: the ids of the tensors of the steps `group` runs
    in; `in_results`: whether a tensor of a run-time size or past the budget may be kept in a
    buffer of the dispatch (StepWork); `on_demand`, where given, collects the tensors the
    dispatch's own step computes for its nested loops only (`_code_misfit`), which may be too."""
    work = outer_work | {id(v) for v in group.step_work}
    used, why, groups = 0, None, set()
    for v in group.step_work:
        if isinstance(v, RecValue):
            if id(v.group) not in groups:
                groups.add(id(v.group))
                more, why = _nested_bytes(v.group, work, in_results, on_demand if in_results else None)
                used += more
        elif isinstance(v, (Generic, Stack)):
            what = "reads a slice of a state" if is_state_slice(v) else "computes a tensor"
            if v.dtype.is_bool and isinstance(v, Stack):
                why = f"its step {what} of bools"
            elif not (in_results and _movable(v)) and not (is_state_slice(v) and is_state_history(v)):
                why = _tensor_misfit(v, what)
                used += _bytes(v.dtype, v.shape) if why is None else 0
        elif v.rank > 0 or not isinstance(v, POINT_NODES):
            why = f"its step computes a {type(v).__name__} whole"
        if why is not None:
            return used, why
    more, why = _code_misfit(group.code() + [v for v in group.step_work if not isinstance(v, RecValue)], work,
                             on_demand)
    return used + more, why


def _nested_bytes(inner: RecurrenceGroup, work: frozenset, in_results: bool, on_demand=None) -> tuple:
    """`_stack_bytes` of a loop nested in a step, with its own storage unless that may be kept
    in buffers of the dispatch (`in_results`: the loop runs in the step of the dispatch's own
    group; `_placement` places it, and the `on_demand` tensors that step computes for it)."""
    shapes = [storage_shape(m) for m in inner.members]
    static = all(s.is_const for shape in shapes for s in shape)
    if not static and not in_results:
        return 0, "a loop nested in its step keeps a run-time size"
    used, why = _stack_bytes(inner, work, in_results=False, on_demand=on_demand)
    own = 0 if in_results else sum(_bytes(m.dtype, shape) for m, shape in zip(inner.members, shapes))
    return used + own, why


def _bytes(dtype, shape) -> int:
    return int(np.prod([s.const for s in shape])) * dtype.numpy.itemsize


def _tensor_misfit(v: Value, what: str) -> Optional[str]:
    """Why a tensor of the step cannot be made on the dispatch's stack (a literal array of
    bools: IREE-80), or None."""
    if v.dtype.is_bool and isinstance(v, Stack):
        return f"its step {what} of bools"
    if not all(s.is_const for s in v.shape):
        return f"its step {what} of a run-time size"
    return None


def _code_misfit(roots: list, work: frozenset, on_demand: Optional[list] = None) -> tuple:
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
            elif on_demand is not None and _movable(v):
                on_demand.append(v)
            elif isinstance(v, (Generic, Stack)):
                why = _tensor_misfit(v, "computes a tensor")
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
