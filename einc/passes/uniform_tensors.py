"""Tensors whose elements are all the same value, and body values that do not change along
given index variables once such tensors are seen through.

IREE-10: IREE folds such a tensor (a splat constant, or a kernel it turns into a fill) into
its readers as a scalar and then vectorizes a reduction whose value comes from no operand
wrongly, so the lowering runs those reductions' loops as scalar loops (einc.mlir.dense.kernels). The
answer errs towards "varies": what is called uniform here must be, but IREE may see more.
"""
from __future__ import annotations

from einc.ir.file_arrays import all_equal
from einc.ir.nodes import Const, Generic, IndexRef, Read, Value, free_vars
from einc.ir.traversal import fold


class Uniformity:
    """Memoized answers for one program (values are compared by identity). The two questions
    ask each other (a tensor is uniform when its body does not vary; a body value does not vary
    through a read of a uniform tensor): they are folded over the IR without recursion, since a
    chain of definitions each reading the one before is as deep as the program is long."""

    def __init__(self, free_memo: dict):
        self._free = free_memo
        self._memo: dict[tuple, bool] = {}

    def is_uniform(self, tensor: Value) -> bool:
        """Whether every element of `tensor` is the same value (a Stack built per point is
        never called uniform)."""
        return fold(("uniform", tensor), self._parts, self._combine, self._memo, key=_key)

    def varies(self, v: Value, vars_: frozenset) -> bool:
        """Whether body value `v` can change along `vars_`: it reads a coordinate of one of them
        other than through a subscript of a uniform tensor."""
        return fold(("varies", v, vars_), self._parts, self._combine, self._memo, key=_key)

    def _parts(self, question: tuple) -> list:
        if question[0] == "uniform":
            tensor = question[1]
            if not isinstance(tensor, Generic):
                return []
            own = frozenset(tensor.vars)
            return [("varies", v, own) for v in (tensor.body, tensor.guard) if v is not None]
        v, vars_ = question[1:]
        if isinstance(v, IndexRef) or not free_vars(v, self._free) & vars_:
            return []
        through = [("uniform", v.tensor)] if isinstance(v, Read) else []
        return through + [("varies", o, vars_) for o in v.operands()]

    def _combine(self, question: tuple, answers: list) -> bool:
        if question[0] == "uniform":
            tensor = question[1]
            if isinstance(tensor, Const):
                return all_equal(tensor.array)
            return isinstance(tensor, Generic) and not any(answers)
        v, vars_ = question[1:]
        if not free_vars(v, self._free) & vars_:
            return False
        if isinstance(v, IndexRef):
            return True
        if isinstance(v, Read) and answers[0]:
            return False           # read from a uniform tensor: the same value at every point
        return any(answers[1:] if isinstance(v, Read) else answers)


def _key(question: tuple) -> tuple:
    return (question[0], id(question[1])) + question[2:]
