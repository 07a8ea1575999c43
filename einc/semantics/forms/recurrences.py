"""Recurrences (LANGUAGE.md section 4): detection, grouping, step order and checks.

Indexed definitions of one block that read each other in a cycle (or read themselves) form a
recurrence group, computed by one loop over their first axis (or a later one written after
batch axes: step_axis). Elaboration gives each member a `RecMember`; reads of members inside
the bodies become `StateRead`s, checked here to point backward (an earlier step, an earlier
member of the same step, or an earlier point of the same clause). The storage plan is made
later, once every read of the members is known (einc.passes.storage).
"""
from __future__ import annotations

import contextlib
import itertools

import numpy as np

from einc import diagnostics as d
from einc.ir import affine, clause_order, step_reach
from einc.ir.nodes import (Assert, Generic, IndexRef, IndexVar, Read, RecClause, RecMember, RecurrenceGroup, RecValue, StateRead,
                           Value, free_vars, fresh_index_vars, size_value, step_state_reads, walk)
from einc.ir.state_slices import state_slice
from einc.ir.types import BF16, BOOL, BY_NAME, F16, F32, F64, I32, I64, Lin
from einc.semantics.forms import definitions, guarded_clauses, recurrence_coverage, step_axis
from einc.semantics.core import scalar_ops, tensors
from einc.semantics.core.bounds import check_reads
from einc.semantics.core.state import UnboundIndex
from einc.semantics.core.values import PartialRead, StepRow, Weak
from einc.syntax import ast

MAX_TYPING_ROUNDS = 3
SCALAR_TYPES = (F32, I32, F64, I64, BOOL, F16, BF16)    # the half types last: tried least often
MAX_UNSEEDED = 3                 # 343 typings at most


class RecState:
    """What a member's name means while its group's clauses are elaborated."""

    def __init__(self, member: RecMember, step: IndexVar):
        self.member = member
        self.step = step
        self.slices: dict = {}      # step offset -> the slice, one value however often it is read
        self.defining = None        # while a clause of this member is elaborated: its step's name
        self.defining_rows = False  # ... and whether it defines whole rows (names the step alone)


# ---------------------------------------------------------------- detection

def read_graph(stmts: list) -> dict:
    """def_id -> def_ids of the block's indexed definitions its clauses read."""
    indexed = {s.def_id for s in stmts if isinstance(s, ast.IndexedLet)}
    reads = {did: set() for did in indexed}
    for s in stmts:
        if isinstance(s, ast.IndexedLet):
            for node in ast.iter_nodes([s.value, s.wheres, s.slots]):
                if isinstance(node, ast.Name) and node.def_id in indexed:
                    reads[s.def_id].add(node.def_id)
    return reads


def step_aligned_reads(stmts: list) -> dict:
    """def_id -> the def_ids its clauses read only at `t - c` (c >= 0), t being the reading
    clause's own first index, and that end at the same step: the reads a loop shared by both
    can serve step by step."""
    indexed = {s.def_id for s in stmts if isinstance(s, ast.IndexedLet)}
    aligned = {did: set() for did in indexed}
    other = {did: set() for did in indexed}
    for s in stmts:
        if not isinstance(s, ast.IndexedLet):
            continue
        step = s.slots[0].def_id if isinstance(s.slots[0], ast.IndexVar) else None
        nodes = list(ast.iter_nodes([s.value, s.wheres, s.slots]))
        at_step = {id(n.base) for n in nodes if isinstance(n, ast.Index) and step is not None
                   and _reads_back_along(n, step)}
        for n in nodes:
            if isinstance(n, ast.Name) and n.def_id in indexed:
                (aligned if id(n) in at_step else other)[s.def_id].add(n.def_id)
    ends = _step_ends(stmts)
    return {did: {o for o in aligned[did] - other[did] if ends[did] is not None and ends[did] == ends[o]}
            for did in indexed}


def _step_ends(stmts: list) -> dict:
    """def_id -> where its first axis ends, as a comparable key (None when not known from the
    source). A loop shared by two recurrences runs one number of steps, so only recurrences
    that end at the same step may share it."""
    ends: dict = {}
    for s in stmts:
        if isinstance(s, ast.IndexedLet):
            ends.setdefault(s.def_id, []).append(_first_axis_end(s.slots[0]) if s.slots else None)
    return {did: _definition_end(keys) for did, keys in ends.items()}


def _first_axis_end(slot):
    if isinstance(slot, ast.IndexLiteral):
        return slot.value + 1
    if isinstance(slot, ast.IndexVar) and slot.range is not None and slot.range.hi is not None:
        key = _expr_key(slot.range.hi)
        if key is not None and slot.range.inclusive:
            key = ("+", key, 1)
        return key
    return None


def _definition_end(keys: list):
    """The end of a definition whose clauses end at `keys`: the one symbolic end (`T`, its
    clauses at fixed steps lie before it), or the largest fixed end."""
    if None in keys:
        return None
    symbolic = {k for k in keys if not isinstance(k, int)}
    if len(symbolic) > 1:
        return None
    return symbolic.pop() if symbolic else max(keys)


def _expr_key(expr):
    """A structural key of an integer expression of names and literals, or None."""
    if isinstance(expr, ast.IntLit):
        return expr.value
    if isinstance(expr, ast.Name):
        return ("name", expr.def_id if expr.def_id is not None else expr.name)
    if isinstance(expr, ast.Binary) and expr.op in ("+", "-", "*", "/", "%"):
        left, right = _expr_key(expr.left), _expr_key(expr.right)
        return None if left is None or right is None else (expr.op, left, right)
    return None


def _reads_back_along(read: ast.Index, step) -> bool:
    """Whether `read` is `name[t - c, ..]` with c >= 0 a constant and t the variable `step`."""
    if not isinstance(read.base, ast.Name) or not read.subscripts:
        return False
    offset = _offset_from(read.subscripts[0], step)
    return offset is not None and offset[0] == 1 and offset[1] <= 0


def _offset_from(expr, step):
    """(coefficient of `step`, constant) when `expr` is built from it and integer literals with
    + and -, else None."""
    if isinstance(expr, ast.Name):
        return (1, 0) if expr.def_id == step else None
    if isinstance(expr, ast.IntLit):
        return 0, expr.value
    if isinstance(expr, ast.Unary) and expr.op == "-":
        inner = _offset_from(expr.operand, step)
        return None if inner is None else (-inner[0], -inner[1])
    if isinstance(expr, ast.Binary):
        first, chain = ast.left_chain(expr)       # `t - 1 + 1 - ..` in a loop, however long
        total = _offset_from(first, step)
        for binary in chain:
            right = _offset_from(binary.right, step) if binary.op in ("+", "-") else None
            if total is None or right is None:
                return None
            sign = 1 if binary.op == "+" else -1
            total = total[0] + sign * right[0], total[1] + sign * right[1]
        return total
    return None


def read_before_defined(stmts: list):
    """A test of a set of definitions, computed together where the last clause of any of them
    stands: whether a statement that is no indexed definition reads one of them before that.
    Such a statement runs before the loop has computed what it reads."""
    last = {s.def_id: k for k, s in enumerate(stmts) if isinstance(s, ast.IndexedLet)}
    plain = [(k, {n.def_id for n in ast.iter_nodes([s]) if isinstance(n, ast.Name) and n.def_id in last})
             for k, s in enumerate(stmts) if not isinstance(s, (ast.IndexedLet, ast.FnDef, ast.DiffRule))]

    def test(unit) -> bool:
        end = max(last[did] for did in unit)
        return any(k < end and names & unit for k, names in plain)
    return test


def find_groups(reads: dict, aligned: dict, read_early=lambda unit: False) -> dict:
    """def_id -> the frozenset of def_ids recurring with it.

    A definition that reads itself, or definitions reading each other in a cycle, recur
    together. Recurrences that read one another at the reader's own step `t - c` (a Kalman
    filter's state reading its gain) share one loop too, with every definition on a path
    between them, so that per-step values such as the gain need only a window instead of the
    whole tensor; `aligned` (step_aligned_reads) says which reads are of that kind. A loop is
    shared only when every read between the definitions it holds is of that kind (or they are
    in a cycle): a read of a fixed point (`g[4]`), along another axis, or of a whole tensor
    needs the other loop finished first, so it runs after it. Nor is one shared when a
    statement between the definitions reads one of them (`read_early`, read_before_defined):
    the shared loop would run only after that statement."""
    cycles = _strongly_connected(reads)
    cycle_of = {did: k for k, component in enumerate(cycles) for did in component}
    recurrent = set()
    for component in cycles:
        only = next(iter(component))
        if len(component) > 1 or only in reads[only]:
            recurrent |= component
    joins = {(other, did) for did, targets in aligned.items() for other in targets
             if did in recurrent and other in recurrent and other != did}
    while True:
        joined = {did: set(targets) for did, targets in reads.items()}
        for other, did in joins:
            joined[other].add(did)
        components = _strongly_connected(joined)
        mixed = [c for c in components if any(cycle_of[did] != cycle_of[other] and other not in aligned[did]
                                               for did in c for other in reads[did] & c)]
        mixed += [c for c in components if c not in mixed and read_early(c)
                  and any(a in c and b in c for a, b in joins)]
        if not mixed:
            break
        joins = {(a, b) for a, b in joins if not any(a in c for c in mixed)}
    groups = {}
    for component in components:
        if component & recurrent:
            for did in component:
                groups[did] = frozenset(component)
    return groups


