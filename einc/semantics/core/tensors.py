"""Arrays in expressions: element reads, partial reads, and point-by-point application.

A lazy Jacobian (`@y / @x` for an array y, see derivatives) is an array too: reading it
computes only the entries read, any other use the dense Jacobian.

`lift` is how whole-array arithmetic and elementwise calls of scalar functions work: the
scalar rule is applied to one element of each array inside a fresh `Generic`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import (Clause, Compact, Const, Generic, IndexRef, IndexVar, Op, Piecewise, Read, RecValue, Stack,
                           StateRead, Value,
                           body_vars, fresh_index_vars, free_vars, is_folding_constant, size_value, walk)
from einc.ir.rebuild import rebuild
from einc.ir.types import I32, Lin, shape_str
from einc.autodiff.jacobian import SLICE, jacobian, jacobian_read
from einc.autodiff.substitute import Substitution
from einc.semantics.core import scalar_ops
from einc.semantics.core.state import State
from einc.semantics.core.values import LazyJacobian, PartialRead, StepRow, Traced, Weak, describe


def is_array(v) -> bool:
    return (isinstance(v, Value) and v.rank > 0) or (isinstance(v, Weak) and v.rank > 0) \
        or isinstance(v, (PartialRead, LazyJacobian))


def whole(v, span=None):
    """A program-level array value for `v` (materialising literals and partial reads)."""
    if isinstance(v, Weak) and v.rank > 0:
        return scalar_ops.materialize(v, None, span)
    if isinstance(v, PartialRead):
        return _slice(v, span)
    if isinstance(v, LazyJacobian):
        return jacobian(v.y, v.x, v.span, v.rules)
    return v


def shape_only(v, span=None):
    """`v` for questions about its shape and dtype alone: a sub-array answers from its base
    without being read whole, so `len(x[i])` works inside an indexed definition over `i`."""
    return v if isinstance(v, PartialRead) else whole(v, span)


def lift(rule, args: list, span, state: State, hint_dtypes: bool = True):
    """Apply the scalar `rule(*scalars)` point by point to array arguments of one shape. A row
    of an enclosing definition (`x[i]` inside `let y[i, j] = f(x[i])[j]`) is read through, and
    the result batched over that definition's indices."""
    arrays = [a if isinstance(a, (PartialRead, Weak)) else whole(a, span) if is_array(a) else a
              for a in args]
    if hint_dtypes:     # a literal array takes the dtype of a typed one: f64 row + [1.0, 2.0]
        arrays = _type_weak_arrays(arrays, span)
    arrays = [whole(a, span) if isinstance(a, Weak) and a.rank else a for a in arrays]
    tensors = [a for a in arrays if isinstance(a, (Value, PartialRead)) and a.rank > 0]
    shape = tensors[0].shape
    for t in tensors[1:]:
        if t.shape != shape:
            notes = [d.Label(x.span, f"this is {describe(x)}") for x in (tensors[0], t) if x.span]
            raise d.error(d.SHAPE, f"array shapes differ: {describe(tensors[0])} and {describe(t)}",
                          span, hint="whole-array arithmetic needs equal shapes; use an indexed "
                          "definition to combine arrays of other shapes", notes=notes)
    vars_ = fresh_index_vars(shape)
    refs = tuple(IndexRef(v) for v in vars_)
    scalars = [_element(a, refs, span, state) if any(a is t for t in tensors) else a for a in arrays]
    return batch_over_outer_indices(Generic(vars_, scalar_ops.materialize(rule(*scalars), None, span), span=span),
                                    state.step_ranges)


def _type_weak_arrays(args: list, span) -> list:
    """Literal arrays take the dtype of a typed operand they can take (a select's bool
    condition gives none to its float branches); else an int one beside a float one is a float,
    as an int literal beside a float literal is (`if c { [1, 2] } else { [0.5, 0.5] }`)."""
    dtypes = [a.dtype for a in args if isinstance(a, (Value, PartialRead))]
    kinds = {a.kind for a in args if isinstance(a, Weak) and a.rank > 0}

    def typed(w: Weak):
        fits = [t for t in dtypes if scalar_ops.kind_of(t) == w.kind or (w.kind == "int" and t.is_float)]
        if not fits and w.kind == "int" and "float" in kinds:
            fits = [scalar_ops.DEFAULT["float"]]
        return scalar_ops.materialize(w, fits[0] if fits else None, span)
    return [typed(a) if isinstance(a, Weak) and a.rank > 0 else a for a in args]


def _element(t, refs: tuple, span, state: State) -> Value:
    if isinstance(t, PartialRead):
        return read(t, list(refs), span, state, "")
    return Read(t, refs, span=t.span, in_bounds=True)


