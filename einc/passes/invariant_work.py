"""Hoist loop-invariant work out of the bodies of program-level Generics (loop-invariant code motion).

A Generic's body, and the bodies of the reductions inside it, run at every point of their loops.
Reverse mode builds bodies where an expensive factor uses only some of those loops: `@L / @W` of
`act(sum[k](h[k] * W[k, j]))` sums `h[k'] * act'(..)` over the steps at every (k', j), though
`act'(..)` does not use k'. Such a subexpression becomes a Generic of its own over the variables
it uses (computed once per point of those) and the body reads it.

A subexpression is hoisted when it is the largest one on its path from the body's root that
  - uses index variables, but not all that are bound around it: one it does not use has an
    extent that is not a constant below 2 (so the hoist saves work);
  - is expensive: a transcendental function or a division outside the reductions it holds (a
    reduction alone the lowering already computes once over its own variables,
    einc.mlir.dense.kernels `_reduction_operand`);
  - reads no recurrence state (its value changes within a step);
  - is evaluated at every point of its loops: it does not sit under a `where` of an enclosing
    Generic or reduction, a side of a select or the right side of `&&`/`||`. So the hoisted
    Generic evaluates nothing the original did not, at no point its index checks
    (passes/index_checks, which follow) would not see: a check covers the variables its subscript
    uses, whatever the others' extents.
It runs before share_equal_values, which merges the equal Generics hoisted from several bodies.
"""
from __future__ import annotations

from einc.ir.nodes import (EXPENSIVE_OPS, Generic, IndexRef, IndexVar, Op, Program, Read, RecValue, Reduce, Stack,
                           StateRead, Value, free_vars, postorder, size_value, walk)
from einc.ir.traversal import fold
from einc.ir.types import I32



def hoist_invariant_work(program: Program) -> None:
    steps = _Steps()
    todo = [v for v in walk(program.roots()) if isinstance(v, Generic) and not steps.inside(v)]
    hoister = _Hoister()
    while todo:
        todo += hoister.generic(todo.pop())


class _Hoister:
    def generic(self, g: Generic) -> list:
        """Hoist out of `g`'s body in place; returns the Generics hoisted. The memos, keyed by
        id, are `g`'s own: the body it replaces may be freed, and its ids taken by new values."""
        self.free: dict = {}            # memo of free_vars
        self.costly: dict = {}          # memo of _costly
        for v in postorder([x for x in (g.body, g.guard) if x is not None], _inside_body):
            if isinstance(v, Reduce):
                self._factor(v)
        if g.guard is not None:
            return []
        self.hoisted: list = []
        self.memo: dict = {}
        g.body = self._value(g.body, tuple(g.vars))
        return self.hoisted

    def _value(self, root: Value, bound: tuple) -> Value:
        """`root` (a scalar evaluated at every point of the variables `bound`, outermost first)
        with its invariant parts hoisted; rebuilt where something changed, since scalars may be
        shared with other bodies. Walked with a stack: a product of thousands of factors is a
        tree that deep."""
        todo = [(root, bound, None)]
        while todo:
            v, at, parts = todo.pop()
            key = (id(v), at)
            if key in self.memo:
                continue
            if parts is not None:           # its parts are done: rebuild it from them
                self.memo[key] = self._rebuilt(v, at, [self.memo[(id(p), b)] for p, b in parts])
                continue
            if v.rank > 0 or isinstance(v, (Read, StateRead)):     # a tensor, or a read of one: kept
                self.memo[key] = v
                continue
            if self._hoistable(v, at):
                self.memo[key] = self._hoist(v, at)
                continue
            parts = self._parts(v, at)
            if parts is None:
                self.memo[key] = v
                continue
            todo.append((v, at, parts))
            todo.extend((p, b, None) for p, b in reversed(parts))
        return self.memo[(id(root), bound)]

    @staticmethod
    def _parts(v: Value, bound: tuple):
        """The (part, variables bound at it) that `v` is rebuilt from, or None where it has
        nothing to look into."""
        if isinstance(v, Op):
            if v.op in ("select", "and", "or"):     # only the test (or the left side) runs at every point
                return [(v.args[0], bound)]
            return [(a, bound) for a in v.args]
        if isinstance(v, Reduce) and v.guard is None:
            return [(v.body, bound + tuple(v.vars))]
        return None

    @staticmethod
    def _rebuilt(v: Value, bound: tuple, parts: list) -> Value:
        if isinstance(v, Op):
            args = tuple(parts) + tuple(v.args[len(parts):])
            return v if all(a is b for a, b in zip(args, v.args)) else Op(v.op, args, v.dtype, span=v.span)
        body, = parts
        return v if body is v.body else Reduce(v.kind, v.vars, body, span=v.span)

    def _factor(self, r: Reduce) -> None:
        """`kind[vars](body) where guard`, with a guard of only some of `vars` and of a variable
        around it that `body` does not use (a one-hot mask, `where tokens[t, b] == v`): in place,
        `kind[the guard's vars](kind[the others](body)) where guard`. The inner reduction no
        longer runs for every value of that variable (the lowering computes a reduction once over
        the variables it uses); the guard still decides every point the body contributes at."""
        if r.guard is None:
            return
        in_guard = free_vars(r.guard, self.free)
        in_body = free_vars(r.body, self.free)
        outer = tuple(x for x in r.vars if x in in_guard)
        inner = tuple(x for x in r.vars if x not in in_guard)
        if outer and inner and any(x not in r.vars and x not in in_body for x in in_guard):
            r.vars, r.body = outer, Reduce(r.kind, inner, r.body, span=r.span)

    def _hoistable(self, v: Value, bound: tuple) -> bool:
        used = free_vars(v, self.free)
        unused = [x for x in bound if x not in used]
        return (bool(used) and not isinstance(v, Reduce)
                and any(x.extent is not None and not (x.extent.is_const and x.extent.const < 2) for x in unused)
                and fold(v, _inside_body, _costly, self.costly))

    def _hoist(self, v: Value, bound: tuple) -> Read:
        """A Generic computing `v` over the variables it uses (fresh copies, in `bound`'s order),
        and the read of it at the current point."""
        used = free_vars(v, self.free)
        own = [x for x in bound if x in used]
        fresh = {x: IndexVar(x.name, x.lo, x.extent, span=x.span) for x in own}
        hoisted = Generic(tuple(fresh.values()), _Renaming(fresh).value(v), span=v.span)
        self.hoisted.append(hoisted)
        subs = tuple(IndexRef(x, span=v.span) if x.lo.is_const and x.lo.const == 0 else
                     Op("sub", (IndexRef(x, span=v.span), size_value(x.lo)), I32, span=v.span) for x in own)
        return Read(hoisted, subs, span=v.span, in_bounds=True, strict=True)


