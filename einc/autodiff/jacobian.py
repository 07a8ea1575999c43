"""`@y / @x` for a y of any shape: the Jacobian, of shape shape(y) ++ shape(x), and its
projections (thesis 6.4.2).

A read of the Jacobian names a point or `:` (every point) on each axis. Its first rank(y)
subscripts pick target elements, the rest parameter elements. When every parameter subscript
is fixed the read is a column, computed in forward mode from a basis tangent; when every
target subscript is fixed it is a row (or one entry), computed in reverse mode from a basis
cotangent. Neither needs the dense Jacobian. Any other read materialises it, in forward mode
with one tangent direction per element of x.
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir.nodes import Generic, IndexRef, Read, Value, fresh_index_vars, free_vars
from einc.autodiff.custom_rules import NO_RULES
from einc.autodiff.gradient import pullback
from einc.autodiff.local_rules import const
from einc.autodiff.seeds import basis, indicator
from einc.autodiff.spans import located
from einc.autodiff.tangent import Tangent

SLICE = None          # a `:` subscript


def jacobian(y: Value, x: Value, span, rules=NO_RULES) -> Value:
    """The dense Jacobian."""
    check_float(y, x, span)
    dirs = fresh_index_vars(x.shape, "d")
    dir_refs = tuple(IndexRef(v) for v in dirs)
    seed = lambda subs: indicator(subs, dir_refs, x)      # the identity, one direction per axis
    full = Tangent(x, seed, dirs, span, rules).of_value(y)
    if full is None:
        full = Generic(fresh_index_vars(tuple(y.shape) + tuple(x.shape), "z"), const(0.0, y))
    return located(full, [y, x], span)


def jacobian_read(y: Value, x: Value, subs: list, span, rules=NO_RULES) -> Value:
    """J[subs] where each subscript is an i32 scalar or SLICE; rank(y) + rank(x) of them."""
    check_float(y, x, span)
    return located(_read(y, x, subs, span, rules), [y, x] + [s for s in subs if s is not SLICE], span)


def _read(y: Value, x: Value, subs: list, span, rules) -> Value:
    ys, xs = subs[:y.rank], subs[y.rank:]
    if xs and all(_fixed(s) for s in xs) and not all(_fixed(s) for s in ys):
        column = Tangent(x, lambda at: indicator(at, tuple(xs), x), (), span, rules).of_value(y)
        return _project(column if column is not None else zeros(y), ys, span)
    if all(_fixed(s) for s in ys):
        cotangent = basis(y, tuple(ys)) if y.rank else const(1.0, y)
        return _project(pullback(y, x, cotangent, span, rules), xs, span)
    return _project(jacobian(y, x, span, rules), subs, span)


def _project(t: Value, subs: list, span) -> Value:
    """t[subs] with SLICE keeping an axis whole."""
    if not subs:
        return t
    sliced = [k for k, s in enumerate(subs) if s is SLICE]
    if not sliced:
        return Read(t, tuple(subs), span=span)
    if any(free_vars(s) for s in subs if s is not SLICE):
        raise d.error(d.UNSUPPORTED, "a `:` slice of a derivative inside an indexed definition",
                      span, hint="index every axis, e.g. `J[i, j]`")
    vars_ = fresh_index_vars(tuple(t.shape[k] for k in sliced), "s")
    it = iter(vars_)
    full = tuple(IndexRef(next(it)) if s is SLICE else s for s in subs)
    return Generic(vars_, Read(t, full, span=span), span=span)


def _fixed(s) -> bool:
    return s is not SLICE and not free_vars(s)


def zeros(y: Value) -> Value:
    return Generic(fresh_index_vars(y.shape, "z"), const(0.0, y)) if y.rank else const(0.0, y)


def check_float(y: Value, x: Value, span) -> None:
    if not y.dtype.is_float or not x.dtype.is_float:
        raise d.error(d.TYPE, f"derivatives need float values, found {y.dtype} / {x.dtype}", span)