def batch_over_outer_indices(g: Generic, step_ranges: dict):
    """A definition whose body still reads indices of an enclosing definition (it is inside a
    function called per point, as in `let P[n, c] = softmax(L[n])[c];`) is computed once for
    every value of those indices, as leading axes, and read at the current point: the way vmap
    batches. The enclosing indices become the kernel's own, so their extents (which may be
    inferred later) carry over; a recurrence's step is replaced by its copy in `step_ranges`
    (State.step_ranges), which runs over the steps of the clause being elaborated only. A tensor
    that reads a recurrence's state is that step's own work: batched over the indices of an
    enclosing definition only, never over a step (the recurrence is then batched over those
    indices too, semantics.forms.recurrences.batch_over_outer_indices)."""
    outer, copies = _outer_indices([g], step_ranges)
    if not outer:
        return g
    batched = _batched_generic(g, outer, copies)
    at = tuple(offset_ref(v, copies.get(v, v).lo) for v in outer)
    if not g.vars:      # a scalar per point (a row's sum): its element, not a sub-array of rank 0
        return Read(batched, at, span=g.span, in_bounds=True)
    return PartialRead(batched, at, g.span)


def batch_piecewise_over_outer_indices(p: Piecewise, step_ranges: dict):
    """(batched, at): a piecewise definition inside a function called per point (`let p[t in
    1..T] = ..;` in a function called as `let c[e] = f(x[e]);`), batched as
    batch_over_outer_indices batches one clause: every clause computed for every value of the
    enclosing indices any clause reads, as leading axes of the whole definition, which is then
    read at `at`; (p, ()) when no clause reads one."""
    clauses = [c.value for c in p.clauses]
    outer, copies = _outer_indices(clauses, step_ranges)
    if not outer:
        return p, ()
    lead = tuple(copies.get(v, v) for v in outer)
    batched = tuple(Clause((Lin(0),) * len(lead) + tuple(c.offsets), _batched_generic(c.value, outer, copies))
                    for c in p.clauses)
    return (Piecewise(p.dtype, p.shape, batched, span=p.span, name=p.name, lead=lead),
            tuple(offset_ref(v, copies.get(v, v).lo) for v in outer))


def _outer_indices(generics: list, step_ranges: dict) -> tuple[list, dict]:
    """The indices of an enclosing definition that the bodies and guards of `generics` read
    besides their own, by name, and the copies in `step_ranges` that replace the steps among them."""
    roots = [r for g in generics for r in (g.body, g.guard) if r is not None]
    own = frozenset(v for g in generics for v in g.vars)
    outer = sorted(frozenset().union(*map(free_vars, roots)) - own, key=lambda v: v.name)
    # (a finished recurrence, a RecValue, is read like any tensor; the walk reaches every tensor
    # the body reads, so a definition with no outer index skips it)
    if outer and any(isinstance(v, StateRead) for v in walk(roots, opaque=(RecValue,))):
        outer = [v for v in outer if v not in step_ranges]
    return outer, {v: step_ranges[v] for v in outer if v in step_ranges}


def _batched_generic(g: Generic, outer: list, copies: dict) -> Generic:
    """g with the `outer` indices (steps replaced by their `copies`) as leading axes."""
    body, guard = g.body, g.guard
    if copies:
        renamed = Substitution({v: IndexRef(c) for v, c in copies.items()})
        body, guard = renamed.value(body), None if guard is None else renamed.value(guard)
    return Generic(tuple(copies.get(v, v) for v in outer) + tuple(g.vars), body, guard, span=g.span)


def offset_ref(var: IndexVar, lo: Optional[Lin] = None):
    """The position of `var`'s current coordinate along an axis that starts at `lo` (its own
    `lo` by default)."""
    ref = IndexRef(var)
    lo = var.lo if lo is None else lo
    if lo == Lin(0):
        return ref
    return Op("sub", (ref, size_value(lo)), I32)


