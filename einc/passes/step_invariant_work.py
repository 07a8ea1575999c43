"""Hoist state-free work out of recurrence clause bodies: computed for every step at once, before the loop.

A clause body runs at every point of its step, one step after another. Reverse mode builds
clauses where an expensive factor reads no state and uses only some of the step's variables:
the adjoint of `h[t, j] = act(sum[k](h[t - 1, k] * W[k, j]))` is
`h_bar[τ, k] = sum[j](h_bar[τ - 1, j] * act'(..the forward pre-activation at t, j..) * W[k, j])`,
which recomputes `act'(..)` (a reduction and a transcendental) for every k. Such a subexpression
becomes a program-level Generic over the step and the variables it uses, computed once for all
steps by an ordinary parallel kernel, and the clause reads it.

A subexpression is hoisted when it is the largest one on its path from the clause's root that
  - reads no recurrence state and no tensor computed inside a step, and uses only the step's
    variables (the step, the clause's point, the reductions around it);
  - leaves out one of those variables whose extent is not a constant below 2 (so the hoist
    saves work);
  - is expensive: a float transcendental function or division, or a reduction (a step
    evaluates a reduction at each point that reaches it).
Each hoisted tensor is one more that the step reads: a group's one dispatch binds every tensor
it reads or writes, at most 32 (IREE-220, docs/IREE_DEFECTS.md), so a group hoists no more than
its reads and members leave below BINDINGS, in the order its clauses meet them.
It is evaluated only where the original is: it runs over the clause's steps, and its guard is
the conditions on its path (the clause's guard, the `where`s of the reductions around it, the tests of the
`if`s and the left sides of the `&&`/`||` it sits under), each of their conjuncts that uses only
its variables and reads no state. A conjunct that uses other variables (a one-hot `v - k == j`)
is dropped only where the hoisted work is total everywhere: no data-dependent subscript (whose
run-time check could fail at a point the program never reads) and no integer division. The
hoisted reads' bounds are proven again over the new domain (passes/read_bounds, which runs
after); an unproven one is clamped, and its value is never used where the program would not
have read it.
"""
from __future__ import annotations

from einc.ir.nodes import (EXPENSIVE_OPS, Generic, IndexRef, IndexVar, Op, Program, Read, RecValue, Reduce, Stack,
                           StateRead, Value, free_vars, size_value, walk)
from einc.ir.traversal import fold
from einc.ir.types import BOOL, I32
from einc.passes.invariant_work import _inside_body, _Renaming, _Steps

BINDINGS = 24       # a group's reads and members, hoisted tensors included: IREE's 32, less a margin


def hoist_state_free_step_work(program: Program) -> None:
    steps = _Steps()
    # every group the outputs reach: the adjoint loops join program.recurrences only later (settle_groups)
    groups = {id(v.group): v.group for v in walk(program.roots()) if isinstance(v, RecValue)}
    for group in groups.values():
        if any(m.batch for m in group.members):
            continue
        hoister = _StepHoister(group, steps, BINDINGS - len(group.members) - _tensors_read(group))
        for member in group.members:
            for clause in member.clauses:
                if not clause.keeps:
                    clause.body = hoister.clause(clause)


