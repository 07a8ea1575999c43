"""Contractions whose operands are computed: a sum of a product whose factors fall into two
groups, each a function of only part of the variables, as in the weight gradient of an RNN
`sum[t](adj[T - 1 - t, i] * (1 - h[t, i] * h[t, i]) * h[t - 1, j])`, is the contraction of the
two groups, each computed once as a tensor over its own variables (a generic, T x H points
here) instead of once per point of the whole domain (T x H x H). The contraction of those
tensors is then a named op (named_ops) where it is one; where it is not, the reduction keeps its
own loop nest, nothing materialized.
"""
from __future__ import annotations

from typing import Optional

from einc.autodiff.substitute import substitute
from einc.ir.nodes import Generic, IndexRef, IndexVar, Op, Read, Reduce, Value, size_value, step_state_reads
from einc.ir.types import I32, Lin
from einc.mlir.dense import named_ops


def match(lw, reduce: Reduce, free: list[IndexVar]) -> Optional[named_ops.Match]:
    """The named op that `reduce` over result axes `free` is once its factors are grouped into
    two computed operands (named_ops.match of the rewritten reduction), or None."""
    if reduce.kind != "sum" or reduce.guard is not None or not reduce.dtype.is_float:
        return None
    scope = frozenset(free) | frozenset(reduce.vars)
    factors = _factors(reduce.body)
    if len(factors) < 2 or scope & lw.step_vars or step_state_reads(factors):
        return None            # inside a recurrence step the step's own code computes its values
    if any(lw.free_vars(f) - scope for f in factors):
        return None            # a factor of an outer loop's variable (a step's) has no tensor of its own
    groups = _groups(lw, factors, scope, reduce.vars)
    if groups is None:
        return None
    summed = tuple(IndexVar(v.name, Lin(0), v.extent, span=v.span) for v in reduce.vars)
    at = {v: _plus(IndexRef(new), v.lo) for v, new in zip(reduce.vars, summed)}
    element = {v: IndexRef(new) for v, new in zip(reduce.vars, summed)}
    for keep_reads in (True, False):
        operands = [_operand(lw, group, order, at, element, keep_reads, reduce) for group, order in groups]
        rewritten = lw.keep(Reduce("sum", summed, Op("mul", tuple(operands), reduce.dtype), span=reduce.span))
        found = named_ops.match(rewritten, free)
        if found is not None:
            return found
    return None


def _factors(body: Value) -> list[Value]:
    """The factors of a product tree, left first (walked with a stack: a long product is deep)."""
    out, todo = [], [body]
    while todo:
        node = todo.pop()
        if isinstance(node, Op) and node.op == "mul":
            todo.extend(reversed(node.args))
        else:
            out.append(node)
    return out


def _groups(lw, factors: list[Value], scope: frozenset, summed: tuple) -> Optional[list[tuple]]:
    """The factors in two groups, each with its variables in the order a contraction reads them
    (shared result axes first, then the left operand's own axes and the summed ones, the right
    one's summed axes before its own): the factors over each of the two largest variable sets,
    a factor over fewer joining the first group that has all of its variables. None unless
    there are exactly two such sets, each reading every summed variable, together all of them,
    and one group computes something (two plain reads are named_ops' own case)."""
    sets = [lw.free_vars(f) & scope for f in factors]
    largest = list(dict.fromkeys(s for s in sets if not any(s < other for other in sets)))
    if len(largest) != 2 or largest[0] | largest[1] != scope or not all(set(summed) <= s for s in largest):
        return None
    members = ([], [])
    for factor, s in zip(factors, sets):
        members[0 if s <= largest[0] else 1].append(factor)
    if all(len(m) == 1 and isinstance(m[0], Read) for m in members):
        return None
    own = [sorted(s - set(summed), key=lambda v: _position(v, factors, lw)) for s in largest]
    shared = [v for v in own[0] if v in own[1]]
    left, right = ([v for v in o if v not in shared] for o in own)
    return [(members[0], shared + left + list(summed)), (members[1], shared + list(summed) + right)]


def _position(var: IndexVar, factors: list[Value], lw) -> int:
    """The index of the first factor that reads `var` (keeps result axes in reading order)."""
    return next(k for k, f in enumerate(factors) if var in lw.free_vars(f))


def _operand(lw, group: list[Value], order: list[IndexVar], at: dict, element: dict, keep_reads: bool,
             reduce: Reduce) -> Value:
    """The group's product at the rewritten reduction's point: a single read itself (with
    `keep_reads`, its summed variables at their coordinates `at`), else a read of a generic
    over the group's variables in `order` (a summed one at its new 0-based index, `element`)."""
    if keep_reads and len(group) == 1 and isinstance(group[0], Read):
        return substitute(group[0], at)
    fresh = tuple(IndexVar(v.name, Lin(0), v.extent, span=v.span) for v in order)
    inside = {v: _plus(IndexRef(new), v.lo) for v, new in zip(order, fresh)}
    product = group[0]
    for factor in group[1:]:
        product = Op("mul", (product, factor), reduce.dtype)
    tensor = lw.keep(Generic(fresh, substitute(product, inside), span=reduce.span))
    subs = tuple(element[v] if v in element else _plus(IndexRef(v), -v.lo) for v in order)
    return Read(tensor, subs, span=reduce.span, in_bounds=True)


def _plus(ref: IndexRef, offset: Lin) -> Value:
    """`ref + offset` as an i32 value (the reference itself when the offset is 0)."""
    if offset.is_const and offset.const == 0:
        return ref
    return Op("add", (ref, size_value(offset)), I32)
