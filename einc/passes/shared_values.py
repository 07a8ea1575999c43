"""Program-level values computed the same way become one value (common subexpressions).

Derivative code repeats work by construction: `@L / @W1` and `@L / @W2` each build the adjoints
of L's intermediate tensors, and every clause of a training recurrence that calls the loss builds
its forward pass again. Without this pass each copy is its own kernel: compile time and run time
grow with the number of parameters. Two values are the same when they have the same kind,
attributes and operands, up to the names of the index variables a Generic or Reduce binds (named
by position here). Only program-level values (no free index variable) are merged, since those are
what the lowering computes whole; scalars inside one body stay as written.

Recurrence groups are keyed the same way: two groups whose step ranges, members and clauses are
the same, up to the names of their step and clause variables and of their own members, are one
loop, and every read of the second's members reads the first's. So `@L / @W1` and `@L / @W2`
through a recurrence run one reverse loop, not one per parameter. A member is named by its
class: members of one group whose clauses are the same up to the classes of the members they
read (a partition refined to a fixed point) are one member, read wherever any of them was
(forward mode's tangents of one value asked twice).
"""
from __future__ import annotations

from einc.ir.nodes import (Assert, Compact, Const, Generic, IndexRef, Input, Op, Piecewise, Print, Program,
                           Read, RecurrenceGroup, RecValue, Reduce, Size, Stack, StateRead, Value, free_vars,
                           walk)
from einc.ir.file_arrays import content_digest
from einc.ir.traversal import fold


def share_equal_values(program: Program) -> None:
    keys = _Keys()
    first: dict = {}
    same: dict[int, Value] = {}
    for v in walk(program.roots()):
        if not free_vars(v, keys.free):
            same[id(v)] = first.setdefault(keys.of(v), v)
    _Rewrite(same, keys.kept_group, keys.kept_member).program(program)


class _Keys:
    """Structural keys, hash-consed: a key is a small int standing for (kind, attributes, keys of
    the operands), so building and comparing one costs its own operands, not the tree below it
    (a chain of values that each read their input twice unfolds to a tree exponential in its
    depth). Keys are computed for items (v, env): `env` names v's free index variables and the
    recurrence members it reads state of by (binder depth, position), the depth of a binder
    being one more than the deepest name it uses, so a key depends only on v and the names of
    its own free variables. A recurrence group is an item too, binding its step variable, its
    members (named by their class, _classes) and each clause's variables at depth 0 (what it
    reads from outside, through a RecValue, which closes over it, is named by identity)."""

    def __init__(self):
        self.free: dict = {}          # memo of free_vars (what share_equal_values merges)
        self.names: dict = {}         # memo of _free: what a key names
        self.interned: dict = {}      # structural tuple -> key
        self.memo: dict = {}          # (id(v), names of its free variables) -> key
        self.groups: dict = {}        # a group's key -> the first group with it
        self.kept_group: dict = {}    # id(group) -> the group that runs in its place
        self.classes: dict = {}       # id(group) -> {id(member): its class}
        self.kept_member: dict = {}   # id(member) -> the first member of its class

    def of(self, v: Value) -> int:
        """The key of a value with no free index variable."""
        return self._key(self._item(v, {}))

    def _key(self, item: tuple) -> int:
        return fold(item, self._parts, self._combine, self.memo, key=_item_key)

    def _classes(self, group: RecurrenceGroup) -> dict:
        """id(member) -> its class, numbered in member order: members are split by their
        structure with the members they read named by class until no class splits (a group
        nested in a step is refined when its RecValue is first keyed, inside this)."""
        found = self.classes.get(id(group))
        if found is not None:
            return found
        found = {id(m): 0 for m in group.members}
        while True:
            numbering: dict = {}
            refined = {id(m): numbering.setdefault((found[id(m)], self._member_key(group, m, found)),
                                                   len(numbering)) for m in group.members}
            if len(numbering) == len(set(found.values())):
                break
            found = refined
        first = {}
        for m in group.members:
            self.kept_member[id(m)] = first.setdefault(refined[id(m)], m)
        self.classes[id(group)] = refined
        return refined

    def _member_key(self, group: RecurrenceGroup, member, classes: dict) -> tuple:
        below = [self._key(self._item(x, env)) for env, x in _clause_items(group, [member], classes)]
        return _member_structure(member, iter(below))

    def _item(self, v, env: dict) -> tuple:
        names = tuple(_name(env, x) for x in sorted(self._free(v), key=id))
        return id(v), names, v, env

    def _free(self, v) -> frozenset:
        """The index variables and members `v` reads that it does not bind (none for a group)."""
        if isinstance(v, RecurrenceGroup):
            return frozenset()
        return fold(v, _named_parts, _named_of, self.names)

    def _parts(self, item: tuple) -> list:
        v, env = item[2], item[3]
        if isinstance(v, RecurrenceGroup):
            return [self._item(x, env) for env, x in _clause_items(v, v.members, self._classes(v))]
        if isinstance(v, RecValue):
            return [self._item(v.group, {})]
        if isinstance(v, (Generic, Reduce)):
            env = self._inner(v, env)
        return [self._item(o, env) for o in _keyed_operands(v)]

    def _inner(self, binder: Value, env: dict) -> dict:
        used = frozenset().union(*(self._free(o) for o in binder.operands()))
        outer = {x: _name(env, x) for x in used - frozenset(binder.vars)}
        depth = 1 + max((name[0] for name in outer.values()), default=-1)
        return {**outer, **{var: (depth, k) for k, var in enumerate(binder.vars)}}

    def _combine(self, item: tuple, below: list) -> int:
        v = item[2]
        if isinstance(v, RecurrenceGroup):
            struct = _group_structure(v, iter(below))
        elif isinstance(v, RecValue):
            struct = ("rec", below[0], self._classes(v.group)[id(v.member)])
        else:
            struct = _structure(v, item[3], tuple(below))
        key = self.interned.setdefault(struct, len(self.interned))
        if isinstance(v, RecurrenceGroup):
            self.kept_group[id(v)] = self.groups.setdefault(key, v)
        return key


