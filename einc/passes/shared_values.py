"""Program-level values computed the same way become one value (common subexpressions).

Derivative code repeats work by construction: `@L / @W1` and `@L / @W2` each build the adjoints
of L's intermediate tensors, and every clause of a training recurrence that calls the loss builds
its forward pass again. Without this pass each copy is its own kernel: compile time and run time
grow with the number of parameters. Two values are the same when they have the same kind,
attributes and operands, up to the names of the index variables a Generic or Reduce binds (named
by position here). Only program-level values (no free index variable) are merged, since those are
what the lowering computes whole; scalars inside one body stay as written.
"""
from __future__ import annotations

from einc.ir.nodes import (Assert, Const, Generic, IndexRef, Input, Op, Piecewise, Print, Program,
                           Read, Reduce, Size, Stack, StateRead, Value, free_vars, walk)


def share_equal_values(program: Program) -> None:
    keys = _Keys()
    first: dict = {}
    same: dict[int, Value] = {}
    for v in walk(program.roots()):
        if not free_vars(v, keys.free):
            same[id(v)] = first.setdefault(keys.of(v, {}, 0), v)
    _Rewrite(same).program(program)


class _Keys:
    """Structural keys; `env` names the bound variables in scope by (depth, position)."""

    def __init__(self):
        self.free: dict = {}
        self.memo: dict = {}

    def of(self, v: Value, env: dict, depth: int):
        context = tuple(env.get(x, id(x)) for x in sorted(free_vars(v, self.free), key=id))
        memo_key = (id(v), context)
        if memo_key not in self.memo:
            self.memo[memo_key] = self._key(v, env, depth)
        return self.memo[memo_key]

    def _key(self, v: Value, env: dict, depth: int):
        sub = lambda x: None if x is None else self.of(x, env, depth)    # noqa: E731
        if isinstance(v, Input):
            return ("input", v.pos)
        if isinstance(v, Const):
            return ("const", str(v.dtype), v.array.shape, v.array.tobytes())
        if isinstance(v, Size):
            return ("size", v.lin)
        if isinstance(v, IndexRef):
            return ("index", env.get(v.var, id(v.var)))
        if isinstance(v, Op):
            return ("op", v.op, str(v.dtype), tuple(sub(a) for a in v.args))
        if isinstance(v, Read):
            return ("read", sub(v.tensor), tuple(sub(s) for s in v.subs), v.in_bounds, v.strict)
        if isinstance(v, StateRead):
            return ("state", id(v.member), tuple(sub(s) for s in v.subs))
        if isinstance(v, (Generic, Reduce)):
            inner = {**env, **{var: ("bound", depth, k) for k, var in enumerate(v.vars)}}
            body = lambda x: None if x is None else self.of(x, inner, depth + 1)   # noqa: E731
            ranges = tuple((var.lo, var.extent) for var in v.vars)
            kind = v.kind if isinstance(v, Reduce) else "generic"
            return (kind, ranges, body(v.body), body(v.guard))
        if isinstance(v, Piecewise):
            return ("piecewise", str(v.dtype), v.shape, tuple((c.offsets, sub(c.value)) for c in v.clauses))
        if isinstance(v, Stack):
            return ("stack", tuple(sub(e) for e in v.elems))
        return ("itself", id(v))          # a RecValue (its group's loop) is never merged


class _Rewrite:
    """Points every use of a merged value at the one kept."""

    def __init__(self, same: dict):
        self.same = same

    def to(self, v):
        return None if v is None else self.same.get(id(v), v)

    def program(self, program: Program) -> None:
        program.outputs = [(name, self.to(v)) for name, v in program.outputs]
        for e in program.effects:
            if isinstance(e, Print):
                e.args = tuple(self.to(a) for a in e.args)
            elif isinstance(e, Assert):
                e.cond = self.to(e.cond)
        for v in walk(program.roots()):
            self.node(v)
        for group in program.recurrences:
            for member in group.members:
                for clause in member.clauses:
                    clause.body, clause.guard = self.to(clause.body), self.to(clause.guard)

    def node(self, v: Value) -> None:
        if isinstance(v, Op):
            v.args = tuple(self.to(a) for a in v.args)
        elif isinstance(v, Read):
            v.tensor, v.subs = self.to(v.tensor), tuple(self.to(s) for s in v.subs)
        elif isinstance(v, StateRead):
            v.subs = tuple(self.to(s) for s in v.subs)
        elif isinstance(v, (Generic, Reduce)):
            v.body, v.guard = self.to(v.body), self.to(v.guard)
        elif isinstance(v, Piecewise):
            for c in v.clauses:
                c.value = self.to(c.value)
        elif isinstance(v, Stack):
            v.elems = tuple(self.to(e) for e in v.elems)
