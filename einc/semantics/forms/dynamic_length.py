"""Sequences whose length depends on run-time data: a comprehension filtered by run-time values.

`[x | x in xs, x > 0.0]` with `xs` an input keeps a number of elements known only when the
program runs. The kept positions are counted on the device by a recurrence over the filter's
mask (kept[p] = how many of the first p positions are kept, for p = 0 ..= n, one loop), the
length is its last value, read back to the host once, and the result is a `Compact` of that
length whose size is a `DataSize`: later definitions, reductions, `len`, prints and outputs use
it like any run-time size (einc.mlir.compaction).
"""
from __future__ import annotations

import numpy as np

from einc.ir.nodes import (Assert, Compact, Const, Generic, IndexRef, IndexVar, Read, RecClause, RecMember,
                           RecurrenceGroup, RecValue, StateRead, Value, size_value)
from einc.ir.types import I32, DataSize, Lin
from einc.semantics.core import scalar_ops
from einc.semantics.core.values import Weak


def keep(el, values: Value, mask: Generic, span) -> Value:
    """The rows of `values` where `mask` (a bool vector over the same first axis) holds."""
    extent = values.shape[0]
    if extent == 0:
        return values
    kept = _running_count(el, mask, span)
    count = Read(kept, (size_value(extent),), span=span)
    where = f"@{span.line}:{span.col}" if span is not None else ""
    node = Compact(values, mask, kept, count, DataSize.named(f"kept{where}"), span=span)
    el.ir.compactions.append(node)
    return node


def _flag(mask: Generic, at: Value, span) -> Value:
    """mask[at] as 0 or 1."""
    return scalar_ops.cast(Read(mask, (at,), span=span), I32, span)


def check_fixed_read(el, read, text: str) -> None:
    """`pos[0]` of a sequence whose length is known only at run time: checked when the program
    runs (an assert), since reading past the end would give an unrelated value."""
    if not isinstance(read, Read) or read.in_bounds:
        return
    for sub, size in zip(read.subs, read.tensor.shape):
        if not any(isinstance(k, DataSize) for k in size.keys()):
            continue
        inside = scalar_ops.apply("and", [scalar_ops.apply("ge", [sub, Weak(np.asarray(0), "int")], read.span),
                                          scalar_ops.apply("lt", [sub, size_value(size)], read.span)], read.span)
        message = f"assertion failed at {read.span}: {text} reads past the end of a sequence whose " \
                  "length was computed at run time"
        el.ir.effects.append(Assert(inside, message, span=read.span))


def _running_count(el, mask: Generic, span) -> RecValue:
    """kept[p] = how many of mask[0..p] hold (p = 0 ..= n): a recurrence whose first step is 0,
    so an empty mask reads nothing."""
    extent = mask.shape[0]
    step = IndexVar("p", Lin(0), extent + 1, span=span)
    member = RecMember("kept", I32, (extent + 1,), [], span)
    before = scalar_ops.apply("sub", [IndexRef(step, span=span), Weak(np.asarray(1), "int")], span)
    total = scalar_ops.apply("add", [StateRead(member, (before,), span=span), _flag(mask, before, span)], span)
    member.clauses += [RecClause(Lin(0), Lin(1), (), Const(np.asarray(0, np.int32), span=span)),
                       RecClause(Lin(1), extent + 1, (), total)]
    group = RecurrenceGroup(step, [member])
    el.ir.recurrences.append(group)
    return RecValue(group, member, span=span)
