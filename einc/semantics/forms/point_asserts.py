"""An `assert` in a body evaluated per point (an indexed definition's, a reduction's, a
comprehension's, a function's called from one) holds at every point of the body's index
variables where the body's guard holds. When it fails, its message names the first failing point
in row-major order (`at i = 2, j = 0`) and shows its run-time values at that point.
"""
from __future__ import annotations

import re

from einc import diagnostics as d
from einc.autodiff.substitute import substitute
from einc.ir.nodes import (Assert, IndexRef, IndexVar, Op, Print, RecValue, Reduce, StateRead, Value, free_vars,
                           walk)
from einc.ir.types import BOOL
from einc.semantics.core import scalar_ops


def hold_at_every_point(el, first: int, vars_: tuple, guard: Value | None) -> None:
    """Turn the asserts made since effect number `first` that depend on `vars_` into checks over
    all their points. In a recurrence step, the step runs over its clause's steps only (its copy
    in State.step_ranges)."""
    for effect in el.ir.effects[first:]:
        if isinstance(effect, Print):
            _printed_once(effect, vars_)
        if not isinstance(effect, Assert):
            continue
        shown = effect.printed()
        depends = free_vars(effect.cond).union(*(free_vars(a) for a in shown if isinstance(a, Value)))
        if not any(v in depends for v in vars_):
            continue
        # the check runs over the guard's indices too: one it reads alone (`where i + j < 3`
        # around an assert on `x[i]`) would be left unbound outside the body
        guarded = depends | free_vars(guard) if guard is not None else depends
        _over(effect, tuple(v for v in vars_ if v in guarded), guard, el.state.step_ranges)


def _printed_once(effect: Print, vars_: tuple) -> None:
    """A print in a body over points runs once, so what it shows may not change from point to
    point: E011 for one reading the point's indices or a recurrence's value in its step (its
    lowering found them unbound: a crash)."""
    roots = [a for a in effect.args if isinstance(a, Value)]
    depends = frozenset().union(*map(free_vars, roots))
    if any(v in depends for v in vars_) or any(isinstance(v, StateRead) for v in walk(roots, opaque=(RecValue,))):
        raise d.error(d.UNSUPPORTED, "a print of a value that changes from point to point (of each element, point "
                      "or recurrence step of the body it is in) is not compiled yet", effect.span,
                      hint="print the whole array after its definition (`print(y);`)")


def _over(effect: Assert, point: tuple, guard: Value | None, step_ranges: dict) -> None:
    roots = [effect.cond, *effect.printed()] + ([guard] if guard is not None else [])
    # a finished recurrence (RecValue) is read like any tensor: only a step's own reads count
    if any(isinstance(v, StateRead) for v in walk(roots, opaque=(RecValue,))):
        raise d.error(d.UNSUPPORTED, "an assert on a value of a recurrence inside its step is not compiled yet",
                      effect.span, hint="assert on the recurrence's values after its definition")
    steps = {v: IndexRef(step_ranges[v]) for v in point if v in step_ranges}
    cond, guard = (None if x is None else substitute(x, steps) for x in (effect.cond, guard))
    point = tuple(steps[v].var if v in steps else v for v in point)
    first = _first_failing_point(cond, guard, point, effect.span)
    parts = list(effect.values.parts) if effect.values is not None else [{"text": _message_of(effect)}]
    shown = tuple(substitute(substitute(a, steps), first) if isinstance(a, Value) else a for a in effect.printed())
    effect.values = Print(_with_point(parts, effect.point_parts, point, len(shown)),
                          shown + tuple(first[v] for v in point), span=effect.span)
    effect.point_parts += 2 * len(point)
    effect.cond = Reduce("all", point, cond, guard, span=effect.span)


def _with_point(parts: list, inner: int, point: tuple, arg: int) -> list:
    """`parts` with ` at i = {..}, j = {..}` for `point`'s coordinates (args `arg`, `arg` + 1, ..),
    before the point an inner body's assert already names (`inner` last parts)."""
    head, tail = parts[:len(parts) - inner], parts[len(parts) - inner:]
    named = []
    for k, v in enumerate(point):
        named += [{"text": f"{', ' if k else ' at '}{v.name} = "}, {"arg": arg + k, "spec": ""}]
    if tail:
        tail = [{"text": ", " + tail[0]["text"].removeprefix(" at ")}] + tail[1:]
    return head + named + tail


def _first_failing_point(cond: Value, guard: Value | None, point: tuple, span) -> dict:
    """Per variable, its coordinate at the first failing point: the least coordinate among the
    failing points that have the ones chosen before it. Where nothing fails, its last coordinate
    (the message's values stay readable there; they are not shown)."""
    fails = Op("not", (cond,), BOOL)
    if guard is not None:
        fails = scalar_ops.apply("and", [guard, fails], span)
    first: dict[IndexVar, Value] = {}
    for k, var in enumerate(point):
        least = Reduce("min", point[k:], IndexRef(var), substitute(fails, first), span=span)
        last = Reduce("max", (var,), IndexRef(var), span=span)
        first[var] = scalar_ops.apply("min", [least, last], span)
    return first


def _message_of(effect: Assert) -> str:
    """The user's message in `assertion failed at FILE:LINE:COL: MESSAGE`."""
    return _MESSAGE.match(effect.message).group(1)


_MESSAGE = re.compile(r"assertion failed at .+?:\d+:\d+: (.*)", re.DOTALL)
