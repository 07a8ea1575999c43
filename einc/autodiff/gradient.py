"""`@y / @x` for a scalar y: reverse mode over the tensor IR (thesis chapter 6).

Adjoints flow from y back to x through program-level values in reverse dependency order.
Each indexed definition passes its adjoint to the tensors its body reads, as new indexed
definitions (einc.autodiff.delta), so the derivative reaches MLIR as ordinary linalg
like hand-written code. Every parameter read through several paths gets the sum.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import (Compact, Const, Generic, IndexRef, Input, Op, Piecewise, Read, RecValue, Stack,
                           StateRead, Value, free_vars, fresh_index_vars, is_stored_tensor, step_code, walk)
from einc.ir import affine
from einc.ir.state_slices import is_state_slice
from einc.ir.traversal import run_in_order
from einc.autodiff.custom_rules import NO_RULES
from einc.autodiff.compact_rules import compact_adjoint
from einc.autodiff.delta import gather_sum
from einc.autodiff.enclosing import Enclosing
from einc.autodiff.forward_pullback import forward_pullback, runs_loops_in_steps
from einc.autodiff.local_rules import const
from einc.autodiff.piecewise_adjoint import clause_adjoints
from einc.autodiff.primal_reuse import reuse_primal
from einc.autodiff.recurrence_adjoint import adjoint_loop
from einc.autodiff.scalar_adjoint import propagate, reads_a_point_stack
from einc.autodiff.seeds import positions, read_adjoint
from einc.autodiff.spans import located


def gradient(y: Value, x: Value, span, rules=NO_RULES) -> Value:
    if y.rank != 0:
        raise d.error(d.UNSUPPORTED, "only the derivative of a scalar (a gradient) is compiled so "
                      "far; reduce the target to a scalar first", span)
    if not y.dtype.is_float or not x.dtype.is_float:
        raise d.error(d.TYPE, f"derivatives need float values, found {y.dtype} / {x.dtype}", span)
    return located(_Gradient(x, span, rules).run(y), [y, x], span)


def pullback(y: Value, x: Value, cotangent: Value, span, rules=NO_RULES) -> Value:
    """The vector-Jacobian product cotangent . (dy/dx), of x's shape, for y of any shape
    (`cotangent` has y's shape). A row of a Jacobian is the pullback of a basis cotangent."""
    if y is x:
        return cotangent
    return located(_Gradient(x, span, rules).run(y, cotangent), [y, x, cotangent], span)


class _Gradient:
    def __init__(self, x: Value, span, rules):
        self.x = x
        self.span = span
        self.rules = rules
        self.parts: dict[int, list] = {}          # id(value) -> adjoint contributions
        self.values: dict[int, Value] = {}
        self.states_given = is_step_value(x)
        self.stops = {id(x)}
        self.enclosing = None

    def run(self, y: Value, cotangent: Value = None) -> Value:
        self.enclosing = Enclosing([y] if cotangent is None else [y, cotangent])
        self.stops |= {id(v) for v in walk([y]) if _same_state_read(v, self.x)}
        order = _reverse_dependencies(y, self.x)
        if not self.states_given and runs_loops_in_steps(order, self.stops):
            return forward_pullback(y, self.x, cotangent, self.span, self.rules)
        if y.rank == 0:
            seed = const(1.0, y) if cotangent is None else cotangent
            self._leaves(propagate(y, seed, self.stops, (), self.rules, self.states_given))
        else:
            self.parts[id(y)] = [cotangent]
            self.values[id(y)] = y
        for t in order:
            if isinstance(t, RecValue):
                self._through_recurrence(t.group)
                continue
            adjoint = self._total(t)
            if adjoint is not None:
                self._backward(t, adjoint)
        total = self._total(self.x)
        return total if total is not None else _zeros(self.x)

    def _backward(self, t: Value, adjoint: Value) -> None:
        if is_state_slice(t):
            return          # a recurrence's earlier step: a given of this step's computation
        if isinstance(t, Generic):
            vars_, body, guard, summed = self.enclosing.reversed_over(t)
            seed = read_adjoint(adjoint, positions(vars_))
            if guard is not None:
                seed = Op("select", (guard, seed, const(0.0, seed)), seed.dtype)
            self._leaves(reuse_primal(propagate(body, seed, self.stops, summed, self.rules,
                                                  self.states_given), t, vars_, body))
        elif isinstance(t, Stack):
            for k, elem in enumerate(t.elems):
                at = (Const(np.asarray(k, np.int32)),)
                if elem.rank:
                    # a row of a literal (`[[q, 2.0 * q], [..]]`) is a tensor: its adjoint is the
                    # adjoint's slice k, a definition over the row's own axes
                    vars_ = fresh_index_vars(elem.shape, "u")
                    self._add(elem, Generic(vars_, read_adjoint(adjoint, at + tuple(IndexRef(v) for v in vars_))))
                    continue
                self._leaves(propagate(elem, Read(adjoint, at), self.stops, (), self.rules, self.states_given))
        elif isinstance(t, Piecewise):
            for value, part in clause_adjoints(t, adjoint):
                self._add(value, part)
        elif isinstance(t, Compact):
            self._add(t.source, compact_adjoint(t, adjoint))
        elif not isinstance(t, (Input, Const)):
            raise d.error(d.UNSUPPORTED, f"no derivative through {type(t).__name__}", self.span)

    def _leaves(self, leaves: list) -> None:
        for leaf in leaves:
            # x itself may be a read (`let a = X[0]; .. @y / @a`): its adjoint is its own, not X's
            target = self.x if id(leaf.leaf) in self.stops else \
                leaf.leaf.tensor if isinstance(leaf.leaf, Read) else leaf.leaf
            if not target.dtype.is_float:
                continue
            # an enclosing index is the point the derivative is asked at, never summed over
            kept = tuple(v for v in leaf.extra_vars if v not in self.enclosing.outer)
            self._add(target, self._contribution(replace(leaf, extra_vars=kept)))

    def _add(self, target: Value, contribution: Value) -> None:
        self.values[id(target)] = target
        self.parts.setdefault(id(target), []).append(contribution)

    def _through_recurrence(self, group) -> None:
        """All members of a group at once: one adjoint loop (recurrence_adjoint). A group whose
        code never reads x (a loop the value reads as a given, `exp(h[3])` in a step's loss by
        its state) passes x no adjoint: it is left out, and so are the limits of its reversal."""
        roots = group.code()
        own = isinstance(self.x, RecValue) and self.x.group is group      # E011 in adjoint_loop
        if not own and not any(n is self.x or id(n) in self.stops for n in walk(roots)):
            return
        if self.enclosing.off_diagonal(group):
            raise d.error(d.UNSUPPORTED, "a derivative through a recurrence computed for every point of an "
                          "enclosing definition, read there at other points than its own, is not compiled yet",
                          self.span)
        outside: dict = {}
        for v in list(self.values.values()):
            if isinstance(v, RecValue) and v.group is group and self._total(v) is not None:
                outside.setdefault(id(v.member), []).append(self._total(v))
        totals = {key: _add_tensors(parts) for key, parts in outside.items()}
        self._leaves(adjoint_loop(group, totals, self.x, self.stops, self.states_given, self.rules, self.span))

    def _contribution(self, leaf) -> Value:
        node = leaf.leaf
        if isinstance(node, StateRead) and is_state_slice(self.x):
            node = Read(self.x, node.subs[1:])      # `W[k - 1, e]` of the slice `W[k - 1]`: its point e
        if is_stored_tensor(node) and node is not self.x:
            node = Read(node, ())              # a rank-0 tensor used directly: its one element
        tensor_read = isinstance(node, Read) and node is not self.x
        if not tensor_read or node.tensor.rank == 0:
            body, guard = gather_sum(leaf.adjoint, leaf.extra_vars, (), ())
            scalar = body if guard is None else Op("select", (guard, body, const(0.0, body)), body.dtype)
            return Generic((), scalar) if tensor_read else scalar
        vars_ = fresh_index_vars(node.tensor.shape, "u")
        diagonal = self.enclosing.diagonal_axes(node.tensor)
        assert all(isinstance(node.subs[k], IndexRef) and node.subs[k].var is v for k, v in diagonal.items())
        vars_ = tuple(diagonal.get(k, u) for k, u in enumerate(vars_))     # (enclosing.py)
        pinned = [k for k in range(len(vars_)) if k not in diagonal]
        body, guard = gather_sum(leaf.adjoint, leaf.extra_vars, tuple(node.subs[k] for k in pinned),
                                 tuple(IndexRef(vars_[k]) for k in pinned))
        return Generic(vars_, body, guard)

    def _total(self, t: Value):
        parts = self.parts.get(id(t))
        if not parts:
            return None
        if t.rank == 0 and not isinstance(parts[0], Generic):
            total = parts[0]
            for p in parts[1:]:
                total = Op("add", (total, p), total.dtype)
            return total
        return _add_tensors(parts)


def is_step_value(x: Value) -> bool:
    """Whether `x` is computed inside a recurrence step from its reads of earlier steps (or from
    the point's indices), or is such a read (`@L / @w[k - 1]`): then the step's other reads of
    earlier steps (a scalar `b[k - 1]` as much as a row `W[k - 1]`) are givens of x's step."""
    return bool(free_vars(x)) or is_state_slice(x) or any(isinstance(v, StateRead) for v in step_code([x]))


def _same_state_read(v: Value, x: Value) -> bool:
    """Whether `v` reads the same point of a recurrence's state as x does, or a point of the
    state slice x is: each `b[k - 1]` (`W[k - 1, e]`) of a step is its own StateRead, and
    `@L / @b[k - 1]` (`@L / @W[k - 1]`) is the derivative through all of them."""
    if is_state_slice(x):
        x, v_subs = x.body, v.subs[:1] if isinstance(v, StateRead) else ()
    else:
        v_subs = v.subs if isinstance(v, StateRead) else ()
    if not (isinstance(v, StateRead) and isinstance(x, StateRead) and v.member is x.member):
        return False
    subs = [(affine.affine_of(a), affine.affine_of(b)) for a, b in zip(v_subs, x.subs)]
    return all(a is not None and a == b for a, b in subs)


def _add_tensors(parts: list) -> Value:
    if len(parts) == 1:
        return parts[0]
    vars_ = fresh_index_vars(parts[0].shape, "a")
    refs = tuple(IndexRef(v) for v in vars_)
    total = Read(parts[0], refs, in_bounds=True)
    for p in parts[1:]:
        total = Op("add", (total, Read(p, refs, in_bounds=True)), total.dtype)
    return Generic(vars_, total)


def _zeros(x: Value) -> Value:
    if x.rank == 0:
        return const(0.0, x)
    return Generic(fresh_index_vars(x.shape, "z"), const(0.0, x))


def _reverse_dependencies(y: Value, stop: Value) -> list:
    """Program-level tensors y depends on (not looking past `stop`), users before producers."""
    order, seen = [], set()

    def tensors_in(v: Value) -> list:
        out, stack, visited = [], [v], set()
        while stack:
            n = stack.pop()
            if id(n) in visited:
                continue
            visited.add(id(n))
            if reads_a_point_stack(n):
                stack.extend(n.tensor.elems + n.subs)
            elif isinstance(n, Read):
                out.append(n.tensor)
                stack.extend(n.subs)
            elif is_stored_tensor(n) and n is not stop:
                out.append(n)          # a rank-0 tensor standing in a scalar expression
            elif n is not stop:
                stack.extend(n.operands() if n.rank == 0 else ())
        return out

    def visit(t: Value) -> list:
        # a recurrence's members are one node: its group runs (and reverses) as one loop
        key = id(t.group) if isinstance(t, RecValue) else id(t)
        if key in seen or t is stop:
            return []
        seen.add(key)
        deps = []
        if isinstance(t, RecValue):
            deps = [x for m in t.group.members for c in m.clauses
                    for x in tensors_in(c.body) + (tensors_in(c.guard) if c.guard is not None else [])]
        elif isinstance(t, Generic):
            deps = tensors_in(t.body) + (tensors_in(t.guard) if t.guard is not None else [])
        elif isinstance(t, Piecewise):
            deps = [c.value for c in t.clauses]
        elif isinstance(t, Stack):
            deps = [e for e in t.elems if e.rank] + [x for e in t.elems if not e.rank for x in tensors_in(e)]
        elif isinstance(t, Compact):
            deps = [t.source]
        return deps + [lambda: order.append(t)]      # after its dependencies

    run_in_order([y] if y.rank else tensors_in(y), visit)     # chains of definitions run deep
    return list(reversed(order))
