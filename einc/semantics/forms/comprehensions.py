"""Comprehensions `[body | clauses]` (LANGUAGE.md sections 3 and 9).

Clauses run left to right: a generator `x in coll` (a range, an array, whose rows it walks, a
string or a list) multiplies the combinations, a filter keeps those where it holds; several
generators give one flat sequence in row-major order. (`v in coll` with `v` bound by an earlier
clause is a membership filter: name resolution turns it into `Binary("in")`.)

Everything known at build time is evaluated at build time: when every generator's collection and
every filter are known, the combinations are enumerated during the build and the body is
elaborated for each kept one (`_unrolled`), so elements may be tuples, rows, strings, units
(`[assert(..) | t in ts]`) or nested comprehensions, and the result is stacked like an array
literal (einc.semantics.forms.stacking). Otherwise the body is elaborated once over a flat index
(`_vectorized`): a `Generic` over the combinations; with filters known at build time, over the
kept positions only; with filters that need run-time data, a sequence whose length is computed
on the device (einc.semantics.forms.dynamic_length).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import (Assert, Const, Generic, IndexRef, IndexVar, Read, RecValue, Reduce, StateRead, Value,
                           free_vars, reduced, size_value, walk)
from einc.ir.affine import size_op
from einc.ir.types import BOOL, Lin
from einc.semantics.forms import definitions, dynamic_length, point_asserts, stacking
from einc.semantics.core import folding, scalar_ops, sequences, tensors
from einc.semantics.core.tensors import batch_over_outer_indices
from einc.semantics.core.values import ListVal, PartialRead, TupleVal, Weak, describe
from einc.syntax import ast

UNROLL_LIMIT = 4096             # elements elaborated one by one at build time
NESTED_UNROLL_LIMIT = 256       # the same, for the elements of nested comprehensions together
ENUMERATION_LIMIT = 1 << 16     # combinations of build-time generators tried one by one


@dataclass(frozen=True)
class Reduced:
    """What `comprehension(.., reduced_by=..)` gives instead of the elements: their reduction."""
    value: Value


def comprehension(el, e: ast.Comprehension, env, reduced_by: str | None = None):
    """The elements, or with `reduced_by` ("len", "sum", "max" or "min": the caller reduces them
    at once) where a filter over run-time data inside an indexed definition keeps a different
    number of them at each point (or in a recurrence step, at each step), `Reduced` of that
    reduction (a count per row)."""
    if _more_than(el, e, env, UNROLL_LIMIT):
        return _vectorized(el, e, env, reduced_by)   # one kernel; filters known at build time still fold
    effects = len(el.ir.effects)
    scopes = _enumerate(el, e, env)
    if scopes == []:
        return _empty(el, e, env)
    if scopes is not None:
        result = _unrolled(el, e, scopes)
        if result is not None:
            return result
    del el.ir.effects[effects:]
    return _vectorized(el, e, env, reduced_by)


def _empty(el, e: ast.Comprehension, env):
    """No element: typed like the body where one kernel could compute it, else an empty literal
    (which takes its type from where it is used)."""
    effects = len(el.ir.effects)
    try:
        return _vectorized(el, e, env)
    except d.CompileError:
        return Weak(np.zeros(0), "float", e.span)
    finally:
        del el.ir.effects[effects:]


# ---------------------------------------------------------------- at build time

def _more_than(el, e: ast.Comprehension, env, limit: int) -> bool:
    """Whether independent generators of known lengths make more than `limit` combinations;
    with a comprehension nested as the body (a grid, `[[.. | d in 0..G] | c in 0..G]`), more than
    NESTED_UNROLL_LIMIT of theirs and its: a 40 x 40 grid unrolled one element at a time made a
    CG step of 1,600 scalar expressions, built in minutes (one kernel: seconds)."""
    total = _combinations(el, e, env, frozenset())
    nested = isinstance(e.body, ast.Comprehension)
    return total is not None and total > (min(limit, NESTED_UNROLL_LIMIT) if nested else limit)


def _combinations(el, e: ast.Comprehension, env, outer: frozenset):
    """The combinations of `e`'s generators times those of a comprehension nested as its body
    whose generators do not read these (`outer`: the ids bound around `e`); None where a
    generator reads another, or its length is not known at build time."""
    generators = _generator_ids(e)
    total = 1
    for g in e.generators:
        if _reads_any(g.iterable, generators | outer):
            return None
        extent = _length(el, g, env)
        if extent is None or not extent.is_const:
            return None
        total *= extent.const
    if isinstance(e.body, ast.Comprehension):
        inner = _combinations(el, e.body, env, outer | generators)
        total *= inner if inner is not None else 1
    return total


def _length(el, gen: ast.Generator, env):
    """How many elements `gen` walks, or None for what cannot be walked (reported later)."""
    if isinstance(gen.iterable, ast.Range):
        lo, hi = definitions.range_bounds(el, gen.iterable, env)
        return None if lo.keys_are_indices or hi.keys_are_indices else definitions.extent(lo, hi)
    coll = el.ev(gen.iterable, env)
    if sequences.is_sequence(coll):
        return Lin(sequences.length(coll))
    return tensors.shape_only(coll).shape[0] if tensors.is_array(coll) else None


def _enumerate(el, e: ast.Comprehension, env):
    """One scope per kept combination, or None when some clause needs run-time data (or there
    are too many combinations to try one by one)."""
    generators = _generator_ids(e)
    scopes = [env.child()]
    for clause in e.clauses:
        if isinstance(clause, ast.Generator):
            scopes = _extend(el, clause, scopes, _reads_any(clause.iterable, generators))
        elif isinstance(clause, ast.CompBinding):
            scopes = [_with_binding(el, clause, scope) for scope in scopes]
        else:
            scopes = _keep(el, clause, scopes)
        if scopes is None:
            return None
    return scopes


def _extend(el, gen: ast.Generator, scopes: list, dependent: bool):
    grown, shared = [], None
    for scope in scopes:
        if dependent or shared is None:
            shared = _items(el, gen, scope)
            if shared is None:
                return None
        for item in shared:
            child = scope.child()
            _bind_element(el, child, gen, item)
            grown.append(child)
        if len(grown) > ENUMERATION_LIMIT:
            return None
    return grown


def _with_binding(el, binding: ast.CompBinding, scope):
    child = scope.child()
    el.bind(child, binding.def_id, el.ev(binding.value, scope))
    return child


def _keep(el, cond: ast.Node, scopes: list):
    kept = []
    for scope in scopes:
        flag = _known_bool(el.ev(cond, scope), cond.span)
        if flag is None:
            return None
        if flag:
            kept.append(scope)
    return kept


def _known_bool(v, span):
    value = folding.known(v) if isinstance(v, (Weak, Value)) else None
    if value is None:
        return None
    if value.ndim or value.dtype != np.bool_:
        raise d.error(d.TYPE, f"a comprehension filter must be a bool, found {describe(v)}", span)
    return bool(value)


def _items(el, gen: ast.Generator, scope):
    """The elements `gen` walks, when its collection is known at build time and they are few
    enough to try one by one; else None."""
    if isinstance(gen.iterable, ast.Range):
        lo, hi = definitions.range_bounds(el, gen.iterable, scope)
        if not (lo.lin.is_const and hi.lin.is_const) or hi.lin.const - lo.lin.const > ENUMERATION_LIMIT:
            return None
        return [Const(np.asarray(i, np.int32), span=gen.span) for i in range(lo.lin.const, hi.lin.const)]
    coll = el.ev(gen.iterable, scope)
    if sequences.is_sequence(coll):
        return sequences.items(coll)
    _check_iterable(coll, gen)
    if folding.differentiated(coll):
        # the elements of a derivative's variable stay reads of it (one kernel otherwise)
        return [tensors.read(coll, [Weak(np.asarray(k), "int")], gen.span, el.state, "")
                for k in range(len(coll.value))] if isinstance(coll, Weak) else None
    if isinstance(coll, Weak):
        return [Weak(row, coll.kind, gen.span) for row in coll.value]
    array = folding.known(coll)
    if array is None:
        return None
    return [Const(np.asarray(row), span=gen.span) for row in array]


def _check_iterable(coll, gen: ast.Generator) -> None:
    if not tensors.is_array(coll):
        raise d.error(d.TYPE, f"cannot iterate over {describe(coll)}", gen.iterable.span)


def _unrolled(el, e: ast.Comprehension, scopes: list):
    """The body elaborated for every kept combination; None when it is better computed as one
    kernel: the elements need run-time data, or there are too many."""
    if len(scopes) > UNROLL_LIMIT:
        return None
    effects = len(el.ir.effects)
    first = el.ev(e.body, scopes[0])
    if _needs_run_time(first) or any(isinstance(x, Assert) for x in el.ir.effects[effects:]):
        return None
    elems = [first] + [el.ev(e.body, s) for s in scopes[1:]]
    return stacking.stack(elems, e.span, jagged_ok=True)


def _needs_run_time(v) -> bool:
    if isinstance(v, TupleVal):
        return any(_needs_run_time(x) for x in v.items)
    return isinstance(v, (Value, PartialRead)) and folding.known(v) is None


def _generator_ids(e: ast.Comprehension) -> set:
    """What the generators bind: their names and the names their tuple patterns take apart."""
    ids = {g.def_id for g in e.generators}
    ids.update(n.def_id for g in e.generators if g.pattern is not None
               for n in ast.iter_nodes(g.pattern) if isinstance(n, ast.BindPat))
    return ids


def _bind_element(el, scope, gen: ast.Generator, item) -> None:
    scope.bind(gen.def_id, item)
    if gen.pattern is not None:
        _destructure(el, gen.pattern, item, scope)


def _destructure(el, pat, value, scope) -> None:
    """`(x, y) in coll`: the parts of a tuple, or the elements of a row (or the rows of a table)
    whose length is the pattern's, bound to the pattern's names."""
    if isinstance(pat, ast.BindPat):
        scope.bind(pat.def_id, value)
        return
    if not isinstance(pat, ast.TuplePat):
        return                                      # `_`
    n = len(pat.elems)
    if isinstance(value, TupleVal) and len(value.items) == n:
        parts = list(value.items)
    elif tensors.is_array(value) and tensors.shape_only(value).shape[0] == Lin(n):
        parts = [tensors.read(value, [Weak(np.asarray(k), "int")], pat.span, el.state, "") for k in range(n)]
    else:
        raise d.error(d.TYPE, f"cannot take {describe(value)} apart into {n} parts", pat.span)
    for sub, part in zip(pat.elems, parts):
        _destructure(el, sub, part, scope)


def _reads_any(node, def_ids: set) -> bool:
    return any(isinstance(n, ast.Name) and n.def_id in def_ids for n in ast.iter_nodes(node))


# ---------------------------------------------------------------- one kernel

class _Axis:
    """One generator of a vectorized comprehension: its extent and how a coordinate along it
    becomes the generator's element."""

    def __init__(self, el, gen: ast.Generator, env):
        self.gen = gen
        if isinstance(gen.iterable, ast.Range):
            lo, hi = definitions.range_bounds(el, gen.iterable, env)
            if lo.keys_are_indices or hi.keys_are_indices:
                raise d.error(d.UNSUPPORTED, "a generator whose range depends on an index variable",
                              gen.iterable.span)
            self.extent, self.lo, self.coll = definitions.extent(lo, hi), lo.lin, None
        else:
            coll = el.ev(gen.iterable, env)
            _check_iterable(coll, gen)
            self.coll = coll if isinstance(coll, PartialRead) else tensors.whole(coll, gen.span)
            self.extent, self.lo = tensors.shape_only(self.coll).shape[0], Lin(0)

    def element(self, el, coord: Value):
        if self.coll is None:
            return coord if self.lo == 0 else scalar_ops.apply("add", [coord, size_value(self.lo)], self.gen.span)
        return tensors.read(self.coll, [coord], self.gen.span, el.state, "")


