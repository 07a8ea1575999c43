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

from einc.ir.nodes import Const, free_vars
from einc.semantics.tensors import whole
from einc.semantics.values import LazyJacobian, PartialRead, Traced, Weak
from einc.syntax import ast


def differentiated_bindings(modules) -> set:
    """The DefIds named on the right of some `@y / @x` (x or x[..]) in any of `modules`."""
    found = set()
    for module in modules:
        for node in ast.iter_nodes(module.items):
            if isinstance(node, ast.Derivative):
                target = node.denominator
                target = target.base if isinstance(target, ast.Index) else target
                if isinstance(target, ast.Name) and target.def_id is not None:
                    found.add(target.def_id)
    return found


def as_variable(value):
    """`value`, bound to a name some derivative differentiates."""
    if isinstance(value, Weak) and value.trace is None and value.kind != "bool":
        return Weak(value.value, value.kind, value.span, Traced(_leaf_maker(value)))
    if isinstance(value, Const) and not value.differentiable and value.dtype.is_float:
        return Const(value.array, span=value.span, differentiable=True)
    if isinstance(value, LazyJacobian) or (isinstance(value, PartialRead)
                                           and not any(free_vars(s) for s in value.subs)):
        return whole(value, value.span)
    return value


def _leaf_maker(literal: Weak):
    def leaf(dtype) -> Const:
        # an integer typing is kept out of folding too, so that a derivative can see it used
        # as an integer (derivatives.request refuses that) rather than find nothing
        return Const(np.asarray(literal.value, dtype=dtype.numpy), span=literal.span, differentiable=True)
    return leaf
