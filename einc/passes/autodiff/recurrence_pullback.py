"""A reverse pass that meets a recurrence: its contribution to x, through forward tangents.

The adjoint A of a recurrence's result R contributes sum over r of A[r] * dR[r]/dx[u] to
x[u]. The tangents dR/dx come from the tangent loop beside the primal loop
(einc.passes.autodiff.tangent_recurrence), one direction per element of x, computed together
as extra axes of the tangent members; the contraction with A is an ordinary reduction. The
work grows with the size of x; an adjoint loop running backward over the kept states would
not, and is not compiled yet.
"""
from __future__ import annotations

from einc.ir.nodes import Generic, IndexRef, Read, Reduce, RecValue, Value, fresh_index_vars
from einc.passes.autodiff.local_rules import mul
from einc.passes.autodiff.seeds import indicator, read_adjoint
from einc.passes.autodiff.tangent import Tangent


class RecurrencePullback:
    """The recurrences met by one reverse pass, sharing one set of tangent members per group."""

    def __init__(self, x: Value, span, rules):
        self.x = x
        self.dirs = fresh_index_vars(x.shape, "d")
        self.dir_refs = tuple(IndexRef(v) for v in self.dirs)
        seed = lambda subs: indicator(subs, self.dir_refs, x)     # one direction per element of x
        self.tangent = Tangent(x, seed, self.dirs, span, rules)

    def contribution(self, value: RecValue, adjoint: Value):
        """x-shaped (a scalar expression for scalar x) contribution, or None when R ignores x."""
        tangent = self.tangent.of_tensor(value)
        if tangent is None:
            return None
        rvars = fresh_index_vars(value.member.shape, "r")
        rrefs = tuple(IndexRef(v) for v in rvars)
        term = mul(read_adjoint(adjoint, rrefs), Read(tangent, rrefs + self.dir_refs, in_bounds=True))
        total = Reduce("sum", rvars, term)
        return Generic(self.dirs, total) if self.dirs else total
