"""`@fn name(x, ..) { .. @x .. }`: a user derivative rule (LANGUAGE.md section 5).

The rule's body is the differential of `name`'s result in terms of the differentials `@x` of
its arguments. A call of `name` on scalars still computes the function's own body; the rule
gives its partial derivatives, which the derivative passes use instead of the body
(einc.autodiff.custom_rules). On arrays the function applies point by point, each
point with the rule.
"""
from __future__ import annotations

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import Const, Value
from einc.ir.types import F32
from einc.semantics.core import folding, scalar_ops, tensors
from einc.semantics.forms import types
from einc.semantics.core.values import Weak, describe
from einc.syntax import ast


def differential_key(def_id):
    """Where a rule's body finds `@x` in its scope."""
    return ("differential", def_id)


def call_with_rule(el, fn, rule, args: list, span):
    if len(rule.node.params) != len(fn.node.params):
        raise d.error(d.TYPE, f"the derivative rule of `{rule.node.name}` takes "
                      f"{len(rule.node.params)} arguments but the function takes {len(fn.node.params)}",
                      rule.node.span)
    if any(isinstance(p.type, ast.ArrayType) for p in fn.node.params):
        raise _unsupported(rule, "which takes an array")
    if any(tensors.is_array(a) for a in args):
        try:
            return tensors.lift(lambda *scalars: call_with_rule(el, fn, rule, list(scalars), span),
                                args, span, el.state)
        except d.CompileError as err:
            # a function of a whole array (`lse(v)` summing over v) fails on the scalars its rule
            # is applied to: say so, beside what failed, rather than that failure alone
            array = next(a for a in args if tensors.is_array(a))
            first = err.diagnostics[0]
            raise d.error(d.UNSUPPORTED, f"a derivative rule for `{rule.node.name}`, called with "
                          f"{describe(array)}: rules are compiled for functions from float scalars to a "
                          "float scalar, applied point by point to arrays", span,
                          notes=[d.Label(first.span, f"applied to one point: {first.message}")] if first.span else [],
                          hint="write the function without a rule, or its rule for one scalar") from err
    # float literals take the float type of the other arguments (f32 alone), so that the body
    # gives a typed result the rule can be attached to (`f(3.0)`, or a literal under `@`)
    floats = [a.dtype for a in args if isinstance(a, Value) and a.dtype.is_float]
    args = [scalar_ops.materialize(a, floats[0] if floats else F32, span)
            if isinstance(a, Weak) and a.kind == "float" else a for a in args]
    result = el.call_body(fn, [_primal(a) for a in args], span)
    if isinstance(result, Weak) and result.kind == "float" and result.rank == 0:
        result = scalar_ops.materialize(result, floats[0] if floats else F32, span)
    if not isinstance(result, Value) or result.rank or not result.dtype.is_float:
        raise _unsupported(rule, f"which returns {describe(result)}")
    args = [scalar_ops.materialize(a, result.dtype, span) if isinstance(a, Weak) else a for a in args]
    partials = [(a, _partial(el, rule, args, k, result, span))
                for k, a in enumerate(args) if isinstance(a, Value) and a.dtype.is_float]
    return el.derivative_rules.anchor(result, partials)


def _primal(arg):
    """`arg` for computing the function's own value: a build-time number some derivative
    differentiates is passed as its plain number, since the rule, not the body, gives the
    derivative (so a body that runs Python during the build gets a number it can take)."""
    if not folding.differentiated(arg):
        return arg
    number = folding.known(arg)
    if number is None:
        return arg
    return Weak(np.asarray(number), arg.kind, arg.span) if isinstance(arg, Weak) else Const(np.asarray(number))


def _unsupported(rule, what: str):
    return d.error(d.UNSUPPORTED, f"a derivative rule for `{rule.node.name}`, {what}: rules are "
                   "compiled for functions from float scalars to a float scalar", rule.node.span)


def _partial(el, rule, args: list, k: int, result: Value, span) -> Value:
    """The rule's body with @arg_k = 1 and every other differential 0. A call of the function in
    its own rule (`@fn f(a) { a / f(a) * @a }`) is its value: the body's, without the rule again."""
    scope = rule.env.child()
    for j, (param, arg) in enumerate(zip(rule.node.params, args)):
        scope.bind(param.def_id, types.annotate(arg, param.type, el, span))
        if isinstance(arg, Value) and arg.dtype.is_float:
            scope.bind(differential_key(param.def_id), Const(np.asarray(float(j == k), arg.dtype.numpy)))
    fn_id = rule.node.def_id                  # a rule shares its function's DefId
    outermost = fn_id not in el.rules_running
    el.rules_running.add(fn_id)
    try:
        value = scalar_ops.materialize(el.ev(rule.node.body, scope), result.dtype, rule.node.span)
    finally:
        if outermost:
            el.rules_running.discard(fn_id)
    if not isinstance(value, Value) or value.rank or value.dtype != result.dtype:
        raise d.error(d.TYPE, f"the derivative rule of `{rule.node.name}` must give a "
                      f"{result.dtype} scalar, found {describe(value)}", rule.node.body.span)
    return value