class _StepHoister:
    def __init__(self, group, steps: _Steps, budget: int):
        self.group = group
        self.steps = steps
        self.budget = budget            # how many more tensors the step may read
        self.free: dict = {}            # memo of free_vars
        self.state_free: dict = {}      # memo of _state_free
        self.costly: dict = {}          # memo of _costly
        # the rebuilt values, keyed by id: each entry holds the value it rebuilt, what it made and
        # its conditions, so that no id in these memos is freed (a clause's replaced body) and
        # taken by a new value (a branch's negated test) while the group is walked
        self.memo: dict = {}
        self.steps_of_clause = None     # (t_lo, t_hi) of the clause being rebuilt

    def clause(self, clause) -> Value:
        """The clause's body with its state-free invariant parts hoisted (rebuilt where changed)."""
        t = self.group.t_var
        # a hoisted tensor runs over the clause's steps only: its reads are in bounds there
        # (a start clause's `x[i, t]` at t = 0), not necessarily at every step of the group
        self.steps_of_clause = (clause.t_lo, clause.t_hi)
        conds = () if clause.guard is None else (clause.guard,)
        return self._value(clause.body, (t,) + tuple(clause.vars), conds)

    def _value(self, v: Value, bound: tuple, conds: tuple) -> Value:
        """`v`, evaluated at the points of `bound` where `conds` hold, with its parts hoisted."""
        key = (id(v), bound, tuple(map(id, conds)), self.steps_of_clause)
        if key in self.memo:
            return self.memo[key][0]
        out = v
        if v.rank > 0 or isinstance(v, (Read, StateRead)):
            pass
        elif self._hoistable(v, bound):
            out = self._hoist(v, bound, conds)
        elif isinstance(v, Op):
            if v.op == "select":
                c, a, b = v.args
                args = (self._value(c, bound, conds), self._value(a, bound, conds + (c,)),
                        self._value(b, bound, conds + (Op("not", (c,), BOOL),)))
            elif v.op in ("and", "or"):
                left = v.args[0] if v.op == "and" else Op("not", (v.args[0],), BOOL)
                args = (self._value(v.args[0], bound, conds), self._value(v.args[1], bound, conds + (left,)))
            else:
                args = tuple(self._value(a, bound, conds) for a in v.args)
            if any(a is not b for a, b in zip(args, v.args)):
                out = Op(v.op, args, v.dtype, span=v.span)
        elif isinstance(v, Reduce):
            inner = bound + tuple(v.vars)
            guard = None if v.guard is None else self._value(v.guard, inner, conds)
            body = self._value(v.body, inner, conds + (() if v.guard is None else (v.guard,)))
            if body is not v.body or guard is not v.guard:
                out = Reduce(v.kind, v.vars, body, guard, span=v.span)
        self.memo[key] = (out, conds, v)
        return out

    def _hoistable(self, v: Value, bound: tuple) -> bool:
        used = free_vars(v, self.free)
        unused = [x for x in bound if x not in used]
        return (bool(used) and used <= frozenset(bound)
                and any(x.extent is not None and not (x.extent.is_const and x.extent.const < 2) for x in unused)
                and fold(v, _inside_body, _costly, self.costly) and self._state_free(v))

    def _state_free(self, v: Value) -> bool:
        return fold(v, _inside_body, self._free_of_state, self.state_free)

    def _free_of_state(self, v: Value, below: list) -> bool:
        if isinstance(v, StateRead):
            return False
        if isinstance(v, Read) and not isinstance(v.tensor, Stack) and self._of_step(v.tensor):
            return False
        return all(below)

    def _of_step(self, tensor: Value) -> bool:
        """Whether `tensor` is computed inside this group's steps: its own storage, a tensor of
        a step, or the storage of a group that runs inside each step (reads its state)."""
        if isinstance(tensor, RecValue):
            if tensor.group is self.group:
                return True
            inner = tensor.group.code()
            return any(isinstance(x, StateRead) and x.member in self.group.members for x in walk(inner))
        return self.steps.inside(tensor)

    def _hoist(self, v: Value, bound: tuple, conds: tuple) -> Value:
        """A Generic computing `v` over the variables it uses (fresh copies, in `bound`'s order)
        where the conjuncts of `conds` it may test hold, and the read of it at the current point;
        `v` itself where a dropped conjunct would leave it evaluated where it may fail."""
        used = free_vars(v, self.free)
        kept, dropped = [], False
        for c in conds:
            for part in _conjuncts(c):
                if free_vars(part, self.free) <= used and self._state_free(part):
                    kept.append(part)
                else:
                    dropped = True
        if self.budget < 1 or (dropped and not all(fold(x, _inside_body, _total, {}) for x in [v] + kept)):
            return v
        self.budget -= 1
        own = [x for x in bound if x in used]
        fresh = {x: self._copy(x) for x in own}
        renaming = _Renaming(fresh, forget_bounds=dropped)
        guard = None
        for part in kept:
            part = renaming.value(part)
            guard = part if guard is None else Op("and", (guard, part), BOOL, span=part.span)
        body = renaming.value(v)
        hoisted = Generic(tuple(fresh.values()), body, guard, span=v.span)
        subs = tuple(IndexRef(x, span=v.span) if fresh[x].lo.is_const and fresh[x].lo.const == 0 else
                     Op("sub", (IndexRef(x, span=v.span), size_value(fresh[x].lo)), I32, span=v.span) for x in own)
        return Read(hoisted, subs, span=v.span, in_bounds=True, strict=True)

    def _copy(self, x: IndexVar) -> IndexVar:
        """A variable of the hoisted tensor: the step's runs over the clause's steps."""
        if x is not self.group.t_var:
            return IndexVar(x.name, x.lo, x.extent, span=x.span)
        lo, hi = self.steps_of_clause
        return IndexVar(x.name, lo, hi - lo, span=x.span)


def _tensors_read(group) -> int:
    """How many tensors other than its state the group's clauses read."""
    roots = group.code()
    seen, tensors, todo = set(), set(), list(roots)
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, Read) and not isinstance(v.tensor, Stack):
            tensors.add(id(v.tensor))
        todo.extend(_inside_body(v))
    return len(tensors)


def _conjuncts(c: Value) -> list:
    """`a && b && ..` as [a, b, ..], in order (each is tested only where those before it hold)."""
    if isinstance(c, Op) and c.op == "and":
        return _conjuncts(c.args[0]) + _conjuncts(c.args[1])
    return [c]


def _costly(v: Value, below: list) -> bool:
    """Whether `v` holds an expensive float operation or a reduction (not integer arithmetic
    of indices, such as a dilation `2 ** l`: cheaper than a load, and left in a guard the
    lowering can narrow its loops by)."""
    return (isinstance(v, Reduce) or (isinstance(v, Op) and v.op in EXPENSIVE_OPS and v.dtype.is_float)
            or any(below))


def _total(v: Value, below: list) -> bool:
    """Whether `v` can be evaluated anywhere: no subscript reads data (its run-time check could
    fail where the program never reads), no integer division (by zero)."""
    if isinstance(v, Read) and any(not fold(s, _inside_body, _reads_nothing, {}) for s in v.subs):
        return False
    if isinstance(v, Op) and v.op in ("div", "rem") and v.dtype.is_int:
        return False
    return all(below)


def _reads_nothing(v: Value, below: list) -> bool:
    return not isinstance(v, (Read, StateRead)) and all(below)

