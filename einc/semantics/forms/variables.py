"""Bindings that a derivative is taken with respect to: differentiable whatever their origin.

`let h = 1.5; let e = h * h * h; let de = @e / @h;` is 6.75 (LANGUAGE.md section 9): a
binding under `@` is a variable, not a number to fold. Such a binding keeps its identity in
the IR: a typed constant (`let h: f32 = 1.5;`, `load_npy(..)`) becomes a differentiable `Const`,
which no operation folds; an untyped literal (`let h = 1.5;`, `let w = [1.0, 2.0];`,
`let a = M[0, 0];`) stays untyped but traced (values.Traced): it takes the type of where it is
used, and each dtype it takes is one differentiable constant, so `@e / @h` finds it in e's
graph. Values computed at run time are IR nodes already; those that are only views until used
(a row `X[1]`, a lazy Jacobian) are made whole once, so that every use reads the one value.
"""
from __future__ import annotations

import numpy as np

from einc.ir.nodes import Const, Generic, IndexRef, Op, Read, Value, free_vars, fresh_index_vars
from einc.semantics.core import scalar_ops
from einc.semantics.core.tensors import whole
from einc.semantics.core.values import LazyJacobian, PartialRead, Traced, Weak
from einc.syntax import ast


def differentiated_bindings(modules) -> set:
    """The DefIds named on the right of some `@y / @x` (x, x[..], or a name read by an expression
    there: `@y / @(x * x)`) in any of `modules`."""
    found = set()
    for module in modules:
        for node in ast.iter_nodes(module.items):
            if isinstance(node, ast.Derivative):
                target = node.denominator
                target = target.base if isinstance(target, ast.Index) else target
                found |= {n.def_id for n in ast.iter_nodes(target)
                          if isinstance(n, ast.Name) and n.def_id is not None}
    return found


def as_variable(value, named_already: bool = False):
    """`value`, bound to a name some derivative differentiates; `named_already` says that
    another name in scope is bound to this very value (`let w = x;`): w then gets its own node,
    computed from x's, so that `@y / @w` counts only the uses of w in y (as `let a = X[0];`
    does, docs/DECISIONS.md, Derivatives) and `@y / @x` still counts them all."""
    if isinstance(value, Weak) and value.kind != "bool":
        if value.trace is None:
            return Weak(value.value, value.kind, value.span, Traced(_leaf_maker(value)))
        if named_already:
            return Weak(value.value, value.kind, value.span, Traced(lambda dtype: _copy(value.trace.at(dtype))))
    if isinstance(value, Const) and not value.differentiable and value.dtype.is_float:
        return Const(value.array, span=value.span, differentiable=True)
    if isinstance(value, LazyJacobian) or (isinstance(value, PartialRead)
                                           and not any(free_vars(s) for s in value.subs)):
        return whole(value, value.span)
    if named_already and isinstance(value, Value):
        return _copy(value)
    return value


def _copy(value: Value) -> Value:
    """A node of its own that reads `value` whole."""
    if value.rank == 0:
        return Op("cast", (value,), value.dtype, span=value.span)
    vars_ = fresh_index_vars(value.shape, "w")
    return Generic(vars_, Read(value, tuple(IndexRef(v) for v in vars_), span=value.span), span=value.span)


def _leaf_maker(literal: Weak):
    def leaf(dtype) -> Const:
        # an integer typing is kept out of folding too, so that a derivative can see it used
        # as an integer (derivatives.request refuses that) rather than find nothing
        scalar_ops.check_fits(literal, dtype, literal.span)
        return Const(np.asarray(literal.value, dtype=dtype.numpy), span=literal.span, differentiable=True)
    return leaf
