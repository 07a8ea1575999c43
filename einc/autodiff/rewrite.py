"""Walking and rewriting scalar expressions without looking into the tensors they read.

Local partials are built from a node's own operands and result (d tanh(u) = 1 - tanh(u)^2),
so a partial of a definition's whole body repeats the body. Where the body's value is stored
anyway (a recurrence member at this point), the derivative reads it instead of recomputing it.
"""
from __future__ import annotations

from einc.ir.nodes import Op, Read, Reduce, StateRead, Value
from einc.ir.traversal import fold


def replace_nodes(expr: Value, mapping: dict) -> Value:
    """`expr` with each node whose id is in `mapping` replaced by mapping[id]."""
    return fold(expr, _rebuilt_operands, _rebuilt, dict(mapping))


def _rebuilt_operands(v: Value) -> tuple:
    """The operands `replace_nodes` rebuilds `v` from (it does not look into tensors)."""
    if isinstance(v, Op):
        return v.args
    if isinstance(v, (Read, StateRead)):
        return v.subs if v.rank == 0 else ()
    if isinstance(v, Reduce):
        return (v.body,) + ((v.guard,) if v.guard is not None else ())
    return ()


def _rebuilt(v: Value, new: list) -> Value:
    """`v` over its rebuilt operands `new`: `v` itself when none changed."""
    old = _rebuilt_operands(v)
    if all(a is b for a, b in zip(new, old)):
        return v
    if isinstance(v, Op):
        return Op(v.op, tuple(new), v.dtype, span=v.span)
    if isinstance(v, Read):
        return Read(v.tensor, tuple(new), span=v.span, in_bounds=v.in_bounds)
    if isinstance(v, StateRead):
        return StateRead(v.member, tuple(new), span=v.span)
    return Reduce(v.kind, v.vars, new[0], new[1] if len(new) > 1 else None, span=v.span)


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
