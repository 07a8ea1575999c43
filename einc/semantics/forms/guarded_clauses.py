"""Several clauses of one definition with `where` guards (LANGUAGE.md section 10).

Each guarded clause defines only the points of its box where its guard holds; together the
clauses define the array, so every point must be covered by exactly one clause. Unguarded
clauses keep section 3's rule among themselves (the later one wins where they overlap), but a
point that a guarded clause shares with any other clause, or that no clause covers, is E004:
at build time when the guards and extents are known then, else a run-time assert.

A guarded clause writes its whole box (einc.mlir.program_rules writes boxes), so where its
guard fails it writes back what the clauses before it left there: `select(guard, body,
before[point])`, `before` being the piecewise value of those clauses.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from einc import diagnostics as d
from einc.ir import affine, clause_order, step_reach
from einc.ir.evaluate import NotBuildTime, evaluate
from einc.ir.nodes import (Assert, Clause, Const, Generic, IndexRef, IndexVar, Op, Piecewise, Read, RecClause,
                           RecMember, Reduce, StateRead, Value, free_vars, fresh_index_vars, is_folding_constant, size_value,
                           walk)
from einc.ir.types import BOOL, I32
from einc.autodiff.substitute import substitute


def combine(el, p: Piecewise, name: str) -> Piecewise:
    """`p` with each guarded clause keeping, where its guard fails, the value before it; the
    coverage of every point checked (at build time, or by an assert when the program runs)."""
    decided = _decide_guards(p.clauses)
    _check_coverage(el, p, decided, name)
    clauses: list[Clause] = []
    for c, _ in decided:
        g = c.value
        if g.guard is not None and clauses:
            before = replace(p, clauses=tuple(clauses), name="")
            kept = Read(before, tuple(IndexRef(v, span=g.span) for v in g.vars), span=g.span, in_bounds=True)
            body = Op("select", (g.guard, g.body, kept), p.dtype, span=g.span)
            c = Clause(c.offsets, Generic(g.vars, body, None, span=g.span))
        clauses.append(c)
    return replace(p, clauses=tuple(clauses))


def _decide_guards(clauses: tuple) -> list[tuple[Clause, bool]]:
    """(clause, whether it was guarded) for each clause whose guard can hold: a guard that every
    admissible size decides alike (`where M != M`) is decided here, so no kernel computes it and
    no clause is left that writes nothing (IREE cannot compile such a kernel for Vulkan). A
    clause whose guard always holds keeps the coverage rule of a guarded one."""
    out = []
    for c in clauses:
        g = c.value
        known = None if g.guard is None else _known(g.guard)
        if known is True:
            c = Clause(c.offsets, Generic(g.vars, g.body, None, span=g.span))
        if known is not False:
            out.append((c, g.guard is not None))
    return out


def _cover(p: Piecewise, c: Clause) -> Piecewise:
    """1 at the points of `p`'s shape that clause `c` defines, else 0."""
    one = Const(np.asarray(1, np.int32), span=c.value.span)
    return Piecewise(I32, p.shape, (Clause(c.offsets, Generic(c.value.vars, one, c.value.guard)),), span=p.span)


def _at_one_point(p: Piecewise, clauses: list, name: str) -> tuple:
    """A definition batched over the indices of an enclosing one (`lead`) whose guards read none
    of them covers every point of those alike: its coverage is checked at one of them, without
    the `lead` axes (whose extents may not be inferred yet)."""
    lead = frozenset(p.lead)
    if any(c.value.guard is not None and free_vars(c.value.guard) & lead for c in clauses):
        if all(v.extent is not None for v in p.lead):
            return p, clauses
        raise d.error(d.UNSUPPORTED, f"the where guards of `{name}`, in a function called per point, read "
                      "an index of the calling definition whose range is not inferred yet", p.span,
                      hint="give the calling definition's indices explicit ranges (`e in 0..N`)")
    k = len(p.lead)
    own = [Clause(c.offsets[k:], Generic(c.value.vars[k:], c.value.body, c.value.guard, span=c.value.span))
           for c in clauses]
    return Piecewise(p.dtype, p.clause_shape, tuple(own), span=p.span), own


def _known(guard: Value):
    if is_folding_constant(guard) and not guard.array.ndim:
        return bool(guard.array)
    return affine.decided(guard)


