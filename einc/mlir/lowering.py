"""Function-level lowering state: the memo of program-level values and the order they are emitted in.

A program-level value is lowered once, at function level, after every program-level value it
depends on (bodies included, so a kernel finds its inputs ready and recursion stays shallow).
It is then either a host scalar (an SSA value of its element type) or a device tensor (0-d
for scalar work that depends on tensor data). A value that reads recurrence state is never
program-level, even without free index variables (`x[0]` inside a step): it exists only inside
its group's loop.
"""
from __future__ import annotations

from iree.compiler import ir

from einc.ir.nodes import Input, Program, Stack, StateRead, Value, free_vars
from einc.mlir.locations import location_of
from einc.mlir.program_rules import RULES
from einc.mlir.shapes import Sizes


class Lowering:
    def __init__(self, program: Program, args: list[ir.Value], target: str):
        self.program = program
        self.args = args
        self.target = target
        self.sizes = Sizes(args, program.syms)
        self.values: dict[int, ir.Value] = {}
        self.reductions: dict[int, tuple] = {}   # id(Reduce) -> (tensor, free vars in its axis order)
        self.groups: dict[int, list] = {}        # id(RecurrenceGroup) -> its members' storage tensors
        self.prints = 0
        self._free_memo: dict = {}
        self._state_memo: dict[int, bool] = {}
        self._keep: list[Value] = []             # nodes made here stay alive, so their ids stay unique

    def is_program_level(self, v: Value) -> bool:
        return not free_vars(v, self._free_memo) and not self._reads_state(v)

    def _reads_state(self, v: Value) -> bool:
        """Whether scalar `v` reads recurrence state. Tensors other than a body's Stack of scalars
        are program-level and close over their own loops (a RecValue included)."""
        if id(v) not in self._state_memo:
            scalar_work = v.rank == 0 or isinstance(v, Stack)
            self._state_memo[id(v)] = isinstance(v, StateRead) or (
                scalar_work and any(self._reads_state(o) for o in v.operands()))
        return self._state_memo[id(v)]

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
