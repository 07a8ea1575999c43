"""Source locations for generated ops."""
from __future__ import annotations

from contextlib import nullcontext

from iree.compiler import ir


def location_of(node):
    """Ops of a node carry its source position, so IREE diagnostics point at the program."""
    span = getattr(node, "span", None)
    if span is None:
        return nullcontext()
    return ir.Location.file(span.file, span.line, span.col)
