"""The derivative's own code points at the `@y / @x` that asked for it.

Reverse and forward mode build new nodes (adjoint reads, seeds, adjoint loops) that have no
place in the source. A diagnostic about one of them (a read past an array's end that a later
pass finds) must still say where: each new node without a span gets the request's span. The
primal graph keeps its own spans.
"""
from __future__ import annotations

from einc.ir.nodes import Value, walk


def located(result: Value, primal: list, span) -> Value:
    """`result` with its nodes that are not in the graph of `primal` given `span` where they
    have none (and so their index variables)."""
    if span is None:
        return result
    old = {id(v) for v in walk(primal)}
    for v in walk([result]):
        if id(v) in old:
            continue
        if v.span is None:
            v.span = span
        for var in getattr(v, "vars", ()):
            if var.span is None:
                var.span = span
    return result