def _check_coverage(el, p: Piecewise, decided: list, name: str) -> None:
    if not decided:
        raise d.error(d.SHAPE, f"no clause of `{name}` defines any point: every where guard is false",
                      p.span, hint="add a clause (or widen a where guard) for the points left out")
    clauses, guarded = [c for c, _ in decided], [is_guarded for _, is_guarded in decided]
    if p.lead:
        p, clauses = _at_one_point(p, clauses, name)
    covers = [_cover(p, c) for c in clauses]
    try:
        masks = [evaluate(c).astype(bool) for c in covers]
    except NotBuildTime:
        el.ir.effects.append(_run_time_check(p, covers, guarded, name))
        return
    _refuse_overlap(clauses, masks, guarded, name)
    _refuse_uncovered(p, masks, name)


def _refuse_overlap(clauses: list, masks: list, guarded: list, name: str) -> None:
    for k, (mask, is_guarded) in enumerate(zip(masks, guarded)):
        for j in range(k):
            both = mask & masks[j]
            if (is_guarded or guarded[j]) and both.any():
                at = _point(both)
                raise d.error(d.SHAPE, f"two clauses of `{name}` both define {name}[{at}]",
                              clauses[k].value.span, notes=[d.Label(clauses[j].value.span, "the other")],
                              hint="make the where guards of the clauses exclude each other")


def _refuse_uncovered(p: Piecewise, masks: list, name: str) -> None:
    covered = np.logical_or.reduce(masks) if masks else np.zeros((), bool)
    if not covered.all():
        at = _point(~np.broadcast_to(covered, masks[0].shape))
        raise d.error(d.SHAPE, f"no clause of `{name}` defines {name}[{at}]", p.span,
                      hint="add a clause (or widen a where guard) for the points left out")


def _point(mask: np.ndarray) -> str:
    return ", ".join(str(int(k)) for k in np.argwhere(mask)[0])


def _run_time_check(p: Piecewise, covers: list, guarded: list, name: str) -> Assert:
    """all[points](guarded covers + (1 if any unguarded cover) == 1)."""
    vars_ = fresh_index_vars(p.shape, "g")
    at = tuple(IndexRef(v) for v in vars_)
    counted = [Read(c, at, in_bounds=True) for c, is_guarded in zip(covers, guarded) if is_guarded]
    plain = [Read(c, at, in_bounds=True) for c, is_guarded in zip(covers, guarded) if not is_guarded]
    if plain:
        counted.append(Op("min", (_sum(plain), Const(np.asarray(1, np.int32))), I32))
    once = Op("eq", (_sum(counted), Const(np.asarray(1, np.int32))), BOOL)
    cond = Reduce("all", vars_, once, None, span=p.span)
    message = f"assertion failed at {p.span}: a point of `{name}` is defined by no clause or by two " \
              "(E004: the where guards of its clauses must cover each point once)"
    return Assert(cond, message, span=p.span)


def _sum(values: list) -> Value:
    total = values[0]
    for v in values[1:]:
        total = Op("add", (total, v), I32)
    return total


def combine_steps(el, member: RecMember, step: IndexVar) -> None:
    """The same for a recurrence member, whose clauses write the rows of each step in place:
    guarded clauses over one box (steps and ranges) become one clause choosing among their
    bodies by their guards. A guarded clause whose box meets other boxes (a rim `where i == 0 ||
    i == H - 1` over the whole grid beside interior clauses) runs first in each step, writing 0
    where its guards fail, so the other clauses write those points after it; every point of its
    box must then be defined once (checked). A rim reading points of its own step (a Neumann
    boundary `u[t, 0] = u[t, 1]`) runs after the clauses instead, keeping what they wrote where
    its guards fail (`_kept_elsewhere`); the step's clause order puts it after the points it
    reads, or finds the cycle (E007)."""
    if len(member.clauses) < 2 or all(c.guard is None for c in member.clauses):
        return
    groups: list[list[RecClause]] = []
    for c in member.clauses:
        group = next((g for g in groups if _same_box(g[0], c)), None)
        if group is None:
            groups.append([c])
        else:
            group.append(c)
    first, merged, last = [], [], []
    for g in groups:
        guarded = any(c.guard is not None for c in g)
        others = [c for other in groups if other is not g for c in other]
        if guarded and any(not _apart(g[0], c) for c in others):
            _check_overlap(el, member, step, g, others)
            rim = _merged(g) if len(g) > 1 else g[0]
            if _reads_own_step(member, step, g):
                _check_reads_off_the_rim(el, member, step, rim)
                last.append(_kept_elsewhere(member, step, rim))
            else:
                first.append(rim)
            continue
        merged.append(_merged_group(el, member, step, g) if guarded and len(g) > 1 else g[0])
        if guarded and len(g) == 1 and len(groups) > 1:
            _check_step_coverage(el, member, step, g)
    member.clauses = first + merged + last


