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
from einc.ir.file_arrays import content_digest
from einc.ir.traversal import fold


def share_equal_values(program: Program) -> None:
    keys = _Keys()
    first: dict = {}
    same: dict[int, Value] = {}
    for v in walk(program.roots()):
        if not free_vars(v, keys.free):
            same[id(v)] = first.setdefault(keys.of(v), v)
    _Rewrite(same).program(program)


class _Keys:
    """Structural keys, hash-consed: a key is a small int standing for (kind, attributes, keys of
    the operands), so building and comparing one costs its own operands, not the tree below it
    (a chain of values that each read their input twice unfolds to a tree exponential in its
    depth). Keys are computed for items (v, env): `env` names v's free index variables by
    (binder depth, position), the depth of a binder being one more than the deepest name it
    uses, so a key depends only on v and the names of its own free variables."""

    def __init__(self):
        self.free: dict = {}          # memo of free_vars
        self.interned: dict = {}      # structural tuple -> key
        self.memo: dict = {}          # (id(v), names of its free variables) -> key

    def of(self, v: Value) -> int:
        """The key of a value with no free index variable."""
        return fold(self._item(v, {}), self._parts, self._combine, self.memo, key=_item_key)

    def _item(self, v: Value, env: dict) -> tuple:
        names = tuple(_name(env, x) for x in sorted(free_vars(v, self.free), key=id))
        return id(v), names, v, env

    def _parts(self, item: tuple) -> list:
        v, env = item[2], item[3]
        if isinstance(v, (Generic, Reduce)):
            env = self._inner(v, env)
        return [self._item(o, env) for o in _keyed_operands(v)]

    def _inner(self, binder: Value, env: dict) -> dict:
        used = frozenset().union(*(free_vars(o, self.free) for o in binder.operands()))
        outer = {x: _name(env, x) for x in used - frozenset(binder.vars)}
        depth = 1 + max((name[0] for name in outer.values()), default=-1)
        return {**outer, **{var: (depth, k) for k, var in enumerate(binder.vars)}}

    def _combine(self, item: tuple, below: list) -> int:
        struct = _structure(item[2], item[3], tuple(below))
        return self.interned.setdefault(struct, len(self.interned))


def _name(env: dict, var) -> tuple:
    """The name of index variable `var`: bound here, or bound by no Generic or Reduce (the
    step or clause variable of a recurrence that a tensor of its step code reads)."""
    return env.get(var) or (-1, id(var))


def _item_key(item: tuple) -> tuple:
    return item[0], item[1]


def _keyed_operands(v: Value) -> tuple:
    """The operands a key is built from (none for the values keyed by themselves)."""
    if isinstance(v, (Op, Read, StateRead, Generic, Reduce, Piecewise, Stack)):
        return v.operands()
    return ()


def _structure(v: Value, env: dict, below: tuple) -> tuple:
    """What makes `v` the value it is, given the keys of its operands (`below`)."""
    if isinstance(v, Input):
        return ("input", v.pos)
    if isinstance(v, Const):
        return ("const", str(v.dtype), v.array.shape, content_digest(v.array))
    if isinstance(v, Size):
        return ("size", v.lin)
    if isinstance(v, IndexRef):
        return ("index", _name(env, v.var))
    if isinstance(v, Op):
        return ("op", v.op, str(v.dtype), below)
    if isinstance(v, Read):
        return ("read", below, v.in_bounds, v.strict)
    if isinstance(v, StateRead):
        return ("state", id(v.member), below)
    if isinstance(v, (Generic, Reduce)):
        ranges = tuple((var.lo, var.extent) for var in v.vars)
        return (v.kind if isinstance(v, Reduce) else "generic", ranges, below)
    if isinstance(v, Piecewise):
        return ("piecewise", str(v.dtype), v.shape, tuple(zip((c.offsets for c in v.clauses), below)))
    if isinstance(v, Stack):
        return ("stack", below)
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
                if e.values is not None:
                    e.values.args = tuple(self.to(a) for a in e.values.args)
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
