"""Reductions whose body IREE folds to a value that no reduced element changes (IREE-264).

IREE-264: llvm-cpu vectorizes a reduction linalg.generic whose yielded value, once IREE's
folders have run, comes from no operand read along a reduction loop (`out + 1`) to one
application of the body: the sum of a constant over n points is that constant. MLIR's folders
make such bodies out of ones that read every element (integer `x * 0`, `x - x`, `(x + 3) - x`,
`x % 1`, `x == x`, a select of two equal sides), and einc's IR cannot foresee every fold. So
the lowering asks the folders themselves: a copy of the module is canonicalized, and each
reduction kernel einc built (marked with the index of its Reduce) is checked for the loops its
yielded value no longer depends on; the program is then lowered again with those loops run as
scalar loops inside the kernel (kernels._reduction_kernel), which IREE runs once per point.
A body that reads nothing along a loop was already lowered that way (kernels._loop_vars);
this catches the bodies that only the folders reduce to that.
"""
from __future__ import annotations

from iree.compiler import ir
from iree.compiler.passmanager import PassManager

from einc.mlir.dense.generic_reads import generics, iterators

MARK = "einc.reduction"


class FoldedReductions:
    """The Reduce nodes lowered as kernels (`marked`, indexed by their kernels' marks, with the
    variables of the kernels' loops) and the variables of each that run as scalar loops
    (`loops`: id(Reduce) -> set of IndexVar), shared by a program's lowerings."""

    def __init__(self):
        self.marked: list[tuple] = []
        self.loops: dict[int, set] = {}

    def mark(self, op: ir.Operation, reduce, vars_: list) -> None:
        op.attributes[MARK] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(self.marked))
        self.marked.append((reduce, list(vars_)))

    def forced(self, reduce) -> set:
        return self.loops.get(id(reduce), set())

    def record_folded(self, module: ir.Module) -> bool:
        """Canonicalize a copy of `module` and add the loops its marked kernels no longer read
        along to `loops`; whether any loop was added. The marks' indices are free again after."""
        probe = module.operation.clone()
        PassManager.parse("builtin.module(func.func(canonicalize,cse,canonicalize))", module.context).run(probe)
        added = False
        for op in generics(probe):
            if MARK not in op.attributes:
                continue
            reduce, vars_ = self.marked[ir.IntegerAttr(op.attributes[MARK]).value]
            kinds = iterators(op)
            if len(kinds) != len(vars_):
                continue
            read = _dims_read(op)
            unread = {v for k, v in enumerate(vars_) if "reduction" in kinds[k] and k not in read}
            if unread - self.forced(reduce):
                self.loops.setdefault(id(reduce), set()).update(unread)
                added = True
        self.marked.clear()
        return added

    def unmark(self, module: ir.Module) -> None:
        """Clear the marks of `module`'s kernels."""
        for op in generics(module):
            if MARK in op.attributes:
                del op.attributes[MARK]


def _dims_read(op) -> set:
    """The loop dimensions the value `op` (a linalg.generic) yields reads elements along: through
    an input that is not one repeated value read along them. A reduction loop the value depends
    on through linalg.index alone (`x[j] * 0 + 4 where j < i` folds to a select of j) counts as
    unread: IREE vectorizes such a loop to a `vector.multi_reduction` over a dimension the
    vector lacks (IREE-264, where the kernel's points are not as many as the reduced ones), and
    a body that reads nothing along a loop runs it as a scalar loop already."""
    block = op.regions[0].blocks[0]
    n_inputs = _n_inputs(op)
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    arg_dims = {}
    for k in range(n_inputs):
        if not _uniform(op.operands[k]):
            arg_dims[k] = set().union(*(_expr_dims(r) for r in maps[k].results))
    dims: set = set()
    for value in _sources(op):
        if isinstance(value, ir.BlockArgument) and value.owner == block and value.arg_number in arg_dims:
            dims |= arg_dims[value.arg_number]
    return dims


def _n_inputs(op) -> int:
    return ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]


def _sources(generic) -> list:
    """The block arguments and linalg.index results that the value `generic` yields is computed
    from (an op with regions counts every value its nested ops use); values defined outside
    `generic` are the same at every point, so they count as none."""
    inside = []

    def visit(op):
        inside.append(op)
        return ir.WalkResult.ADVANCE
    generic.walk(visit)
    inside = set(inside[:-1])        # the walk visits `generic` itself last
    seen, found = set(), []
    stack = [list(generic.regions[0].blocks[0].operations)[-1].operation]
    while stack:
        op = stack.pop()
        for region in op.regions:
            for nested_block in region.blocks:
                stack.extend(nested.operation for nested in nested_block.operations)
        for value in op.operands:
            if isinstance(value, ir.BlockArgument) or value.owner.name == "linalg.index":
                found.append(value)
            elif value.owner.operation in inside and value.owner.operation not in seen:
                seen.add(value.owner.operation)
                stack.append(value.owner.operation)
    return found


def _uniform(value: ir.Value) -> bool:
    """Whether every element of tensor `value` is the same value as IREE sees it: a fill, a splat
    constant, or an elementwise kernel whose yielded value reads none of its inputs."""
    if not isinstance(value, ir.OpResult):
        return False
    producer = value.owner
    if producer.name == "linalg.fill":
        return True
    if producer.name == "arith.constant":
        attr = producer.attributes["value"]
        return isinstance(attr, ir.DenseElementsAttr) and attr.is_splat
    if producer.name == "linalg.generic":
        return all("parallel" in k for k in iterators(producer)) and not _sources(producer)
    return False


def _expr_dims(expr: ir.AffineExpr) -> set:
    if isinstance(expr, ir.AffineDimExpr):
        return {expr.position}
    if isinstance(expr, ir.AffineBinaryExpr):
        return _expr_dims(expr.lhs) | _expr_dims(expr.rhs)
    return set()