def _vectorized(el, e: ast.Comprehension, env, reduced_by: str | None = None):
    generators = _generator_ids(e)
    for g in e.generators:
        if _reads_any(g.iterable, generators):
            raise d.error(d.UNSUPPORTED, "a generator whose collection depends on an earlier generator "
                          "needs values known at build time, with at most "
                          f"{ENUMERATION_LIMIT} combinations", g.iterable.span)
    axes = [_Axis(el, g, env) for g in e.generators]
    flat = IndexVar("k", Lin(0), _flat_extent(axes, e.span), span=e.span)
    scope = env.child()
    _bind(el, scope, axes, IndexRef(flat, span=e.span), e.span)
    scope = _bound_locals(el, e, scope)
    if not e.filters:
        return _collect(el, e.body, scope, flat, e.span)
    mask = Generic((flat,), _conjunction(el, e.filters, scope), span=e.span)
    kept = folding.known(mask)
    if kept is None:
        effects = len(el.ir.effects)
        per_point = bool(free_vars(mask.body) - {flat})
        if per_point or _reads_state(mask.body):
            # kept elements that differ per point, or per step of a recurrence (a filter over
            # the step's state): reduced where written, never gathered into one array
            where = "an indexed definition: its length would differ from point to point" if per_point else \
                "a recurrence step, over the step's state: its length would differ from step to step"
            return _reduced_where_written(el, reduced_by, e, scope, flat, mask.body, effects,
                                          f"a comprehension filter over run-time data inside {where}",
                                          e.filters[0].span)
        values = _collect(el, e.body, scope, flat, e.span, guard=mask.body)
        # elements read from a step's state, or batched over an enclosing definition's points or
        # a recurrence's steps (the rows of a PartialRead): not one array of kept elements
        batched = isinstance(values, PartialRead)
        if not isinstance(values, TupleVal) and (batched or _reads_state(values)):
            where = "that differ per point of the definition or step around it" if batched else \
                "read from a recurrence step's state: its length would differ from step to step"
            return _reduced_where_written(el, reduced_by, e, scope, flat, mask.body, effects,
                                          f"a comprehension filtered by run-time data, of elements {where}",
                                          e.body.span)
        return values if isinstance(values, TupleVal) else dynamic_length.keep(el, values, mask, e.span)
    positions = np.flatnonzero(kept).astype(np.int32)
    picked = IndexVar("m", Lin(0), Lin(len(positions)), span=e.span)
    position = Read(Const(positions, span=e.span), (IndexRef(picked),), span=e.span, in_bounds=True)
    scope = env.child()
    _bind(el, scope, axes, position, e.span)
    return _collect(el, e.body, _bound_locals(el, e, scope), picked, e.span)