def _reads_own_step(member: RecMember, step: IndexVar, group: list) -> bool:
    return any(read.member is member and clause_order.may_read_now(read, c, step, guards)
               for c in group for read, guards in step_reach.guarded_state_reads([c.body, c.guard]))


def _check_reads_off_the_rim(el, member: RecMember, step: IndexVar, rim: RecClause) -> None:
    """Each point of its own step the rim reads (where it reads it) is one its guard does not
    hold at, which the other clauses wrote before it: E007 for a read of another rim point
    (`u[t, 0] = u[t, N - 1]` beside `u[t, N - 1] = u[t, 0]`, a cycle), at build time where the
    sizes decide it, else when the program runs."""
    t = IndexVar("t", rim.t_lo, rim.t_hi - rim.t_lo)
    here = {step: IndexRef(t)}
    own = {step} | set(rim.vars)
    for read, guards in step_reach.guarded_state_reads([rim.body]):
        if read.member is not member or not clause_order.may_read_now(read, rim, step, guards):
            continue
        if any(free_vars(x) - own for x in (read,) + guards):
            raise d.error(d.UNSUPPORTED, f"a guarded clause of the recurrence `{member.name}` over ranges other "
                          "clauses share, reading points of its own step through a reduction's index",
                          read.span, hint=f"read fixed points of the step (`{member.name}[t, 1]`)")
        there = dict(zip(rim.vars, read.subs[1:]))
        # the read is made (the rim's guard and the read's own hold) at a point the rim defines
        cycle = rim.guard
        for cond in (*guards, substitute(rim.guard, {**there, step: read.subs[0]}), _inside(rim, read.subs)):
            cycle = Op("and", (cycle, cond), BOOL)
        apart = Op("not", (substitute(cycle, here),), BOOL)
        _assert_apart(el, member, (t,) + tuple(rim.vars), apart, read)


def _assert_apart(el, member: RecMember, vars_: tuple, apart: Value, read: StateRead) -> None:
    """`apart` holds at every point of `vars_` (step first): checked now, else when the program runs."""
    message = f"`{member.name}`'s guarded clause reads a point of its own step that it also defines"
    try:
        ok = evaluate(Generic(vars_, apart))
    except NotBuildTime:
        el.ir.effects.append(Assert(Reduce("all", vars_, apart, None, span=read.span),
                                    f"assertion failed at {read.span}: {message} (E007)", span=read.span))
        return
    if not ok.all():
        raise d.error(d.RECURRENCE, message, read.span,
                      hint="read points the other clauses of the step define, or the previous step (`t - 1`)")


def _kept_elsewhere(member: RecMember, step: IndexVar, rim: RecClause) -> RecClause:
    """`rim` writing, where its guard fails, the value its point holds at the step: what the
    clauses before it wrote there (its coverage is checked: one of them did)."""
    here = StateRead(member, (IndexRef(step),) + tuple(IndexRef(v) for v in rim.vars), span=rim.span)
    body = Op("select", (rim.guard, rim.body, here), rim.body.dtype, span=rim.span)
    return RecClause(rim.t_lo, rim.t_hi, rim.vars, body, None, span=rim.span, keeps=True)


def _check_overlap(el, member: RecMember, step: IndexVar, group: list, others: list) -> None:
    """A guarded group whose box meets other clauses: at each point of its box exactly one of
    its guards holds or, where none does, other clauses write it (unguarded clauses only, as no
    guarded clause outside the group meets its box)."""
    if any(c.guard is None for c in group):
        raise d.error(d.SHAPE, f"two clauses of `{member.name}` both define its points where a guarded "
                      "one holds", member.span, hint="make the where guards of the clauses exclude each other")
    if any(c.guard is not None and not _apart(group[0], c) for c in others):
        raise d.error(d.UNSUPPORTED, f"guarded clauses of the recurrence `{member.name}` over ranges that "
                      "overlap other guarded clauses' ranges", member.span,
                      hint="give the guarded clauses the same ranges, apart from the other clauses")
    first = group[0]
    t = IndexVar("t", first.t_lo, first.t_hi - first.t_lo)
    here = (IndexRef(t),) + tuple(IndexRef(v) for v in first.vars)
    guards = [_renamed(c, first, (step, here[0]))[0] for c in group]
    if any(isinstance(v, StateRead) for v in walk(guards)):
        raise d.error(d.UNSUPPORTED, f"where guards of `{member.name}` that read values of its recurrence",
                      guards[0].span or member.span, hint="guard on the indices or on inputs")
    ones = [_one_if(g) for g in guards]
    plain = [_one_if(_inside(c, here)) for c in others if not _apart(first, c)]
    ones.append(Op("min", (_sum(plain), Const(np.asarray(1, np.int32))), I32))
    _assert_once(el, member, (t,) + tuple(first.vars), Op("eq", (_sum(ones), Const(np.asarray(1, np.int32))), BOOL))


