"""Scalar operations applied point by point: on scalars directly, on arrays through `tensors.lift`.

Shared by the rules of expressions, built-in calls and `match`.
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir.nodes import Value
from einc.ir.types import BOOL
from einc.semantics.core import scalar_ops, tensors
from einc.semantics.core.values import StrVal, TupleVal, Weak, describe


def elementwise(el, op: str, args: list, span):
    """Scalar `op` on scalars, or point by point when any argument is an array."""
    for a in args:
        check_number(a, f"`{scalar_ops.SYMBOL.get(op, op)}`", span)
    if any(tensors.is_array(a) for a in args):
        return tensors.lift(lambda *s: scalar_ops.apply(op, list(s), span), args, span, el.state)
    return scalar_ops.apply(op, args, span)


def check_number(v, what: str, span) -> None:
    """Operators take numbers, bools and arrays of them, never a function, tuple or string."""
    if not isinstance(v, (Value, Weak)) and not tensors.is_array(v):
        raise d.error(d.TYPE, f"{what} cannot take {describe(v)}", span)


def cast_to(el, value, dtype, span):
    check_number(value, "`as`", span)
    if tensors.is_array(value):
        return tensors.lift(lambda s: scalar_ops.cast(s, dtype, span), [value], span, el.state,
                            hint_dtypes=False)
    return scalar_ops.cast(value, dtype, span)


def select(el, cond, a, b, span):
    if isinstance(a, TupleVal) and isinstance(b, TupleVal) and len(a.items) == len(b.items):
        return TupleVal(tuple(select(el, cond, x, y, span) for x, y in zip(a.items, b.items)))
    if isinstance(a, StrVal) or isinstance(b, StrVal):
        # a string is a build-time value: only a condition known at build time can pick one
        raise d.error(d.TYPE, "this `if` chooses between strings by a condition known only at run time", span,
                      hint="strings exist only at build time: choose a number or a bool here (`let won = c;`)")
    cond = scalar_ops.materialize(cond, BOOL, span) if isinstance(cond, Weak) else cond
    return elementwise(el, "select", [cond, a, b], span)


def unary_plus(v, span):
    """`+x` is `x`, for numbers and arrays of them."""
    kind = v.kind if isinstance(v, Weak) else scalar_ops.kind_of(v.dtype) if hasattr(v, "dtype") else None
    if kind not in ("int", "float"):
        raise d.error(d.TYPE, f"unary `+` needs a number, found {describe(v)}", span)
    return v