def _reduced_where_written(el, reduced_by: str | None, e: ast.Comprehension, scope, var: IndexVar, kept: Value,
                           effects: int, message: str, span) -> Reduced:
    """The comprehension reduced by its caller's `reduced_by` where it is written (what its
    elements' elaboration left in el.ir.effects from `effects` on dropped: the body is elaborated
    again, reduced), or E011 `message` where its caller keeps the elements."""
    if reduced_by is None:
        raise d.error(d.UNSUPPORTED, message, span,
                      hint="reduce it where it is written: `len([..])`, `sum([..])`, `max([..])` or `min([..])`")
    del el.ir.effects[effects:]
    return Reduced(_reduced(el, reduced_by, e, scope, var, kept))


def _reads_state(v: Value) -> bool:
    """Whether `v` reads a recurrence member inside its loop (a step's state)."""
    return any(isinstance(n, StateRead) for n in walk([v], opaque=(RecValue,)))


def _reduced(el, kind: str, e: ast.Comprehension, scope, var: IndexVar, kept: Value) -> Value:
    """`len` (a count), or the `sum`, `max` or `min` of the body, over the points of `var` where
    `kept` holds (none kept: the reduction's identity, as `max[k](..)` under a guard)."""
    if kind == "len":
        return Reduce("sum", (var,), Const(np.asarray(1, np.int32), span=e.span), kept, span=e.span)
    el.state.guard_depth += 1                 # as under a guard: the body runs where kept holds
    try:
        body = scalar_ops.materialize(el.ev(e.body, scope), None, e.body.span)
    finally:
        el.state.guard_depth -= 1
    if not isinstance(body, Value) or body.rank or body.dtype.is_bool:
        raise d.error(d.TYPE, f"`{kind}` of a filtered comprehension needs numbers, found {describe(body)}",
                      e.body.span)
    return reduced(kind, (var,), body, kept, span=e.span)


