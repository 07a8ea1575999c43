"""A recurrence group as a host loop over steps (vulkan-spirv, groups that are not all scalar
states, which recurrence_kernel runs): one kernel per clause and step.

SPIR-V cannot compile the one-dispatch form ("failed to legalize hal.interface.binding.subspan"),
so the step loop is an scf.for at function level carrying the storage tensors. Each clause is
one linalg.generic per step over its variables, computing the clause's slice of step t from the
storage as it was before the clause, written back with tensor.insert_slice at the step's slot.
The loop runs on the host, so lavapipe's limit of 65,535 iterations per shader loop does not
bound the number of steps. Each step costs a few submissions, and on lavapipe that cost grows
with the number of steps already run in the call (checked: also for the notes' rnn_host.mlir,
2,000 steps 2 s, 4,000 steps 7 s), so this form suits short recurrences there.

The points of a kernel are computed in parallel from that snapshot, so a clause must not read
its own member at the step it is computing (`D[i, j - 1]`): such groups are rejected here.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, flow, linalg, scf, tensor

from einc import diagnostics
from einc.ir import affine
from einc.ir.nodes import RecClause, RecMember, RecurrenceGroup, StateRead, step_state_reads
from einc.ir.types import Lin
from einc.mlir import scalar_ops
from einc.mlir.recurrence_scalars import Storage
from einc.mlir.recurrence_step import PointValue, emit_step, storage_shape
from einc.mlir.shapes import index_const
from einc.mlir.types import element_type

DYNAMIC = ir.ShapedType.get_dynamic_size()


def emit_group(lw, group: RecurrenceGroup, step_lowering=None) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order.
    `step_lowering(storage)`, when given, makes the lowering each step's body uses."""
    check_no_same_step_self_reads(group, lw.target)
    members = group.members

    def tie(member: RecMember, value: ir.Value) -> ir.Value:
        # IREE cannot resolve the dynamic sizes of loop-carried tensors or of the loop's results
        # on the host ("tensor.dim op unexpected during shape cleanup"): state them
        dims = lw.sizes.dynamic_dims(storage_shape(member))
        return flow.tensor_tie_shape(value, dims) if dims else value
    inits = [linalg.fill(scalar_ops.constant(m.dtype, 0),
                         outs=[lw.sizes.empty(storage_shape(m), element_type(m.dtype))]) for m in members]
    loop = scf.ForOp(index_const(0), lw.sizes.index(group.t_var.extent), index_const(1), inits)
    with ir.InsertionPoint(loop.body):
        tensors = {m: tie(m, arg) for m, arg in zip(members, loop.inner_iter_args)}
        storage = Storage(group.t_var, loop.induction_variable, tensors)
        emit_step(step_lowering(storage) if step_lowering else lw, group, storage, _write_points)
        scf.yield_([storage.tensors[m] for m in members])
    return [tie(m, result) for m, result in zip(members, loop.results)]


def _write_points(lw, member: RecMember, storage: Storage, vars_: list, active: Optional[ir.Value],
                  value: PointValue, _clause) -> ir.Value:
    """One kernel computing the slice [slot of t, vars..], inserted into the storage. Inactive
    steps still run it (a host-level scf.if makes IREE copy the whole storage every step, and
    failed at run time on Vulkan); its points then keep their value."""
    old = storage.tensors[member]
    slot = storage.slot(member, storage.t)
    # the slice has a unit axis for the step, so it has the storage's rank
    shape = (Lin(1),) + tuple(v.extent for v in vars_)
    rank = len(shape)
    element = element_type(member.dtype)
    op = linalg.GenericOp_([], [lw.sizes.empty(shape, element)], [ir.AffineMap.get_identity(rank)],
                           [linalg.IteratorType.parallel] * rank)
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        coords = {v: arith.addi(linalg.IndexOp(k + 1).result, lw.sizes.index(v.lo))
                  for k, v in enumerate(vars_)}
        if active is None:
            result = value(storage, coords)
        else:
            # the kept value is read before the branch: with a read in each branch, MLIR merges
            # the two blocks into one read through a pointer chosen by the condition, an OpPhi
            # of pointers that SPIR-V forbids without VariablePointers (spirv-val rejects it,
            # an NVIDIA driver crashed on it)
            kept = tensor.extract(old, [slot] + [coords[v] for v in vars_])
            branch = scf.IfOp(active, [element], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.yield_([value(storage, coords)])
            with ir.InsertionPoint(branch.else_block):
                scf.yield_([kept])
            result = branch.results[0]
        linalg.YieldOp([result])
    offsets = [v.lo for v in vars_]
    dynamic_offsets = [slot] + [lw.sizes.index(o) for o in offsets if not o.is_const]
    static_offsets = [DYNAMIC] + [o.const if o.is_const else DYNAMIC for o in offsets]
    dynamic_sizes = [lw.sizes.index(s) for s in shape if not s.is_const]
    static_sizes = [s.const if s.is_const else DYNAMIC for s in shape]
    return tensor.insert_slice(op.result, old, dynamic_offsets, dynamic_sizes, [],
                               static_offsets, static_sizes, [1] * rank)


def check_no_same_step_self_reads(group: RecurrenceGroup, target: str) -> None:
    for member in group.members:
        for clause in member.clauses:
            for read in step_state_reads([clause.body, clause.guard]):
                if read.member is member and not _earlier_step(read, group, clause):
                    raise diagnostics.error(
                        diagnostics.UNSUPPORTED,
                        f"`{member.name}` reads itself at the step being computed, which {target} "
                        "cannot lower: there each step of a clause is one parallel kernel",
                        read.span, hint="build with --target llvm-cpu, which runs the recurrence "
                        "point by point")


def _earlier_step(read: StateRead, group: RecurrenceGroup, clause: RecClause) -> bool:
    """Whether the read is at step t - c for a constant c >= 1, or at a fixed step before the
    clause's first (`x[1, i] = x[0, i] * 2.0`)."""
    lin = affine.affine_of(read.subs[0])
    if lin is None:
        return False
    if not lin.terms:
        return clause.t_lo.is_const and lin.const < clause.t_lo.const
    return lin.terms == {group.t_var: 1} and lin.const <= -1