def _inside(c: RecClause, here: tuple) -> Value:
    """Whether the point `here` (step first) lies in the box of clause `c`."""
    conds = []
    for at, (lo, hi) in zip(here, _bounds(c)):
        conds += [Op("ge", (at, size_value(lo)), BOOL), Op("lt", (at, size_value(hi)), BOOL)]
    out = conds[0]
    for cond in conds[1:]:
        out = Op("and", (out, cond), BOOL)
    return out


def _one_if(cond: Value) -> Value:
    return Op("select", (cond, Const(np.asarray(1, np.int32)), Const(np.asarray(0, np.int32))), I32)


def _bounds(c: RecClause) -> list:
    return [(c.t_lo, c.t_hi)] + [(v.lo, v.lo + v.extent) for v in c.vars]


def _same_box(a: RecClause, b: RecClause) -> bool:
    return all(lo_a == lo_b and hi_a == hi_b for (lo_a, hi_a), (lo_b, hi_b) in zip(_bounds(a), _bounds(b)))


def _apart(a: RecClause, b: RecClause) -> bool:
    """Whether the boxes surely share no point: along some axis one ends before the other starts."""
    return any(affine.surely_nonnegative(lo_b - hi_a) or affine.surely_nonnegative(lo_a - hi_b)
               for (lo_a, hi_a), (lo_b, hi_b) in zip(_bounds(a), _bounds(b)))


def _renamed(c: RecClause, to: RecClause, step_to=None) -> tuple:
    """The guard and body of `c` over the vars of `to` (and, with `step_to`, the step var
    replaced by that value)."""
    mapping = {v: IndexRef(w) for v, w in zip(c.vars, to.vars)}
    if step_to is not None:
        mapping[step_to[0]] = step_to[1]
    return tuple(None if x is None else substitute(x, mapping) for x in (c.guard, c.body))


def _merged_group(el, member: RecMember, step: IndexVar, group: list) -> RecClause:
    if any(c.guard is None for c in group):
        raise d.error(d.SHAPE, f"two clauses of `{member.name}` both define its points where a guarded "
                      "one holds", member.span, hint="make the where guards of the clauses exclude each other")
    _check_step_coverage(el, member, step, group)
    return _merged(group)


def _merged(group: list) -> RecClause:
    """One clause over the group's common box choosing among its bodies by their guards."""
    first = group[0]
    guard, body = first.guard, first.body
    for c in group[1:]:
        g, b = _renamed(c, first)
        body = Op("select", (g, b, body), body.dtype, span=b.span)
        guard = Op("or", (guard, g), BOOL, span=g.span)
    return RecClause(first.t_lo, first.t_hi, first.vars, body, guard)


def _check_step_coverage(el, member: RecMember, step: IndexVar, group: list) -> None:
    """Exactly one guard of the group holds at each point of its box."""
    first = group[0]
    t = IndexVar("t", first.t_lo, first.t_hi - first.t_lo)
    guards = [_renamed(c, first, (step, IndexRef(t)))[0] for c in group]
    if any(isinstance(v, StateRead) for v in walk(guards)):
        raise d.error(d.UNSUPPORTED, f"where guards of `{member.name}` that read values of its recurrence",
                      guards[0].span or member.span, hint="guard on the indices or on inputs")
    ones = [_one_if(g) for g in guards]
    once = Op("eq", (_sum(ones), Const(np.asarray(1, np.int32))), BOOL)
    _assert_once(el, member, (t,) + tuple(first.vars), once)


def _assert_once(el, member: RecMember, vars_: tuple, once: Value) -> None:
    """`once` holds at every point of `vars_` (step first): checked now, else when the program runs."""
    try:
        ok = evaluate(Generic(vars_, once))
    except NotBuildTime:
        message = f"assertion failed at {member.span}: a point of `{member.name}` is defined by no clause " \
                  "or by two (E004: the where guards of its clauses must cover each point once)"
        el.ir.effects.append(Assert(Reduce("all", vars_, once, None, span=member.span), message, span=member.span))
        return
    if not ok.all():
        at = np.argwhere(~np.broadcast_to(ok, ok.shape))[0]
        where = ", ".join(str(int(k) + v.lo.const) for k, v in zip(at, vars_))
        raise d.error(d.SHAPE, f"no clause or two clauses of `{member.name}` define {member.name}[{where}]",
                      member.span,
                      hint="make the where guards of the clauses cover each point once")