def _bound_locals(el, e: ast.Comprehension, scope):
    """The comprehension's local bindings, in order, over its generators' elements."""
    for binding in e.bindings:
        scope = _with_binding(el, binding, scope)
    return scope


def _flat_extent(axes: list, span) -> Lin:
    """The generators' extents multiplied: two run-time sizes make a product size (B * N, as a
    range `0..B * N` has), computed and checked before a run."""
    total = Lin(1)
    for axis in axes:
        total = _times(total, axis.extent, span)
    return total


def _times(a: Lin, b: Lin, span) -> Lin:
    if a.is_const:
        return b.scale(a.const)
    if b.is_const:
        return a.scale(b.const)
    product = size_op("mul", a, b)
    if product is None:
        raise d.error(d.SHAPE, "a comprehension over two sizes computed from data has a length that is "
                      "their product, which is not a size known before a run", span)
    return product


def _bind(el, scope, axes: list, flat: Value, span) -> None:
    """Bind each generator to its element at the flat row-major position `flat`."""
    stride = Lin(1)
    for axis in reversed(axes):
        coord = flat if stride == 1 else scalar_ops.apply("div", [flat, size_value(stride)], span)
        if axis is not axes[0]:
            coord = scalar_ops.apply("rem", [coord, size_value(axis.extent)], span)
        _bind_element(el, scope, axis.gen, axis.element(el, coord))
        stride = _times(stride, axis.extent, span)


