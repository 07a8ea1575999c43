"""Tensor work inside recurrence steps: what each step computes whole, once, before its points.

A clause such as `w[k, d] = w[k - 1, d] - lr * g[d]`, where `g` is the gradient of a loss at
`w[k - 1]` (a state slice, einc.ir.state_slices), reads tensors that depend on the step: they
exist only inside the loop and must be computed once per step, not once per point. This pass
records them on the group (`group.step_work`, operands first); the lowering then runs the group
as a host loop whose body computes them with ordinary kernels (einc.mlir.recurrences.tensor_steps),
and `--explain` says so. Those tensors read the state through slices: a read of one point of an
earlier step (`a[t - 1]`, `h[t - 1, v]`, as a decoder reads its previous token), or of another
member computed earlier in the same step (`r[t, 0]`), becomes a read of that step's slice at the
point.
"""
from __future__ import annotations

from dataclasses import replace

from einc import diagnostics as d
from einc.ir import affine
from einc.ir.nodes import (Generic, IndexRef, IndexVar, Op, Program, Read, RecValue, Reduce, StateRead, Stack,
                           Value, free_vars, walk)
from einc.ir.state_slices import computable_after, is_state_slice, state_history, state_slice


def plan_step_work(program: Program) -> None:
    for group in program.recurrences:
        roots = [v for m in group.members for c in m.clauses for v in (c.body, c.guard) if v is not None]
        for v in _step_tensors(roots, group.t_var):
            if isinstance(v, Generic) and not is_state_slice(v):
                _read_states_through_slices(v, group.t_var)
        work = _step_tensors(roots, group.t_var)
        order = walk(roots, opaque=(RecValue,))
        at_points = _reads_state(order, point_level=True)
        for v in work:
            if not is_state_slice(v) and any(at_points[id(o)] for o in v.operands()):
                raise d.error(d.UNSUPPORTED, "a tensor computed inside a recurrence step may read the "
                              "state only at an earlier step", v.span,
                              hint="read the member at `t - 1` (or earlier)")
        group.step_work = work
        _check_current_step_reads(group)


def _check_current_step_reads(group) -> None:
    """A tensor a member's clause computes in a step must not read that member, or a later one,
    at the current step: it is computed before the member's points."""
    after = computable_after(group)
    for k, member in enumerate(group.members):
        used = walk([v for c in member.clauses for v in (c.body, c.guard) if v is not None], opaque=(RecValue,))
        late = next((v for v in used if after.get(id(v), 0) > k), None)
        if late is not None:
            raise d.error(d.UNSUPPORTED, f"a tensor computed inside a step of `{member.name}` reads `{member.name}` "
                          "or a member computed after it at the same step", late.span,
                          hint="read that member at `t - 1` (or earlier)")


def _step_tensors(roots: list, step: IndexVar) -> list:
    """The tensors of a group's clauses that read the state or the step's index, operands first."""
    order = walk(roots, opaque=(RecValue,))      # another group's loop is closed
    anywhere = _reads_state(order, point_level=False, step=step)
    at_points = _reads_state(order, point_level=True)
    return [v for v in order if anywhere[id(v)] and not at_points[id(v)] and not free_vars(v)]


def _reads_state(order: list, point_level: bool, step: IndexVar = None) -> dict:
    """id -> whether the value reads recurrence state: through scalar work only (`point_level`,
    what one point of a clause computes) or through tensors as well. With `step`, reading the
    step's index counts too (a tensor of the derivative's code that reads a batched input at
    the current step, `lb[k, b]`, exists only inside the loop as well)."""
    reads: dict[int, bool] = {}
    for v in order:
        tensor = (v.rank > 0 and not isinstance(v, Stack)) or isinstance(v, Generic)     # a slice of rank 0 too
        closed = isinstance(v, RecValue) or (point_level and tensor)
        reads[id(v)] = isinstance(v, StateRead) or (isinstance(v, IndexRef) and v.var is step) or (
            not closed and any(reads[id(o)] for o in v.operands()))
    return reads


CLOSED = (Generic, RecValue, Stack)     # tensors, rank 0 ones included, that close over their own work


def _read_states_through_slices(v: Generic, step: IndexVar) -> None:
    """Rewrite `v`'s body (in place) so that each read of the state at step `t - c` (c >= 0: an
    earlier step, or another member's current one) reads that step's slice at the point instead
    (the slice is work of the step too)."""
    roots = [v.body] + ([v.guard] if v.guard is not None else [])
    slices: dict = {}
    new: dict[int, Value] = {}
    for node in walk(roots, opaque=CLOSED):
        new[id(node)] = _rebuilt(node, new, step, slices)
    v.body = new[id(v.body)]
    if v.guard is not None:
        v.guard = new[id(v.guard)]


def _rebuilt(node: Value, new: dict, step: IndexVar, slices: dict) -> Value:
    if isinstance(node, CLOSED) or node.rank > 0 or not node.operands():
        return node
    if isinstance(node, StateRead):
        subs = tuple(new[id(s)] for s in node.subs)
        back = affine.affine_of(subs[0])
        if back is not None and back.terms == {step: 1} and back.const > 0:
            return node if subs == node.subs else StateRead(node.member, subs, span=node.span)
        if back is None or back.terms != {step: 1}:     # an earlier step the front end proved (`y[s]`, s < t)
            key = (node.member, None)
            if key not in slices:
                slices[key] = state_history(node.member, node.span)
            return Read(slices[key], subs, span=node.span)
        key = (node.member, back.const)
        if key not in slices:
            slices[key] = state_slice(node.member, subs[0], node.span)
        rest = subs[1:]
        in_bounds = all(affine.subscript_in_bounds(s, n) for s, n in zip(rest, node.member.shape[1:]))
        return Read(slices[key], rest, span=node.span, in_bounds=in_bounds)
    operands = tuple(new[id(o)] for o in node.operands())
    if operands == node.operands():
        return node
    if isinstance(node, Op):
        return Op(node.op, operands, node.dtype, span=node.span)
    if isinstance(node, Read):
        return replace(node, subs=operands[1:])
    if isinstance(node, Reduce):
        return Reduce(node.kind, node.vars, operands[0], operands[1] if node.guard is not None else None,
                      span=node.span)
    raise TypeError(f"cannot rebuild {type(node).__name__} over the state's slices")
