"""Derivative code reads a definition's computed tensor instead of recomputing its body.

Local rules express a partial through the node itself (tanh's is 1 - y², exp's is y), so the
adjoint of `h[n, j] = tanh(sum[i](..))` would evaluate the whole body, reduction included, again
inside the gradient's kernels. Where the adjoint repeats the body of a definition `t` whole, it
reads `t[n, j]` instead: one kernel fewer, and the forward reduction runs once.
"""
from __future__ import annotations

from dataclasses import replace

from einc.ir.nodes import Generic, IndexRef, Read, Value
from einc.autodiff.substitute import Substitution


def reuse_primal(leaves: list, t: Generic, vars_: tuple, body: Value) -> list:
    """`leaves` (of propagating through `body`, t's body over `vars_`, t's own or copies of them)
    with that body replaced by a read of t. Only for unguarded definitions over ranges starting
    at 0, where t at a point is exactly its body."""
    if t.guard is not None or any(v.lo != 0 for v in vars_):
        return leaves
    read = Read(t, tuple(IndexRef(v) for v in vars_), in_bounds=True)
    swap = _Replace(body, read)
    return [replace(leaf, adjoint=swap.value(leaf.adjoint)) for leaf in leaves]


class _Replace(Substitution):
    def __init__(self, old: Value, new: Value):
        super().__init__({})
        self.old, self.new = old, new

    def _rebuild(self, v: Value) -> Value:
        return self.new if v is self.old else super()._rebuild(v)
