"""Effects, in program order at function level: prints become traces, asserts become cf.assert.

The runner captures `flow.tensor.trace "einc.print.<n>"` and formats it with the parts stored in
the signature; IREE only honours cf.assert on the host, so a device condition is read back.
"""
from __future__ import annotations

from typing import Callable

from iree.compiler import ir
from iree.compiler.dialects import cf, flow, scf, tensor, util

from einc.ir.nodes import Assert, Print
from einc.ir.types import I32
from einc.mlir.core import scalar_ops
from einc.mlir.core.locations import location_of
from einc.mlir.core.types import is_tensor

PRINT_LABEL = "einc.print.{}"


def _print(lw, effect: Print) -> None:
    _trace(lw, *_traced_values(lw, effect))


def _traced_values(lw, effect: Print) -> tuple[list, list]:
    """The values a print traces, and the run-time sizes of each."""
    values, dims = [], []
    for arg in effect.args:
        value = lw.lower(arg)
        if not is_tensor(value):
            value = lw.sizes.scalar_tensor(value)
        values.append(value)
        dims.append(lw.sizes.dynamic_dims(arg.shape))
    if not values:
        # a trace of nothing does not survive IREE's parser; a text-only print traces one unread
        # scalar so that it still comes out in program order among the others
        values.append(lw.sizes.scalar_tensor(scalar_ops.constant(I32, 0)))
        dims.append([])
    return values, dims


def _trace(lw, values: list, dims: list) -> None:
    if lw.target.has_defect("IREE-46"):      # a trace of a loop's result read it before it was written
        values = [util.OptimizationBarrierOp([v.type], [v]).results[0] for v in values]
    # IREE-271: a trace of two values with run-time sizes does not parse back; each such value
    # after the first starts a trace of its own, labelled as the print's continuation
    parts = [[]]
    for value, sizes in zip(values, dims):
        if sizes and any(d for _, d in parts[-1]):
            parts.append([])
        parts[-1].append((value, sizes))
    for k, part in enumerate(parts):
        label = PRINT_LABEL.format(lw.prints) + (f".{k}" if k else "")
        flow.tensor_trace(label, [v for v, _ in part], [d for _, sizes in part for d in sizes])
    lw.prints += 1


def _assert(lw, effect: Assert) -> None:
    cond = lw.lower(effect.cond)
    if is_tensor(cond):
        cond = tensor.extract(cond, [])
    if effect.values is not None:
        # the message's values are lowered here (lowered values are shared by what follows) but
        # traced only when the assertion fails, just before it does
        values, dims = _traced_values(lw, effect.values)
        branch = scf.IfOp(cond, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.yield_([])
        with ir.InsertionPoint(branch.else_block):
            _trace(lw, values, dims)
            scf.yield_([])
    cf.assert_(cond, effect.message)


EFFECT_RULES: dict[type, Callable] = {Print: _print, Assert: _assert}


def emit_effect(lw, effect) -> None:
    with location_of(effect):
        EFFECT_RULES[type(effect)](lw, effect)
