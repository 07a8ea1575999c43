"""Ops a lowering rule marks for a pass over the finished module (a discardable unit attribute,
dropped by the pass that takes them)."""
from __future__ import annotations

from iree.compiler import ir


def mark(op, name: str) -> None:
    op.attributes[name] = ir.UnitAttr.get()


def taken(module: ir.Module, name: str) -> list:
    """The ops of `module` marked `name`, in order, their marks dropped."""
    found = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if name in op.attributes:
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(collect)
    for op in found:
        del op.attributes[name]
    return found
