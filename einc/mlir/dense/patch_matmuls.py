"""A convolution over non-overlapping windows (stride == window, dilation 1) as a matmul.

Each output point then reads its own patch of the input, so the input split into patches
([n, c, H, W] -> [n, c, OH, kh, OW, kw], expand_shape) and transposed to rows of patches
([n OH OW, c kh kw]) times the weights as [c kh kw, f] is the convolution, and the matmul
takes the usual rules (register tiles, data tiling): a ViT's 16 x 16 stride-16 patch embedding
ran 5-14x faster so than as IREE's conv_2d_nchw_fchw (docs/DECISIONS.md, Dense kernels). Input
rows or columns past the last window are cut off first. The result comes out as
[n, OH, OW, f] and is transposed to the definition's layout (Match.result_order).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from einc.ir.types import Lin
from einc.mlir.dense.named_ops import PATTERNS, Axis, Match
from einc.mlir.dense.operand_views import View

MATMUL = next(p for p in PATTERNS if p.op == "matmul")


def as_matmul(found: Match) -> Optional[Match]:
    """The matmul that the convolution `found` is when its windows do not overlap, else None."""
    if not _non_overlapping(found) or any(_reshaped(v) for v in found.views):
        return None
    inputs, weights = found.operand_axes
    outputs = [v for axis in weights for v in axis.vars if v in _vars(found.out)]
    if len(outputs) != 1:
        return None
    f, = outputs
    rows = [v for axis in found.out for v in axis.vars if v is not f]
    summed = [v for axis in weights for v in axis.vars if v is not f]
    patches = _patch_rows(found.views[0], inputs, rows + summed)
    columns = _reordered(found.views[1], [v for axis in weights for v in axis.vars], summed + [f])
    free = [v for axis in found.out for v in axis.vars]
    order = tuple(free.index(v) for v in rows + [f])
    return Match(MATMUL, (patches, columns), [Axis(tuple(rows)), Axis((f,))],
                 [[Axis(tuple(rows)), Axis(tuple(summed))], [Axis(tuple(summed)), Axis((f,))]],
                 result_order=() if order == tuple(range(len(order))) else order)


def _non_overlapping(found: Match) -> bool:
    pattern = found.pattern
    if not pattern.op.startswith("conv_") or "f" not in pattern.out.split() or len(found.views) != 2:
        return False
    windows = [a for a in found.operand_axes[0] if a.stride]
    return bool(windows) and all(_windows_tile(a) for a in windows)


def _windows_tile(axis: Axis) -> bool:
    """A window axis whose windows tile its prefix: constant extents, stride = window."""
    y, p = axis.vars
    return (axis.dilation == 1 and y.extent.is_const and p.extent.is_const
            and p.extent.const == axis.stride)


def _patch_rows(view: View, axes: list[Axis], order: list) -> View:
    """The input view with each window axis cut to its windows' span and split into (window,
    offset), its axes then in `order` (the rows' variables, then the summed ones)."""
    keep = list(view.keep) or [None] * len(axes)
    splits = []
    for k, (axis, size) in enumerate(zip(axes, view.base_shape)):
        if not axis.stride:
            splits.append(())
            continue
        y, p = axis.vars
        span = y.extent.const * p.extent.const
        if not (size.is_const and size.const == span):
            keep[k] = Lin(span)
        splits.append((y.extent.const, p.extent.const))
    cut = tuple(keep) if any(s is not None for s in keep) else ()
    return _reordered(replace(view, keep=cut, splits=tuple(splits)),
                      [v for axis in axes for v in axis.vars], order)


def _reordered(view: View, vars_: list, order: list) -> View:
    """`view` (whose axes read `vars_`, one each) with its axes in `order`."""
    perm = tuple(vars_.index(v) for v in order)
    return view if perm == tuple(range(len(perm))) else replace(view, order=perm)


def _reshaped(view: View) -> bool:
    return bool(view.pad_lo or view.splits or view.windows or view.order or view.merges)


def _vars(axes: list[Axis]) -> set:
    return {v for axis in axes for v in axis.vars}
