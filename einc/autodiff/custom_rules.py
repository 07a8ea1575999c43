"""User derivative rules (`@fn name(x) { .. @x .. }`) as the derivative passes see them.

A call of a function that has a rule returns an *anchor*: the primal result times one, a
fresh node that stands for this call. The table maps each anchor to its arguments and to the
partial derivative of the result with respect to each (the rule's body with that argument's
differential 1 and the others 0). Both modes use the partials at the anchor instead of
differentiating the function's body.
"""
from __future__ import annotations

from einc.ir.nodes import Op, Value
from einc.autodiff.local_rules import const


class RuleTable:
    def __init__(self):
        self._anchors: dict[int, tuple] = {}     # id(anchor) -> (anchor, [(arg, partial)])

    def anchor(self, result: Value, partials: list) -> Op:
        node = Op("mul", (result, const(1.0, result)), result.dtype, span=result.span)
        self._anchors[id(node)] = (node, partials)
        return node

    def partials(self, node: Value):
        """[(argument, partial)] when `node` is an anchor, else None."""
        entry = self._anchors.get(id(node))
        return None if entry is None else entry[1]

    def operands(self, node: Value) -> tuple:
        """What `node`'s derivative depends on: a rule's arguments, or its operands."""
        pairs = self.partials(node)
        return node.operands() if pairs is None else tuple(arg for arg, _ in pairs)


NO_RULES = RuleTable()
