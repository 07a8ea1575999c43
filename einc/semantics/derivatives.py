"""Derivative requests in expressions (LANGUAGE.md section 5).

`@y / @x` for a scalar y is the gradient, computed at once (one reverse pass). For any other
y it is a `LazyJacobian`: a value of shape shape(y) ++ shape(x) that is only computed when it
is used, so that indexing it (`J[t, j, :]`, `J[:, :, p]`, `J[t, j, p]`) computes only what is
read (einc.passes.autodiff.jacobian). Any other use materialises the dense Jacobian.
`@y[s..] / @x[r..]` is the entry J[s.., r..].
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir.nodes import Read, Value
from einc.passes.autodiff.gradient import gradient
from einc.passes.autodiff.jacobian import SLICE
from einc.semantics import tensors
from einc.semantics.recurrences import RecState
from einc.semantics.values import LazyJacobian, Weak, describe
from einc.syntax import ast


def request(el, e: ast.Derivative, env):
    """The value of `@y / @x`."""
    y, ysubs = _operand(el, e.numerator, "target", env)
    x, xsubs = _operand(el, e.denominator, "parameter", env)
    if y.rank == 0 and not xsubs:
        return gradient(y, x, e.span, el.derivative_rules)
    lazy = LazyJacobian(y, x, el.derivative_rules, e.span)
    if not ysubs and not xsubs:
        return lazy
    if len(ysubs) != y.rank:
        raise d.error(d.SHAPE, f"`@{_name(e.numerator)}[..]` needs {y.rank} subscript(s), found "
                      f"{len(ysubs)}", e.numerator.span)
    for v, subs, node in ((y, ysubs, e.numerator), (x, xsubs, e.denominator)):
        if subs and len(subs) == v.rank and all(isinstance(s, Value) for s in subs):
            # index variables of an enclosing definition take their ranges from these axes
            el.state.note_read(Read(v, tuple(subs), span=node.span), [f"`{_name(node)}[..]`"] * v.rank)
    return tensors.read_jacobian(lazy, ysubs + xsubs, e.span)


def _operand(el, node, what: str, env):
    """(whole value, subscripts) of one side of the quotient: `name` or `name[subs]`."""
    base, subs = (node.base, node.subscripts) if isinstance(node, ast.Index) else (node, [])
    v = el.ev(base, env)
    if isinstance(v, RecState):
        # `@L / @w[k - 1]` inside w's own recurrence: the parameter is that earlier step whole
        v, subs = el.ev(node, env), []
    if isinstance(v, Weak):
        raise d.error(d.UNSUPPORTED, f"the derivative's {what} is an untyped literal", node.span,
                      hint="give the binding a type, e.g. `let w: f32 = 0.5;`")
    v = tensors.whole(v, node.span)
    if not isinstance(v, Value):
        raise d.error(d.TYPE, f"cannot differentiate {describe(v)}", node.span)
    return v, [_subscript(el, s, env, node.span) for s in subs]


def _subscript(el, s, env, span):
    if isinstance(s, ast.FullSlice):
        return SLICE
    if isinstance(s, ast.RestIndex):
        raise d.error(d.UNSUPPORTED, "a rest index in a derivative request", s.span or span)
    return tensors.subscript(el.ev(s, env), span)


def _name(node) -> str:
    base = node.base if isinstance(node, ast.Index) else node
    return getattr(base, "name", "y")
