"""A recurrence group whose steps compute whole tensors (gradient descent): a host loop over
steps, each step's tensors computed once by ordinary kernels, then the members' points.

The one-dispatch form (recurrence_region) evaluates everything per point with scalar loops, so a
gradient over a dataset read by every point of `w[k, d]` would be recomputed D times per step.
Here the step loop is the host loop of recurrence_host; at the top of each step the state slices
(`w[k - 1]`, einc.ir.state_slices) are cut from the storage and every tensor of
`group.step_work` is lowered by the ordinary rules into the loop body, once. A step costs a few
kernel launches (microseconds), which a tensor-sized step dwarfs.
"""
from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, tensor

from einc.ir import affine
from einc.ir.nodes import Generic, RecurrenceGroup
from einc.ir.state_slices import computable_after, is_part_of_row, is_state_history, is_state_slice
from einc.mlir.recurrences import host as recurrence_host
from einc.mlir.recurrences.flat_storage import FlatStorage, as_index, block, unflattened
from einc.mlir.recurrences.scalars import Storage
from einc.mlir.recurrences.step import refresh_histories
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type

DYNAMIC = ir.ShapedType.get_dynamic_size()
FORM = (f"a host loop over chunks of up to {recurrence_host.CHUNK_STEPS} steps: each step computes its "
        "tensors once with ordinary kernels, then one kernel per clause")     # for --explain


def emit_group(lw, group: RecurrenceGroup) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order."""
    return recurrence_host.emit_group(lw, group, lambda storage: _step_lowering(lw, group, storage))


def _step_lowering(lw, group: RecurrenceGroup, storage: Storage) -> tuple:
    """A lowering for one step's body: it sees what `lw` lowered before the loop, plus this
    step's tensors, which it treats as given (its memo is dropped with the loop body); and what
    to run before each member's points: the step's tensors computable by then (a slice of a
    member's current step once that member is written, einc.ir.state_slices.computable_after)."""
    step = lw.inside_step(group)
    step.loop_coordinates = {**lw.loop_coordinates, group.t_var: storage.t}
    after = computable_after(group)
    pending = list(group.step_work)

    def before(member) -> None:
        written = group.members.index(member)
        for v in [v for v in pending if after[id(v)] <= written]:
            pending.remove(v)
            if is_state_slice(v):
                step.values[id(v)] = _slice(step, v, storage)
                continue
            refresh_histories(step, group, lambda h: _slice(step, h, storage))
            step.lower(v)
    return step, before


def _slice(lw, v: Generic, storage: FlatStorage) -> ir.Value:
    """The member's state at step t - c (c >= 0, as the storage holds it now), clamped to step
    0 at the first steps, where no clause reading it is active and the value goes unused: one
    row of the flat storage (the block of it that the slice's variables run over,
    is_part_of_row)."""
    read = v.body
    member = read.member
    if is_state_history(v):          # stored whole (chunks.ReadPlan): every step at its own row
        whole = unflattened(storage.tensors[member], storage.shapes[member])
        return block(lw, whole, v.vars) if is_part_of_row(v) else whole
    back = affine.affine_of(read.subs[0]).const
    slot = storage.slot(member, arith.maxsi(arith.addi(storage.t, index_const(back)), index_const(0)))
    rest = storage.shapes[member][1:]
    row = storage.row_elements(member)
    static = row if isinstance(row, int) else DYNAMIC
    first = arith.muli(slot, as_index(row))
    flat = ir.RankedTensorType.get([static], element_type(member.dtype))
    elements = tensor.extract_slice(flat, storage.tensors[member], [first], [] if isinstance(row, int) else [row],
                                    [], [DYNAMIC], [static], [1])
    state = unflattened(elements, rest)
    return block(lw, state, v.vars) if is_part_of_row(v) else state