def _strongly_connected(graph: dict) -> list:
    """Tarjan's algorithm, iteratively (groups are small, but programs may be long)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                out.append(component)
    return out


# ---------------------------------------------------------------- elaboration

def define_group(el, clauses_by_member: dict, env) -> dict:
    """Elaborate a group; returns def_id -> RecValue for each member (a group stepping along a
    later axis is elaborated with that axis first and read back in the written order)."""
    axis = step_axis.later_step_axis(clauses_by_member)
    if axis is None:
        return _define_group(el, clauses_by_member, env)
    known = len(el.ir.recurrences)
    values = _define_group(el, step_axis.step_first(clauses_by_member, axis), env)
    if len(el.ir.recurrences) > known:     # appended last, after any its clauses hold
        el.ir.recurrences[-1].written_axis = axis
    return {did: step_axis.in_written_order(v, axis) for did, v in values.items()}


def _define_group(el, clauses_by_member: dict, env) -> dict:
    names = {did: cs[0].name for did, cs in clauses_by_member.items()}
    members, step = _typed_members(el, clauses_by_member, env, names)
    values = {did: _without_points(m) for did, m in members.items() if not m.clauses}
    own = {id(m) for m in members.values()}
    members = {did: m for did, m in members.items() if did not in values}
    _check_no_reads_of_empty(members.values(), own)
    if members:
        order = _step_order(members, names, step)
        _check_same_step_derivatives(el, members, step)
        group = RecurrenceGroup(step, [members[did] for did in order])
        _check_reads(group)
        for m in members.values():
            guarded_clauses.combine_steps(el, m, step)
            _order_clauses(el, m, step)
        el.ir.recurrences.append(group)
        outer = _outer_indices(el, group)
        if outer:
            return {**values, **batch_over_outer_indices(group, members, outer)}
        values.update({did: RecValue(group, m, span=m.span) for did, m in members.items()})
    return values


def _outer_indices(el, group: RecurrenceGroup) -> list:
    """The indices of an enclosing definition the clauses read (a recurrence inside a function
    called per point, as `let g[i] = gcd(a[i], b[i]);`), sorted by name. A group that reads the
    step or the state of the recurrence whose clause it is computed in is nested in that loop:
    it runs whole inside each of its steps (einc.passes.step_work), so its clauses may read no
    other index of that clause and no state of a loop further out (E011)."""
    members = {id(m) for m in group.members}
    found, outer_reads = set(), []
    for m in group.members:
        for c in m.clauses:
            roots = [c.body] + ([c.guard] if c.guard is not None else [])
            outer_reads += [read for read in _state_reads(roots) if id(read.member) not in members]
            found |= frozenset().union(*map(free_vars, roots)) - frozenset(c.vars) - {group.t_var}
    steps = found & set(el.state.recurrence_steps)
    if outer_reads or steps:
        _check_nested(el, group, steps, outer_reads)
    return sorted(found - steps, key=lambda v: v.name)


def _check_nested(el, group: RecurrenceGroup, steps: set, outer_reads: list) -> None:
    """A group nested in the loop of the innermost enclosing recurrence (step `e`) reads only
    that loop's step and its state at earlier steps (it runs once per step; for every point of
    its clause at once where it reads one)."""
    innermost = el.state.recurrence_steps[-1]
    earlier = _earlier_step_reads(group, innermost)
    further = [r for r in outer_reads if not _this_or_an_earlier_step_of(r, innermost) and id(r) not in earlier]
    if further:
        what = (f"`{further[0].member.name}` at a step other than the current or an earlier one of the loop "
                "it runs in (that loop's step minus a constant), or a loop further out")
    elif steps - {innermost}:
        what = "the step of a loop further out than the one it runs in"
    else:
        return
    m = group.members[0]
    raise d.error(d.UNSUPPORTED, f"the recurrence `{m.name}` runs inside each step of an enclosing "
                  f"recurrence, but it reads {what}: not compiled yet", m.span,
                  hint="read the enclosing recurrence's state one step back or earlier (`x[e - 1]`), "
                  "and pick the point after the inner loop")


def _earlier_step_reads(group: RecurrenceGroup, step: IndexVar) -> set:
    """The ids of the reads in `group`'s clauses of an enclosing loop's state at a step that its
    ranges and guards put before that loop's step `step` (`Q[k - 1]` under `if k <= e`, k the
    inner step: Arnoldi's Gram-Schmidt over the earlier basis vectors). Such a read is of the
    state's whole history (einc.passes.step_work)."""
    found = set()
    for m in group.members:
        for c in m.clauses:
            for read, guards in step_reach.guarded_state_reads(_roots([c]), definitions=True):
                if read.member in group.members:
                    continue
                reach = step_reach.offset_bounds(read.subs[0], step, (Lin.of(step), Lin.of(step)), guards + _clause_guard(c),
                                                 ranges=((group.t_var, c.t_lo, c.t_hi - 1),))
                if reach is not None and any(affine.surely_negative(high) for high in reach[1]):
                    found.add(id(read))
    return found


def _this_or_an_earlier_step_of(read: StateRead, step: IndexVar) -> bool:
    """Whether `read` is at `step` minus a constant c >= 0: at the current step, another member
    computed earlier in it (its order: _same_step_deps; einc.passes.step_work checks the rest)."""
    lin = affine.affine_of(read.subs[0])
    return lin is not None and lin.terms == {step: 1} and lin.const <= 0


def _state_reads(roots: list) -> list:
    """The StateReads under `roots`, inside the tensors a step computes included."""
    return [v for v in walk(roots, opaque=(RecValue,)) if isinstance(v, StateRead)]


def batch_over_outer_indices(group: RecurrenceGroup, members: dict, outer: list) -> dict:
    """Compute the group once for every value of the enclosing indices `outer`, as axes after the
    step (the clauses run over them too, and their state reads stay at the current point), and
    give each member as the tensor of the current point, as einc.semantics.core.tensors does for a
    plain definition (vmap's batching)."""
    refs = tuple(IndexRef(v) for v in outer)
    for m in group.members:
        m.batch = tuple(outer)
        for c in m.clauses:
            c.vars = tuple(outer) + tuple(c.vars)
    roots = _roots([c for m in group.members for c in m.clauses])
    own = {id(m) for m in group.members}
    for read in _state_reads(roots):
        if id(read.member) in own:      # an enclosing loop's state is read where it was
            read.subs = read.subs[:1] + refs + read.subs[1:]
    _batch_step_tensors(roots, outer)
    return {did: _at_outer_point(RecValue(group, m, span=m.span), outer) for did, m in members.items()}


def _batch_step_tensors(roots: list, outer: list) -> None:
    """A tensor a step computes (`let h[j] = s[t - 1] * j;` in the step) now reads the state at
    the current point of `outer`: it is computed for every value of those indices, as leading
    axes, and read at the current one (in place, operands first, as the group's own batching)."""
    batched: dict[int, tuple] = {}
    for v in walk(roots, opaque=(RecValue,)):
        if isinstance(v, Read) and id(v.tensor) in batched:
            axes = batched[id(v.tensor)]
            v.subs = tuple(tensors.offset_ref(o) for o in axes) + tuple(v.subs)
            v.extreme_points = tuple((axis + len(axes), at) for axis, at in v.extreme_points)
        elif isinstance(v, Generic):
            uses = frozenset().union(*map(free_vars, v.operands())) - frozenset(v.vars)
            axes = tuple(o for o in outer if o in uses)
            if axes:
                v.vars = axes + tuple(v.vars)
                batched[id(v)] = axes


