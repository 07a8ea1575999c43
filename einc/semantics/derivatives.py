"""Derivative requests in expressions (LANGUAGE.md section 5).

`@y / @x` for a scalar y is the gradient, computed at once (one reverse pass). For any other
y it is a `LazyJacobian`: a value of shape shape(y) ++ shape(x) that is only computed when it
is used, so that indexing it (`J[t, j, :]`, `J[:, :, p]`, `J[t, j, p]`) computes only what is
read (einc.autodiff.jacobian). Any other use materialises the dense Jacobian.
`@y[s..] / @x[r..]` is the entry J[s.., r..].

Either side may be an expression (LANGUAGE.md section 5). `@log10(x) / @x` differentiates the
expression's value as if it were bound to a name. `@y / @(x + x * x)` is the quotient of the two
differentials, dy / du = (dy/dx) / (du/dx), defined where u is a scalar expression reading one
scalar binding x (the chain rule in one variable); any other expression is an E004.

`@y` alone is y's tangent (thesis 6.1): its change when the one run-time input it reads moves
by 1, every element of an array input at once (the thesis's `ones_like` seed). For a scalar
input x that is dy/dx. A y that reads several inputs, or none, is an E011 asking for `@y / @x`.

x may be a build-time value (`let h = 1.5;`): such a binding is a variable (variables), and
an untyped one takes the dtype it has in y's graph (f32 where y leaves it free).
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir import affine
from einc.ir.nodes import (Compact, Generic, IndexRef, Input, Piecewise, Read, RecValue, StateRead, Value,
                           body_vars, free_vars, walk)
from einc.ir.rebuild import rebuild
from einc.ir.types import F32
from einc.autodiff.gradient import gradient
from einc.autodiff.jacobian import SLICE, check_float, zeros
from einc.autodiff.local_rules import const
from einc.autodiff.tangent import Tangent
from einc.semantics.core import scalar_ops, tensors
from einc.semantics.forms.pointwise import elementwise
from einc.semantics.forms.recurrences import RecState
from einc.semantics.core.values import LazyJacobian, PartialRead, Weak, describe
from einc.syntax import ast


def request(el, e: ast.Derivative, env):
    """The value of `@y / @x`."""
    if not _names_a_binding(e.denominator):
        return _by_an_expression(el, e, env)
    y, ysubs = _operand(el, e.numerator, env)
    x, xsubs = _operand(el, e.denominator, env)
    if isinstance(y, PartialRead):
        y = tensors.sub_array(y, e.span)
    row_at = []
    if isinstance(x, PartialRead):
        y, x, row_at = _through_row(tensors.whole(y, e.span), x, e.span)
    y, x = _typed(y, x, e)
    _note_same_step_reads(y, x, e, el.state)
    if y.rank == 0 and not xsubs:
        _needs_ranges(_pending_vars(y), e.span)
        g = tensors.not_per_point(gradient(y, x, e.span, el.derivative_rules), el.state, e.span)
        return tensors.read(g, row_at, e.span, el.state, f"`@{_name(e.numerator)} / @{_name(e.denominator)}`") \
            if row_at else g
    lazy = LazyJacobian(y, x, el.derivative_rules, e.span)
    if not ysubs and not xsubs:
        return lazy
    if len(ysubs) > y.rank:
        raise d.error(d.SHAPE, f"`@{_name(e.numerator)}[..]` takes at most {y.rank} subscript(s), found "
                      f"{len(ysubs)}", e.numerator.span)
    if len(ysubs) < y.rank and not xsubs:
        # `@x[T - 1] / @x0`, a row of x: the Jacobian's rows there, J[T - 1, :, :]
        ysubs, xsubs = ysubs + [SLICE] * (y.rank - len(ysubs)), [SLICE] * x.rank
    for v, subs, node in ((y, ysubs, e.numerator), (x, xsubs, e.denominator)):
        if subs and len(subs) == v.rank and all(isinstance(s, Value) for s in subs):
            # index variables of an enclosing definition take their ranges from these axes
            el.state.note_read(Read(v, tuple(subs), span=node.span), [f"`{_name(node)}[..]`"] * v.rank)
    text = f"`@{_name(e.numerator)} / @{_name(e.denominator)}`"
    return tensors.read_jacobian(lazy, ysubs + xsubs, e.span, el.state, text)


def tangent(el, e: ast.Diff, env):
    """The value of `@y` outside a derivative rule."""
    y = el.ev(e.target, env)
    if isinstance(y, Weak):
        y = scalar_ops.materialize(y, None, e.span)
    y = tensors.whole(y, e.span)
    inputs = sorted({id(v): v for v in walk([y]) if isinstance(v, Input) and v.dtype.is_float}.values(),
                    key=lambda v: v.pos)
    if len(inputs) != 1:
        reads = "reads no run-time float input" if not inputs else \
            "reads " + ", ".join(f"`{v.name}`" for v in inputs)
        raise d.error(d.UNSUPPORTED, f"`@{_name(e.target)}` is a tangent along the one input it reads, "
                      f"but it {reads}", e.span,
                      hint=f"name the variable: `@{_name(e.target)} / @x`")
    (x,) = inputs
    check_float(y, x, e.span)
    dy = Tangent(x, lambda at: const(1.0, x), (), e.span, el.derivative_rules).of_value(y)
    return zeros(y) if dy is None else dy


def _note_same_step_reads(y: Value, x: Value, e: ast.Derivative, state) -> None:
    """Inside a recurrence, x a step's state (`@L / @v[e]`): y's reads of *other* members at
    that same step are opaque state reads, constants to the derivative. That is right for a
    member computed before x at that step, silently wrong for one computed from x (`loss[e]`
    defined from v[e]): noted here, checked once the group's step order is known
    (recurrences.check_same_step_derivatives)."""
    x_reads = [n for n in walk([x]) if isinstance(n, StateRead)]
    steps = [affine.affine_of(n.subs[0]) for n in x_reads]
    own = {id(n.member): n.member for n in x_reads}
    for n in walk([y]):
        if isinstance(n, StateRead) and id(n.member) not in own:
            step = affine.affine_of(n.subs[0])
            if step is not None and step in steps:
                state.same_step_derivatives += [(n.member, m, e.span) for m in own.values()]


def _needs_ranges(pending: set, span) -> None:
    """A gradient per point of an index whose range is still being inferred (`sum[mb](..)`) is
    batched over that index before its extent is known: not compiled; with the range written it is."""
    if pending:
        names = ", ".join(sorted(f"`{v.name}`" for v in pending))
        raise d.error(d.UNSUPPORTED, f"a gradient per point of {names}, an index whose range is "
                      "inferred from its reads, is not compiled yet", span,
                      hint="write the index's range where it is bound, as in `sum[mb in 0..M](..)` "
                      "or `let g[n in 0..N, ..] = ..`")


def _pending_vars(y: Value) -> set:
    """The indices whose ranges are not inferred yet (an enclosing definition's or reduction's,
    whose range its body decides once elaborated) that a tensor y reads depends on. A scalar y
    that reads such an index only in its own expression (`slope(x[k])`, a point's value) has a
    gradient of scalars, as it has with the range given."""
    nodes = walk([y])
    pending = {n.var for n in nodes if isinstance(n, IndexRef) and n.var.extent is None}
    return pending & set().union(*(body_vars(n) for n in nodes if isinstance(n, Generic))) if pending else set()


def _names_a_binding(node) -> bool:
    """Whether the target of `@` is a binding (`x`, `x[i]`), not an expression of it."""
    base = node.base if isinstance(node, ast.Index) else node
    return isinstance(base, (ast.Name, ast.Path))


def _by_an_expression(el, e: ast.Derivative, env):
    """`@y / @u` for an expression u of one scalar binding x: (dy/dx) / (du/dx)."""
    x = _only_binding(el, e.denominator, env)
    du = request(el, ast.Derivative(e.denominator, x, span=e.span), env)
    if not isinstance(du, Value) or du.rank:
        raise d.error(d.SHAPE, "a derivative with respect to an expression needs a scalar expression "
                      f"of a scalar binding; here the expression is {describe(el.ev(e.denominator, env))} "
                      f"and `{x.name}` is {describe(el.ev(x, env))}", e.denominator.span,
                      hint="name the expression's value and differentiate a function of that name")
    dy = request(el, ast.Derivative(e.numerator, x, span=e.span), env)
    return elementwise(el, "div", [tensors.whole(dy, e.span), du], e.span)


def _only_binding(el, node, env) -> ast.Name:
    """The one binding of numbers that the expression `node` reads (E004 for none or several)."""
    found = {}
    for n in ast.iter_nodes(node):
        if isinstance(n, ast.Name) and n.def_id not in found and _is_number(env, n.def_id):
            found[n.def_id] = n
    if len(found) != 1:
        names = ", ".join(f"`{n.name}`" for n in sorted(found.values(), key=lambda n: (n.span.line, n.span.col))) or "none"
        raise d.error(d.SHAPE, "a derivative with respect to an expression needs the expression to "
                      f"read one binding, found {names}", node.span,
                      hint="differentiate with respect to a name, e.g. `@y / @x`")
    return next(iter(found.values()))


def _is_number(env, def_id) -> bool:
    try:
        value = env.lookup(def_id)
    except KeyError:
        return False
    return isinstance(value, (Value, Weak)) or tensors.is_array(value)


def _operand(el, node, env):
    """(value, subscripts) of one side of the quotient: `name` or `name[subs]`; the row of an
    enclosing definition's point as a PartialRead."""
    base, subs = (node.base, node.subscripts) if isinstance(node, ast.Index) else (node, [])
    v = el.ev(base, env)
    if isinstance(v, RecState):
        # `@L / @w[k - 1]` inside w's own recurrence: the parameter is that earlier step whole
        v, subs = el.ev(node, env), []
    if isinstance(v, PartialRead) and any(free_vars(s) for s in v.subs):
        # the row of an enclosing definition's point (`f(x[t])` differentiating its parameter)
        if subs:
            tensors.per_point({i for s in v.subs for i in free_vars(s)}, node.span, "derivative")
        return v, []
    if not isinstance(v, Weak):
        v = tensors.whole(v, node.span)
        if not isinstance(v, Value):
            raise d.error(d.TYPE, f"cannot differentiate {describe(v)}", node.span)
    return v, [_subscript(el, s, env, node.span) for s in subs]


def _through_row(y: Value, row: PartialRead, span) -> tuple:
    """(y, r, []): y reading the row `row` (`x[t]`, t a point of an enclosing definition)
    through a tensor of its own, r, which `@y / @r` differentiates by; both computed per point as
    any derivative there is (tensors.not_per_point). Every read of that row counts, as in the
    entries `(@y / @x)[.., t, ..]`. A row that a recurrence or a piecewise definition reads is
    not rewritten there: a scalar y is then differentiated by all of x per point and read at the
    row, (y, x, [t]); a Jacobian is E011."""
    base, lead = row.base, len(row.subs)
    r = tensors.sub_array(row, span)

    def of_row(v, subs) -> bool:
        return isinstance(v, Read) and v.tensor is base and all(map(_same_subscript, subs[:lead], row.subs))

    def change(v, operands):
        if of_row(v, operands[1:]):
            return Read(r, operands[1 + lead:], span=v.span, in_bounds=v.in_bounds)
        if isinstance(v, (Piecewise, Compact, RecValue)) and any(isinstance(n, Read) and of_row(n, n.subs)
                                                                 for n in walk([v])):
            raise _OpaqueRead()
        return None

    try:
        return rebuild([y], change, opaque=(Piecewise, Compact, RecValue))[id(y)], r, []
    except _OpaqueRead:
        if y.rank:
            raise d.error(d.UNSUPPORTED, "a Jacobian with respect to a point's row that a recurrence "
                          "or piecewise definition reads is not compiled yet", span,
                          hint="read the entries of the whole one, `(@y / @x)[i, t, j]`") from None
        return y, base, list(row.subs)


class _OpaqueRead(Exception):
    """The row is read inside a value whose reads through_row does not rewrite."""


def _same_subscript(a: Value, b: Value) -> bool:
    lin = affine.affine_of(a)
    return a is b or (lin is not None and lin == affine.affine_of(b))


def _typed(y, x, e: ast.Derivative) -> tuple[Value, Value]:
    """y and x as IR values. An untyped x is a traced literal (variables): it takes the dtype
    it has in y's graph, or f32 where y leaves it free; an untyped y takes x's dtype."""
    if isinstance(x, Weak):
        if x.trace is None:
            raise d.error(d.TYPE, f"cannot differentiate with respect to {describe(x)}", e.denominator.span)
        dtype = _dtype_of_use(y, x, e)
        x = x.trace.at(dtype)
    if isinstance(y, Weak):
        y = scalar_ops.materialize(y, x.dtype if y.kind != "bool" and x.dtype.is_float else None, e.span)
    return tensors.whole(y, e.span), tensors.whole(x, e.span)


def _dtype_of_use(y, x: Weak, e: ast.Derivative):
    """The float dtype the traced literal x has in y (one only), f32 when y does not use it."""
    typed = {dtype: leaf for dtype, leaf in x.trace.typed.items() if dtype.is_float}
    if isinstance(y, Weak):
        return next(iter(typed)) if len(typed) == 1 else F32
    reached = {id(v) for v in walk([y])}
    as_int = [dtype for dtype, leaf in x.trace.typed.items() if not dtype.is_float and id(leaf) in reached]
    if as_int:
        raise d.error(d.TYPE, f"`{_name(e.denominator)}` is used as {as_int[0]} in "
                      f"`{_name(e.numerator)}` (a subscript, a range or integer arithmetic), where "
                      "it has no derivative", e.span,
                      hint=f"if it is a real number, write it as a float literal (e.g. `3.0`)")
    used = [dtype for dtype, leaf in typed.items() if id(leaf) in reached]
    if len(used) > 1:
        raise d.error(d.TYPE, f"`{_name(e.denominator)}` is used as {used[0]} and as {used[1]} in "
                      f"`{_name(e.numerator)}`, so the derivative has no single type", e.span,
                      hint=f"give it a type, e.g. `let {_name(e.denominator)}: {used[0]} = ..;`")
    if used:
        return used[0]
    return y.dtype if y.dtype.is_float else F32


def _subscript(el, s, env, span):
    if isinstance(s, ast.FullSlice):
        return SLICE
    if isinstance(s, ast.RestIndex):
        raise d.error(d.UNSUPPORTED, "a rest index in a derivative request", s.span or span)
    return tensors.subscript(el.ev(s, env), span)


def _name(node) -> str:
    base = node.base if isinstance(node, ast.Index) else node
    return getattr(base, "name", "y")
