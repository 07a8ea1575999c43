"""Nests of scalar scf.for loops over index variables, for code that runs point by point."""
from __future__ import annotations

from typing import Callable

from iree.compiler import ir
from iree.compiler.dialects import scf

from einc.ir.nodes import IndexVar
from einc.mlir.core.shapes import index_const


def point_loops(bounds: list[tuple[ir.Value, ir.Value]], carried: list[ir.Value],
                body: Callable[[list[ir.Value], list[ir.Value]], list[ir.Value]]) -> list[ir.Value]:
    """A nest of scf.for over [lo, hi) per level (the first outermost), carrying `carried`;
    `body(induction variables, carried)` returns the new carried values."""
    def level(k: int, ivs: list[ir.Value], values: list[ir.Value]) -> list[ir.Value]:
        if k == len(bounds):
            return body(ivs, values)
        loop = scf.ForOp(bounds[k][0], bounds[k][1], index_const(1), values)
        with ir.InsertionPoint(loop.body):
            scf.yield_(level(k + 1, ivs + [loop.induction_variable], list(loop.inner_iter_args)))
        return list(loop.results)
    return level(0, [], carried)


def var_bounds(lw, vars_: list[IndexVar]) -> list[tuple[ir.Value, ir.Value]]:
    """Loop bounds running each variable over its coordinates lo .. lo + extent - 1."""
    return [(lw.sizes.index(v.lo), lw.sizes.index(v.lo + v.extent)) for v in vars_]