def _at_outer_point(value: RecValue, outer: list):
    """The member's tensor at the current point of `outer` (its batch axes, after the step)."""
    rank = len(value.member.shape) - len(outer)
    own = fresh_index_vars(value.member.shape[:1] + value.member.shape[1 + len(outer):])
    subs = (IndexRef(own[0]),) + tuple(IndexRef(v) for v in outer) + tuple(IndexRef(v) for v in own[1:rank])
    batched = Generic(tuple(outer) + own, Read(value, subs), span=value.span)
    return PartialRead(batched, tuple(tensors.offset_ref(v) for v in outer), value.span)


def _check_no_reads_of_empty(members, own: set) -> None:
    """Of the group's members (ids in `own`): a read of an enclosing recurrence's state, which
    has no clauses yet, is E011 (_outer_indices)."""
    for m in members:
        for read in step_state_reads(_roots(m.clauses)):
            if id(read.member) in own and not read.member.clauses:
                raise d.error(d.BOUNDS, f"`{read.member.name}` has no element to read: every clause of "
                              "it ranges over an empty range", read.span)


def _without_points(member: RecMember) -> Generic:
    """A member whose every clause ranges over an empty range (`t in 5..2`) computes nothing:
    it has no step (its first axis ends at 0) and nothing to loop over."""
    zero = scalar_ops.materialize(Weak(np.asarray(0), "int"), member.dtype, member.span)
    return Generic(fresh_index_vars(member.shape), zero, span=member.span)


def _typed_members(el, clauses_by_member: dict, env, names: dict):
    """The members typed (_typed_members_as_declared). A member whose clauses' values are arrays
    where no clause reading no member shows it (`let g[k in 1..K] = @y / @w[k - 1];`) has axes
    only its clauses show: when the group fails, they are looked for (_find_value_axes) and
    the group is typed again with them."""
    effects, ranges = len(el.ir.effects), len(el.state.dependent_ranges)
    try:
        return _typed_members_as_declared(el, clauses_by_member, env, names)
    except d.CompileError:
        del el.ir.effects[effects:]
        del el.state.dependent_ranges[ranges:]
        if not _find_value_axes(el, clauses_by_member, env):
            raise
    return _typed_members_as_declared(el, clauses_by_member, env, names)


def _find_value_axes(el, clauses_by_member: dict, env) -> bool:
    """Elaborate each member's clauses on their own (under each guess of types until one
    elaborates), the other members' axes as known so far, and record the axes an array value
    adds (el.value_axes); again while that finds more, as a value may read another member's
    whole row. Whether any were found. Errors here only show axes still unknown: the caller
    elaborates the group again and reports what remains."""
    effects, ranges = len(el.ir.effects), len(el.state.dependent_ranges)
    initial = _initial_dtypes(el, clauses_by_member, env)
    found_any = False
    for _ in clauses_by_member:
        found = False
        for did, cs in clauses_by_member.items():
            if el.value_axes.get(did) is None:
                axes = _value_axes_of(el, clauses_by_member, env, did, _guesses_with_starts(initial))
                if axes is not None:
                    el.value_axes[did] = axes
                    found = True
        del el.ir.effects[effects:]
        del el.state.dependent_ranges[ranges:]
        found_any |= found
        if not found:
            break
    return found_any


def _value_axes_of(el, clauses_by_member: dict, env, did, guesses):
    """(axes named, extents of the axes the value adds) of the first clause of member `did` that
    elaborates with an array value under one of `guesses`; None if none does."""
    for dtypes in guesses:
        with _group_scope(el, clauses_by_member, env, dtypes) as (members, step, scope):
            try:
                results = [definitions.clause(el, c, scope, step_var=step, shape=members[did].shape)
                           for c in clauses_by_member[did]]
            except d.CompileError:
                continue
        return next(((len(r.node.slots), [a.extent for a in r.axes[len(r.node.slots):]])
                     for r in results if len(r.axes) > len(r.node.slots)), None)
    return None


def _typed_members_as_declared(el, clauses_by_member: dict, env, names: dict):
    """Reads of a member need its dtype before its own clauses are typed: start from a guess,
    elaborate again with what the bodies turned out to be until the two agree. A guess that
    ends in a type error, or in a literal that does not fit a guessed type, is replaced by the
    next (`_guesses`); if none settles, the members are typed a component at a time
    (`_typed_by_component`), also under other types for the members their start types by
    literals only (`_start_choices`); if that fails too, the error reported is the one the
    guess that elaborated furthest met (`_furthest`). A guess whose types settle but that fails otherwise
    (E011 in a body) has found the types: its error is the one reported."""
    effects, ranges = len(el.ir.effects), len(el.state.dependent_ranges)
    errors = []
    initial = _initial_dtypes(el, clauses_by_member, env)
    for guess in _guesses(*initial):
        del el.ir.effects[effects:]          # what a failed guess left behind
        del el.state.dependent_ranges[ranges:]
        try:
            _settle_types(el, clauses_by_member, env, guess, names)
        except d.CompileError as err:
            if not _wrong_guess(err):
                raise
            errors.append(err)
            continue
        guess = _moved_back(el, clauses_by_member, env, names, initial, guess)
        del el.ir.effects[effects:]
        del el.state.dependent_ranges[ranges:]
        return _settle_types(el, clauses_by_member, env, guess, names)
    guess, tentative, unseeded, named = initial
    seeded = set(guess) - unseeded
    # first the members their start types by data order nothing; then, with each choice of types
    # for the members their start types by literals only (`alpha[0] = 0.0` meeting f64 data),
    # no member with a start does
    plans = [(set(guess) - tentative, initial)] + [
        (seeded, ({**guess, **choice}, tentative, unseeded, named))
        for choice in _start_choices(guess, sorted(tentative & seeded, key=list(guess).index))]
    for typed, start in plans:
        components = _components_read_first(clauses_by_member, typed)
        if len(components) == 1:
            continue
        try:
            dtypes = _typed_by_component(el, clauses_by_member, env, names, components, start)
        except d.CompileError as err:
            if not _wrong_guess(err):
                raise
            errors.append(err)
            continue
        del el.ir.effects[effects:]
        del el.state.dependent_ranges[ranges:]
        return _settle_types(el, clauses_by_member, env, dtypes, names)
    raise _furthest(errors)


def _moved_back(el, clauses_by_member: dict, env, names: dict, initial: tuple, guess: dict) -> dict:
    """`guess`, which settles, with each member typed by literals only that it moved from the
    first guess moved back where the types still settle: `_guesses` moves such members
    together, and one whose literals nothing constrains keeps the type they default to (f32)
    whatever another member of the group needed (`r[0] = 0.01` read as `r[t] as f64` beside a
    member `a[0] = -3` that an f64 step types)."""
    first, tentative = initial[0], initial[1]
    effects, ranges = len(el.ir.effects), len(el.state.dependent_ranges)
    for did in [did for did in guess if did in tentative and guess[did] != first[did]]:
        trial = {**guess, did: first[did]}
        del el.ir.effects[effects:]
        del el.state.dependent_ranges[ranges:]
        try:
            members, _ = _settle_types(el, clauses_by_member, env, trial, names)
        except d.CompileError as err:
            if not _wrong_guess(err):
                raise
            continue
        if members[did].dtype == first[did]:
            guess = trial
    return guess


def _guesses_with_starts(initial: tuple):
    """`_guesses`, then for each other choice of types for the members their start types by
    literals only (`_start_choices`), the guesses of the members with no start beside it: an
    array value's axes show under types where the whole group's guesses never reach them
    (`upd[t] = pair(alpha[t - 1], .., partner[t])` with `alpha[0] = 0.0` meeting f64 data and
    partner an index)."""
    yield from _guesses(*initial)
    guess, tentative, unseeded, named = initial
    members = sorted(tentative - unseeded, key=list(guess).index)
    for choice in _start_choices(guess, members):
        if any(choice[did] != guess[did] for did in members):
            yield from _guesses({**guess, **choice}, tentative & unseeded, unseeded, named)


def _start_choices(guess: dict, members: list):
    """The types the literals of `members` (typed by the literals of their starts) may take,
    their guess first: every combination for up to MAX_UNSEEDED of them, one type for all
    beyond."""
    options = [[guess[did]] + [dt for dt in (F64, F32, I32, I64)
                               if dt != guess[did] and _literals_take(guess[did], dt)] for did in members]
    if len(members) > MAX_UNSEEDED:
        common = [dt for dt in (F64, F32, I32, I64) if all(dt in o for o in options)]
        return [dict.fromkeys(members, dt) for dt in common]
    return [dict(zip(members, choice)) for choice in itertools.product(*options)]


