"""Function-level lowering state: the memo of program-level values and the order they are emitted in.

A program-level value is lowered once, at function level, after every program-level value it
depends on (bodies included, so a kernel finds its inputs ready and recursion stays shallow).
It is then either a host scalar (an SSA value of its element type) or a device tensor (0-d
for scalar work that depends on tensor data).
"""
from __future__ import annotations

from iree.compiler import ir

from einc.ir.nodes import Input, Program, Value, free_vars
from einc.mlir.locations import location_of
from einc.mlir.program_rules import RULES
from einc.mlir.shapes import Sizes


class Lowering:
    def __init__(self, program: Program, args: list[ir.Value]):
        self.program = program
        self.args = args
        self.sizes = Sizes(args, program.syms)
        self.values: dict[int, ir.Value] = {}
        self.reductions: dict[int, tuple] = {}   # id(Reduce) -> (tensor, free vars in its axis order)
        self.prints = 0
        self._free_memo: dict = {}
        self._keep: list[Value] = []             # nodes made here stay alive, so their ids stay unique

    def is_program_level(self, v: Value) -> bool:
        return not free_vars(v, self._free_memo)

    def free_vars(self, v: Value) -> frozenset:
        return free_vars(v, self._free_memo)

    def keep(self, v: Value) -> Value:
        self._keep.append(v)
        return v

    def lower(self, v: Value) -> ir.Value:
        """The function-level value of program-level `v`, emitting what it needs first."""
        for node in self._pending(v):
            with location_of(node):
                self.values[id(node)] = RULES[type(node)](self, node)
        return self.values[id(v)]

    def _pending(self, root: Value) -> list[Value]:
        """Program-level values reachable from `root` and not yet lowered, operands first."""
        order, seen, stack = [], set(), [(root, False)]
        while stack:
            v, expanded = stack.pop()
            if expanded:
                if self.is_program_level(v):
                    order.append(v)
                continue
            if id(v) in seen or id(v) in self.values:
                continue
            seen.add(id(v))
            stack.append((v, True))
            stack.extend((o, False) for o in reversed(v.operands()))
        return order

    def arg(self, inp: Input) -> ir.Value:
        return self.args[inp.pos]
