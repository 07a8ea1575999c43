"""Reverse mode through a recurrence: an adjoint loop running backward over the kept states.

For a group G over steps t, the adjoint group G' runs over τ = T - 1 - t. Its member ā_m holds
the adjoint of primal member m at step T - 1 - τ: the adjoint that reached m from outside the
loop, plus what every clause that reads m sends back. A clause of n reading m[t - c, ..] sends
at step t its own adjoint ā_n[t, w] times the local partial; seen from m that is step t + c,
which the adjoint loop computed c steps earlier (c = 0: the reader comes later in the primal
step order, so earlier in G', whose members run in reverse order). A member that reads its own
earlier points of a step (a DP grid's `R[i, j - 1]`) is computed point by point in
lexicographic order; its adjoint is stored with the step's other axes reversed, so that it too
reads only points already computed. The partials read the primal states as ordinary tensors;
the storage plan then keeps every step of them. A tensor the step computes from the state (an
RK4 stage) is followed point by point; where its own body is costly (a transcendental, a
division, a reduction) it is a member of the loop for the adjoint instead: its values a tape,
the tensor at every step of the clause computed once from the kept states, and its adjoint a
member of the adjoint loop, computed once a step, which its readers' partials feed and its own
body's partials read (not both recomputed at every point of every partial).

The clauses' reads of tensors outside the loop (weights, inputs) come back as leaves for the
caller's reverse pass, summed over steps and points like the reads of any indexed definition.
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir import affine, clause_order
from einc.ir.nodes import (EXPENSIVE_OPS, Const, Generic, IndexRef, IndexVar, Input, Op, Read, RecClause, RecMember,
                           RecurrenceGroup, RecValue, Reduce, Size, Stack, StateRead, Value, body_vars,
                           step_state_reads, walk)
from einc.ir.types import BOOL, Lin
from einc.autodiff.delta import gather_sum, lin_value
from einc.autodiff.local_rules import const
from einc.autodiff.rewrite import replace_nodes, scalar_nodes
from einc.autodiff.scalar_adjoint import LeafAdjoint, propagate
from einc.autodiff.seeds import read_adjoint
from einc.autodiff.substitute import substitute


def adjoint_loop(group: RecurrenceGroup, outside: dict, x: Value, stops: set, states_given: bool, rules,
                 span) -> list:
    """Leaves (reads of tensors outside G, and x) with their adjoints, given `outside`:
    id(member) -> the adjoint (a tensor of the member's shape) from outside G. `stops`: the ids of
    x and of the reads of the same state as x (einc.autodiff.gradient); `states_given`: G runs
    inside a step of an enclosing recurrence whose other state reads are givens of that step."""
    check_not_own_member(group, x, span)
    loop = _AdjointLoop(group, rules, span)
    code = clause_code(group, loop.as_member)
    code.update(loop.stage_code())
    roots = [v for body_guard in code.values() for v in body_guard if v is not None]
    check_no_inner_loops(roots, span, group, stops | {id(x)})
    check_no_step_tensors(roots, span, group)
    return loop.run(code, outside, stops | {id(x)}, states_given)


def clause_code(group: RecurrenceGroup, as_member=None) -> dict:
    """id(clause) -> its body and guard as the adjoint loop follows them: step tensors inlined
    at their points (or read as the members `as_member(tensor, clause)` gives, where it gives
    one), reads of fixed steps relative to the step."""
    return {id(c): tuple(None if v is None else
                         relative_steps(at_points_of_step_tensors(v, group, as_member=as_member, clause=c), c,
                                        group.t_var)
                         for v in _guarded(c))
            for m in group.members for c in m.clauses}


def _guarded(clause: RecClause) -> tuple:
    """The clause's body and guard; a rim keeping the other clauses' values where its guard
    fails (`select(guard, body, kept)`, RecClause.keeps) as the guarded clause it is: the kept
    value is the one those clauses wrote, whose adjoint they take (`_written_later`)."""
    if clause.keeps:
        guard, body, _kept = clause.body.args
        return body, guard
    return clause.body, clause.guard


def inner_loop_per_step(group: RecurrenceGroup, stops: set, roots: list | None = None):
    """A loop that `group`'s step runs through which an adjoint would pass (it reads the state,
    or the step's index and x: `stops`), or None. `roots`: the clause code (clause_code) where
    the caller has it already."""
    own = {id(m) for m in group.members}
    if roots is None:
        roots = [v for body_guard in clause_code(group).values() for v in body_guard if v is not None]
    return next((v for v in walk(roots, opaque=(RecValue,)) if isinstance(v, RecValue) and v.group is not group
                 and _runs_per_step(v, own, group.t_var, stops)), None)


def check_not_own_member(group: RecurrenceGroup, x: Value, span) -> None:
    """A member of the loop being differentiated is not an independent parameter."""
    if isinstance(x, RecValue) and x.group is group:
        raise d.error(d.UNSUPPORTED, f"a derivative with respect to `{x.member.name}` through "
                      "its own recurrence", span, hint="differentiate with respect to the "
                      "inputs the recurrence starts from")


def check_no_inner_loops(roots: list, span, group: RecurrenceGroup, stops: set) -> None:
    """Reverse mode would need, in each step of the adjoint loop, the inner loop's forward pass
    and its own adjoint at that outer step. A request at the top level is answered in forward
    mode instead (einc.autodiff.forward_pullback); one inside an enclosing step is E011."""
    inner = inner_loop_per_step(group, stops, roots)
    if inner is not None:
        raise d.error(d.UNSUPPORTED, f"reverse-mode derivatives inside a loop's step through the recurrence "
                      f"`{group.members[0].name}`, whose step runs the recurrence `{inner.member.name}` (a loop "
                      "inside its loop), are not compiled yet", span, notes=_running_step(group, inner),
                      hint="ask for the derivative outside the enclosing loop, or in forward mode (`@x / @p`)")


def _runs_per_step(inner: RecValue, own: set, t_var: IndexVar, stops: set) -> bool:
    nodes = walk([inner])
    return any(isinstance(n, StateRead) and id(n.member) in own for n in nodes) or (
        any(isinstance(n, IndexRef) and n.var is t_var for n in nodes) and any(id(n) in stops for n in nodes))


def check_inner_loop_inputs(group: RecurrenceGroup, span, by_vector=None) -> None:
    """Forward mode runs an inner loop's tangent in the step. An array literal the inner loop
    reads that reads `by_vector`, the vector differentiated by, where it moves with the step, is
    E011: its elements' tangents are vectors (a direction each), which the step's literal cannot
    hold."""
    if by_vector is None:
        return
    checked = set()          # the ids of the loops looked at: each member's RecValue reaches the same one
    for c in (c for m in group.members for c in m.clauses):
        for inner in walk([u for u in (c.body, c.guard) if u is not None], opaque=(RecValue,)):
            if not isinstance(inner, RecValue) or inner.group is group or id(inner.group) in checked:
                continue
            checked.add(id(inner.group))
            if _literal_reading(inner, by_vector):
                shown = f"`{by_vector.name}`" if isinstance(by_vector, Input) else "it"
                raise d.error(d.UNSUPPORTED, f"forward-mode derivatives by an array through the recurrence "
                              f"`{group.members[0].name}`, whose step runs the recurrence `{inner.member.name}` "
                              f"on an array literal reading {shown}, are not compiled yet", span,
                              notes=_running_step(group, inner),
                              hint="forward mode by a scalar input runs through such a step")


def _literal_reading(inner: RecValue, x: Value) -> bool:
    """An array literal in `inner` reads an element of `x` that moves with the step (`a[k - 1]`);
    one at a fixed point (`c[1]`) has a constant tangent and runs."""
    return any(isinstance(v, Stack) and any(isinstance(n, Read) and n.tensor is x and
                                            not all(isinstance(s, Const) for s in n.subs) for n in walk([v]))
               for v in walk([inner]))


def check_no_step_tensors(roots: list, span, group: RecurrenceGroup) -> None:
    """Both modes follow a step's scalar code only (`roots`, a group's clause bodies and guards,
    at_points_of_step_tensors): a tensor the step computes from the state and reads other than
    at a point (whole, `let v = r[t - 1];` passed on) would drop out of the derivative, a silent
    wrong value, so it is E011."""
    for v in walk(roots, opaque=(RecValue,)):
        if computed_from_state(v, group):
            raise d.error(d.UNSUPPORTED, "derivatives through a tensor a recurrence step computes from its "
                          "state are not compiled yet", v.span or span,
                          hint="write the step's work on its points without an indexed `let`")


def _running_step(group: RecurrenceGroup, inner: RecValue) -> list:
    """A note at the user's clause of `group` whose step runs `inner`'s loop (the loop itself
    may be std's, as solve's elimination is)."""
    for m in group.members:
        for c in m.clauses:
            if c.span is not None and any(v is inner or (isinstance(v, RecValue) and v.group is inner.group)
                                          for v in walk([u for u in (c.body, c.guard) if u is not None])):
                return [d.Label(c.span, f"this step of `{m.name}` runs the loop `{inner.member.name}`")]
    return []


def computed_from_state(v: Value, group: RecurrenceGroup = None) -> bool:
    """Whether `v` is a tensor (or an array literal) computed from `group`'s state, or any loop's
    without a group (the state of a loop enclosing the group is a given of the group's run, as
    its inputs are)."""
    own = None if group is None else {id(m) for m in group.members}
    return isinstance(v, (Generic, Stack)) and any(isinstance(n, StateRead) and (own is None or id(n.member) in own)
                                                   for n in walk([v], opaque=(RecValue,)))


def at_points_of_step_tensors(v: Value, group: RecurrenceGroup = None, memo: dict | None = None,
                              as_member=None, clause: RecClause = None) -> Value:
    """`v` with each point read of a tensor the step computes from the state (`h[1]` of
    `let h[i in 0..2] = tanh(r[t - 1, i]);`, `z[i]` of an array literal a function of the state
    returns; of `group`'s state if given) replaced by the tensor's body, or the literal's
    element, at that point, so both modes follow the state through it as through any scalar
    code. Reads of one tensor at the same point share one inlined body (`memo`): a Runge-Kutta
    stage reads each point of the one before several times, and a copy per read grows the code
    exponentially in the stages. A tensor `as_member(tensor, clause)` (if given) gives a member
    for is read as that member at the step instead."""
    memo = {} if memo is None else memo
    mapping = {}
    for n in scalar_nodes([v]):
        literal = isinstance(n, Read) and isinstance(n.tensor, Stack)
        if literal and n.rank == 0 and computed_from_state(n.tensor, group):
            mapping[id(n)] = at_points_of_step_tensors(_element_of(n), group, memo, as_member, clause)
        elif isinstance(n, Read) and n.rank == 0 and computed_from_state(n.tensor, group):
            member = as_member(n.tensor, clause) if as_member is not None else None
            mapping[id(n)] = (_inlined(n.tensor, n.subs, memo, group, as_member, clause) if member is None else
                              StateRead(member, (IndexRef(group.t_var),) + tuple(n.subs), span=n.span))
        elif n.rank == 0 and computed_from_state(n, group):
            mapping[id(n)] = _inlined(n, (), memo, group, as_member, clause)
    return replace_nodes(v, mapping) if mapping else v


def _inlined(tensor: Generic, subs: tuple, memo: dict, group: RecurrenceGroup = None, as_member=None,
             clause: RecClause = None) -> Value:
    """The tensor's element at `subs` with its own step tensors inlined, once per point."""
    key = (id(tensor),) + tuple(_point_key(s) for s in subs)
    if key not in memo:
        memo[key] = at_points_of_step_tensors(_point_of(tensor, subs), group, memo, as_member, clause)
    return memo[key]


def _point_key(sub: Value) -> tuple:
    """A subscript as a key equal for subscripts of one value: its affine form, a periodic wrap's
    (a cyclic stencil's `x[(i + 1) % N]` read again one stage on, affine.periodic_of), or the
    node itself."""
    lin = affine.affine_of(sub)
    if lin is not None:
        return ("lin", lin)
    return affine.periodic_of(sub) or ("node", id(sub))


def _adjoint_member(member: RecMember, steps) -> RecMember:
    adjoint = RecMember(f"{member.name}_bar", member.dtype, (steps,) + tuple(member.shape[1:]), [], span=member.span)
    adjoint.adjoint_of = member
    return adjoint


def _element_of(read: Read) -> Value:
    """The element of the literal `read` reads: the element the first subscript picks (a choice
    among them by its value where it is an index), read at the others as `read` was (in bounds
    only where it was proven so: not a read the program guards, such as solve's `A[i, j]` under
    `j < n`)."""
    stack, subs = read.tensor, read.subs

    def at(elem: Value) -> Value:
        return Read(elem, subs[1:], span=elem.span, in_bounds=read.in_bounds, strict=read.strict) if subs[1:] else elem

    lin = affine.affine_of(subs[0])
    if lin is not None and lin.is_const:
        return at(stack.elems[lin.const])
    out = at(stack.elems[-1])
    for k in range(len(stack.elems) - 2, -1, -1):
        test = Op("eq", (subs[0], lin_value(Lin(k))), BOOL)
        out = Op("select", (test, at(stack.elems[k]), out), out.dtype, span=stack.span)
    return out


def _point_of(tensor: Generic, subs: tuple) -> Value:
    """The tensor's element at `subs`: its body there, or 0 where its guard is false."""
    at = {var: sub if var.lo == 0 else Op("add", (sub, lin_value(var.lo)), sub.dtype)
          for var, sub in zip(tensor.vars, subs)}
    try:
        body = substitute(tensor.body, at)
        guard = None if tensor.guard is None else substitute(tensor.guard, at)
    except TypeError:
        raise d.error(d.UNSUPPORTED, "derivatives through a tensor a recurrence step computes from its "
                      "state are not compiled yet", tensor.span) from None
    return body if guard is None else Op("select", (guard, body, const(0.0, body)), body.dtype)


class _AdjointLoop:
    def __init__(self, group: RecurrenceGroup, rules, span):
        self.group = group
        self.code: dict = {}                       # id(clause) -> its body and guard (clause_code)
        self.rules = rules
        self.span = span
        self.primal = {id(m): RecValue(group, m) for m in group.members}
        self.stages: dict = {}                     # (id(step tensor), steps) -> its member, or None
        self.tapes: dict = {}                      # (id(step tensor), steps) -> its tape Generic, or None
        self.stage_tape: dict = {}                 # id(stage member) -> (its tape, its first step)
        self.stage_of_tape: dict = {}              # id(tape) -> its stage member
        self._stage_code: dict = {}                # id(stage clause) -> its body and guard
        self.members = list(group.members)         # and the stage members, each after what it reads
        steps = group.t_var.extent
        self.tau = IndexVar("τ", Lin(0), steps)
        self.last = steps - 1                      # t = last - τ
        self.step = group.t_var                    # the clause's own step variable
        self.converted: dict[int, Value] = {}      # per clause
        self.stops: set = set()                    # ids of the values asked about (x)
        self.states_given = False                  # reads of an enclosing loop's state are givens

    def run(self, code: dict, outside: dict, stops: set, states_given: bool) -> list:
        self.code, self.stops, self.states_given = code, stops, states_given
        self.members = self._in_step_order()
        steps = self.group.t_var.extent
        # every adjoint is stored over all of G's steps: a member shorter than the loop
        # (v[0..T] beside a[0..T + 1]) lives at its last steps there, the first ones stay 0
        self.adjoint = {id(m): _adjoint_member(m, steps) for m in self.members if m.dtype.is_float}
        # ids of the members whose adjoint is stored with the step's other axes reversed
        self.flipped = {id(r.member) for m in self.members for c in m.clauses
                        for r in step_state_reads([v for v in code[id(c)] if v is not None])
                        if r.member is m and _same_step(r, self.group)}
        needed = self._read_from(outside)
        self.adjoint = {key: m for key, m in self.adjoint.items() if key in needed}
        into_states: dict[int, list] = {}
        leaves = []
        for n in self.members:
            if id(n) not in self.adjoint:
                continue
            for read in self._state_reads(n):
                self._check(n, read)
            for clause in n.clauses:
                for leaf in self._clause_leaves(n, clause):
                    target = self._state_of(leaf.leaf)
                    if target is None:
                        leaves.append(leaf)
                    elif id(target) in self.adjoint:
                        into_states.setdefault(id(target), []).append(self._at_member_steps(leaf, target))
        members = [m for m in reversed(self.members) if id(m) in self.adjoint]
        for m in members:
            self._define(m, outside.get(id(m)), into_states.get(id(m), []))
        reverse = RecurrenceGroup(self.tau, [self.adjoint[id(m)] for m in members])
        values = {id(self.adjoint[id(m)]): RecValue(reverse, self.adjoint[id(m)]) for m in members}
        return [LeafAdjoint(leaf.leaf, _states_as_reads(leaf.adjoint, values), leaf.extra_vars)
                for leaf in leaves]

    # ------------------------------------------------------------ primal clauses

    def _clause_leaves(self, n: RecMember, clause: RecClause) -> list:
        """Adjoints of what one clause of n reads, its primal states read as tensors. The
        clause's steps get their own variable, so sums over them cover exactly its range."""
        step = IndexVar(self.group.t_var.name, clause.t_lo, clause.t_hi - clause.t_lo)
        t = IndexRef(step)
        self.step, self.converted = step, {}
        here = (t,) + tuple(IndexRef(v) for v in clause.vars)
        body, guard = self.code[id(clause)]
        seed: Value = StateRead(self.adjoint[id(n)], (self._step_of(t),) + self._stored_at(n, here[1:]))
        if guard is not None:
            seed = Op("select", (self._convert(guard), seed, const(0.0, seed)), seed.dtype)
        overridden = _written_later(n, clause, here, self.group.t_var)
        if overridden is not None:      # a later clause writes these points: this one's value is gone
            seed = Op("select", (overridden, const(0.0, seed), seed), seed.dtype)
        body = self._convert(body)
        leaves = propagate(body, seed, self.stops, (step,) + tuple(clause.vars), self.rules, self.states_given)
        if not sole_writer(n, clause):
            return leaves
        # partials that repeat the whole body read the stored value instead
        stored = {id(body): self._stored(n, here, clause.body.span)}
        return [LeafAdjoint(leaf.leaf, replace_nodes(leaf.adjoint, stored), leaf.extra_vars)
                for leaf in leaves]

    def _stored(self, m: RecMember, subs: tuple, span) -> Read:
        """The read of member m's kept value at `subs` (its step first): its storage, or a stage
        member's tape."""
        if id(m) not in self.stage_tape:
            return Read(self.primal[id(m)], subs, span=span)
        tape, first = self.stage_tape[id(m)]      # a stage is read at its own step, t
        return Read(tape, (lin_value(affine.affine_of(subs[0]) - first),) + tuple(subs[1:]), span=span)

    def _at_member_steps(self, leaf: LeafAdjoint, member: RecMember) -> LeafAdjoint:
        """A leaf reading a stage member's tape, read again at the member's own steps (the tape
        starts at the stage's first step), as the adjoint loop sums leaves at its members' points."""
        if id(member) not in self.stage_tape:
            return leaf
        read, first = leaf.leaf, self.stage_tape[id(member)][1]
        step = Op("add", (read.subs[0], lin_value(first)), read.subs[0].dtype)
        return LeafAdjoint(Read(read.tensor, (step,) + tuple(read.subs[1:]), span=read.span), leaf.adjoint,
                           leaf.extra_vars)

    # ------------------------------------------------------------ stage members

    def as_member(self, tensor: Generic, clause: RecClause):
        """The member standing for step tensor `tensor` over the steps of `clause` in the adjoint,
        made on first use: where its own body is costly, it has a tape and variables starting at
        0; else None (it is followed at its points)."""
        key = (id(tensor), clause.t_lo, clause.t_hi)
        if key in self.stages:
            return self.stages[key]
        self.stages[key] = None
        if not isinstance(tensor, Generic) or any(not (v.lo.is_const and v.lo.const == 0) for v in tensor.vars):
            return None
        tape = self._tape(tensor, clause)
        if tape is None:
            return None
        member = RecMember(f"{self.group.members[0].name}_stage{len(self.stage_tape) + 1}", tensor.dtype,
                           (self.group.t_var.extent,) + tuple(tensor.shape), [], span=tensor.span)
        # over the tensor's own variables, its body unchanged: a derivative's x read at the point
        # of an enclosing definition (`grid[g]`) is known by identity
        stage = RecClause(clause.t_lo, clause.t_hi, tensor.vars, tensor.body, tensor.guard, span=tensor.span)
        self._stage_code[id(stage)] = tuple(
            None if v is None else at_points_of_step_tensors(v, self.group, as_member=self.as_member, clause=clause)
            for v in (tensor.body, tensor.guard))
        member.clauses.append(stage)
        self.stage_tape[id(member)] = (tape, clause.t_lo)
        self.stage_of_tape[id(tape)] = member
        self.members.append(member)
        self.stages[key] = member
        return member

    def _in_step_order(self) -> list:
        """The members, each after those it reads at its own step: the group's in their order,
        a stage member just before the first that reads it (it may read one before that: a GRU's
        candidate gate reads the reset gate r[t])."""
        order: list = []
        placed: set = set()

        def place(m: RecMember) -> None:
            if id(m) in placed:
                return
            placed.add(id(m))
            for read in self._state_reads(m):
                if read.member is not m and _same_step(read, self.group):
                    place(read.member)
            order.append(m)
        for m in self.members:
            place(m)
        return order

    def stage_code(self) -> dict:
        """id(clause) -> body and guard of the stage members' clauses, as clause_code gives."""
        return dict(self._stage_code)

    def _tape(self, tensor: Generic, clause: RecClause):
        """`tensor` at every step of `clause` (its step first), computed from the kept states; None
        where its own body is cheap to recompute (its costly step tensors are read from their
        tapes) or it reads variables not its own."""
        key = (id(tensor), clause.t_lo, clause.t_hi)
        if key in self.tapes:
            return self.tapes[key]
        self.tapes[key] = None
        if not _costly(tensor):
            return None
        step = IndexVar(self.group.t_var.name, clause.t_lo, clause.t_hi - clause.t_lo)
        own = tuple(IndexVar(v.name, v.lo, v.extent, span=v.span) for v in tensor.vars)
        at = {v: IndexRef(w) for v, w in zip(tensor.vars, own)}
        body = self._stored_values(substitute(tensor.body, at), step, clause)
        guard = None if tensor.guard is None else self._stored_values(substitute(tensor.guard, at), step, clause)
        tape = Generic((step,) + own, body, guard, span=tensor.span)
        if body_vars(tape) - set(tape.vars):
            return None
        self.tapes[key] = tape
        return tape

    def _stored_values(self, v: Value, step: IndexVar, clause: RecClause) -> Value:
        """`v` (code of the step `step` of `clause`) computed from the kept states: the group's
        state reads as reads of its storage, costly step tensors as reads of their tapes, the
        others at their points."""
        mapping = {}
        for n in scalar_nodes([v]):
            if isinstance(n, IndexRef) and n.var is self.group.t_var:
                mapping[id(n)] = IndexRef(step)
            elif isinstance(n, StateRead) and id(n.member) in self.primal:
                subs = tuple(self._stored_values(s, step, clause) for s in n.subs)
                mapping[id(n)] = Read(self.primal[id(n.member)], subs, span=n.span)
            elif isinstance(n, Read) and n.rank == 0 and computed_from_state(n.tensor, self.group):
                subs = tuple(self._stored_values(s, step, clause) for s in n.subs)
                tape = self._tape(n.tensor, clause) if isinstance(n.tensor, Generic) else None
                mapping[id(n)] = (Read(tape, (_tape_step(step, clause),) + subs, span=n.span, in_bounds=n.in_bounds)
                                  if tape is not None else
                                  self._stored_values(_element_of(n) if isinstance(n.tensor, Stack)
                                                      else _point_of(n.tensor, n.subs), step, clause))
        return replace_nodes(v, mapping) if mapping else v

    def _state_reads(self, member: RecMember) -> list:
        """The StateReads in member's clauses, through the tensors of its steps."""
        return step_state_reads([v for c in member.clauses for v in self.code[id(c)] if v is not None])

    def _read_from(self, outside: dict) -> set:
        """ids of the members with an adjoint from outside and of those they read, transitively
        (the group may also hold other requests' tangent members, which need no adjoint here)."""
        needed = set(outside)
        stack = [m for m in self.members if id(m) in needed]
        while stack:
            for read in self._state_reads(stack.pop()):
                if id(read.member) not in needed:
                    needed.add(id(read.member))
                    stack.append(read.member)
        return needed

    def _state_of(self, node: Value):
        if isinstance(node, Read) and isinstance(node.tensor, RecValue) and node.tensor.group is self.group:
            return node.tensor.member
        return self.stage_of_tape.get(id(node.tensor)) if isinstance(node, Read) else None

    def _check(self, reader: RecMember, read: StateRead) -> None:
        lin = affine.affine_of(read.subs[0])
        if lin is None:
            raise d.error(d.UNSUPPORTED, f"a derivative through `{reader.name}`, which reads "
                          f"`{read.member.name}` at a step computed from data", self.span)

    # ------------------------------------------------------------ adjoint members

    def _define(self, m: RecMember, outside, leaves: list) -> None:
        """ā_m's clauses: one over every point, or where clauses of m read each other's points
        at a step, one per clause of m in the reverse of their order (einc.ir.clause_order), so
        a clause's adjoint is complete before the clauses it read receive it."""
        if not clause_order.reads_across_clauses(m, self.group.t_var):
            vars_ = tuple(IndexVar(f"v{k}", Lin(0), extent) for k, extent in enumerate(m.shape[1:], 1))
            first = self.tau.extent - m.shape[0]      # τ of m's last step
            self.adjoint[id(m)].clauses.append(RecClause(first, self.tau.extent, vars_,
                                                         self._total(m, vars_, outside, leaves)))
            return
        for clause in reversed(m.clauses):
            vars_ = tuple(IndexVar(f"v{k}", self._stored_lo(m, v, extent), v.extent)
                          for k, (v, extent) in enumerate(zip(clause.vars, m.shape[1:]), 1))
            self.adjoint[id(m)].clauses.append(RecClause(self.tau.extent - clause.t_hi, self.tau.extent - clause.t_lo,
                                                         vars_, self._total(m, vars_, outside, leaves)))

    def _total(self, m: RecMember, vars_: tuple, outside, leaves: list) -> Value:
        """ā_m at the points of `vars_` (stored coordinates): from outside plus the leaves."""
        step = self._step_of(IndexRef(self.tau))
        at = (step,) + self._stored_at(m, tuple(IndexRef(v) for v in vars_))
        total = read_adjoint(outside, at) if outside is not None else const(0.0, m)
        for leaf in leaves:
            body, guard = gather_sum(leaf.adjoint, leaf.extra_vars, leaf.leaf.subs, at)
            if guard is not None:
                body = Op("select", (guard, body, const(0.0, body)), body.dtype)
            total = Op("add", (total, body), total.dtype)
        return total

    def _stored_lo(self, m: RecMember, var: IndexVar, extent: Lin) -> Lin:
        """Where the range of `var` (an axis of m) starts in ā_m's storage (_stored_at)."""
        return var.lo if id(m) not in self.flipped else extent - var.lo - var.extent

    def _stored_at(self, m: RecMember, coords: tuple) -> tuple:
        """Where m's point `coords` (after the step) is stored in its adjoint, and the reverse
        (the map is its own inverse): reversed along every axis when m reads its own step."""
        if id(m) not in self.flipped:
            return coords
        return tuple(lin_value(extent - 1 - affine.affine_of(c)) for c, extent in zip(coords, m.shape[1:]))

    def _step_of(self, t: Value) -> Value:
        """The other loop's step for step `t` (the map t <-> last - t is its own inverse)."""
        return Op("sub", (lin_value(self.last), t), t.dtype)

    # ------------------------------------------------------------ rebuilding

    def _convert(self, v: Value) -> Value:
        """`v` with the primal StateReads as reads of the primal storage, and the clause's own
        step variable for the group's."""
        key = id(v)
        if key not in self.converted:
            self.converted[key] = self._rebuild(v)
        return self.converted[key]

    def _rebuild(self, v: Value) -> Value:
        if id(v) in self.stops:
            return v        # x itself: a copy would hide its uses from the derivative (a silent 0)
        if isinstance(v, StateRead) and (id(v.member) in self.primal or id(v.member) in self.stage_tape):
            return self._stored(v.member, tuple(self._convert(s) for s in v.subs), v.span)
        if isinstance(v, IndexRef) and v.var is self.group.t_var:
            return IndexRef(self.step)
        if isinstance(v, (Const, Input, Size, IndexRef)) or v.rank > 0:
            return v
        if isinstance(v, Read):
            return Read(v.tensor, tuple(self._convert(s) for s in v.subs), span=v.span, in_bounds=v.in_bounds)
        if isinstance(v, Reduce):
            guard = self._convert(v.guard) if v.guard is not None else None
            return Reduce(v.kind, v.vars, self._convert(v.body), guard, span=v.span)
        if isinstance(v, Op):
            pairs = self.rules.partials(v)
            out = Op(v.op, tuple(self._convert(a) for a in v.args), v.dtype, span=v.span)
            if pairs is None:
                return out
            return self.rules.anchor(out.args[0], [(self._convert(a), self._convert(p)) for a, p in pairs])
        raise d.error(d.UNSUPPORTED, f"no derivative through {type(v).__name__} in a recurrence", self.span)


def _costly(tensor: Generic) -> bool:
    """Whether a step tensor's own body (not the step tensors it reads) holds a float
    transcendental, a division or a reduction."""
    return any(isinstance(n, Reduce) or (isinstance(n, Op) and n.op in EXPENSIVE_OPS and n.dtype.is_float)
               for n in scalar_nodes([u for u in (tensor.body, tensor.guard) if u is not None]))


def _tape_step(step: IndexVar, clause: RecClause) -> Value:
    """The tape's coordinate of the step `step` (a variable over the clause's steps)."""
    return lin_value(Lin.of(step) - clause.t_lo)


def relative_steps(v: Value, clause: RecClause, t_var: IndexVar) -> Value:
    """`v` with its reads of fixed steps written relative to the step, in a clause of one
    fixed step (`R[0, j - 1]` in `let R[0, j in 1..M] = ..` is R[t, j - 1]): the adjoint
    loop follows reads at t - constant."""
    if not (clause.t_lo.is_const and clause.t_hi.is_const and clause.t_hi.const == clause.t_lo.const + 1):
        return v
    mapping = {}
    for n in scalar_nodes([v]):
        lin = affine.affine_of(n.subs[0]) if isinstance(n, StateRead) else None
        if lin is not None and lin.is_const:
            step = lin_value(Lin.of(t_var) + (lin.const - clause.t_lo.const))
            mapping[id(n)] = StateRead(n.member, (step,) + tuple(n.subs[1:]), span=n.span)
    return replace_nodes(v, mapping) if mapping else v


def _same_step(read: StateRead, group: RecurrenceGroup) -> bool:
    lin = affine.affine_of(read.subs[0])
    return lin is not None and lin.terms == {group.t_var: 1} and lin.const == 0


def _written_later(member: RecMember, clause: RecClause, here: tuple, step_var: IndexVar):
    """The condition that a clause after `clause` writes the point `here` (its step and
    coordinates; `step_var`, the group's step), or None when no later clause can: a later clause
    wins at the points it writes."""
    if sole_writer(member, clause):
        return None
    cond = None
    for other in member.clauses[member.clauses.index(clause) + 1:]:
        if other.guard is not None or _disjoint_steps(clause, other):
            continue
        ranges = [(here[0], other.t_lo, other.t_hi)]
        ranges += [(at, var.lo, var.lo + var.extent) for at, var in zip(here[1:], other.vars)]
        inside = None
        for at, lo, hi in ranges:
            test = Op("and", (Op("ge", (at, lin_value(lo)), BOOL), Op("lt", (at, lin_value(hi)), BOOL)), BOOL)
            inside = test if inside is None else Op("and", (inside, test), BOOL)
        if other.keeps:         # a rim writes its own value only where its guard holds
            guard = _guarded(other)[1]
            at_here = substitute(guard, {**dict(zip(other.vars, here[1:])), step_var: here[0]})
            inside = Op("and", (inside, at_here), BOOL)
        cond = inside if cond is None else Op("or", (cond, inside), BOOL)
    return cond


def _disjoint_steps(clause: RecClause, other: RecClause) -> bool:
    return affine.surely_nonnegative(clause.t_lo - other.t_hi) or affine.surely_nonnegative(other.t_lo - clause.t_hi)


def sole_writer(member: RecMember, clause: RecClause) -> bool:
    """Whether no other clause of `member` writes the steps `clause` writes (later clauses win)."""
    return all(other is clause or affine.surely_nonnegative(clause.t_lo - other.t_hi)
               or affine.surely_nonnegative(other.t_lo - clause.t_hi) for other in member.clauses)


def _states_as_reads(v: Value, values: dict) -> Value:
    """`v` with the adjoint loop's StateReads as reads of its storage (for use outside it)."""
    mapping = {id(n): Read(values[id(n.member)], n.subs, span=n.span) for n in scalar_nodes([v])
               if isinstance(n, StateRead) and id(n.member) in values}
    return replace_nodes(v, mapping)