def _conjunction(el, filters: list, scope):
    cond = None
    for f in filters:
        c = scalar_ops.materialize(el.ev(f, scope), BOOL, f.span)
        if not isinstance(c, Value) or c.rank or c.dtype != BOOL:
            raise d.error(d.TYPE, f"a comprehension filter must be a bool, found {describe(c)}", f.span)
        cond = c if cond is None else scalar_ops.apply("and", [cond, c], f.span)
    return cond


def _collect(el, body_expr, scope, var: IndexVar, span, guard=None):
    """The body at every point of `var` (where `guard` holds): scalars give a vector, rows (and
    tuples of numbers, as rows) a table with one row per point."""
    effects = len(el.ir.effects)
    body = el.ev(body_expr, scope)
    _over_all_points(el, effects, var, guard)
    if isinstance(body, TupleVal) and not body.items:
        return body                   # unit elements: their effects are what they are for
    if isinstance(body, TupleVal):
        rows = stacking.tuple_rows([body], span)
        if rows is None:
            raise d.error(d.UNSUPPORTED, f"elements {describe(body)} over run-time data: a tuple stored as "
                          "a row needs fields of one type", span, hint="convert the fields to one type "
                          "with `as`, or write one comprehension per field")
        body = rows[0]
    if isinstance(body, ListVal) or not isinstance(body, (Value, Weak, PartialRead)):
        raise d.error(d.UNSUPPORTED, f"elements of {describe(body)} need their collections known at "
                      "build time", span)
    if not tensors.is_array(body):
        return batch_over_outer_indices(Generic((var,), scalar_ops.materialize(body, None, span), span=span),
                                        el.state.step_ranges)
    row = body if isinstance(body, PartialRead) else tensors.whole(body, span)
    within = tuple(IndexVar(f"c{k}", Lin(0), n) for k, n in enumerate(row.shape))
    element = tensors.read(row, [IndexRef(v) for v in within], span, el.state, "")
    return batch_over_outer_indices(Generic((var,) + within, element, span=span), el.state.step_ranges)


def _over_all_points(el, first: int, var: IndexVar, guard) -> None:
    """Effects of the body happen for every element: an assert checks all of them at once (a
    print of each element is E011 there)."""
    point_asserts.hold_at_every_point(el, first, (var,), guard)

