"""Tensor work inside recurrence steps: what each step computes whole, once, before its points.

A clause such as `w[k, d] = w[k - 1, d] - lr * g[d]`, where `g` is the gradient of a loss at
`w[k - 1]` (a state slice, einc.ir.state_slices), reads tensors that depend on the step: they
exist only inside the loop and must be computed once per step, not once per point. This pass
records them on the group (`group.step_work`, operands first); the lowering then runs the group
as a host loop whose body computes them with ordinary kernels (einc.mlir.recurrence_tensor_steps),
and `--explain` says so. Those tensors may read the state only through slices.
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir.nodes import IndexRef, IndexVar, Program, RecValue, StateRead, Stack, free_vars, walk
from einc.ir.state_slices import is_state_slice


def plan_step_work(program: Program) -> None:
    for group in program.recurrences:
        roots = [v for m in group.members for c in m.clauses for v in (c.body, c.guard) if v is not None]
        order = walk(roots, opaque=(RecValue,))      # another group's loop is closed
        anywhere = _reads_state(order, point_level=False, step=group.t_var)
        at_points = _reads_state(order, point_level=True)
        work = [v for v in order if anywhere[id(v)] and not at_points[id(v)] and not free_vars(v)]
        for v in work:
            if not is_state_slice(v) and any(at_points[id(o)] for o in v.operands()):
                raise d.error(d.UNSUPPORTED, "a tensor computed inside a recurrence step may read the "
                              "state only whole at an earlier step", v.span,
                              hint="read the member as `w[k - 1]` and index that tensor")
        group.step_work = work


def _reads_state(order: list, point_level: bool, step: IndexVar = None) -> dict:
    """id -> whether the value reads recurrence state: through scalar work only (`point_level`,
    what one point of a clause computes) or through tensors as well. With `step`, reading the
    step's index counts too (a tensor of the derivative's code that reads a batched input at
    the current step, `lb[k, b]`, exists only inside the loop as well)."""
    reads: dict[int, bool] = {}
    for v in order:
        closed = isinstance(v, RecValue) or (point_level and v.rank > 0 and not isinstance(v, Stack))
        reads[id(v)] = isinstance(v, StateRead) or (isinstance(v, IndexRef) and v.var is step) or (
            not closed and any(reads[id(o)] for o in v.operands()))
    return reads
