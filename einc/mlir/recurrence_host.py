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

The loop carries each storage one-dimensional (flat_storage: IREE lost the offsets of several
carried tensors of run-time size), so a clause's kernel computes the member's whole row at step
t, keeping the points outside the clause, and the row is one run of elements in the storage.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc import diagnostics
from einc.ir import affine
from einc.ir.nodes import RecClause, RecMember, RecurrenceGroup, StateRead, step_state_reads
from einc.mlir import scalar_ops
from einc.mlir.flat_storage import FlatStorage, as_index, flat_empty, length, tied, unflattened
from einc.mlir.recurrence_step import PointValue, emit_step, sizes_of, storage_shape
from einc.mlir.shapes import index_const
from einc.mlir.types import element_type

DYNAMIC = ir.ShapedType.get_dynamic_size()


def emit_group(lw, group: RecurrenceGroup, step_lowering=None) -> list[ir.Value]:
    """Every member's storage tensor after the last step, in `group.members` order.
    `step_lowering(storage)`, when given, makes the lowering each step's body uses."""
    check_no_same_step_self_reads(group, lw.target)
    members = group.members
    shapes = {m: sizes_of(lw, storage_shape(m)) for m in members}
    lengths = {m: length(shapes[m]) for m in members}
    inits = [linalg.fill(scalar_ops.constant(m.dtype, 0), outs=[flat_empty(lengths[m], element_type(m.dtype))])
             for m in members]
    loop = scf.ForOp(index_const(0), lw.sizes.index(group.t_var.extent), index_const(1), inits)
    with ir.InsertionPoint(loop.body):
        tensors = {m: tied(arg, lengths[m]) for m, arg in zip(members, loop.inner_iter_args)}
        storage = FlatStorage(group.t_var, loop.induction_variable, tensors, shapes)
        emit_step(step_lowering(storage) if step_lowering else lw, group, storage, _write_points)
        scf.yield_([storage.tensors[m] for m in members])
    return [unflattened(tied(result, lengths[m]), shapes[m]) for m, result in zip(members, loop.results)]


def _write_points(lw, member: RecMember, storage: FlatStorage, vars_: list, active: Optional[ir.Value],
                  value: PointValue, _clause) -> ir.Value:
    """One kernel computing the member's row at step t: `value` at the points of `vars_` where
    `active` holds, the row as it was elsewhere; the row is then inserted into the storage.
    Inactive steps still run it (a host-level scf.if makes IREE copy the whole storage every
    step, and failed at run time on Vulkan)."""
    old = storage.tensors[member]
    slot = storage.slot(member, storage.t)
    rest = storage.shapes[member][1:]
    row = as_index(storage.row_elements(member))
    first = arith.muli(slot, row)
    element = element_type(member.dtype)
    op = linalg.GenericOp_([], [flat_empty(row, element)], [ir.AffineMap.get_identity(1)],
                           [linalg.IteratorType.parallel])
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        point = linalg.IndexOp(0).result
        axes = _row_coordinates(point, rest)
        # the kept value is read before the branch: with a read in each branch, MLIR merges the
        # two blocks into one read through a pointer chosen by the condition, an OpPhi of
        # pointers that SPIR-V forbids without VariablePointers (spirv-val rejects it, an NVIDIA
        # driver crashed on it)
        kept = tensor.extract(old, [arith.addi(first, point)])
        inside = _inside(lw, vars_, axes)
        written = inside if active is None else arith.andi(active, inside)
        branch = scf.IfOp(written, [element], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.yield_([value(storage, dict(zip(vars_, axes)))])
        with ir.InsertionPoint(branch.else_block):
            scf.yield_([kept])
        linalg.YieldOp([branch.results[0]])
    return tensor.insert_slice(op.result, old, [first], [row], [], [DYNAMIC], [DYNAMIC], [1])


def _row_coordinates(point: ir.Value, sizes: list) -> list[ir.Value]:
    """The coordinates of the `point`-th element of a row-major tensor of `sizes`."""
    coords = []
    for size in reversed(sizes[1:]):
        coords.append(arith.remui(point, as_index(size)))
        point = arith.divui(point, as_index(size))
    return [point] + coords[::-1] if sizes else []


def _inside(lw, vars_: list, coords: list[ir.Value]) -> ir.Value:
    """Whether every coordinate lies in its variable's range lo .. lo + extent - 1."""
    inside = arith.constant(ir.IntegerType.get_signless(1), 1)
    for v, c in zip(vars_, coords):
        lo = lw.sizes.index(v.lo)
        hi = arith.addi(lo, lw.sizes.index(v.extent))
        inside = arith.andi(inside, arith.andi(arith.cmpi(arith.CmpIPredicate.sge, c, lo),
                                               arith.cmpi(arith.CmpIPredicate.slt, c, hi)))
    return inside


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
