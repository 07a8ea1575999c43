"""A recurrence member read at the step being computed, which a target that runs each step of a
clause as one parallel kernel (the host and workgroup forms of vulkan-spirv, and whole-tensor
steps on every target) cannot lower: found here so `einc check` reports it as `build` does."""
from __future__ import annotations

from einc import diagnostics
from einc.ir import affine, clause_order, step_reach
from einc.ir.nodes import Program, RecClause, RecMember, RecurrenceGroup, StateRead
from einc.target import DEFAULT, Target


def check_program(program: Program, target: Target) -> None:
    """Every group the target's lowering would refuse for a same-step self read: on a target
    without loops inside a dispatch any group, elsewhere a group whose steps compute tensors whole."""
    for group in program.recurrences:
        if group.step_work or not target.loops_in_dispatch:
            check_no_same_step_self_reads(group, target)


def check_no_same_step_self_reads(group: RecurrenceGroup, target: Target) -> None:
    for member in group.members:
        for clause in (c for c in member.clauses if not c.keeps):     # a rim's reads are checked where it is made
            for read, guards in step_reach.guarded_state_reads([clause.body, clause.guard]):
                if read.member is member and not _earlier_step(read, group, clause, guards) \
                        and not clause_order.reads_other_clauses_only(member, clause, read, guards):
                    raise _same_step_self_read(member, read, target)


def _same_step_self_read(member: RecMember, read: StateRead, target: Target) -> diagnostics.CompileError:
    hint = f"build with --target {DEFAULT.name}, which runs the recurrence point by point"
    primal = member.adjoint_of
    if primal is None:
        return diagnostics.error(
            diagnostics.UNSUPPORTED, f"`{member.name}` reads itself at a step that may be the one being computed "
            f"(not a step before it, as `t - 1` or `k` in `0..t`), which {target.name} cannot lower: there each "
            "step of a clause is one parallel kernel", read.span, hint=hint)
    # the adjoint of clauses reading same-step points of other clauses (`u[t, 0] = u[t, 1]`)
    # reads its own step: the error names the user's recurrence, not its adjoint
    notes = [diagnostics.Label(primal.span, f"`{primal.name}` is defined here")] if primal.span else []
    return diagnostics.error(
        diagnostics.UNSUPPORTED, f"reverse-mode derivatives through `{primal.name}`, whose clauses read points "
        f"other clauses of it write at the same step, are not supported on {target.name}: the adjoint reads "
        "its own step, and there each step of a clause is one parallel kernel", read.span, hint=hint, notes=notes)


def _earlier_step(read: StateRead, group: RecurrenceGroup, clause: RecClause, guards: tuple) -> bool:
    """Whether the read is at a step before the one being computed at every step of the clause:
    `t - c` (c >= 1), a fixed step before the clause's first (`x[1, i] = x[0, i] * 2.0`), or a
    reduction's variable whose range and guards end before t (`max[k in 0..t](x[k])`; the
    member is then kept whole, chunks.ReadPlan)."""
    reach = step_reach.offset_bounds(read.subs[0], group.t_var, (clause.t_lo, clause.t_hi - 1), guards)
    return reach is not None and any(affine.surely_negative(high) for high in reach[1])
