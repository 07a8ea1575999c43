"""Indexed definitions, reductions and where clauses (LANGUAGE.md section 3).

A definition's clauses are elaborated with each declared index bound to an `IndexRef`. Index
ranges not written in the source are inferred from the reads in the body (`A[i, k]` gives `i`
the first axis of A); conflicting reads are an E004 naming both. Several clauses of one name
form a `Piecewise` value whose extent along each axis is the largest end among its clauses;
guarded ones must cover each point once (einc.semantics.forms.guarded_clauses).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from einc import diagnostics as d
from einc.ir import affine, clamped
from einc.ir.evaluate import reduction_identity
from einc.ir.nodes import (Assert, Clause, Const, Generic, IndexRef, IndexVar, Piecewise, Reduce, StateRead, Value,
                           fresh_index_vars, is_folding_constant, reduced, size_value, walk)
from einc.ir.types import BOOL, Lin
from einc.semantics.forms import guarded_clauses, point_asserts
from einc.semantics.core import scalar_ops
from einc.semantics.core.bounds import check_reads
from einc.semantics.core.state import Candidate, InferenceFrame
from einc.semantics.core import tensors
from einc.semantics.core.tensors import batch_over_outer_indices, batch_piecewise_over_outer_indices
from einc.semantics.core.values import PartialRead, TupleVal, Weak, describe
from einc.syntax import ast


@dataclass
class ClauseResult:
    """One elaborated clause before the clauses are combined."""
    node: ast.IndexedLet
    axes: list            # per axis: IndexVar, or an int literal point
    body: object          # scalar Value or Weak
    guard: object         # bool Value or None


def define(el, clauses: list, env):
    """Elaborate all clauses of one indexed definition into one value."""
    first = clauses[0]
    results = [clause(el, c, env) for c in clauses]
    dtype = clause_dtype(results, first.name, first.span)
    bodies = [scalar_ops.materialize(r.body, dtype, r.node.span) for r in results]
    resolve_hulls(el.state)
    for r, body in zip(results, bodies):
        r.body = body
        check_reads(body, r.guard, el.state, r.node.span)
    if len(results) == 1 and _is_plain(results[0]):
        r = results[0]
        body, guard = _decided_guard("sum", r.body, r.guard)      # a guarded-out point is 0
        return batch_over_outer_indices(Generic(tuple(r.axes), body, guard, span=r.node.span), el.state.step_ranges)
    value, at = batch_piecewise_over_outer_indices(_piecewise(results, dtype, first.span), el.state.step_ranges)
    if len(results) > 1 and any(r.guard is not None for r in results):
        value = guarded_clauses.combine(el, value, first.name)
    return PartialRead(value, at, first.span) if at else value


def clause(el, node: ast.IndexedLet, env, step_var: IndexVar | None = None, shape: tuple = ()) -> ClauseResult:
    """Elaborate one clause. With `step_var` (a recurrence), the first index is the loop's
    step: it must have an explicit range, and its reads see `step_var`'s coordinate. `shape`:
    the recurrence member's extents known so far (None where unknown), which an index that no
    read bounds takes last (`let P[0, i, j] = if i == j { 1.0 } else { 0.0 };`)."""
    scope = env.child()
    axes, pending, clause_step, range_guards = [], [], None, []
    for k, slot in enumerate(_expand_rest(el, node.slots, node.value, env)):
        if isinstance(slot, ast.IndexLiteral):
            axes.append(slot.value)
            continue
        _refuse_an_integer_as_a_point(el, slot, env)
        var = _declared_var(el, slot, scope, (step_var, clause_step), range_guards)
        if step_var is not None and k == 0:
            if var.extent is None and shape and shape[0] is not None:
                var = IndexVar(slot.name, Lin(0), shape[0], span=slot.span)    # from the member's reads
            if var.extent is None:
                raise d.error(d.SHAPE, f"the recurrence index `{slot.name}` needs an explicit range",
                              slot.span, hint=f"e.g. `{slot.name} in 1..T`")
            scope.bind(slot.def_id, IndexRef(step_var, span=slot.span))
            axes.append(var)
            clause_step = var
            continue
        if var.extent is None:
            pending.append(var)
        scope.bind(slot.def_id, IndexRef(var, span=slot.span))
        axes.append(var)
    frame = InferenceFrame(pending)
    for k, var in enumerate(axes):
        if any(var is p for p in pending) and k < len(shape) and shape[k] is not None:
            frame.own_candidates[var] = [Candidate(shape[k], var.span, f"the clauses of `{node.name}` (axis {k})")]
    el.state.frames.append(frame)
    effects = len(el.ir.effects)
    try:
        with _clause_steps(el.state, step_var, clause_step):
            # ranges that depend on the step guard the where-clauses' reads as the body's: both
            # run over the hull of those ranges (`where c = x[i + l]` for i in 0..N - l)
            el.state.guard_depth += bool(range_guards)
            try:
                guard = where_clauses(el, node.wheres, scope)
                el.state.guard_depth += guard is not None
                # the body's run-time checks apply where the guard lets it run, as in an `if`'s
                # branch; a guard holding a reduction (whose range may wait for its hull) does not
                guarded = isinstance(guard, Value) and not any(isinstance(n, Reduce) for n in walk([guard]))
                if guarded:
                    el.state.branch_conditions.append((guard, True))
                try:
                    body = el.ev(node.value, scope)
                finally:
                    el.state.guard_depth -= guard is not None
                    if guarded:
                        el.state.branch_conditions.pop()
            finally:
                el.state.guard_depth -= bool(range_guards)
            point = [step_var if v is clause_step else v for v in axes if isinstance(v, IndexVar)]
            point_asserts.hold_at_every_point(el, effects, tuple(point), guard)
    finally:
        el.state.frames.pop()
    frame.resolve(el.state.dependent_ranges)
    if tensors.is_array(body):
        body = _element_on_value_axes(el, body, axes, node)
    if not isinstance(body, (Value, Weak)) or body.rank:
        tuple_hint = (f"define one array per component (`{node.name}_0[..] = ...; {node.name}_1[..] = ...;`), "
                      "or give the value one more axis" if isinstance(body, TupleVal) else "")
        raise d.error(d.SHAPE, f"the value of `{node.name}[..]` at one point must be a number, "
                      f"found {describe(body)}", node.value.span, hint=tuple_hint)
    if range_guards:
        body = _zero_outside(range_guards, body, node.value.span)
    return ClauseResult(node, axes, body, guard)


def _zero_outside(range_guards: list, body, span):
    """A recurrence clause's points outside its ranges that depend on the step (`j in 0..N + 1
    - u`, a node axis shrinking each step) are 0 (false for bools), as points no clause covers are."""
    inside = range_guards[0]
    for g in range_guards[1:]:
        inside = scalar_ops.apply("and", [inside, g], span)
    boolean = body.kind == "bool" if isinstance(body, Weak) else body.dtype.is_bool
    zero = Weak(np.asarray(False), "bool") if boolean else Weak(np.asarray(0), "int")
    return scalar_ops.apply("select", [inside, body, zero], span)


def _element_on_value_axes(el, value, axes: list, node: ast.IndexedLet):
    """A clause whose value is an array defines the axes after those it names, one per axis of
    the value (`let x[0] = x0;` is x[0, a] = x0[a]; `let h[t in 1..T] = cell(h[t - 1], X[t]);`):
    appends their variables to `axes` and returns the value's element at them."""
    span = node.value.span
    vars_ = fresh_index_vars(tensors.shape_only(value, span).shape, "v")
    axes.extend(vars_)
    return tensors.read(value, [IndexRef(v, span=span) for v in vars_], span, el.state, node.name)


@contextlib.contextmanager
def _clause_steps(state, step_var: IndexVar | None, clause_step: IndexVar | None):
    """While a recurrence clause is elaborated, its step runs over the clause's own steps: reads
    are checked there, and tensors computed in a step are batched over a copy of that range
    (`let l[v] = x[t - 1, v]` in the clause for t in 2..6 reads x at rows 1..4, not from -1)."""
    if clause_step is None:
        yield
        return
    saved = step_var.lo, step_var.extent
    step_var.lo, step_var.extent = clause_step.lo, clause_step.extent
    state.step_ranges[step_var] = IndexVar(step_var.name, clause_step.lo, clause_step.extent, span=clause_step.span)
    try:
        yield
    finally:
        step_var.lo, step_var.extent = saved
        del state.step_ranges[step_var]


def _refuse_an_integer_as_a_point(el, slot, env) -> None:
    """E004 for a bare name in a declaration bracket that names an integer scalar in scope
    (`let V[u in 1..T, I] = ..;` after `let I = 80;`): it declares a new index over the whole
    axis, so the clause meant for the point I silently overwrote every point."""
    if slot.shadows is None or slot.range is not None:
        return
    try:
        value = el.lookup(slot.shadows, slot.name, slot.span, env)
    except d.CompileError:
        return
    integer = value.kind == "int" if isinstance(value, Weak) else \
        isinstance(value, Value) and value.dtype.is_int and not value.dtype.is_bool
    if integer and value.rank == 0:
        raise d.error(d.SHAPE, f"`{slot.name}` is an integer value here: a bare name in a declaration bracket "
                      "declares a new index over the whole axis, not the point it names", slot.span,
                      hint=f"for that one point write a range, `i in {slot.name}..{slot.name} + 1`; "
                      "for a new index choose another name")


def _declared_var(el, slot, env, steps: tuple, range_guards: list) -> IndexVar:
    """The index a definition's slot declares. In a recurrence clause (`steps`: the group's
    step and the clause's), a range may depend on the step: the index runs over its hull across
    the clause's steps, and the test of the range at each step goes to `range_guards`."""
    if slot.range is None:
        return IndexVar(slot.name, Lin(0), None, span=slot.span)
    lo, hi = range_bounds(el, slot.range, env)
    step, clause_step = steps
    if not (lo.keys_are_indices or hi.keys_are_indices):
        return IndexVar(slot.name, lo.lin, extent(lo, hi), span=slot.span)
    if step is None or any(k is not step for b in (lo, hi) for k in b.lin.keys() if isinstance(k, IndexVar)):
        raise d.error(d.SHAPE, "a declared index range cannot depend on another index, except a "
                      "recurrence's step", slot.range.span,
                      hint="write the whole range and choose the value with `if`")
    over = {step: Lin.of(clause_step)}
    first, last = affine.bounds(lo.lin.substitute(over))[0], affine.bounds(hi.lin.substitute(over))[1]
    var = IndexVar(slot.name, first, extent(Bound(first, None), Bound(last, None)), span=slot.span)
    ref = IndexRef(var, span=slot.span)
    range_guards.append(scalar_ops.apply("and", [scalar_ops.apply("ge", [ref, lo.value], slot.span),
                                                 scalar_ops.apply("lt", [ref, hi.value], slot.span)], slot.span))
    return var


@dataclass
class Bound:
    lin: Lin                           # or a clamped.Clamp: a min or max naming an index
    value: Value
    of_input_sizes: bool = False       # written with input dims or shapes (fixed by --dim or not)

    @property
    def keys_are_indices(self) -> bool:
        return any(isinstance(k, IndexVar) for k in self.lin.keys())


def extent(lo: Bound, hi: Bound) -> Lin:
    """How many values `lo..hi` holds: none when it is reversed (`9..4`), as in Rust. A range
    written with input sizes keeps its extent, which the size checks require to be >= 0
    (passes.size_facts): there a reversed range means inputs too small for the program."""
    n = hi.lin - lo.lin
    if n.is_const and not (lo.of_input_sizes or hi.of_input_sizes):
        return Lin(max(n.const, 0))
    return n


def range_bounds(el, rng: ast.Range, env, clamps: bool = False, data: bool = False) -> tuple[Bound, Bound]:
    """The ends of `lo..hi` as affine forms; with `clamps`, a min or max (einc.ir.clamped) of
    such that names an index, which only a reduction over a range that depends on outer
    indices takes (its hull's ends are Lins); with `data`, an end computed from run-time data
    (`row_ptr[i]`) is a Bound without a Lin, which only a reduction's range takes."""
    if rng.lo is None or rng.hi is None:
        raise d.error(d.SHAPE, "an index range needs both ends", rng.span)
    lo, hi = _bound(el, rng.lo, env, clamps, data), _bound(el, rng.hi, env, clamps, data)
    if rng.inclusive:
        hi = Bound(None if hi.lin is None else hi.lin + 1,
                   scalar_ops.apply("add", [hi.value, Weak(np.asarray(1), "int")], rng.span), hi.of_input_sizes)
    return lo, hi


def _bound(el, expr, env, clamps: bool, data: bool = False) -> Bound:
    v = scalar_ops.materialize(el.ev(expr, env), None, expr.span)
    integer = isinstance(v, Value) and v.rank == 0 and v.dtype.is_int
    lin = clamped.clamp_of(v) if integer else None
    if lin is None and data and integer:
        return Bound(None, v)
    if lin is None:
        raise _not_affine(v, expr)
    if isinstance(lin, clamped.Clamp):
        _check_clamp(lin, clamps, expr.span)
    sizes = any(getattr(getattr(n, "def_id", None), "kind", None) in ("dim", "input") for n in ast.iter_nodes(expr))
    return Bound(lin, v, sizes)


def _not_affine(v, expr) -> d.CompileError:
    """E004 for a bound that is no affine form; one computed from run-time data (`0..n` with `n`
    an input) says what to write instead, as a range's extent must be known before a run."""
    if isinstance(v, Value) and v.rank == 0 and v.dtype.is_int and not _names_an_index(expr):
        n = expr.name if isinstance(expr, ast.Name) else "n"
        return d.error(d.SHAPE, "a range bound cannot be a value computed at run time: ranges are "
                       "built from sizes and constants, known before a run", expr.span,
                       hint=f"keep the axis's whole range and guard it: `sum[i](x[i] where i < {n})`, "
                       f"`let y[i] = if i < {n} {{ .. }} else {{ 0.0 }};`, or `[x[i] | i in 0..N, i < {n}]` "
                       f"for the first {n} elements")
    return d.error(d.SHAPE, "a range bound must be an integer built from sizes, constants "
                   "and indices with + - and * by a constant, min and max", expr.span)


def _names_an_index(expr) -> bool:
    return any(getattr(getattr(n, "def_id", None), "kind", None) in ("index", "rest", "generator")
               for n in ast.iter_nodes(expr))


def _check_clamp(bound, clamps: bool, span) -> None:
    """A min or max that is not a size (einc.ir.affine.size_op) names an index, which only a
    reduction's range takes (over its hull), or a length computed from data, which none does:
    the checks before a run do not know it."""
    if not any(isinstance(k, IndexVar) for k in bound.keys()):
        raise d.error(d.SHAPE, f"a range bound cannot take a min or max of a length computed from "
                      f"data ({bound!r})", span, hint="write the range with one end and a `where` guard")
    if not clamps:
        raise d.error(d.SHAPE, f"a range bound that is a min or max of an index ({bound!r}) is taken "
                      "only by a reduction's range", span, hint="write the range with one end and a `where` guard")


def _expand_rest(el, slots_in: list, value, env) -> list:
    """A definition's slots, or a reduction's indices, with each `..b` replaced by one index
    per axis it stands for (as many as the first read of it in `value` leaves)."""
    slots = []
    for slot in slots_in:
        if isinstance(slot, ast.RestIndex):
            rank = el.rest_rank(slot, value, env)
            vars_ = [ast.IndexVar(f"{slot.name}{k}", None, span=slot.span) for k in range(rank)]
            for k, v in enumerate(vars_):
                v.def_id = (slot.def_id, k)
            el.rest_slots[slot.def_id] = vars_
            slots += vars_
        else:
            slots.append(slot)
    return slots


def where_clauses(el, wheres: list, scope):
    """Bind `where` locals in `scope`; return the conjunction of its guards (or None)."""
    guard = None
    for w in wheres:
        if isinstance(w, ast.WhereBind):
            el.bind(scope, w.def_id, el.ev(w.value, scope))
            continue
        cond = scalar_ops.materialize(el.ev(w.cond, scope), BOOL, w.span)
        if isinstance(cond, Value) and cond.rank:
            raise d.error(d.TYPE, "a where guard must be a bool per point", w.span)
        guard = cond if guard is None else scalar_ops.apply("and", [guard, cond], w.span)
    return guard


def clause_dtype(results: list, name: str, span):
    """The one type of a definition's (or a recurrence member's) clauses: that of the typed
    ones, else what their literals combine to (a float with `let y[0] = 0.0; let y[1] = -1;`).
    A clause made of literals alone (`if i == 0 { 1.0 } else { 0.0 }`) takes the others' type."""
    typed = scalar_ops.typed_values([r.body for r in results])
    if not typed:
        return scalar_ops.literal_dtype([r.body for r in results], span)
    dtype = typed[0].dtype
    for t in typed[1:]:
        if t.dtype != dtype:
            raise d.error(d.TYPE, f"clauses of `{name}` have types {dtype} and {t.dtype}", t.span or span)
    return dtype


def _is_plain(r: ClauseResult) -> bool:
    return all(isinstance(a, IndexVar) and a.lo == Lin(0) for a in r.axes)


def _piecewise(results: list, dtype, span) -> Piecewise:
    rank = len(results[0].axes)
    for r in results:
        if len(r.axes) != rank:
            raise d.error(d.SHAPE, f"clauses of `{r.node.name}` have {rank} and {len(r.axes)} indices",
                          r.node.span)
    shape = tuple(largest_end([axis_end(r.axes[k]) for r in results], span) for k in range(rank))
    clauses = tuple(_clause_value(r) for r in results if not is_empty(r.axes))
    return Piecewise(dtype, shape, clauses, span=span, name=results[0].node.name)


def axis_end(axis) -> Lin:
    """Where a clause's point or range along one axis ends. An empty range (`t in 11..4`)
    defines no point, so it reaches no row: it ends at 0, not at 11."""
    if isinstance(axis, int):
        return Lin(axis + 1)
    return Lin(0) if axis.is_empty else axis.lo + axis.extent


def is_empty(axes) -> bool:
    """Whether a clause's domain holds no point: one of its ranges is empty."""
    return any(not isinstance(a, int) and a.is_empty for a in axes)


def largest_end(ends: list, span) -> Lin:
    """The largest of the clause ends along one axis. When sizes make it undecidable (a point
    at 2 against a range ending at N) the range's symbolic end wins: programs are written for
    inputs long enough to reach their literal points."""
    best = ends[0]
    for e in ends[1:]:
        diff = e - best
        if affine.surely_nonnegative(diff):
            best = e
        elif not affine.surely_nonnegative(-diff):
            if best.is_const == e.is_const:
                raise d.error(d.SHAPE, f"cannot tell which clause reaches further: {best!r} or {e!r}", span)
            best = best if e.is_const else e
    return best


def _clause_value(r: ClauseResult) -> Clause:
    vars_, offsets = [], []
    for axis in r.axes:
        if isinstance(axis, int):
            vars_.append(IndexVar("p", Lin(axis), Lin(1)))
            offsets.append(Lin(axis))
        else:
            vars_.append(axis)
            offsets.append(axis.lo)
    return Clause(tuple(offsets), Generic(tuple(vars_), r.body, r.guard, span=r.node.span))


REDUCTION_OPS = {"sum": "add", "prod": "mul", "max": "max", "min": "min", "all": "and", "any": "or"}


def reduction(el, node: ast.Reduction, env):
    scope = env.child()
    vars_, pending, hull_guards, data_bounds = [], [], [], []
    for iv in _expand_rest(el, node.indices, node.body, env):
        var, index = _reduction_var(el, iv, env, hull_guards, data_bounds)
        if iv.range is None or any(var is v for v, _, _ in data_bounds):
            pending.append(var)         # no range, or one with an end computed from data
        scope.bind(iv.def_id, index)
        vars_.append(var)
    frame = InferenceFrame(pending, data_ranged=frozenset(v for v, _, _ in data_bounds))
    el.state.frames.append(frame)
    in_hull = bool(hull_guards)
    user_guarded = any(isinstance(w, ast.WhereGuard) for w in node.wheres)
    # a range that depends on outer indices runs over its hull behind guards: those guards keep
    # the where clauses inside the range as well as the body
    el.state.hull_depth += in_hull
    effects = len(el.ir.effects)
    try:
        guard = where_clauses(el, node.wheres, scope)
        for g in hull_guards:
            guard = g if guard is None else scalar_ops.apply("and", [guard, g], node.span)
        el.state.guard_depth += user_guarded
        try:
            body = el.ev(node.body, scope)
        finally:
            el.state.guard_depth -= user_guarded
        point_asserts.hold_at_every_point(el, effects, tuple(vars_), guard)
    finally:
        el.state.hull_depth -= in_hull
        el.state.frames.pop()
    frame.resolve(el.state.dependent_ranges)
    for var, lo, hi in data_bounds:
        _check_data_range(el, var, lo, hi)
    body, guard = _decided_guard(node.op, _reduction_body(node, body), guard)
    result = reduced(node.op, tuple(vars_), body, guard, span=node.span)
    if not el.state.frames:
        # outermost: every range it depends on is known now
        resolve_hulls(el.state)
        check_reads(result, None, el.state, node.span)
    return result


def _decided_guard(kind: str, body: Value, guard):
    """A guard known at build time: true is no guard; false leaves every point the identity, so
    the body is not computed at all (see einc.ir.nodes.decided_by_a_constant)."""
    if guard is None or not is_folding_constant(guard) or guard.array.ndim:
        return body, guard
    if bool(guard.array):
        return body, None
    return Const(np.asarray(reduction_identity(kind, body.dtype)), span=body.span), None


def _reduction_body(node: ast.Reduction, body):
    if node.op in ("all", "any"):
        body = scalar_ops.materialize(body, BOOL, node.body.span)
    else:
        body = scalar_ops.materialize(body, None, node.body.span)
        if isinstance(body, Value) and body.dtype.is_bool:
            raise d.error(d.TYPE, f"`{node.op}` needs numbers, found bool", node.body.span,
                          hint="use `all` or `any` for bool values")
    if not isinstance(body, Value) or body.rank:
        raise d.error(d.SHAPE, f"a reduction body must be a scalar per point, found {describe(body)}",
                      node.body.span)
    return body


def _reduction_var(el, iv: ast.IndexVar, env, hull_guards: list, data_bounds: list) -> tuple[IndexVar, Value]:
    """A reduction index and the value its name stands for. A range that depends on outer
    indices is iterated over its hull (the extreme values over the outer ranges) and narrowed by
    a guard, unless it is a window of constant width (`u in max(0, i - 2)..min(H, i + 3)`): that
    one runs over its width from the window's unclamped start, the name standing for
    `start + offset`, behind the same guard, so a point visits 5 values, not H. A range with an
    end computed from data (a CSR row's `k in row_ptr[i]..row_ptr[i + 1]`) runs over the range
    the body's reads give it, as an index written without a range, narrowed by the same guard;
    it adds (index, lo, hi) to `data_bounds`. Every row visits that whole range
    (docs/DECISIONS.md, Sizes)."""
    if iv.range is None:
        var = IndexVar(iv.name, Lin(0), None, span=iv.span)
        return var, IndexRef(var, span=iv.span)
    lo, hi = range_bounds(el, iv.range, env, clamps=True, data=True)
    data = lo.lin is None or hi.lin is None
    if not data and not lo.keys_are_indices and not hi.keys_are_indices:
        var = IndexVar(iv.name, lo.lin, extent(lo, hi), span=iv.span)
        return var, IndexRef(var, span=iv.span)
    window = None if data else _constant_window(lo.lin, hi.lin)
    if window is not None:
        start, width = window
        var = IndexVar(iv.name, Lin(0), Lin(width), span=iv.span)
        index = scalar_ops.apply("add", [_lin_value(start, iv.span), IndexRef(var, span=iv.span)], iv.span)
        # the bounds checks at the real range's ends see the index the offset stands for
        named = IndexVar(iv.name, Lin(0), None, span=iv.span)
        el.state.hull_ranges[named] = (lo.lin, hi.lin)
        el.state.window_starts[var] = (named, start)
    else:
        var = IndexVar(iv.name, Lin(0), None, span=iv.span)
        index = IndexRef(var, span=iv.span)
        if data:
            data_bounds.append((var, lo.value, hi.value))
        else:
            el.state.dependent_ranges.append((var, lo.lin, hi.lin))
            el.state.hull_steps[var] = {step: Lin.of(copy) for step, copy in el.state.step_ranges.items()}
    hull_guards.append(scalar_ops.apply("ge", [index, lo.value], iv.span))
    hull_guards.append(scalar_ops.apply("lt", [index, hi.value], iv.span))
    return var, index


def _constant_window(lo, hi):
    """(start, width) when `lo..hi` always lies in `start..start + width` for a constant
    width: lo is start or a max of it, hi a Lin at a constant distance from start or a min of
    one; the narrowest such pair. None otherwise (`0..i + 1` grows with i)."""
    starts = lo.args if isinstance(lo, clamped.Clamp) and lo.op == "max" else (lo,)
    ends = hi.args if isinstance(hi, clamped.Clamp) and hi.op == "min" else (hi,)
    best = None
    for start in starts:
        for end in ends:
            if isinstance(start, Lin) and isinstance(end, Lin) and (end - start).is_const:
                width = (end - start).const
                if width > 0 and (best is None or width < best[1]):
                    best = (start, width)
    return best


def _lin_value(lin: Lin, span) -> Value:
    """An i32 value for a Lin over index variables and sizes."""
    total = size_value(Lin(lin.const, {k: c for k, c in lin.terms.items() if not isinstance(k, IndexVar)}), span)
    for key, c in lin.terms.items():
        if isinstance(key, IndexVar):
            term = IndexRef(key, span=span)
            if c != 1:
                term = scalar_ops.apply("mul", [Const(np.asarray(c, np.int32), span=span), term], span)
            total = scalar_ops.apply("add", [total, term], span)
    return total


def _check_data_range(el, var: IndexVar, lo: Value, hi: Value) -> None:
    """A run-time check that a range with an end from data lies inside the range `var` runs over
    (the one its reads gave it), or is empty: past it the body's reads would be out of bounds,
    which the guard alone would skip in silence (a CSR `row_ptr` past the number of entries)."""
    start, stop = size_value(var.lo), size_value(var.lo + var.extent)
    inside = scalar_ops.apply("and", [scalar_ops.apply("ge", [lo, start], var.span),
                                      scalar_ops.apply("le", [hi, stop], var.span)], var.span)
    holds = scalar_ops.apply("or", [scalar_ops.apply("ge", [lo, hi], var.span), inside], var.span)
    for test, taken in el.state.branch_conditions:      # inside an `if`'s branch it is checked only where it runs
        if any(isinstance(v, StateRead) for v in walk([test])):
            continue        # a recurrence's state is not read by a check (point_asserts): checked everywhere
        skipped = scalar_ops.apply("not", [test], var.span) if taken else test
        holds = scalar_ops.apply("or", [skipped, holds], var.span)
    message = f"assertion failed at {var.span}: the range of `{var.name}` runs past the axes its reads index"
    el.ir.effects.append(Assert(holds, message, span=var.span))


def resolve_hulls(state) -> None:
    """Give each outer-dependent reduction range whose outer extents are known its hull. The
    others stay pending: a recurrence in a function called per point resolves its own ranges
    while an argument's range still waits for the caller's inferred index (`sum[j in i..6]`).
    Outer ranges come first in the list, so one pass also settles ranges depending on them.
    A range that reads a recurrence's step spans the steps of the clause it is written in, not
    those of the clause being elaborated when it is resolved (State.hull_steps)."""
    waiting = []
    for var, lo, hi in state.dependent_ranges:
        if not (_extents_known(lo) and _extents_known(hi)):
            waiting.append((var, lo, hi))
            continue
        steps = state.hull_steps.pop(var, {})
        lo_min, hi_max = clamped.low(lo.substitute(steps)), clamped.high(hi.substitute(steps))
        if lo_min is None or hi_max is None:
            raise d.error(d.SHAPE, f"the hull of `{var.name} in {lo!r}..{hi!r}` over the outer indices "
                          "needs a min or max of a length computed from data", var.span,
                          hint="write the range with one end and a `where` guard")
        var.lo, var.extent = lo_min, hi_max - lo_min
        state.hull_ranges[var] = (lo, hi)
    state.dependent_ranges[:] = waiting


def _extents_known(lin: Lin) -> bool:
    return all(getattr(key, "extent", 0) is not None for key in lin.keys())