def _furthest(errors: list) -> d.CompileError:
    """The error of the guess that got furthest through the group's clauses (the latest in the
    text; the first of those at one place): a member's guessed type that its own clause refutes
    (`a[0] = 0` taken for i32 beside f32 data) fails early, while a mistake no guess avoids (a
    later member adding a bool) is met only once the earlier members are typed right; the
    first guess's error named the earlier member, whose clauses were correct."""
    def place(err):        # inside a function called in a clause: at the outermost call
        diag = err.diagnostics[0]
        span = next((n.span for n in reversed(diag.notes) if n.call_site), diag.span)
        return (span.line, span.col) if span is not None else (0, 0)
    return max(errors, key=place)


def _wrong_guess(err) -> bool:
    """Whether an error under a guess of the members' types rejects the guess: a type mismatch,
    or a literal that does not fit the guessed type (E006, `1.0e30` in f16), either of which
    another guess can avoid."""
    return err.diagnostics[0].code in (d.TYPE, d.VALUE)


def _typed_by_component(el, clauses_by_member: dict, env, names: dict, components: list,
                        initial: tuple) -> dict:
    """Members fused into one loop without reading each other in a cycle (`r[t]` reading only
    `r`, `q[t]` only `q` and `r`) are typed one strongly connected component at a time, those
    read first, each trying its own guesses with the types of the components before it fixed:
    the guesses of several members that need different types then multiply per component, not
    across the whole group (beyond MAX_UNSEEDED members the whole-group search tries one type
    for all)."""
    guess, tentative, unseeded, named = initial
    settled = dict(guess)
    effects, ranges = len(el.ir.effects), len(el.state.dependent_ranges)
    for component in components:
        first_error = None
        own = {did: guess[did] for did in guess if did in component}
        for choice in _guesses(own, tentative & component, unseeded & component, named):
            del el.ir.effects[effects:]
            del el.state.dependent_ranges[ranges:]
            try:
                members, _ = _settle_types(el, clauses_by_member, env, {**settled, **choice}, names,
                                           component)
                break
            except d.CompileError as err:
                if not _wrong_guess(err):
                    raise
                first_error = first_error or err
        else:
            raise first_error
        settled.update({did: members[did].dtype for did in component})
    return settled


def _components_read_first(clauses_by_member: dict, typed: set) -> list:
    """The group's strongly connected components under "reads", each after those it reads. A
    read of a member its base clauses type (`typed`: `w[0] = x[n]`) orders nothing, its type
    being known before its clauses are: a weight `w[t]` from `u[t]` from `alpha[t]` from
    `err[t, best[t]]` from `w[t - 1]` types err, best, alpha and u in turn (one cycle otherwise,
    whose unseeded members must guess one type for all beyond MAX_UNSEEDED)."""
    group = set(clauses_by_member) - typed
    reads = {did: {n.def_id for c in cs for n in ast.iter_nodes([c.value, c.wheres])
                   if isinstance(n, ast.Name) and n.def_id in group}
             for did, cs in clauses_by_member.items()}
    return _strongly_connected(reads)      # Tarjan's emits a component after all it reaches


def _guesses(guess: dict, tentative: set, unseeded: set, named: tuple = ()):
    """The first guess; then the other types the literals of members typed only by literals can
    take, those of float literals first with the int-literal members keeping their int (a count
    `n[t] = sum[k](if .. { 1 } else { 0 })` stays i32 beside `x[0] = 0.0` meeting f64 data),
    then some of those too (`_int_members_turned`), then all of them: f32 and f64 for int literals and f64 for float ones (Rust infers it when they meet f64
    data; `let a[0] = 0; let a[t in 1..T] = a[t - 1] * 0.5 + x[t];` is x's float, as an int
    literal beside a float one is a float), i32 (an unseeded index such as `p[t] = min[j](if ..
    { j } else { N })` is i32 before i64), f16, bf16, and i64 for int literals; each alone,
    then together with the members no base clause types (`r[0] = if x[0] > 0.0 { 0.5 } else
    { 1.0 }` and an unseeded partner reading f16 data); then other types for members no base
    clause types at all (`let r[t in 1..T] = (r[t - 1] + t) % 7;` is i32): every combination
    for up to MAX_UNSEEDED of them, one type for all beyond that, over SCALAR_TYPES and the
    other types the group's clauses `named` (`let r[t in 0..T] = if t == 0 { t as i16 } else
    { r[t - 1] + 1 };` is i16); last, the seeded float-literal members at f64, f16 or bf16 with
    each of those types for all the unseeded ones (`n[t] = min(sum[k](..), N - 1)` is i32 beside
    `x[0] = 0.0` meeting f64 data)."""
    yield guess
    tried = [guess]
    for dtype in (F32, F64, I32, F16, BF16, I64):
        for together in (set(), unseeded):
            for ints in _int_members_turned(guess, tentative):      # int-literal members keep their int first
                alternative = {did: (dtype if (did in tentative and _literals_take(dt, dtype)
                                               and (did in ints or not dt.is_int)) or did in together else dt)
                               for did, dt in guess.items()}
                if alternative not in tried:
                    tried.append(alternative)
                    yield alternative
    members = sorted(unseeded, key=list(guess).index)
    types = SCALAR_TYPES + named
    choices = itertools.product(types, repeat=len(members)) if len(members) <= MAX_UNSEEDED \
        else ((t,) * len(members) for t in types)
    for choice in choices:
        alternative = {**guess, **dict(zip(members, choice))}
        if alternative not in tried:
            tried.append(alternative)
            yield alternative
    for dtype in (F64, F16, BF16):
        # the seeded float-literal members at another float, one type for all the unseeded ones:
        # `x[0] = 0.0` meeting f64 data beside `n[t] = min(sum[k](..), N - 1)` indexing x
        base = {did: dtype if did in tentative and did not in unseeded and dt.is_float else dt
                for did, dt in guess.items()}
        for t in types if base != guess else ():
            alternative = {**base, **{did: t for did in members}}
            if alternative not in tried:
                tried.append(alternative)
                yield alternative


def _int_members_turned(guess: dict, tentative: set):
    """Which int-literal members a guess turns to another type: none, then (for up to
    MAX_UNSEEDED of them) each alone and each pair .., then all: a member typed `-1` at its start
    and a float by its step beside a count `n[t] = sum[k](if .. { 1 } else { 0 })` indexing
    another member in one group."""
    ints = [did for did, dt in guess.items() if did in tentative and dt.is_int]
    sizes = range(len(ints) + 1) if len(ints) <= MAX_UNSEEDED else (0, len(ints))
    for size in sizes:
        yield from (set(chosen) for chosen in itertools.combinations(ints, size))


def _literals_take(guessed, dtype) -> bool:
    """Whether literals that combine to `guessed` can have type `dtype`: an int literal any
    number type, a float literal a float type."""
    return not guessed.is_bool and (guessed.is_int or dtype.is_float)


def _settle_types(el, clauses_by_member: dict, env, dtypes: dict, names: dict, only=None):
    """Elaborate until the dtypes assumed for reads of the members are the ones their clauses
    produce. With `only`, just those members' clauses are elaborated (and settle); the others
    keep the dtypes given."""
    only = set(clauses_by_member) if only is None else only
    effects, ranges = len(el.ir.effects), len(el.state.dependent_ranges)
    for _ in range(MAX_TYPING_ROUNDS):
        del el.ir.effects[effects:]
        del el.state.dependent_ranges[ranges:]
        members, step = _elaborate(el, clauses_by_member, env, dtypes, only)
        found = {did: (members[did].dtype if did in only else dt) for did, dt in dtypes.items()}
        if found == dtypes:
            return members, step
        dtypes = found
    raise d.error(d.TYPE, "the members of this recurrence do not settle on one type each: "
                  + ", ".join(names[did] for did in names if did in only),
                  next(iter(clauses_by_member.values()))[0].span)


