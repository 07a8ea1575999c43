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

A group computed in the clauses that reads the state or the step (a loop inside a loop: BPTT
inside a training recurrence) is such a tensor too: its reads of the state become reads of the
step's slices, and the lowering runs its whole loop inside each step (`group.enclosing`).
"""
from __future__ import annotations

from dataclasses import replace

from einc import diagnostics as d
from einc.ir import affine
from einc.ir.nodes import (Generic, IndexRef, IndexVar, Op, Program, Read, RecValue, Reduce, StateRead, Stack,
                           Value, free_vars, walk)
from einc.ir.state_slices import computable_after, is_state_slice, state_history, state_slice


def plan_step_work(program: Program) -> None:
    steps = {g.t_var for g in program.recurrences}
    nested = {id(g): _nest_inner_groups(g, steps) for g in program.recurrences}
    for group in program.recurrences:
        roots = group.code()
        reads = _StateOf(group, nested[id(group)])
        for v in _step_tensors(roots, reads):
            if isinstance(v, Generic) and not is_state_slice(v):
                _read_states_through_slices(v, group)
        work = _step_tensors(roots, reads)
        at_points = reads.of(reads.order(roots), point_level=True)
        for v in work:
            if not is_state_slice(v) and not isinstance(v, RecValue) and any(at_points[id(o)] for o in v.operands()):
                raise d.error(d.UNSUPPORTED, "a tensor computed inside a recurrence step may read the "
                              "state only at an earlier step", v.span,
                              hint="read the member at `t - 1` (or earlier)")
        group.step_work = work
        _check_current_step_reads(group)


def _nest_inner_groups(group, steps: set) -> dict:
    """id of each group computed in `group`'s clauses that reads its step, its state or such a
    group's storage (a loop in
    its loop, einc.semantics.forms.recurrences._check_nested) -> the slices of `group`'s state
    it reads: its reads of the state become reads of those slices (rewritten in place), so the
    inner loop runs inside each step, after the slices are cut, like any tensor of the step."""
    inner = _groups_under(group, steps)
    found: dict = {}
    while True:                     # a group reading a nested group's storage is nested too (a fixpoint)
        more = [g for g in inner if id(g) not in found and _reads_group(g, group, found)]
        if not more:
            break
        found.update((id(g), g) for g in more)
    nested: dict = {}
    for g in inner:                 # operands first
        if id(g) in found:
            nested[id(g)] = _rewrite_inner(g, group)
            g.enclosing = group
    return nested


def _groups_under(group, steps: set) -> list:
    """The groups `group`'s clauses compute, through the groups they read (std's `solve` is an
    elimination loop and a back substitution reading it), operands first; not `group` itself,
    nor a group running inside the steps of another (it reads that one's state)."""
    out: list = []
    seen = {id(group)}

    def visit(roots) -> None:
        for v in walk(roots, opaque=(RecValue,)):
            if isinstance(v, RecValue) and id(v.group) not in seen:
                seen.add(id(v.group))
                if not _reads_another_loop(v.group, group, steps):
                    visit(v.group.code())
                    out.append(v.group)

    visit(group.code())
    return out


def _reads_another_loop(inner, group, steps: set) -> bool:
    """Whether `inner` reads the state or the step (one of `steps`) of a group other than itself
    and `group`."""
    mine = {id(m) for g in (inner, group) for m in g.members}
    return any((isinstance(v, StateRead) and id(v.member) not in mine)
               or (isinstance(v, IndexRef) and v.var in steps and v.var not in (inner.t_var, group.t_var))
               for v in walk(inner.code(), opaque=(RecValue,)))


def _reads_group(inner, group, nested: dict) -> bool:
    """Whether `inner` reads `group`'s state or step, or the storage of a group in `nested`."""
    own = {id(m) for m in group.members}
    return any((isinstance(v, StateRead) and id(v.member) in own) or (isinstance(v, IndexRef) and v.var is group.t_var)
               or (isinstance(v, RecValue) and id(v.group) in nested)
               for v in walk(inner.code(), opaque=(RecValue,)))


def _rewrite_inner(inner, group) -> list:
    """Rewrite `inner`'s reads of `group`'s state through slices; the slices it reads (those the
    front end made for a whole earlier step, `W[e - 1]`, too), in order."""
    slices: dict = {}
    for m in inner.members:
        for c in m.clauses:
            c.body = _through_slices(c.body, group, slices)
            if c.guard is not None:
                c.guard = _through_slices(c.guard, group, slices)
    own = {id(m) for m in group.members}
    for v in walk(inner.code(), opaque=(RecValue,)):
        if isinstance(v, Generic) and not is_state_slice(v):
            _read_states_through_slices(v, group, slices)
    _literals_through_slices(inner.code(), group, slices)
    return [v for v in walk(inner.code(), opaque=(RecValue,)) if is_state_slice(v) and id(v.body.member) in own]


class _StateOf:
    """Which values of a group's clauses read its state (or its step), a group nested in its
    loop (`nested`: id -> the slices it reads) included."""

    def __init__(self, group, nested: dict):
        self.group, self.nested = group, nested
        self.own = {id(m) for m in group.members}

    def order(self, roots: list) -> list:
        """The clauses' values, operands first, each nested group's slices before it."""
        out, seen = [], set()
        for v in walk(roots, opaque=(RecValue,)):
            self._add(v, out, seen)
        return out

    def _add(self, v: Value, out: list, seen: set) -> None:
        """`v` after what it needs: a nested group after its slices and the nested groups it reads
        (an adjoint loop reads its primal loop's storage)."""
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, RecValue) and id(v.group) in self.nested:
            for u in walk(v.group.code(), opaque=(RecValue,)):
                if isinstance(u, RecValue) and id(u.group) in self.nested:
                    self._add(u, out, seen)
            for u in walk(self.nested[id(v.group)]):
                self._add(u, out, seen)
        out.append(v)

    def of(self, order: list, point_level: bool, step: IndexVar = None) -> dict:
        """id -> whether the value reads the state: through scalar work only (`point_level`,
        what one point of a clause computes) or through tensors as well. With `step`, reading
        the step's index counts too (a tensor of the derivative's code that reads a batched
        input at the current step, `lb[k, b]`, exists only inside the loop as well)."""
        reads: dict[int, bool] = {}
        for v in order:
            tensor = (v.rank > 0 and not isinstance(v, Stack)) or isinstance(v, Generic)     # a slice of rank 0 too
            closed = isinstance(v, RecValue) or (point_level and tensor)
            reads[id(v)] = (isinstance(v, StateRead) and id(v.member) in self.own) or (
                isinstance(v, IndexRef) and v.var is step) or (
                not point_level and isinstance(v, RecValue) and id(v.group) in self.nested) or (
                not closed and any(reads[id(o)] for o in v.operands()))
        return reads


