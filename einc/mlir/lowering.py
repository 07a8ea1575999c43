"""Function-level lowering state: the memo of program-level values and the order they are emitted in.

A program-level value is lowered once, at function level, after every program-level value it
depends on (bodies included, so a kernel finds its inputs ready and recursion stays shallow).
It is then either a host scalar (an SSA value of its element type) or a device tensor (0-d
for scalar work that depends on tensor data). A value that reads recurrence state is never
program-level, even without free index variables (`x[0]` inside a step, or a tensor computed
from `w[t - 1]`): it exists only inside its group's loop. So is a tensor whose body reads a
loop's step index (`X[t, j]` in a step's gradient): the loop gives its kernels that coordinate
(`loop_coordinates`).
"""
from __future__ import annotations

import copy

from iree.compiler import ir

from einc.ir.nodes import Generic, IndexRef, Input, Program, RecValue, Stack, StateRead, Value, free_vars
from einc.mlir.core.locations import location_of
from einc.mlir.dense import attention
from einc.mlir.folded_reductions import FoldedReductions
from einc.mlir.program_rules import RULES
from einc.mlir.core.shapes import Sizes
from einc.mlir.weights import Weights
from einc.passes.uniform_tensors import Uniformity
from einc.target import Target


class Lowering:
    def __init__(self, program: Program, args: list[ir.Value], target: Target, weights: Weights | None = None,
                 folded_reductions: FoldedReductions | None = None):
        self.program = program
        self.weights = weights or Weights(None)   # constants that become parameters (einc.mlir.weights)
        self.args = args
        self.target = target
        self.sizes = Sizes(args, program.syms)
        self.values: dict[int, ir.Value] = {}
        self.reductions: dict[int, tuple] = {}   # id(Reduce) -> (tensor, free vars in its axis order)
        self.dense_kernels: list = []            # named_ops.DenseKernel of each named op emitted
        self.views: dict[tuple, ir.Value] = {}   # padded / reshaped tensors (operand_views)
        self.groups: dict[int, list] = {}        # id(RecurrenceGroup) -> its members' storage tensors
        self.packed: dict[int, ir.Value] = {}    # id(tensor) -> its copy with the last two axes swapped
        self.packed_weights: dict[int, list] = {}  # id(RecurrenceGroup) -> names of the weights it reads packed
        self.prints = 0
        # reductions whose loops run in the region since IREE folds their bodies (IREE-264)
        self.folded_reductions = folded_reductions or FoldedReductions()
        self._free_memo: dict = {}
        self._state_memo: dict[int, bool] = {}
        self.uniformity = Uniformity(self._free_memo)
        self._keep: list[Value] = []             # nodes made here stay alive, so their ids stay unique
        self.given_step_tensors: frozenset = frozenset()   # ids of the tensors a step computed (inside_step)
        self.step_vars = frozenset(g.t_var for g in program.recurrences)
        self.loop_coordinates: dict = {}         # IndexVar -> its index value, inside a step's loop
        self._fused: dict[int, object] = {}      # id(Generic) -> its fused form, or None (fused_form)
        self.in_dispatch = False    # inside a dispatch region: nothing may be lowered to a kernel here

    def is_program_level(self, v: Value) -> bool:
        # a value already lowered is one: a slice of the state inside a step reads the step's index
        return id(v) in self.values or (not free_vars(v, self._free_memo) and not self._reads_state(v))

    def _reads_state(self, v: Value) -> bool:
        """Whether `v` reads recurrence state: a StateRead or a step index, scalar work over one, or
        a tensor a step computes from one (einc.passes.step_work). A RecValue closes over its own
        loop (but a loop nested in a step is one of the step's tensors); inside a step, so do the
        tensors it computed (`given_step_tensors`; not those of a loop nested in it), and the
        step's own index, which this lowering has (`loop_coordinates`): a tensor a loop nested in
        the step reads, computed from that index (`run(y[t] + m[t - 1])`), is a kernel of the step."""
        stack = [(v, False)]
        while stack:
            node, done = stack.pop()
            if id(node) in self._state_memo:
                continue
            if done:
                reads_step = isinstance(node, IndexRef) and node.var in self.step_vars \
                    and node.var not in self.loop_coordinates
                nested = isinstance(node, RecValue) and node.group.enclosing is not None
                self._state_memo[id(node)] = isinstance(node, StateRead) or reads_step or (
                    nested and id(node) not in self.given_step_tensors) or (
                    not self._closed(node) and any(self._state_memo[id(o)] for o in node.operands()))
            else:
                stack.append((node, True))
                if not self._closed(node):
                    stack.extend((o, False) for o in node.operands() if id(o) not in self._state_memo)
        return self._state_memo[id(v)]

    def _closed(self, v: Value) -> bool:
        tensor = (v.rank > 0 and not isinstance(v, Stack)) or isinstance(v, Generic)    # rank 0 too (a slice)
        return isinstance(v, RecValue) or (tensor and id(v) in self.given_step_tensors)

    def inside_step(self, group) -> "Lowering":
        """A lowering for the body of one step of `group` that computes the step's tensors itself:
        it sees what was lowered before the loop; what it lowers stays in its own memo, inside
        the loop."""
        step = copy.copy(self)
        step.values, step.reductions, step.views = dict(self.values), dict(self.reductions), dict(self.views)
        step.packed = dict(self.packed)      # a copy packed in the loop body stays there
        step.groups = dict(self.groups)      # a group nested in the step runs in the loop body
        step._state_memo = {}
        step.given_step_tensors = self.given_step_tensors | {id(v) for v in group.step_work}
        return step

    def free_vars(self, v: Value) -> frozenset:
        return free_vars(v, self._free_memo)

    def keep(self, v: Value) -> Value:
        self._keep.append(v)
        return v

    def lower(self, v: Value) -> ir.Value:
        """The function-level value of program-level `v`, emitting what it needs first."""
        pending = self.pending(v)
        if pending and self.in_dispatch:
            raise AssertionError(f"a {type(pending[0]).__name__} would be lowered to a kernel inside a dispatch")
        for node in pending:
            with location_of(node):
                self.values[id(node)] = RULES[type(node)](self, node)
        return self.values[id(v)]

    def pending(self, root: Value) -> list[Value]:
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
            fused = self.fused_form(v)
            stack.extend((o, False) for o in reversed(v.operands() if fused is None else fused.operands()))
        return order

    def fused_form(self, v: Value):
        """The fused kernel computing `v` from other operands than its own (softmax attention,
        einc.mlir.dense.attention), or None."""
        if not isinstance(v, Generic) or self.target.fused_attention_scores is None:
            return None
        if id(v) not in self._fused:
            self._fused[id(v)] = attention.match(self, v)
        return self._fused[id(v)]

    def arg(self, inp: Input) -> ir.Value:
        return self.args[inp.pos]