def _initial_dtypes(el, clauses_by_member: dict, env) -> tuple[dict, set, set, tuple]:
    """A first guess per member from its base clauses (those reading no member): their type,
    or the type their literals combine to (`let r[0] = 0; let r[1] = 0.5;` is f32); f32 for a
    member that has none. Also the members guessed from literals only (tentative), those
    with no base clause (unseeded) and the types beyond SCALAR_TYPES the clauses name."""
    group = set(clauses_by_member)
    guess, tentative, unseeded = {}, set(), set()
    effects = len(el.ir.effects)
    shapes = _declared_shapes(el, clauses_by_member, env)
    for did, clauses in clauses_by_member.items():
        shape = shapes[did]
        results = [r for c in clauses if not any(isinstance(n, ast.Name) and n.def_id in group
                                                 for n in ast.iter_nodes([c.value, c.wheres]))
                   if (r := _base_clause(el, c, env, shape)) is not None]
        el.value_axes[did] = next(((len(r.node.slots), [a.extent for a in r.axes[len(r.node.slots):]])
                                   for r in results if len(r.axes) > len(r.node.slots)),
                                  el.value_axes.get(did))   # or as _find_value_axes found them
        bases = [r.body for r in results]
        typed = scalar_ops.typed_values(bases)
        cast = _cast_dtype(clauses)
        if typed or cast is not None:
            guess[did] = typed[0].dtype if typed else cast
        else:
            guess[did] = scalar_ops.literal_dtype(bases, clauses[0].span) if bases else _result_literals_dtype(clauses)
            tentative.add(did)
        if not bases and cast is None:
            unseeded.add(did)
    del el.ir.effects[effects:]
    return guess, tentative, unseeded, _named_types(clauses_by_member, env)


def _cast_dtype(clauses: list):
    """The scalar type every clause's value is converted to (`c[t] = sum[k](..) as i32`), or
    None: such a member's type is known before any member's is (guessed with the others, a
    count guessed f32 failed the subscript it is read in before its clause could type it)."""
    dtypes = {BY_NAME.get(c.value.to.name) if isinstance(c.value, ast.Cast) and isinstance(c.value.to, ast.ScalarType)
              else None for c in clauses}
    return dtypes.pop() if len(dtypes) == 1 and None not in dtypes else None


def _named_types(clauses_by_member: dict, env) -> tuple:
    """The scalar types outside SCALAR_TYPES (i8, u16, ..) that the clauses name in a cast, a
    literal's suffix or a value they read from outside the group, in the order they are first
    named: a member no base clause types may have one of them."""
    found = []
    for clauses in clauses_by_member.values():
        for node in ast.iter_nodes([[c.value, c.wheres] for c in clauses]):
            if isinstance(node, ast.Cast) and isinstance(node.to, ast.ScalarType):
                dtype = BY_NAME.get(node.to.name)
            elif isinstance(node, (ast.IntLit, ast.FloatLit)):
                dtype = BY_NAME.get(node.suffix)
            elif isinstance(node, ast.Name) and node.def_id is not None and node.def_id not in clauses_by_member:
                dtype = getattr(_bound(env, node.def_id), "dtype", None)
            else:
                continue
            if dtype in BY_NAME.values() and dtype not in SCALAR_TYPES and dtype not in found:
                found.append(dtype)
    return tuple(found)


def _bound(env, def_id):
    """What `def_id` is bound to in `env`, None where it is bound in none of its scopes."""
    try:
        return env.lookup(def_id)
    except KeyError:
        return None


def _result_literals_dtype(clauses: list) -> object:
    """A guess for a member no base clause types, from the untyped literals its clauses can
    give as a value: i32 when they are all ints (`let r[t in 0..T] = if t == 0 { 6 } else
    { (r[t - 1] * 3) % 7 };` as `let r[0] = 6;` beside the step clause), bool when every clause
    is a comparison or a logical operation (`let ok[s in 1..S] = err[s] <= tol;`), f32 otherwise."""
    if all(_gives_bool(c.value) for c in clauses):
        return BOOL
    found = [lit for c in clauses for lit in _result_literals(c.value)]
    return I32 if found and all(isinstance(lit, ast.IntLit) for lit in found) else F32


_BOOL_OPS = ("||", "&&", "==", "!=", "<", ">", "<=", ">=", "in")


def _gives_bool(expr) -> bool:
    """Whether `expr`'s value is a bool whatever the types of what it reads."""
    if isinstance(expr, ast.BoolLit) or (isinstance(expr, ast.Unary) and expr.op == "!"):
        return True
    if isinstance(expr, ast.Binary):
        return expr.op in _BOOL_OPS
    if isinstance(expr, ast.If):
        return expr.orelse is not None and _gives_bool(expr.then) and _gives_bool(expr.orelse)
    if isinstance(expr, ast.Block):
        return expr.result is not None and _gives_bool(expr.result)
    if isinstance(expr, ast.Where):
        return _gives_bool(expr.body)
    if isinstance(expr, ast.Match):
        return all(_gives_bool(arm.body) for arm in expr.arms)
    return False


def _result_literals(expr) -> list:
    """The untyped literals `expr`'s value can be, through signs, arithmetic, branches and
    reductions."""
    if isinstance(expr, (ast.IntLit, ast.FloatLit)):
        return [] if expr.suffix else [expr]
    if isinstance(expr, ast.Unary) and expr.op != "!":
        return _result_literals(expr.operand)
    if isinstance(expr, ast.Binary) and expr.op in ("+", "-", "*", "/", "%", "**"):
        return _result_literals(expr.left) + _result_literals(expr.right)
    if isinstance(expr, ast.If):
        return _result_literals(expr.then) + (_result_literals(expr.orelse) if expr.orelse else [])
    if isinstance(expr, ast.Block):
        return _result_literals(expr.result) if expr.result else []
    if isinstance(expr, ast.Where):
        return _result_literals(expr.body)
    if isinstance(expr, ast.Match):
        return [lit for arm in expr.arms for lit in _result_literals(arm.body)]
    if isinstance(expr, ast.Reduction) and expr.op in ("sum", "prod", "max", "min"):
        return _result_literals(expr.body)      # a count `sum[k](if .. { 1 } else { 0 })` is an int
    return []


def _base_clause(el, node: ast.IndexedLet, env, shape: tuple):
    """A clause reading no member, elaborated on its own; None when an index of it takes its
    extent from the member's other clauses (_clauses_in_order), which are not elaborated yet."""
    try:
        return definitions.clause(el, node, env, step_var=IndexVar("t", Lin(0), Lin(1)), shape=shape)
    except UnboundIndex:
        return None


@contextlib.contextmanager
def _step_range(step: IndexVar, clause: RecClause):
    """Within one clause the step runs over the clause's own range, not the whole loop."""
    saved = step.lo, step.extent
    step.lo, step.extent = clause.t_lo, clause.t_hi - clause.t_lo
    try:
        yield
    finally:
        step.lo, step.extent = saved


@contextlib.contextmanager
def _group_scope(el, clauses_by_member: dict, env, dtypes: dict):
    """(members with their declared shapes and `dtypes`, the step, a scope where each member's
    name is its RecState) while the clauses are elaborated."""
    shapes = _declared_shapes(el, clauses_by_member, env)
    extent = _largest([s[0] for s in shapes.values()], next(iter(clauses_by_member.values()))[0].span)
    first = next(iter(clauses_by_member.values()))[0]
    # named as the first clause that names its step (`S[0]` names none: `S[k in 2..K]`'s k)
    named = next((c for cs in clauses_by_member.values() for c in cs if isinstance(c.slots[0], ast.IndexVar)), first)
    step = IndexVar(_step_name(named), Lin(0), extent, span=first.span)
    members = {did: RecMember(cs[0].name, dtypes[did], shapes[did], [], cs[0].span)
               for did, cs in clauses_by_member.items()}
    scope = env.child()
    for did, m in members.items():
        scope.bind(did, RecState(m, step))
    el.state.recurrence_steps.append(step)
    try:
        yield members, step, scope
    finally:
        el.state.recurrence_steps.pop()


def _elaborate(el, clauses_by_member: dict, env, dtypes: dict, only: set):
    with _group_scope(el, clauses_by_member, env, dtypes) as (members, step, scope):
        # in source order across the members, so that each clause sees the extents of the
        # clauses above it (a start `P[0, b, d] = p0[b, d]` before a step reading `P[t - 1, o, e]`)
        chosen = [(did, c) for did, cs in clauses_by_member.items() if did in only for c in cs]
        results = {did: [] for did, _ in chosen}
        for did, c, r in _clauses_in_order(el, sorted(chosen, key=lambda pair: (pair[1].span.line, pair[1].span.col)),
                                           scope, step, members):
            results[did].append(r)
        for did, clauses in results.items():
            _check_every_axis_defined(members[did], clauses)
            _finish_member(members[did], clauses)
    definitions.resolve_hulls(el.state)
    for m in members.values():
        for c in m.clauses:
            with _step_range(step, c):
                check_reads(c.body, c.guard, el.state, m.span)
    return members, step