def read(base, subs: list, span, state: State, text: str):
    """`base[subs]`: an element (all axes subscripted) or a PartialRead (fewer)."""
    if isinstance(base, PartialRead):
        return read(base.base, list(base.subs) + subs, span, state, text)
    if isinstance(base, LazyJacobian):
        return read_jacobian(base, subs, span, state, text)
    if any(s is None for s in subs):
        raise d.error(d.UNSUPPORTED, "a `:` slice of an array that is not a derivative", span,
                      hint="fewer subscripts give a sub-array: `m[i]` is row i")
    literal = None if any(isinstance(s, Weak) and s.trace is not None for s in subs) \
        else _read_literal(base, subs, span)   # a differentiated subscript stays in the graph
    if literal is not None:
        return literal
    base = whole(base, span)
    if not subs and isinstance(base, (Value, Weak)) and base.rank == 0:
        return base      # `m[..b]` where the rest index stands for no axes
    if not isinstance(base, Value) or base.rank == 0:
        raise d.error(d.TYPE, f"cannot index a value of type {describe(base)}", span)
    if len(subs) > base.rank:
        raise d.error(d.SHAPE, f"{len(subs)} subscripts for an array of rank {base.rank} "
                      f"({describe(base)})", span)
    subs = [subscript(s, span) for s in subs]
    if isinstance(base, StepRow) and len(subs) == base.rank:
        return base.point(subs)
    if len(subs) < base.rank:
        row = PartialRead(base, tuple(subs), span)
        state.note_row_read(row, [text] * len(subs))
        return row
    folded = _fold_const_read(base, subs, span)
    if folded is not None:
        return folded
    r = Read(base, tuple(subs), span=span)
    state.note_read(r, [text] * len(subs))
    return r


def read_jacobian(lazy: LazyJacobian, subs: list, span, state: State, text: str) -> Value:
    """lazy[subs]: fewer subscripts than axes keep the trailing axes whole."""
    if len(subs) > lazy.rank:
        raise d.error(d.SHAPE, f"{len(subs)} subscripts for a derivative of rank {lazy.rank}", span)
    subs = [s if s is SLICE else subscript(s, span) for s in subs]
    subs += [SLICE] * (lazy.rank - len(subs))
    state.note_jacobian_read(_Subscripts(tuple(subs), span), lazy.shape, [text] * len(subs),
                             [k for k, s in enumerate(subs) if s is not SLICE])
    value = not_per_point(jacobian_read(lazy.y, lazy.x, subs, span, lazy.rules), state, span)
    if isinstance(value, Read):
        # an element read under a guard (`if j < 3 { J[i, j] } else { .. }`) is bounds-checked
        # as one, like a tensor's read
        state.note_guards(value)
    return value


def not_per_point(g: Value, state: State, span):
    """A derivative whose tensors read an index of an enclosing definition or reduction (a
    gradient asked for per microbatch inside `sum[mb](..)`, a Jacobian of a function called per
    point) needs each of them batched over that index, as definitions are
    (batch_over_outer_indices; _batch_derivative). A recurrence's step is no such index (a step
    computes its tensors itself)."""
    nodes = walk([g])
    bound = set(state.recurrence_steps) | set(state.step_ranges) | set(state.step_ranges.values())
    for n in nodes:
        if isinstance(n, RecValue):
            # a recurrence's own variables, not the enclosing indices it is batched over
            bound |= {n.group.t_var} | {v for m in n.group.members for c in m.clauses for v in c.vars
                                        if v not in m.batch}
    outer = set().union(*(body_vars(n) - set(n.vars) - bound for n in nodes if isinstance(n, Generic)))
    if outer and not outer & set(state.step_ranges.values()):
        return _batch_derivative(g, sorted(outer, key=lambda v: v.name), span)
    per_point(outer, span, "derivative")
    return g


def _batch_derivative(g: Value, outer: list, span):
    """g with every tensor that reads an `outer` index (or a tensor so batched) computed for
    all its values at once, as leading axes, and read at the current point: the derivative's
    graph batched as batch_over_outer_indices batches one definition."""
    at = tuple(offset_ref(v) for v in outer)
    batched = set()

    def change(v, operands):
        if isinstance(v, Generic):
            reads = free_vars(operands[0]) | (free_vars(operands[1]) if len(operands) > 1 else frozenset())
            if (reads - set(v.vars)) & set(outer):
                new = Generic(tuple(outer) + tuple(v.vars), operands[0], operands[1] if len(operands) > 1 else None,
                              span=v.span)
                batched.add(id(new))
                return new
        elif isinstance(v, Read) and id(operands[0]) in batched:
            return Read(operands[0], at + operands[1:], span=v.span, in_bounds=v.in_bounds)
        elif isinstance(v, (Piecewise, Compact)) and _reads_unbatched(v, set(outer)):
            per_point(set(outer), span, "derivative")       # not entered here, so not batched
        return None

    out = rebuild([g], change, opaque=(Piecewise, Compact, RecValue))[id(g)]
    if id(out) not in batched:
        return out
    return PartialRead(out, at, span) if len(out.vars) > len(outer) else Read(out, at, span=span, in_bounds=True)


def _reads_unbatched(v: Value, outer: set) -> bool:
    """Whether a tensor under v reads an `outer` index it does not run over itself (one the
    function called per point computes, batched with its own axes over it, runs over it)."""
    return any(isinstance(n, Generic) and (body_vars(n) - set(n.vars)) & outer for n in walk([v]))


