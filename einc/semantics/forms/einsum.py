"""`__einsum(equation, inputs)`: Einstein summation with an equation known at build time.

The equation is expanded into the indexed definition it names: "ij,jk->ik" on (a, b) is
`y[i, k] = sum[j](a[i, j] * b[j, k])`. Each letter becomes an index variable whose extent comes
from the operand axes it labels (a letter on axes of different lengths is an E004 naming both).
Without "->" the output is the letters used exactly once, in alphabetical order (numpy's rule).
"""
from __future__ import annotations

from einc import diagnostics as d
import numpy as np

from einc.ir.nodes import Generic, IndexRef, IndexVar, Stack, Value, reduced
from einc.ir.types import Lin
from einc.semantics.core import scalar_ops, tensors
from einc.semantics.core.state import InferenceFrame
from einc.semantics.core.values import ListVal, StrVal, TupleVal, Weak, describe


def einsum(el, equation, inputs, span):
    if not isinstance(equation, StrVal):
        raise d.error(d.TYPE, f"`einsum` needs an equation string known at build time, found "
                      f"{describe(equation)}", span)
    terms, out = parse(equation.text, span)
    operands = [_operand(x, span) for x in _operand_list(el, inputs, terms, span)]
    if len(terms) != len(operands):
        raise d.error(d.TYPE, f"einsum equation `{equation.text}` names {len(terms)} operands, "
                      f"but {len(operands)} {'was' if len(operands) == 1 else 'were'} given", span)
    for term, x in zip(terms, operands):
        if len(term) != x.rank:
            raise d.error(d.SHAPE, f"einsum term `{term}` labels {len(term)} axes of {describe(x)}", span)
    letters = sorted(set("".join(terms)), key="".join(terms).index)
    var = {c: IndexVar(c, Lin(0), None, span=span) for c in letters}
    product = _product(el, terms, operands, var, span)
    summed = tuple(var[c] for c in letters if c not in out)
    body = reduced("sum", summed, product, span=span) if summed else product
    return Generic(tuple(var[c] for c in out), body, None, span=span)


def _operand_list(el, inputs, terms: list, span) -> list:
    """The operands: a tuple's or a list's items. A list of arrays of one shape (`[V, V]`) is
    one array stacked along a new leading axis: its rows are the operands when it has one per
    term and each term labels one axis fewer than it has, as NumPy's `einsum(eq, *arrays)`."""
    if isinstance(inputs, (TupleVal, ListVal)):
        return list(inputs.items)
    if tensors.is_array(inputs) and _leading_length(inputs) == len(terms) and \
            all(len(t) + 1 == tensors.shape_only(inputs).rank for t in terms):
        if isinstance(inputs, Stack):
            return list(inputs.elems)
        return [tensors.read(inputs, [Weak(np.asarray(k), "int", span)], span, el.state, "einsum operands")
                for k in range(len(terms))]
    return [inputs]


def _leading_length(x) -> int | None:
    x = tensors.shape_only(x)
    n = x.value.shape[0] if isinstance(x, Weak) else x.shape[0]
    if isinstance(n, Lin):
        return n.const if n.is_const else None
    return int(n)


def _operand(x, span) -> Value:
    x = scalar_ops.materialize(tensors.whole(x, span), None, span)
    if not isinstance(x, Value):
        raise d.error(d.TYPE, f"`einsum` operands must be arrays, found {describe(x)}", span)
    return x


def _product(el, terms, operands, var, span):
    """The product of the operands read at their letters; the reads fix the letters' extents."""
    frame = InferenceFrame(list(var.values()))
    el.state.frames.append(frame)
    try:
        product = None
        for k, (term, x) in enumerate(zip(terms, operands)):
            element = tensors.read(x, [IndexRef(var[c], span=span) for c in term], span, el.state,
                                   f"einsum operand {k} `{term}`")
            product = element if product is None else scalar_ops.apply("mul", [product, element], span)
    finally:
        el.state.frames.pop()
    frame.resolve(el.state.dependent_ranges)
    return product


def parse(text: str, span) -> tuple[list[str], str]:
    """The input terms and the output letters of an equation such as "bij,bjk->bik"."""
    eq = text.replace(" ", "")
    if "..." in eq:
        raise d.error(d.UNSUPPORTED, "einsum with `...` is not supported; name every axis with a letter",
                      span)
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    used = "".join(terms)
    if not all(t.isalpha() or t == "" for t in terms) or not (out.isalpha() or out == ""):
        raise d.error(d.VALUE, f"einsum equation `{text}` must be letters, commas and one `->`", span)
    if not arrow:
        out = "".join(sorted(c for c in set(used) if used.count(c) == 1))
    for c in out:
        if c not in used or out.count(c) > 1:
            raise d.error(d.VALUE, f"einsum output letter `{c}` must appear once in the output and "
                          f"in some input term", span)
    return terms, out
