"""Reverse accumulation through one scalar expression (a definition body or a scalar value).

Given the adjoint `seed` of the root, returns each leaf's adjoint: the reads of program-level
tensors, the scalars the caller asked to stop at, and nothing for constants and indices.
A reduction's body is its own scope: adjoints inside it depend on the reduction's variables,
so the leaves found there carry those variables, to be summed over by the caller.
Inside a recurrence step, a derivative with respect to a value of that step (`let x0 = x[k - 1,
0]; @loss / @x0`) takes the states it reads as givens (`states_given`): no path through the
recurrence leads from such a value back to its own step's reads of earlier steps.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import (Const, IndexRef, Input, Op, Read, Reduce, Size, Stack, StateRead, Value,
                           free_vars, is_stored_tensor, postorder)
from einc.ir.types import BOOL
from einc.autodiff.custom_rules import NO_RULES
from einc.autodiff.simplify import is_const
from einc.autodiff.local_rules import const, mul, op, partials, selected_share


@dataclass
class LeafAdjoint:
    leaf: Value           # a Read of a program-level tensor (or a rank-0 one itself), or a stop value
    adjoint: Value        # scalar expression; free in the enclosing variables and `extra_vars`
    extra_vars: tuple     # reduction variables between the root and the leaf


def propagate(root: Value, seed: Value, stops: set, extra_vars: tuple = (), rules=NO_RULES,
              states_given: bool = False) -> list:
    adjoints: dict[int, list] = {id(root): [seed]}
    out: list[LeafAdjoint] = []
    for node in _reverse_topological(root, stops, rules):
        parts = adjoints.pop(id(node), [])
        if not parts:
            continue
        adj = _sum(parts)
        if id(node) not in stops and reads_a_point_stack(node):
            _through_point_stack(node, adj, adjoints)
        elif id(node) in stops or isinstance(node, (Read, Input)) or is_stored_tensor(node):
            out.append(LeafAdjoint(node, adj, extra_vars))
        elif isinstance(node, Reduce):
            out += _through_reduce(node, adj, stops, extra_vars, rules, states_given)
        elif rules.partials(node) is not None:
            for arg, partial in rules.partials(node):
                adjoints.setdefault(id(arg), []).append(times_partial(adj, partial))
        elif isinstance(node, Op):
            _through_op(node, adj, adjoints)
        elif isinstance(node, StateRead) and not states_given:
            raise d.error(d.UNSUPPORTED, "derivatives through recurrences are not compiled yet", node.span)
    return out


def reads_a_point_stack(v: Value) -> bool:
    """Whether `v` reads an array literal of scalars that depend on the point (`[x[r, 0], x[r,
    1]][k]`): the kernel builds it at each point, so it is scalar work, not a tensor to reverse."""
    return isinstance(v, Read) and isinstance(v.tensor, Stack) and all(e.rank == 0 for e in v.tensor.elems) \
        and bool(free_vars(v.tensor))


def _through_point_stack(node: Read, adj: Value, adjoints: dict) -> None:
    """Element k of the literal takes the adjoint where the subscript is k."""
    (sub,) = node.subs
    for k, elem in enumerate(node.tensor.elems):
        hit = Op("eq", (sub, Const(np.asarray(k, dtype=sub.dtype.numpy))), BOOL)
        adjoints.setdefault(id(elem), []).append(Op("select", (hit, adj, const(0.0, adj)), adj.dtype))


def _through_op(node: Op, adj: Value, adjoints: dict) -> None:
    if node.op == "cast":
        (x,) = node.args
        if x.dtype.is_float and node.dtype.is_float:
            adjoints.setdefault(id(x), []).append(Op("cast", (adj,), x.dtype))
        return
    for arg, partial in zip(node.args, partials(node)):
        if partial is not None:
            adjoints.setdefault(id(arg), []).append(times_partial(adj, partial))


def times_partial(adj: Value, partial: Value) -> Value:
    """adj * partial, with a branch's mask kept outermost: `select(c, g, 0) * p` is `select(c,
    g * p, 0)`, so a partial that is not finite where the branch was not taken (the sqrt of a
    Cholesky diagonal evaluated past the row's end, a division by a step not computed yet)
    passes on 0 there, not 0 * inf = NaN."""
    for masked, other in ((adj, partial), (partial, adj)):
        branches = _masked(masked)
        if branches is not None:
            cond, kept, kept_first = branches
            inner = times_partial(kept, other)
            zero = const(0.0, inner)
            return Op("select", (cond, inner, zero) if kept_first else (cond, zero, inner), inner.dtype)
    return mul(adj, partial)


def _masked(v: Value):
    """(cond, the kept branch, whether it is the first) of `select(cond, x, 0)` or `select(cond,
    0, x)` with a float x; None for anything else."""
    if not (isinstance(v, Op) and v.op == "select" and v.dtype.is_float):
        return None
    cond, a, b = v.args
    if is_const(b, 0):
        return cond, a, True
    if is_const(a, 0):
        return cond, b, False
    return None


def _through_reduce(r: Reduce, adj: Value, stops: set, extra_vars: tuple, rules, states_given: bool) -> list:
    if r.kind in ("all", "any") or not r.dtype.is_float:
        return []
    if r.kind == "sum":
        inner = adj
    elif r.kind == "prod":
        inner = times_partial(adj, op("div", r, r.body))
    else:  # max / min: through the selected points
        inner = selected_share(r, adj)
    if r.guard is not None:
        inner = Op("select", (r.guard, inner, const(0.0, inner)), inner.dtype)
    return propagate(r.body, inner, stops, extra_vars + tuple(r.vars), rules, states_given)


def _sum(parts: list) -> Value:
    total = parts[0]
    for p in parts[1:]:
        total = op("add", total, p)
    return total


def _reverse_topological(root: Value, stops: set, rules) -> list:
    """Scalar nodes under `root`, users before operands, not entering reduction bodies (their
    own scope) nor program-level tensors (leaves are reads of them)."""
    def children(v):
        if id(v) not in stops and reads_a_point_stack(v):
            return v.tensor.elems
        if id(v) in stops or isinstance(v, (Read, Reduce, Input, Const, Size, IndexRef, StateRead)) \
                or is_stored_tensor(v):
            return ()
        return rules.operands(v)
    # the last operand is entered first: that order fixes the order adjoints are summed in
    return list(reversed(postorder([root], lambda v: reversed(list(children(v))))))