def _clauses_in_order(el, chosen: list, scope, step: IndexVar, members: dict) -> list:
    """(member id, clause node, result) in source order. A clause with an index that nothing
    above it bounds (a start `lo[0, b] = 0.0` before `lo[t in 1..T, b] = .. c[b] ..`) is
    elaborated again after the others, so it takes the member's extent along that axis."""
    done, deferred = [], []
    for did, c in chosen:
        effects = len(el.ir.effects)
        try:
            done.append((did, c, _clause(el, c, scope, step, scope.lookup(did))))
        except UnboundIndex:
            del el.ir.effects[effects:]
            deferred.append((did, c))
    done += [(did, c, _clause(el, c, scope, step, scope.lookup(did))) for did, c in deferred]
    order = {id(c): k for k, (_, c) in enumerate(chosen)}
    return sorted(done, key=lambda item: order[id(item[1])])


def _check_every_axis_defined(member: RecMember, results: list) -> None:
    for r in results:
        if len(r.axes) != len(member.shape):
            raise d.error(d.SHAPE, f"`{member.name}` has {len(member.shape)} axes, but this clause defines "
                          f"{len(r.axes)}", r.node.span, hint="an array value adds one axis per axis it has")


def _step_name(node: ast.IndexedLet) -> str:
    slot = node.slots[0]
    return slot.name if isinstance(slot, ast.IndexVar) else "t"


def _declared_shapes(el, clauses_by_member: dict, env) -> dict:
    """Each member's _declared_shape. A member whose steps no clause ranges takes them from a
    plain read of another member whose axis is known (`rho[t, y, x] = sum[q](f[t, q, y, x])`
    beside `f[t in 1..T, ..]` runs t over f's steps), so those are found first."""
    shapes, pending = {}, dict(clauses_by_member)
    while pending:
        settled = {did: shape for did, cs in pending.items()
                   if (shape := _declared_shape(el, cs, env, shapes, last=False)) is not None}
        if not settled:
            settled = {did: _declared_shape(el, cs, env, shapes) for did, cs in pending.items()}
        shapes.update(settled)
        pending = {did: cs for did, cs in pending.items() if did not in settled}
    return shapes


def _declared_shape(el, clauses: list, env, members: dict, last: bool = True):
    """Each axis: the largest end among the clauses that state it (None if none does). Axes a
    base clause's array value adds (`let x[0] = x0;`, el.value_axes) have its extents; a clause
    naming fewer axes than the member has must have an array value (definitions.clause). A
    first axis found neither so nor by a read (`members`: the shapes of the group's members
    known so far) is an error where this is the `last` try, else None."""
    named, extents = el.value_axes.get(clauses[0].def_id) or (0, [])
    rank = max([len(c.slots) for c in clauses] + [named + len(extents)])
    rest = next((s for c in clauses for s in c.slots if isinstance(s, ast.RestIndex)), None)
    if rest is not None:
        raise d.error(d.UNSUPPORTED, f"a `..{rest.name}` index in the recurrence `{clauses[0].name}` is not "
                      "compiled yet", rest.span, hint=f"name the axes it stands for, one index each, after "
                      f"the step (`let {clauses[0].name}[t in 1..T, b, c, ..]`)")
    shape = []
    for axis in range(rank):
        ends = [e for c in clauses if axis < len(c.slots) and (e := _slot_end(el, c.slots, axis, env)) is not None]
        ends += [extents[axis - named] for _ in [0] if named <= axis < named + len(extents)]
        shape.append(_largest(ends, clauses[0].span) if ends else None)
    if shape[0] is None:
        shape[0] = _first_axis_from_reads(clauses, env, members)
    if shape[0] is None and not last:
        return None
    if shape[0] is None:
        first = next((c.slots[0].name for c in clauses if isinstance(c.slots[0], ast.IndexVar)), "t")
        raise d.error(d.SHAPE, f"the recurrence `{clauses[0].name}` needs an explicit range on its "
                      f"first index `{first}` in one of its clauses (its steps)", clauses[0].span,
                      hint=f"e.g. `let {clauses[0].name}[{first} in 0..N, ..] = ..`, N its length")
    return tuple(shape)


def _first_axis_from_reads(clauses: list, env, members: dict):
    """The extent of a first index no clause ranges, from the arrays outside the group, or the
    group's `members` of known shape, that a clause reads with it as a plain subscript
    (`h[r, t in 1..L] = h[r, t - 1] + s[r, t - 1]` runs r over s's rows), as any definition's
    index takes it; None where no such read is."""
    found = {}
    for c in clauses:
        slot = c.slots[0]
        if not isinstance(slot, ast.IndexVar) or slot.range is not None:
            continue
        for node in ast.iter_nodes([c.value, c.wheres]):
            if not (isinstance(node, ast.Index) and isinstance(node.base, ast.Name)):
                continue
            did = node.base.def_id
            shape = members.get(did) or (getattr(_bound(env, did), "shape", None) if did is not None else None)
            for k, sub in enumerate(node.subscripts):
                if (shape is not None and k < len(shape) and shape[k] is not None
                        and isinstance(sub, ast.Name) and sub.def_id == slot.def_id):
                    found.setdefault(repr(shape[k]), (shape[k], node))
    if len(found) > 1:
        (_, a), (_, b) = list(found.values())[:2]
        raise d.error(d.SHAPE, f"the first index of `{clauses[0].name}` gets different extents from two reads",
                      a.span, hint=f"the other read is at line {b.span.line}; give the index an explicit range")
    return next(iter(found.values()))[0] if found else None


def _slot_end(el, slots: list, axis: int, env):
    """Where the clause's axis ends, when its slot says so; a range that depends on the step
    (`j in 0..N + 1 - u`) ends where its hull does, which the clause finds (definitions.clause)."""
    slot = slots[axis]
    if isinstance(slot, ast.IndexVar) and slot.range is not None and _names_an_index(slot.range, slots[:axis]):
        return None
    if isinstance(slot, ast.IndexLiteral):
        return Lin(slot.value + 1)
    if isinstance(slot, ast.IndexVar) and slot.range is not None:
        lo, hi = definitions.range_bounds(el, slot.range, env)
        return definitions.axis_end(IndexVar(slot.name, lo.lin, definitions.extent(lo, hi)))
    return None


def _names_an_index(rng: ast.Range, slots: list) -> bool:
    ids = {s.def_id for s in slots if isinstance(s, ast.IndexVar)}
    return any(getattr(n, "def_id", None) in ids for n in ast.iter_nodes(rng))


def _largest(ends: list, span) -> Lin:
    return definitions.largest_end(ends, span)


def _clause(el, node: ast.IndexedLet, scope, step: IndexVar, state: RecState):
    """One clause of the member of `state`, whose axes then widen its shape: a later clause's
    index that only a read of the member bounds (`u[t in 1..T, i] = u[t - 1, i] * 0.5` after
    `u[0, i] = a[i]`) takes its extent from the earlier clauses (core.state.InferenceFrame)."""
    member = state.member
    state.defining = _step_name(node)
    state.defining_rows = len(node.slots) < len(member.shape)
    try:
        result = definitions.clause(el, node, scope, step_var=step, shape=member.shape)
    finally:
        state.defining, state.defining_rows = None, False
    if len(result.axes) == len(member.shape):       # else _check_every_axis_defined reports it
        member.shape = (member.shape[0],) + tuple(
            _widened(size, a, node.span) for size, a in zip(member.shape[1:], result.axes[1:]))
    return result


def _widened(size, axis, span):
    end = definitions.axis_end(axis)
    return end if size is None else definitions.largest_end([size, end], span)


def _finish_member(member: RecMember, results: list) -> None:
    """Type the clause bodies (literals take the type of the typed ones, else the one they
    combine to), complete the shape from inferred ranges and build the RecClauses."""
    dtype = definitions.clause_dtype(results, member.name, member.span)
    bodies = [scalar_ops.materialize(r.body, dtype, r.node.span) for r in results]
    shape = list(member.shape)
    for r, body in zip(results, bodies):
        if not definitions.is_empty(r.axes):
            member.clauses.append(_rec_clause(r, body))
        for axis, a in enumerate(r.axes[1:], start=1):
            shape[axis] = _widened(shape[axis], a, r.node.span)
    member.dtype = dtype
    member.shape = tuple(shape)


def _rec_clause(r, body) -> RecClause:
    t_axis = r.axes[0]
    if isinstance(t_axis, int):
        t_lo, t_hi = Lin(t_axis), Lin(t_axis + 1)
    else:
        t_lo, t_hi = t_axis.lo, t_axis.lo + t_axis.extent
    vars_ = tuple(IndexVar("p", Lin(a), Lin(1)) if isinstance(a, int) else a for a in r.axes[1:])
    return RecClause(t_lo, t_hi, vars_, body, r.guard, span=r.node.span)