def _inside_body(v: Value) -> tuple:
    """The operands of a scalar that run with it (not the program-level tensors it reads)."""
    if isinstance(v, Read):      # an array literal built at each point runs with it too
        return v.operands() if isinstance(v.tensor, Stack) else tuple(v.subs)
    return v.operands() if isinstance(v, (Op, Reduce, Stack)) else ()


def _renamed_parts(v: Value) -> tuple:
    """What a renaming copies before `v`: a reduction is copied whole, with its own variables."""
    return () if isinstance(v, Reduce) else _inside_body(v)


def _costly(v: Value, below: list) -> bool:
    """Whether `v` holds an expensive operation outside the reductions it holds."""
    if isinstance(v, Reduce):
        return False
    return (isinstance(v, Op) and v.op in EXPENSIVE_OPS) or any(below)


class _Steps:
    """Which values are computed inside a recurrence's step: they read state, an index the step
    binds or a tensor computed there (down to the tensors recurrences leave after their loops)."""

    def __init__(self) -> None:
        self.free: dict = {}            # memo of free_vars
        self.memo: dict = {}

    def inside(self, v: Value) -> bool:
        return fold(v, self._parts, self._inside, self.memo)

    def _parts(self, v: Value) -> tuple:
        return () if isinstance(v, RecValue) else v.operands()

    def _inside(self, v: Value, below: list) -> bool:
        if isinstance(v, Generic):
            used = frozenset().union(*(free_vars(x, self.free) for x in v.operands()))
            if used - frozenset(v.vars):
                return True
        return isinstance(v, StateRead) or any(below)


class _Renaming:
    """A copy of a scalar with index variables renamed to fresh ones of the same ranges (and a
    reduction's own variables fresh too), so every fact about its reads (in bounds, strict)
    still holds; with `forget_bounds`, for a copy evaluated at more points, its reads are new
    and unproven (passes/read_bounds proves them again)."""

    def __init__(self, mapping: dict, forget_bounds: bool = False):
        self.mapping = mapping
        self.forget_bounds = forget_bounds
        self.memo: dict = {}

    def value(self, v: Value) -> Value:
        return fold(v, _renamed_parts, self._copy, self.memo)

    def _copy(self, v: Value, below: list) -> Value:
        if isinstance(v, IndexRef):
            var = self.mapping.get(v.var)
            return v if var is None else IndexRef(var, span=v.span)
        if isinstance(v, Reduce):
            fresh = {x: IndexVar(x.name, x.lo, x.extent, span=x.span) for x in v.vars}
            inner = _Renaming({**self.mapping, **fresh}, self.forget_bounds)
            guard = None if v.guard is None else inner.value(v.guard)
            return Reduce(v.kind, tuple(fresh.values()), inner.value(v.body), guard, span=v.span)
        fresh_read = self.forget_bounds and isinstance(v, Read) and not isinstance(v.tensor, Stack)
        if all(new is old for new, old in zip(below, _renamed_parts(v))) and not fresh_read:
            return v
        if isinstance(v, Op):
            return Op(v.op, tuple(below), v.dtype, span=v.span)
        if isinstance(v, Read):
            tensor, subs = (below[0], below[1:]) if isinstance(v.tensor, Stack) else (v.tensor, below)
            return Read(tensor, tuple(subs), span=v.span, in_bounds=v.in_bounds and not fresh_read,
                        strict=v.strict and not fresh_read, extreme_points=v.extreme_points)
        if isinstance(v, Stack):
            return Stack(tuple(below), span=v.span)
        raise TypeError(f"cannot rename the variables of {type(v).__name__}")
