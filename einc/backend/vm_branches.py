"""IREE-251: a VM branch passing one ref value to two block arguments can leave one of them null.

IREE's VM register allocation coalesces one occurrence of the repeated operand with its block
argument and marks the others as moves, which clear that register: the loop a host-level
recurrence runs as starts with a null buffer (OUT_OF_RANGE in a copy_buffer) or a null fence (the
host does not wait, and reads stale values). Each repeat in a branch's operands is therefore
passed as a value of its own, a `vm.select.ref` of the value with itself, before the module is
serialized.
"""
from __future__ import annotations

from iree.compiler import ir

_BRANCHES = frozenset({"vm.br", "vm.cond_br", "vm.br_table"})


def separate_repeated_refs(module: ir.Operation) -> int:
    """Give every repeated ref operand of every branch in `module` (a `vm.module`'s top-level
    module, inside its context) a value of its own; returns how many were replaced."""
    with ir.Location.unknown(module.context):
        return sum(_separate(op) for op in _branches(module))


def _branches(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                if inner.name in _BRANCHES:
                    yield inner
                else:
                    yield from _branches(inner)


def _separate(branch: ir.Operation) -> int:
    seen, replaced = set(), 0
    for i, value in enumerate(list(branch.operands)):
        if _is_primitive(value.type):
            continue
        if value in seen:
            branch.operands[i] = _own_copy(branch, value)
            replaced += 1
        seen.add(value)
    return replaced


def _is_primitive(type_: ir.Type) -> bool:
    """Integers and floats sit in registers by value; every other VM type is a counted ref
    (`!vm.ref<..>`, `!vm.list<..>`, `!vm.buffer`)."""
    return isinstance(type_, (ir.IntegerType, ir.FloatType))


def _own_copy(branch: ir.Operation, value: ir.Value) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    with ir.InsertionPoint(branch):
        true = ir.Operation.create("vm.const.i32", results=[i32], attributes={"value": ir.IntegerAttr.get(i32, 1)})
        return ir.Operation.create("vm.select.ref", results=[value.type], operands=[true.result, value, value]).result