def state_read(el, state: RecState, subs: list, span):
    """`member[subs]` inside the group: an element of the member's state."""
    m = state.member
    if len(subs) == 1 and len(m.shape) > 1:
        return _step_slice(el, state, subs[0], span)
    if len(subs) > 1 and len(subs) < len(m.shape) and _read_at_the_step_being_defined(state, subs[0]):
        # a row of earlier points of the step being computed (`z[t, k - 1]` in a clause of
        # `z[t, k, i]`): its points, each one ordered in the step as its element read is
        if any(size is None for size in m.shape[len(subs):]):
            raise d.error(d.UNSUPPORTED, f"reading a row of `{m.name}` at the step being computed needs explicit "
                          "ranges on its other indices", span, hint=f"e.g. `let {m.name}[t in 1..T, i in 0..N] = ..`")
        vars_ = fresh_index_vars(m.shape[len(subs):], "s")
        return StepRow(vars_, state_read(el, state, list(subs) + [IndexRef(v) for v in vars_], span), span=span,
                       point=lambda rest: state_read(el, state, list(subs) + list(rest), span))
    if len(subs) < len(m.shape):
        # a sub-array of an earlier step (`st[e - 1, o]`): that row of the step's whole iterate,
        # as `let prev = st[e - 1]; prev[o]` reads it
        return tensors.read(_step_slice(el, state, subs[0], span), subs[1:], span, el.state, "")
    if len(subs) > len(m.shape):
        # a clause defining whole rows (`Qt[k] = { .. }`) gives the other axes only once its body is known
        axes = "1 axis" if len(m.shape) == 1 else f"{len(m.shape)} axes"
        raise d.error(d.SHAPE, f"`{m.name}` names {axes} in its definition but is read with {len(subs)} "
                      "subscripts inside its recurrence", span, hint=f"name every axis in its definition, one value per point "
                      f"(`let {m.name}[k in 0..N, i in 0..M] = ..`), or read whole rows at `t - 1`")
    # a point of the step being computed: with one axis, or in a clause of whole rows (`w[e] =
    # { .. w[e, 0] .. }`), it is the row being computed, not an earlier point of it
    if (len(m.shape) == 1 or state.defining_rows) and _read_at_the_step_being_defined(state, subs[0]):
        _reads_the_step_being_defined(state, span, pointwise=len(m.shape) > 1)
    read = StateRead(m, tuple(subs), span=span)
    el.state.note_state_read(read, m.shape, f"`{m.name}[..]`")
    return read


def _read_at_the_step_being_defined(state: RecState, step_sub: Value) -> bool:
    """Whether a read at `step_sub` is one of the step being computed, inside a clause of the
    member itself: with one axis, or read whole, that is the point being computed. Checked here,
    not on the step's code: a read a derivative leaves unused (`@L / @w[t - 1]` of an L of
    `w[t]`) is gone from it, and its step would silently not move."""
    lin = affine.affine_of(step_sub)
    return state.defining is not None and lin is not None and lin.terms == {state.step: 1} and lin.const == 0


def _reads_the_step_being_defined(state: RecState, span, pointwise: bool = False) -> None:
    """E007; with `pointwise`, a point of a row being computed whole, which a clause of points
    could read (a scan)."""
    m, step_name = state.member, state.defining
    hint = f"read the step before, `{m.name}[{step_name} - 1]`"
    if pointwise:
        hint += (f", or define the step a point at a time, `let {m.name}[{step_name} in .., i in ..] = ..`, "
                 f"whose points may read earlier ones of the same step (`{m.name}[{step_name}, i - 1]`)")
    raise d.error(d.RECURRENCE, f"`{m.name}[{step_name}]` is read inside its own definition, at the step "
                  "being computed", span, hint=hint)


def _step_slice(el, state: RecState, step_sub: Value, span):
    """`member[t - c]` (c >= 0): the member's whole state at an earlier step, or at the current
    one (`r[t]`, another member computed earlier in the step; einc.passes.step_work refuses a
    member's own or a later one's)."""
    m = state.member
    lin = affine.affine_of(step_sub)
    if lin is None or lin.terms != {state.step: 1} or lin.const > 0:
        raise d.error(d.UNSUPPORTED, f"inside its recurrence, `{m.name}` can be read whole only at the "
                      f"current step or an earlier one, `{state.step.name} - c`", span,
                      hint=f"e.g. `{m.name}[{state.step.name} - 1]`")
    if _read_at_the_step_being_defined(state, step_sub):
        _reads_the_step_being_defined(state, span)
    if any(size is None for size in m.shape[1:]):
        raise d.error(d.UNSUPPORTED, f"reading `{m.name}` whole at a step needs explicit ranges on "
                      "its other indices", span, hint=f"e.g. `let {m.name}[t in 1..T, i in 0..N] = ..`")
    if lin.const not in state.slices:
        state.slices[lin.const] = state_slice(m, step_sub, span)
        el.state.own_states[id(state.slices[lin.const])] = (state.slices[lin.const], f"`{m.name}[..]`")
    return state.slices[lin.const]


# ---------------------------------------------------------------- order and checks

def _same_step_deps(members: dict, step: IndexVar) -> dict:
    """def_id -> the def_ids of the members its clauses read at the same step, also through a
    loop they run inside each step (`solve(S[t], b)`: std's elimination reads `S[t]`)."""
    by_member = {m: did for did, m in members.items()}
    return {did: {by_member[r.member] for r in _reads_with_inner_loops(_roots(m.clauses))
                  if isinstance(r, StateRead) and r.member in by_member and _step_offset(r, step) == 0
                  and r.member is not m}
            for did, m in members.items()}


def _reads_with_inner_loops(roots: list) -> list:
    """The values under `roots` and under the clauses of every group they compute (a group the
    elaboration nested in this one's loop reads its state there), each group once."""
    out, seen, todo = [], set(), list(roots)
    while todo:
        found = list(walk(todo, opaque=(RecValue,)))
        out += found
        todo = []
        for v in found:
            if isinstance(v, RecValue) and id(v.group) not in seen:
                seen.add(id(v.group))
                todo += _roots([c for m in v.group.members for c in m.clauses])
    return out


def _check_same_step_derivatives(el, members: dict, step: IndexVar) -> None:
    """A derivative `@y / @x[t]` whose y reads another member at x's step treats that value as
    a constant (derivatives.request): E011 when the member is computed from x at that step,
    where the constant would make the derivative silently wrong (`@loss[e] / @v[e]` with
    loss[e] defined from v[e] would be 0)."""
    deps = _same_step_deps(members, step)
    dids = {id(m): did for did, m in members.items()}
    for read, x, span in el.state.same_step_derivatives:
        if id(read) in dids and id(x) in dids and _reaches(deps, dids[id(read)], dids[id(x)]):
            raise d.error(d.UNSUPPORTED, f"a derivative through `{read.name}` with respect to `{x.name}` at the "
                          f"same step of their recurrence: `{read.name}` is computed from `{x.name}` there, "
                          "and derivatives cannot see through another member's value yet", span,
                          hint=f"compute the value inside the definition: `{{ let L = ..; @L / @{x.name}[..] }}`")


def _reaches(deps: dict, start, goal) -> bool:
    seen, todo = set(), [start]
    while todo:
        did = todo.pop()
        if did == goal:
            return True
        if did not in seen:
            seen.add(did)
            todo += deps[did]
    return False


def _step_order(members: dict, names: dict, step: IndexVar) -> list:
    """Members ordered so that same-step reads see values already computed this step, also
    those of a tensor a step computes whole (`{ let h[i] = r[t, i]; .. }`)."""
    deps = _same_step_deps(members, step)
    order, done, visiting = [], set(), []

    def visit(did):
        if did in done:
            return
        if did in visiting:
            looped = visiting[visiting.index(did):]
            cycle = " -> ".join(names[x] for x in looped + [did])
            # a cycle of members is one of points only where no read in it is behind along an
            # axis (`a[s, k]` reading `b[s, k]`, `b[s, k]` reading `a[s, k - 1]` reads no future
            # point: legal, though a step computes one definition whole) and none is ahead
            edges = list(zip(looped, looped[1:] + [did]))
            behind = any(_reads_along_an_axis(members[x], members[y], step, _behind) for x, y in edges)
            ahead = any(_reads_along_an_axis(members[x], members[y], step, _ahead, every=False) for x, y in edges)
            if behind and not ahead:
                raise d.error(d.UNSUPPORTED, f"definitions that read each other's earlier points along another "
                              f"axis at the same step: {cycle} (each step computes one definition whole, "
                              "then the next)", members[did].span,
                              hint="make them one definition with an axis for their parts (`z[s, k, c]`, "
                                   "choosing the part by `c`), or read the other's previous step")
            raise d.error(d.RECURRENCE, f"definitions read each other at the same step: {cycle}",
                          members[did].span, hint="one of them must read the other's previous step")
        visiting.append(did)
        for dep in deps[did]:
            visit(dep)
        visiting.pop()
        done.add(did)
        order.append(did)

    for did in members:
        visit(did)
    return order


