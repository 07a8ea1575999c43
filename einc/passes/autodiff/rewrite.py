"""Walking and rewriting scalar expressions without looking into the tensors they read.

Local partials are built from a node's own operands and result (d tanh(u) = 1 - tanh(u)^2),
so a partial of a definition's whole body repeats the body. Where the body's value is stored
anyway (a recurrence member at this point), the derivative reads it instead of recomputing it.
"""
from __future__ import annotations

from einc.ir.nodes import Op, Read, Reduce, StateRead, Value


def replace_nodes(expr: Value, mapping: dict) -> Value:
    """`expr` with each node whose id is in `mapping` replaced by mapping[id]."""
    memo: dict[int, Value] = dict(mapping)

    def rebuild(v: Value) -> Value:
        if id(v) in memo:
            return memo[id(v)]
        out = v
        if isinstance(v, Op):
            args = tuple(rebuild(a) for a in v.args)
            out = v if all(a is b for a, b in zip(args, v.args)) else Op(v.op, args, v.dtype, span=v.span)
        elif isinstance(v, Read) and v.rank == 0:
            subs = tuple(rebuild(s) for s in v.subs)
            out = v if all(a is b for a, b in zip(subs, v.subs)) else \
                Read(v.tensor, subs, span=v.span, in_bounds=v.in_bounds)
        elif isinstance(v, StateRead):
            subs = tuple(rebuild(s) for s in v.subs)
            out = v if all(a is b for a, b in zip(subs, v.subs)) else StateRead(v.member, subs, span=v.span)
        elif isinstance(v, Reduce):
            body = rebuild(v.body)
            guard = rebuild(v.guard) if v.guard is not None else None
            out = v if body is v.body and guard is v.guard else Reduce(v.kind, v.vars, body, guard, span=v.span)
        memo[id(v)] = out
        return out
    return rebuild(expr)


def scalar_nodes(roots: list) -> list:
    """The scalar nodes under `roots`, not looking into the tensors they read."""
    out, seen, stack = [], set(), list(roots)
    while stack:
        v = stack.pop()
        if id(v) in seen or v.rank > 0:
            continue
        seen.add(id(v))
        out.append(v)
        stack.extend(v.operands())
    return out
