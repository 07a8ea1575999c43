"""Weights read across a step's lanes, packed once before the step loop (the CPU region form).

A step like tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i]) computes its points along i in vector
lanes, but W[i, j] moves along i by whole rows: each lane's sum is then a dot product of its own,
whose vector partials need a transpose tree per group of lanes. With W's last two axes swapped
once before the loop (W'[j, i]), the read runs along the lanes and the sums take the in-order
form the LSTM's U[q, j, i] gets (recurrence_lanes: several vectors at once, several
accumulators each, no horizontal sums). The copy is one pass over W per call, where the loop
reads W once per step.
"""
from __future__ import annotations

from iree.compiler.dialects import linalg

from einc.ir import affine
from einc.ir.nodes import IndexVar, Input, Read, RecurrenceGroup, Reduce, step_code
from einc.mlir.core.types import element_type
from einc.mlir.recurrences.lanes import sum_layout, swapped


def pack_weights(lw, group: RecurrenceGroup, streams: bool) -> None:
    """Emit, at the current (function-level) insertion point, the swapped copy of every tensor a
    sum in one of the group's clauses reads across the clause's lanes (`packable`), where the
    host's layout has enough independent chains for the in-order form (with 2 AVX-512 ones, it
    was no faster than the dot products: the RNN H = 64 step 5.9 against 6.2 M steps/s). Where
    the group `streams` its matrices every step (recurrence_alternate), only if the layout says
    so: a packed copy's lanes read a strip of every row, which streamed slower from L3 on a Zen 3
    than the rows read whole."""
    layout = sum_layout(lw)
    if not lw.target.has_vector_lanes or not layout.packs or (streams and not layout.packs_streamed):
        return
    for clause in (c for m in group.members for c in m.clauses if c.vars):
        lane = clause.vars[-1]
        sums = [v for v in step_code([clause.body, clause.guard]) if isinstance(v, Reduce)]
        for read in step_code([p for r in sums for p in (r.body, r.guard)]):
            if isinstance(read, Read) and packable(lw, read, lane):
                if id(read.tensor) not in lw.packed:
                    lw.packed[id(read.tensor)] = _swapped(lw, read.tensor)
                _record(lw, group, read.tensor)


def _record(lw, group: RecurrenceGroup, tensor) -> None:
    """Name `tensor` among the weights `group`'s steps read packed (for `einc build --explain`)."""
    names = lw.packed_weights.setdefault(id(group), [])
    name = tensor.name if isinstance(tensor, Input) else f"the tensor at {tensor.span}"
    if name not in names:
        names.append(name)


def packable(lw, read: Read, lane: IndexVar) -> bool:
    """Whether `read` moves with `lane` through its second-last subscript only, one row per lane:
    its swapped copy is then read along its last axis."""
    if len(read.subs) < 2 or not lw.is_program_level(read.tensor):
        return False
    *outer, row, col = read.subs
    row_lin = affine.affine_of(row)
    return row_lin is not None and row_lin.terms.get(lane) == 1 and \
        not any(lane in lw.free_vars(s) for s in outer + [col])


def _swapped(lw, tensor):
    value = lw.lower(tensor)
    rank = len(tensor.shape)
    init = lw.sizes.empty(swapped(tuple(tensor.shape)), element_type(tensor.dtype))
    return linalg.transpose(value, outs=[init], permutation=list(swapped(tuple(range(rank))))).results[0]