def _name(env: dict, var) -> tuple:
    """The name of index variable or member `var`: bound here, or by nothing keyed with it
    (the step variable or the state of an enclosing recurrence, read by a group run in its steps)."""
    return env.get(var) or (-1, id(var))


_CLOSED = (Input, Const, Size, RecValue, Compact)


def _named_parts(v: Value) -> tuple:
    return () if isinstance(v, _CLOSED) else v.operands()


def _named_of(v: Value, below: list) -> frozenset:
    if isinstance(v, IndexRef):
        return frozenset([v.var])
    out = frozenset().union(*below)
    if isinstance(v, StateRead):
        return out | {v.member}
    return out - frozenset(v.vars) if isinstance(v, (Generic, Reduce)) else out


def _clause_items(group: RecurrenceGroup, members: list, classes: dict) -> list:
    """(env, value) for the bodies and guards of the clauses of `members` of `group`, in member
    and clause order."""
    env = {group.t_var: (0, "t"), **{m: (0, "m", classes[id(m)]) for m in group.members}}
    out = []
    for m in members:
        for c in m.clauses:
            inner = {**env, **{var: (0, k) for k, var in enumerate(c.vars)}}
            out += [(inner, x) for x in (c.body, c.guard) if x is not None]
    return out


def _group_structure(group: RecurrenceGroup, keys) -> tuple:
    """What makes a loop the loop it is, given the keys of its clauses' bodies and guards."""
    members = tuple(_member_structure(m, keys) for m in group.members)
    return "group", group.t_var.lo, group.t_var.extent, members


def _member_structure(member, keys) -> tuple:
    """What makes a member the member it is, given the keys of its clauses' bodies and guards
    (taken from the iterator `keys`)."""
    return (str(member.dtype), tuple(member.shape), len(member.batch),
            tuple((c.t_lo, c.t_hi, tuple((v.lo, v.extent) for v in c.vars), next(keys),
                   None if c.guard is None else next(keys)) for c in member.clauses))


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
        return ("state", _name(env, v.member), below)
    if isinstance(v, (Generic, Reduce)):
        ranges = tuple((var.lo, var.extent) for var in v.vars)
        return (v.kind if isinstance(v, Reduce) else "generic", ranges, below)
    if isinstance(v, Piecewise):
        return ("piecewise", str(v.dtype), v.shape, tuple(zip((c.offsets for c in v.clauses), below)))
    if isinstance(v, Stack):
        return ("stack", below)
    return ("itself", id(v))          # a Compact (a RecValue is keyed by _Keys._combine)


class _Rewrite:
    """Points every use of a merged value at the one kept, and every read of a merged group's
    member at the same member of the group kept, and at the first member of its class."""

    def __init__(self, same: dict, kept_group: dict, kept_member: dict):
        self.same = same
        self.kept_group = kept_group
        self.kept_member = kept_member

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
        values = walk(program.roots())
        groups = {id(g): g for g in program.recurrences}
        groups.update((id(v.group), v.group) for v in values if isinstance(v, RecValue))
        for v in values:
            self.node(v)
        for group in groups.values():
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
            v.member = self.kept_member.get(id(v.member), v.member)
        elif isinstance(v, RecValue):
            kept, member = self.kept_group.get(id(v.group), v.group), self.kept_member.get(id(v.member), v.member)
            v.group, v.member = kept, kept.members[v.group.members.index(member)]
        elif isinstance(v, (Generic, Reduce)):
            v.body, v.guard = self.to(v.body), self.to(v.guard)
        elif isinstance(v, Piecewise):
            for c in v.clauses:
                c.value = self.to(c.value)
        elif isinstance(v, Stack):
            v.elems = tuple(self.to(e) for e in v.elems)
