"""Tensors whose elements are all the same value, and body values that do not change along
given index variables once such tensors are seen through.

IREE 3.13 folds a tensor of one repeated value (a splat constant, or a kernel that IREE turns
into a `linalg.fill`: `let d[i in 0..3] = -2`, `let d[i in 0..3] = x`) into the kernels that
read it, as a scalar. A reduction whose combined value then comes from no operand is
vectorized wrongly (`sum[j in 0..2](d[j])` gave -2, not -4), so the lowering runs the loops of
such reductions as scalar loops (einc.mlir.kernels). The answer errs towards "varies": what is
called uniform here must be, but IREE may see more.
"""
from __future__ import annotations

import numpy as np

from einc.ir.nodes import Const, Generic, IndexRef, Read, Value, free_vars


class Uniformity:
    """Memoized answers for one program (values are compared by identity)."""

    def __init__(self, free_memo: dict):
        self._free = free_memo
        self._uniform: dict[int, bool] = {}
        self._varies: dict[tuple, bool] = {}

    def is_uniform(self, tensor: Value) -> bool:
        """Whether every element of `tensor` is the same value (a Stack built per point is
        never called uniform)."""
        if id(tensor) not in self._uniform:
            self._uniform[id(tensor)] = self._compute_uniform(tensor)
        return self._uniform[id(tensor)]

    def _compute_uniform(self, tensor: Value) -> bool:
        if isinstance(tensor, Const):
            flat = tensor.array.reshape(-1)
            return flat.size > 0 and bool(np.all(flat == flat[0]))
        if isinstance(tensor, Generic):
            own = frozenset(tensor.vars)
            return not any(v is not None and self.varies(v, own) for v in (tensor.body, tensor.guard))
        return False

    def varies(self, v: Value, vars_: frozenset) -> bool:
        """Whether body value `v` can change along `vars_`: it reads a coordinate of one of them
        other than through a subscript of a uniform tensor."""
        if not free_vars(v, self._free) & vars_:
            return False
        key = (id(v), vars_)
        if key not in self._varies:
            self._varies[key] = self._compute_varies(v, vars_)
        return self._varies[key]

    def _compute_varies(self, v: Value, vars_: frozenset) -> bool:
        if isinstance(v, IndexRef):
            return True
        if isinstance(v, Read) and self.is_uniform(v.tensor):
            return False
        return any(self.varies(o, vars_) for o in v.operands())