def _check_current_step_reads(group) -> None:
    """A tensor a member's clause computes in a step must not read that member, or a later one,
    at the current step: it is computed before the member's points."""
    after = computable_after(group)
    for k, member in enumerate(group.members):
        used = walk([v for c in member.clauses for v in (c.body, c.guard) if v is not None], opaque=(RecValue,))
        late = next((v for v in used if after.get(id(v), 0) > k), None)
        if late is not None and _reads_member(late, member):
            name, t = member.name, group.t_var.name
            raise d.error(d.UNSUPPORTED, f"a tensor the step computes whole (a row `{name}[{t}] = [..]`, or a "
                          f"row of `{name}[{t}]` used whole, as by a function building an array from it) reads "
                          f"`{name}` at the same step, before its points exist",
                          late.span,
                          hint=f"define the step a point at a time, `let {name}[{t} in .., i in ..] = ..`, whose "
                               f"points may read earlier ones of the same step (`{name}[{t}, i - 1]`); "
                               f"read `{name}[{t} - 1]`; or number a second step axis k into the first "
                               f"(`s = {t} * K + k`) and read the row `{name}[s - 1]`")
        if late is not None:
            raise d.error(d.UNSUPPORTED, f"a tensor computed inside a step of `{member.name}` reads `{member.name}` "
                          "or a member computed after it at the same step", late.span,
                          hint="read that member at `t - 1` (or earlier)")


def _reads_member(v: Value, member) -> bool:
    """Whether `v`'s work (short of other loops) reads `member`'s state."""
    return any(isinstance(u, StateRead) and u.member is member for u in walk([v], opaque=(RecValue,)))


def _step_tensors(roots: list, reads: _StateOf) -> list:
    """The tensors of a group's clauses that read the state or the step's index, operands first."""
    order = reads.order(roots)      # another group's loop is closed, unless nested in this one
    anywhere = reads.of(order, point_level=False, step=reads.group.t_var)
    at_points = reads.of(order, point_level=True)
    return [v for v in order if anywhere[id(v)] and not at_points[id(v)] and not free_vars(v)]


CLOSED = (Generic, RecValue, Stack)     # tensors, rank 0 ones included, that close over their own work


def _read_states_through_slices(v: Generic, group, slices: dict = None) -> None:
    """Rewrite `v`'s body (in place) so that each read of `group`'s state at step `t - c` (c >= 0:
    an earlier step, or another member's current one) reads that step's slice at the point
    instead (the slice is work of the step too)."""
    slices = {} if slices is None else slices
    v.body = _through_slices(v.body, group, slices)
    if v.guard is not None:
        v.guard = _through_slices(v.guard, group, slices)
    _literals_through_slices([u for u in (v.body, v.guard) if u is not None], group, slices)


def _literals_through_slices(roots: list, group, slices: dict) -> None:
    """Rewrite the elements of each array literal under `roots` (in place) to read `group`'s state
    through slices: a literal a tensor of the step reads (`y[t - 1] + h * [y[t - 1, 1], ..]`)
    is built from the step's slices, as the tensor is."""
    for v in walk(roots, opaque=(Generic, RecValue)):
        if isinstance(v, Stack):
            v.elems = tuple(_through_slices(e, group, slices) for e in v.elems)


def _through_slices(root: Value, group, slices: dict) -> Value:
    own = {id(m) for m in group.members}
    new: dict[int, Value] = {}
    for node in walk([root], opaque=CLOSED):
        new[id(node)] = _rebuilt(node, new, group.t_var, slices, own)
    return new[id(root)]


def _rebuilt(node: Value, new: dict, step: IndexVar, slices: dict, own: set) -> Value:
    if isinstance(node, CLOSED) or node.rank > 0 or not node.operands():
        return node
    if isinstance(node, StateRead) and id(node.member) in own:
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