def _reads_along_an_axis(member: RecMember, other: RecMember, step: IndexVar, where, every=True) -> bool:
    """Whether every read (`every`) or some read `member` makes of `other` at the step has a
    subscript after the step that `where` accepts against its clause's index (`_behind`:
    `b[s, k - 1]` in a clause of `a[s, k]`)."""
    found = [any(where(sub, var) for sub, var in zip(r.subs[1:], c.vars))
             for c in member.clauses for r in walk(_roots([c]), opaque=(RecValue,))
             if isinstance(r, StateRead) and r.member is other and _step_offset(r, step) == 0]
    return (bool(found) and all(found)) if every else any(found)


def _behind(sub: Value, var: IndexVar) -> bool:
    lin = affine.affine_of(sub)
    return lin is not None and lin.terms == {var: 1} and lin.const < 0


def _ahead(sub: Value, var: IndexVar) -> bool:
    lin = affine.affine_of(sub)
    return lin is not None and lin.terms == {var: 1} and lin.const > 0


def _roots(clauses: list) -> list:
    return [v for c in clauses for v in (c.body, c.guard) if v is not None]


def _step_offset(read: StateRead, step: IndexVar):
    """c when the step subscript is `t + c` (t the group's step), else None."""
    lin = affine.affine_of(read.subs[0])
    if lin is None or lin.terms != {step: 1}:
        return None
    return lin.const


def _order_clauses(el, member: RecMember, step: IndexVar) -> None:
    """The member's clauses in the order a step runs them (einc.ir.clause_order); E007 when
    they read each other's points of one step in a cycle, a run-time error at the sizes where
    they do (an edge `u[t, 0] = u[t, 1]` and its twin `u[t, N - 1] = u[t, N - 2]` when N = 2)."""
    ordered, checks, cycle = clause_order.step_order(member, step)
    if cycle is None:
        member.clauses = ordered
        for gap in checks:
            message = f"assertion failed at {member.span}: clauses of `{member.name}` read each other's " \
                      f"points at the same step unless {gap!r} >= 0 (E007)"
            holds = scalar_ops.apply("ge", [size_value(gap, member.span), Weak(np.asarray(0), "int")], member.span)
            el.ir.effects.append(Assert(holds, message, span=member.span))
        return
    at = [member.clauses[k].span for k in cycle]
    path = " -> ".join(f"line {span.line}" if span is not None else "a clause" for span in at)
    raise d.error(d.RECURRENCE, f"clauses of `{member.name}` read each other's points at the same step: "
                  f"{path} (each reads points the next one writes)", at[0] or member.span,
                  hint="one of them must read the previous step (`t - 1`)")


def _check_reads(group: RecurrenceGroup) -> None:
    for m in group.members:
        for clause in m.clauses:
            for read, guards in step_reach.guarded_state_reads(_roots([clause]), definitions=True):
                if read.member in group.members:     # not an enclosing recurrence's state
                    _check_direction(m, clause, read, guards, group.t_var)
            recurrence_coverage.check_clause(clause, group.members, group.t_var)


def _check_direction(member: RecMember, clause: RecClause, read: StateRead, guards: tuple, step: IndexVar) -> None:
    offset = _step_offset(read, step)
    if offset is None:
        _check_ranged_read(member, clause, read, guards + _clause_guard(clause), step)
        return
    if offset > 0:
        raise d.error(d.RECURRENCE, f"`{read.member.name}` is read {offset} step(s) ahead of the "
                      f"step being computed", read.span, hint=_AHEAD_HINT)
    first = step_reach.first_step(step, clause.t_lo, guards + _clause_guard(clause))
    if affine.surely_negative(first + offset):
        raise d.error(d.BOUNDS, f"at its first step {first!r} this clause reads "
                      f"`{read.member.name}` at step {first + offset!r}, before the start",
                      read.span, hint="start the recurrent clause later (e.g. `t in 1..T`) and "
                      "define the first steps with their own clauses, or read it under `if t > 0 { .. }`")
    _check_past_the_end(clause, read, offset)
    if offset < 0 or clause_order.reads_other_clauses_only(member, clause, read, guards):
        return                      # other clauses of the step run first (_order_clauses)
    if read.member is member and _earlier_point_of_step(read, clause, guards) is False:
        raise d.error(d.RECURRENCE, f"`{member.name}` reads a point of itself that is not "
                      "computed yet", read.span, hint="read an earlier step (`t - 1`) or an "
                      "earlier point of this step (`i - 1`)")


_AHEAD_HINT = ("a recurrence reads earlier steps (`t - 1`); to run one from the end (`x[i] = .. x[i + 1]`), "
               "number its steps from the end: `r[s in 1..N] = r[s - 1] + u[N - 1 - s]`, read as `r[N - 1 - i]`")


def _clause_guard(clause: RecClause) -> tuple:
    return () if clause.guard is None else (clause.guard,)


def _check_ranged_read(member: RecMember, clause: RecClause, read: StateRead, guards: tuple,
                       step: IndexVar) -> None:
    """A read at a step that is not `t - c`: over a reduction's range (`x[k]`, k in i + 1..N)
    or at a fixed step. E007 when it may reach a step not computed yet: a later one, or, for
    the member itself, this one at a point not before the one being computed."""
    reach = step_reach.offset_bounds(read.subs[0], step, (clause.t_lo, clause.t_hi - 1), guards)
    if reach is None:
        return                      # data-dependent: the whole tensor is kept, read at run time
    lows, highs = reach
    if any(affine.surely_nonnegative(low - high - 1) for low in lows for high in highs):
        return                      # no point reads it (`k in 0..j` where the guards leave only j = 0)
    name = read.member.name
    if any(affine.surely_nonnegative(low - 1) for low in lows):
        raise d.error(d.RECURRENCE, f"`{name}` is read only at steps ahead of the step being computed",
                      read.span, hint=_AHEAD_HINT)
    if any(affine.surely_negative(high) for high in highs):
        return
    if any(affine.surely_nonnegative(-high) for high in highs):
        if read.member is not member or _earlier_point_of_step(read, clause, guards) is not False:
            return
        raise d.error(d.RECURRENCE, f"`{name}` reads itself over a range that includes the point "
                      "being computed", read.span, hint="end the range before it, e.g. `k in 0..i`")
    raise d.error(d.RECURRENCE, f"`{name}` is read over a range that may reach steps after the one "
                  "being computed", read.span, hint="bound the range by the step, e.g. "
                  f"`k in 0..{step.name}` or `where k < {step.name}`")


def _check_past_the_end(clause: RecClause, read: StateRead, offset: int) -> None:
    """A read at `t + offset` past the last step the member read has (its first axis) is
    E005, as a read past any array's end: it is not one of the member's points no clause
    covers (einc.semantics.forms.recurrence_coverage)."""
    last_step = clause.t_hi - 1
    read_step = last_step + offset
    size = read.member.shape[0]
    if affine.surely_nonnegative(last_step - clause.t_lo) and affine.surely_negative(size - 1 - read_step):
        raise d.error(d.BOUNDS, f"at its last step {last_step!r} this clause reads `{read.member.name}` "
                      f"at step {read_step!r}, past its last step {size - 1!r}", read.span,
                      hint=f"end the clause earlier or define `{read.member.name}` for more steps")


def _earlier_point_of_step(read: StateRead, clause: RecClause, guards: tuple):
    """Whether a same-step self-read is at a lexicographically earlier point of the clause
    (True), at the same or a later one (False), or cannot be told statically (None); a
    subscript over a reduction's range is bounded through its range and guards."""
    for sub, var in zip(read.subs[1:], clause.vars):
        reach = step_reach.offset_bounds(sub, var, (var.lo, var.lo + var.extent - 1), guards)
        if reach is None:
            return None
        lows, highs = reach
        if any(affine.surely_negative(high) for high in highs):
            return True
        if any(affine.surely_nonnegative(low - 1) for low in lows):
            return False
        if not (any(affine.surely_nonnegative(-high) for high in highs)
                and any(affine.surely_nonnegative(low) for low in lows)):
            return None
    return False
