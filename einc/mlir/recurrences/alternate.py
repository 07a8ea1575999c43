"""Steps that stream several weight matrices read them in the reverse order every other step
(the CPU region form).

A GRU step's three gates each sum a matrix of the program times the last state (Uz, Ur, Un:
768 KB at H = 256), more than a core's L2 holds; read in one order every step, each matrix
has left L2 by the time the next step reads it. Every odd step computes those sums first, the
last member's first, each stored where its points go, and then runs the members in order,
their sums already there: the matrices the previous step read last are read first, from L2.
Results are the same to the bit: only the order of whole sums changes, none of their terms.
Only where those matrices hold more than STREAMED_BYTES (a run-time test before the loop):
smaller ones stay in L2 either way, and the second order is then only more code.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith

from einc.ir.nodes import Read, RecClause, RecMember, RecurrenceGroup, step_code
from einc.mlir.core.shapes import index_const
from einc.mlir.recurrences.lanes import clause_lanes, reads_now, split_reduction
from einc.mlir.recurrences.step import covers_steps

# Less than any L2 a core of the CPUs measured holds (Zen 3 512 KB, Zen 4 1 MB)
STREAMED_BYTES = 256 * 1024


def summed_first(lw, group: RecurrenceGroup, steps: tuple, held) -> list:
    """The members whose sums the odd steps of span `steps` compute first, in that order (the
    reverse of the group's), or [] where fewer than two members stream weights: a member
    qualifies with one clause covering the span, over one axis computed in lanes, whose split
    sum (recurrence_lanes.split_reduction) reads a matrix of the program and no member of the
    group at the current step."""
    streaming = [m for m in group.members if m not in held and _streams(lw, group, m, steps)]
    return streaming[::-1] if len(streaming) >= 2 else []


def streams_more_than_l2(lw, members: list) -> ir.Value:
    """Whether the matrices the sums of `members` read hold more than STREAMED_BYTES (an i1)."""
    total = index_const(0)
    for tensor in {id(w): w for m in members for w in _weights(lw, m)}.values():
        size = index_const(np.dtype(tensor.dtype.numpy).itemsize)
        for dim in tensor.shape:
            size = arith.muli(size, lw.sizes.index(dim))
        total = arith.addi(total, size)
    return arith.cmpi(arith.CmpIPredicate.ugt, total, index_const(STREAMED_BYTES))


def _streams(lw, group: RecurrenceGroup, member: RecMember, steps: tuple) -> bool:
    if len(member.clauses) != 1 or not covers_steps(member, *steps):
        return False
    clause: RecClause = member.clauses[0]
    if len(clause.vars) != 1 or clause_lanes(lw, member, clause, group.t_var) is None:
        return False
    split = split_reduction(lw, member, clause, clause.vars[0])
    if split is None or any(reads_now([split], m, group.t_var, inside_tensors=True) for m in group.members):
        return False
    return bool(_weights(lw, member))


def _weights(lw, member: RecMember) -> list:
    """The matrices of the program that the split sum of `member`'s one clause reads."""
    clause = member.clauses[0]
    split = split_reduction(lw, member, clause, clause.vars[0])
    return [v.tensor for v in step_code([split.body, split.guard])
            if isinstance(v, Read) and len(v.subs) >= 2 and lw.is_program_level(v.tensor)]