def per_point(outer, span, what: str = "gradient") -> None:
    if outer:
        names = ", ".join(sorted(f"`{v.name}`" for v in outer))
        raise d.error(d.UNSUPPORTED, f"a {what} whose tensors depend on {names}, an index of an "
                      "enclosing definition or reduction, is not compiled yet", span,
                      hint="differentiate the sum instead: the gradient of `sum[mb](loss(..))` is "
                      "the sum of the per-index gradients; for a Jacobian with respect to a row "
                      "`x[t]`, read the entries of the whole one, `(@y / @x)[i, t, j]`")


@dataclass
class _Subscripts:
    """The subscripts of a read that is no IR Read (of a derivative), for range inference."""
    subs: tuple
    span: object


def subscript(s, span) -> Value:
    """An i32 subscript value (literals and i64 converted)."""
    if isinstance(s, Weak):
        if s.kind != "int" or s.rank:
            raise d.error(d.TYPE, f"a subscript must be an integer, found {describe(s)}", s.span or span)
        return scalar_ops.materialize(s, I32, span)
    if not isinstance(s, Value) or s.rank != 0 or not s.dtype.is_int:
        raise d.error(d.TYPE, f"a subscript must be an integer, found {describe(s)}",
                      getattr(s, "span", None) or span)
    return s if s.dtype == I32 else scalar_ops.cast(s, I32, span)


def _read_literal(base, subs: list, span):
    """An element (or sub-array) of an untyped literal array at constant subscripts stays
    untyped, so `scales[k]` of `[1.0, 0.6]` takes the precision of where it is used."""
    if not isinstance(base, Weak) or not base.rank or len(subs) > base.rank:
        return None
    consts = [s.value if isinstance(s, Weak) else s.array if is_folding_constant(s) else None for s in subs]
    if any(c is None or c.ndim or c.dtype.kind not in "iu" for c in consts):
        return None
    idx = tuple(int(c) for c in consts)
    if any(not 0 <= i < n for i, n in zip(idx, base.value.shape)):
        raise d.error(d.BOUNDS, f"index {list(idx)} is out of bounds for shape {list(base.value.shape)}", span)
    trace = None
    if base.trace is not None:      # `M[0, 0]` of a literal M that a derivative differentiates
        subs = tuple(Const(np.asarray(i, np.int32)) for i in idx)
        trace = Traced(lambda dtype: whole(_element_or_row(base.trace.at(dtype), subs, span), span))
    return Weak(np.asarray(base.value[idx]), base.kind, span, trace)


def _element_or_row(array: Value, subs: tuple, span):
    return Read(array, subs, span=span, in_bounds=True) if len(subs) == array.rank \
        else PartialRead(array, subs, span)


def _fold_const_read(base: Value, subs: list, span):
    if isinstance(base, Stack) and len(subs) == 1 and isinstance(subs[0], Const):
        # `x.shape[k]` with symbolic sizes: the size itself, so it stays affine in ranges
        k = int(subs[0].array)
        if not 0 <= k < len(base.elems):
            raise d.error(d.BOUNDS, f"index {k} is out of bounds for length {len(base.elems)}", span)
        return base.elems[k]
    if not is_folding_constant(base) or not all(is_folding_constant(s) for s in subs):
        return None
    idx = tuple(int(s.array) for s in subs)
    if any(not 0 <= i < n for i, n in zip(idx, base.array.shape)):
        raise d.error(d.BOUNDS, f"index {list(idx)} is out of bounds for shape "
                      f"{list(base.array.shape)}", span)
    return Const(np.asarray(base.array[idx]), span=span)


def _slice(p: PartialRead, span) -> Generic:
    for s in p.subs:
        if free_vars(s):
            raise d.error(d.UNSUPPORTED, "a sub-array used whole inside an indexed definition",
                          span, hint="index every axis, e.g. `m[i, j]`")
    return sub_array(p, span)


def sub_array(p: PartialRead, span) -> Generic:
    """`p` as a tensor over the axes its subscripts leave; one at a point of an enclosing
    definition (`x[t]`) reads that index, as a derivative per point takes it (not_per_point)."""
    vars_ = fresh_index_vars(p.base.shape[len(p.subs):], "s")
    return Generic(vars_, Read(p.base, tuple(p.subs) + tuple(IndexRef(v) for v in vars_), span=span), span=span)


def check_same_shape(a: Value, b: Value, span, what: str) -> None:
    if a.shape != b.shape:
        raise d.error(d.SHAPE, f"{what}: {shape_str(a.shape)} vs {shape_str(b.shape)}", span)
