"""Reverse-mode requests through a loop whose step runs a loop, answered in forward mode.

The adjoint of such a loop would run, in each reverse step, the inner loop's forward pass and
its adjoint (not built yet). Forward mode runs the inner loop's tangent inside the primal step
(einc.autodiff.tangent_recurrence), so `@L / @c` there is the tangent of L with one direction
per element of c: exact, for the primal's cost times the size of c (a hyperparameter, a
physical constant, an initial state), and no stored history of either loop.
"""
from __future__ import annotations

from einc.ir.nodes import Generic, IndexRef, Op, Read, RecValue, Reduce, Value, fresh_index_vars
from einc.autodiff.local_rules import const
from einc.autodiff.recurrence_adjoint import inner_loop_per_step
from einc.autodiff.seeds import indicator
from einc.autodiff.tangent import Tangent


def runs_loops_in_steps(tensors: list, stops: set) -> bool:
    """Whether one of `tensors` (what y depends on) is a loop whose step runs a loop that the
    adjoint would pass through."""
    return any(isinstance(t, RecValue) and inner_loop_per_step(t.group, stops) is not None for t in tensors)


def forward_pullback(y: Value, x: Value, cotangent, span, rules) -> Value:
    """cotangent . (dy/dx), of x's shape (cotangent None: y is a scalar, dy/dx itself)."""
    dirs = fresh_index_vars(x.shape, "d")
    refs = tuple(IndexRef(v) for v in dirs)
    full = Tangent(x, lambda subs: indicator(subs, refs, x), dirs, span, rules).of_value(y)
    if full is None:
        return Generic(fresh_index_vars(x.shape, "z"), const(0.0, x)) if x.rank else const(0.0, x)
    if cotangent is None:
        return full
    ys = fresh_index_vars(y.shape, "c")
    at = tuple(IndexRef(v) for v in ys)
    part = lambda xs: Op("mul", (Read(cotangent, at, in_bounds=True) if y.rank else cotangent,
                                 Read(full, at + xs, in_bounds=True) if full.rank else full), full.dtype)
    if not x.rank:
        return Reduce("sum", ys, part(())) if ys else part(())
    xs = fresh_index_vars(x.shape, "u")
    body = part(tuple(IndexRef(v) for v in xs))
    return Generic(xs, Reduce("sum", ys, body) if ys else body)
