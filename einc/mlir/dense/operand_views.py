"""Affine views of program-level tensors: reads a kernel can take through a plain indexing map.

A read `T[s0, s1, ..]` is an `ins` operand when every subscript is affine in the kernel's loops
and proven in bounds; an axis read by a loop alone is cut to the loop's extent (linalg takes
trip counts from operand shapes). Four more forms become operands through a view built once at
function level:
- zero padding written as a guard (`if ih >= 0 && ih < H { X[.., ih, ..] } else { 0.0 }`):
  a read of X padded (`tensor.pad`), the guard gone; 0 * inf at a padded point is then NaN, as
  in NumPy and JAX convolutions;
- a flattened subscript (`Wf[16 * c + 4 * h + w, k]`): a read of Wf reshaped (`expand_shape`);
  with a constant offset over part of a longer axis (`qkv[s, 384 + 64 * h + d]`) the columns
  read are cut out first;
- for named ops, a subscript fixed at build time (`W[1, k, d]`): a read of the slice W[1];
- a split subscript (`ctx[d / 8, s, d % 8]`): a read of ctx transposed and collapsed;
- a subscript running backwards (`adj[T - 1 - t, i]`, `x[c - t]`): a read of the tensor with
  that axis reversed (a copy), read forwards (`t`, or `t + k` through a window);
- for named ops, subscripts clamped into their axis (`img[clamp(i + u - 1, 0, H - 1), ..]`, the
  edge replicated): a read of the tensor padded with copies of its edges (one gather pass).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.ir import affine
from einc.ir.nodes import Const, Input, Op, Read, Value
from einc.ir.types import Lin
from einc.mlir.core import scalar_ops
from einc.mlir.core.dispatch_captures import fence, written_shifted
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type, index_type, is_tensor

DYNAMIC = ir.ShapedType.get_dynamic_size()


@dataclass(frozen=True)
class View:
    """`read.tensor` at `fixed[axis]` on the axes where that is a Lin (those axes dropped), then
    cut to its first `keep[axis]` elements per axis (None: all), padded by `pad_lo`/`pad_hi`
    elements with `pad_value` (EDGE: copies of the axis' first and last elements), then each
    axis split into `splits[axis]` (outer first; () keeps it whole), then each axis of that cut to `windows[axis]` (None: all), then its axes taken in
    `order` and the groups of `merges` collapsed, read at `subs`: one Lin per axis of the
    viewed tensor, in index-variable coordinates. Axes with `reverse[axis]` (after `fixed`,
    before the rest) are taken last element first."""
    read: Read
    subs: tuple
    keep: tuple = ()
    pad_lo: tuple = ()
    pad_hi: tuple = ()
    pad_value: object = 0
    splits: tuple = ()
    windows: tuple = ()
    fixed: tuple = ()
    order: tuple = ()
    merges: tuple = ()
    skip: tuple = ()
    reverse: tuple = ()

    @property
    def base_shape(self) -> tuple:
        """The sizes of the axes that are not fixed."""
        shape = self.read.tensor.shape
        return tuple(size for axis, size in enumerate(shape) if not self.fixed or self.fixed[axis] is None)

    @property
    def shape(self) -> tuple:
        """The viewed tensor's sizes (Lins)."""
        out = []
        for axis, size in enumerate(self.base_shape):
            if self.keep and self.keep[axis] is not None:
                size = self.keep[axis]
            if self.pad_lo:
                size = size + self.pad_lo[axis] + self.pad_hi[axis]
            split = self.splits[axis] if self.splits else ()
            out.extend(Lin(n) for n in split) if split else out.append(size)
        if self.windows:
            out = [size if window is None else window.size for size, window in zip(out, self.windows)]
        if self.order:
            out = [out[k] for k in self.order]
        if self.merges:
            out = [_product_lin([out[k] for k in group]) for group in self.merges]
        return tuple(out)


def _product_lin(sizes: list) -> Lin:
    out = sizes[0]
    for size in sizes[1:]:
        out = out.scale(size.const) if size.is_const else size.scale(out.const)
    return out


@dataclass(frozen=True)
class Window:
    """The elements offset, offset + stride, .. of an axis, `size` (a Lin) of them."""
    offset: int
    stride: int
    size: Lin


@dataclass(frozen=True)
class PaddedRead:
    """A guarded select recognised as a padded read: `view` stands for the guarded read (and
    for `twins`, other reads of the branch at the same point, as in `X[..] * X[..]`) and
    `value` (the select's guarded branch) replaces the select."""
    view: View
    value: Value
    twins: tuple = ()


# ------------------------------------------------------------------------------ rules

def plain_view(read: Read) -> Optional[View]:
    """A read proven in bounds whose subscripts are all affine."""
    subs = _affine_subs(read)
    if subs is None or not read.in_bounds:
        return None
    return _fit_loop_axes(View(read, subs))


def reversed_view(read: Read) -> Optional[View]:
    """A read proven in bounds whose subscripts are all affine and at least one of them is
    `c - v` (v a variable, c such that `size - 1 - c` is a constant): the read of the tensor
    reversed along those axes, at `v + size - 1 - c` there, cut to the points read. A contraction
    reading an adjoint backwards in time (`sum[t](adj[T - 1 - t, i] * h[t, j])`) is then a named
    op instead of a gather per point; a kernel reads it through an indexing map (IREE-36: no map
    takes a negative coefficient)."""
    subs = _affine_subs(read)
    if subs is None or not read.in_bounds:
        return None
    reverse = tuple(_runs_backwards(sub) for sub in subs)
    if not any(reverse):
        return None
    forward = tuple(size - 1 - sub if back else sub for sub, size, back in zip(subs, read.tensor.shape, reverse))
    if any(back and any(not hasattr(key, "extent") for key in sub.keys()) for sub, back in zip(forward, reverse)):
        return None                  # `c - v` on an axis whose size does not cancel c
    return windowed(_fit_loop_axes(View(read, forward, reverse=reverse)))


def _runs_backwards(sub: Lin) -> bool:
    """Whether `sub` is `c - v`: one variable, coefficient -1, starting at a constant."""
    if len(sub.terms) - sum(1 for key in sub.keys() if not hasattr(key, "extent")) != 1:
        return False
    var = next(key for key in sub.keys() if hasattr(key, "extent"))
    return sub.terms[var] == -1 and var.lo.is_const


def sliced_view(read: Read) -> Optional[View]:
    """A read proven in bounds whose subscripts are all affine and at least one of them fixed
    at build time (no index variable in it): the read of the slice at the others."""
    subs = _affine_subs(read)
    if subs is None or not read.in_bounds:
        return None
    fixed = tuple(sub if _is_fixed(sub) else None for sub in subs)
    if all(f is None for f in fixed) or all(f is not None for f in fixed):
        return None
    rest = tuple(sub for sub, f in zip(subs, fixed) if f is None)
    return _fit_loop_axes(View(read, rest, fixed=fixed))


def merged_view(read: Read) -> Optional[View]:
    """A read at `v / c` on an axis n long and `v % c` on one c long, v spanning 0..n c, its
    other subscripts variables spanning their whole axes: the read of the tensor with the
    quotient's axis moved before the remainder's (whose elements stay contiguous) and the two
    collapsed, at v (row-major: v = c (v / c) + v % c)."""
    parts = [_split_part(sub) for sub in read.subs]
    others = [_whole_axis_var(sub, size) for sub, size, part in zip(read.subs, read.tensor.shape, parts)
              if part is None]
    splits = [(axis, part) for axis, part in enumerate(parts) if part is not None]
    if len(splits) != 2 or None in others:
        return None
    (a, (op_a, var_a, c_a)), (b, (op_b, var_b, c_b)) = splits
    if var_a is not var_b or c_a != c_b or {op_a, op_b} != {"div", "rem"}:
        return None
    hi, lo = (a, b) if op_a == "div" else (b, a)
    shape = read.tensor.shape
    if shape[lo] != c_a or var_a.extent != shape[hi].scale(c_a):
        return None
    order = [k for k in range(len(shape)) if k != hi]
    order.insert(order.index(lo), hi)
    merges, subs = [], []
    for k in order:
        if k == lo:
            merges[-1].append(order.index(k))
            continue
        merges.append([order.index(k)])
        subs.append(Lin.of(var_a) if k == hi else affine.affine_of(read.subs[k]))
    return View(read, tuple(subs), order=tuple(order), merges=tuple(tuple(g) for g in merges))


def _split_part(sub: Value) -> Optional[tuple]:
    """(op, v, c) when `sub` is `v / c` or `v % c`, v a zero-based variable, c a positive constant."""
    if not (isinstance(sub, Op) and sub.op in ("div", "rem")):
        return None
    numer, denom = affine.affine_of(sub.args[0]), _scalar_constant(sub.args[1])
    if numer is None or not isinstance(denom, int) or denom <= 0 or numer.const or len(numer.terms) != 1:
        return None
    (var, coeff), = numer.terms.items()
    if coeff != 1 or not hasattr(var, "extent") or var.lo != 0:
        return None
    return sub.op, var, denom


def _whole_axis_var(sub: Value, size: Lin):
    lin = affine.affine_of(sub)
    var = None if lin is None else _loop_alone(lin)
    return var if var is not None and var.lo == 0 and var.extent == size else None


def _is_fixed(sub: Lin) -> bool:
    return not any(hasattr(key, "extent") for key in sub.keys())


def flattened_view(read: Read, sliced: bool = False) -> Optional[View]:
    """A read with at least one subscript `c1 * v1 + c2 * v2 + ..` that numbers the points of
    its variables in row-major order (zero-based, constant extents) over a whole axis; with
    `sliced`, any subscripts fixed at build time take a slice first (sliced_view)."""
    base = sliced_view(read) if sliced else None
    subs = base.subs if base is not None else _affine_subs(read)
    if subs is None or not read.in_bounds:
        return None
    splits, new_subs, keep, skip = [], [], [], []
    for sub, size in zip(subs, base.base_shape if base is not None else read.tensor.shape):
        digits = _mixed_radix(sub - sub.const, size)
        span = math.prod(n for _, n in digits) if digits else None
        if digits and span != size and not (size.is_const and sub.const + span <= size.const):
            digits = None
        splits.append(tuple(n for _, n in digits) if digits else ())
        new_subs.extend(Lin.of(v) for v, _ in digits) if digits else new_subs.append(sub)
        cut = digits is not None and span != size
        keep.append(Lin(span) if cut else None)
        skip.append(sub.const if cut else 0)
    if not any(splits):
        return None
    cut = any(k is not None for k in keep)
    return View(read, tuple(new_subs), fixed=base.fixed if base is not None else (), splits=tuple(splits),
                keep=tuple(keep) if cut else (), skip=tuple(skip) if cut else ())


def padded_read(select: Value) -> Optional[PaddedRead]:
    """`select(bounds test of R, branch, constant)` where R is a read in `branch` (the branch
    itself, or a factor of it when the constant is 0) and the test is exactly R's bounds test:
    each conjunct bounds one subscript of R by 0 or its axis, and every side a subscript can
    cross is tested. Subscripts must be affine; a side they cross by a symbolic amount is not
    recognised (the pad must be a constant)."""
    if not (isinstance(select, Op) and select.op == "select") or select.dtype.is_bool:
        return None
    cond, branch, other = select.args
    fill = _scalar_constant(other)
    tests = _conjuncts(cond)
    if fill is None or tests is None:
        return None
    for read, pad_value in _guarded_reads(branch, fill):
        view = _padded_view(read, tests, pad_value)
        if view is None:
            continue
        others = [a for a in _factors(branch) if a is not read]
        twins = tuple(a for a in others if _same_point(a, read))
        if all(a.in_bounds for a in others if isinstance(a, Read) and a not in twins):
            return PaddedRead(view, branch, twins)
    return None


def _guarded_reads(branch: Value, fill) -> list[tuple[Read, object]]:
    """Reads whose padding with the given value makes `branch` equal the constant `fill`."""
    if isinstance(branch, Read):
        return [(branch, fill)]
    if isinstance(branch, Op) and branch.op == "mul" and fill == 0:
        return [(a, 0) for a in branch.args if isinstance(a, Read)]
    return []


def _factors(branch: Value) -> list:
    return list(branch.args) if isinstance(branch, Op) else [branch]


def _same_point(a: Value, read: Read) -> bool:
    """Whether `a` reads the same element of the same tensor as `read`."""
    return isinstance(a, Read) and a.tensor is read.tensor and _affine_subs(a) == _affine_subs(read)


def _padded_view(read: Read, tests: set, pad_value) -> Optional[View]:
    subs = _affine_subs(read)
    if subs is None or read.in_bounds:
        return None
    allowed, lo_pad, hi_pad = set(), [], []
    for sub, size in zip(subs, read.tensor.shape):
        lo_test, hi_test = sub, size - 1 - sub        # each must be >= 0 inside the tensor
        allowed |= {lo_test, hi_test}
        below, above = _crossings(sub, size)
        if below is None or above is None:
            return None
        if (below and lo_test not in tests) or (above and hi_test not in tests):
            return None                             # a side the read crosses is not tested
        lo_pad.append(below)
        hi_pad.append(above)
    if not tests <= allowed:
        return None                                 # a test that is not a bounds test of the read
    shifted = tuple(sub + lo for sub, lo in zip(subs, lo_pad))
    return _fit_loop_axes(View(read, shifted, (), tuple(lo_pad), tuple(hi_pad), pad_value))


EDGE = "edge"          # View.pad_value of a padding that copies the axis' first and last elements


def clamped_view(read: Read) -> Optional[View]:
    """`x[min(max(a, 0), n - 1), ..]` (or `max(min(a, n - 1), 0)`), each clamped subscript an affine
    `a` that passes its axis by at most a constant, the others affine and in bounds: a read at
    `a` of x padded with copies of its edges."""
    subs, lo_pad, hi_pad = [], [], []
    for sub, size in zip(read.subs, read.tensor.shape):
        inner = _clamped(sub, size)
        lin = inner if inner is not None else affine.affine_of(sub)
        if lin is None or any(getattr(k, "extent", 0) is None for k in lin.keys()):
            return None
        below, above = _crossings(lin, size)
        if below is None or above is None or (inner is None and (below or above)):
            return None
        subs.append(lin + below)
        lo_pad.append(below)
        hi_pad.append(above)
    if not any(lo_pad) and not any(hi_pad):
        return None                     # nothing reaches past an edge: a plain read does
    return _fit_loop_axes(View(read, tuple(subs), (), tuple(lo_pad), tuple(hi_pad), EDGE))


def _clamped(sub: Value, size: Lin) -> Optional[Lin]:
    """The affine `a` of `sub` = `min(max(a, 0), size - 1)` or `max(min(a, size - 1), 0)`."""
    if not (isinstance(sub, Op) and sub.op in ("min", "max") and isinstance(sub.args[0], Op)):
        return None
    inner, bound = sub.args
    if inner.op not in ("min", "max") or inner.op == sub.op:
        return None
    a, other = inner.args
    low, high = (other, bound) if sub.op == "min" else (bound, other)
    if affine.affine_of(low) != Lin(0) or affine.affine_of(high) != size - 1:
        return None
    return affine.affine_of(a)


def windowed(view: View) -> View:
    """`view` with each axis read at `stride * v + offset` (one variable v, offset not 0) cut to
    the points it reads (`tensor.extract_slice` with that offset and stride), so that the axis
    is read at v alone. IREE-24: a map result `d_k + c` (k > 0) in the first operand crashes
    IREE, and fusion can bring any operand's map to the front, so no map has such a result."""
    windows, subs = [], []
    for sub in view.subs:
        window = _window(sub)
        windows.append(window)
        subs.append(sub if window is None else _loop_index(sub))
    if not any(windows):
        return view
    return replace(view, subs=tuple(subs), windows=tuple(windows))


def _window(sub: Lin) -> Optional[Window]:
    if len(sub.terms) != 1:
        return None
    (var, stride), = sub.terms.items()
    if stride < 1 or not hasattr(var, "extent") or not var.lo.is_const or var.extent == 1:
        return None
    offset = sub.const + stride * var.lo.const        # the coordinate the first point reads
    return Window(offset, stride, var.extent) if offset else None


def _loop_index(sub: Lin) -> Lin:
    """The subscript of a windowed axis: v's loop index (v - lo)."""
    (var, _), = sub.terms.items()
    return Lin.of(var) - var.lo.const


def _fit_loop_axes(view: View) -> View:
    """linalg takes a loop's trip count from every operand axis indexed by that loop alone, so
    such an axis must be exactly the loop's extent long: a read of a prefix (`x[i]` for i in
    0..N - 1 of an N-long x, or `x[i - 1]` padded by one in front) keeps only what is read."""
    keep, cut = [], False
    for axis, (sub, size) in enumerate(zip(view.subs, view.shape)):
        var = _loop_alone(sub)
        pads = view.pad_lo[axis] + view.pad_hi[axis] if view.pad_lo else 0
        if var is None or var.extent == size:
            keep.append(None)
        else:
            keep.append(var.extent - pads)
            cut = True
    return replace(view, keep=tuple(keep)) if cut else view


def _loop_alone(sub: Lin):
    """The variable v when the subscript is v's loop index (v - lo), else None."""
    if len(sub.terms) != 1:
        return None
    (var, coeff), = sub.terms.items()
    if coeff != 1 or not hasattr(var, "extent") or not var.lo.is_const or sub.const + var.lo.const != 0:
        return None
    return var


def _crossings(sub: Lin, size: Lin) -> tuple:
    """How far an affine subscript passes the start and the end of an axis of `size` (see
    _overhang): (below, above)."""
    low, high = affine.bounds(sub)
    return _overhang(-low), _overhang(high - (size - 1))


def _overhang(excess: Lin) -> Optional[int]:
    """How far a subscript's extreme passes the axis end (`excess` > 0 is outside): 0 when it
    never does, the constant when it passes by a constant, None when that depends on sizes."""
    if affine.surely_nonnegative(-excess):
        return 0
    return excess.const if excess.is_const else None


def _conjuncts(cond: Value) -> Optional[set]:
    """`cond` as a set of Lins that must all be >= 0, when it is a conjunction of comparisons
    of affine integer values."""
    if isinstance(cond, Op) and cond.op == "and":
        parts = [_conjuncts(a) for a in cond.args]
        return None if any(p is None for p in parts) else set().union(*parts)
    if not (isinstance(cond, Op) and cond.op in ("ge", "gt", "le", "lt")):
        return None
    a, b = (affine.affine_of(x) for x in cond.args)
    if a is None or b is None:
        return None
    return {{"ge": a - b, "gt": a - b - 1, "le": b - a, "lt": b - a - 1}[cond.op]}


def _mixed_radix(sub: Lin, size: Lin) -> Optional[list[tuple]]:
    """[(var, extent)] outer first when `sub` is sum(v_k * prod(extents after k)) over two or
    more zero-based variables of constant extent (the caller checks that the product of the
    extents fits the axis `size`)."""
    if sub.const or len(sub.terms) < 2:
        return None
    terms = sorted(sub.terms.items(), key=lambda kv: -kv[1])
    stride = 1
    for var, coeff in reversed(terms):
        if not hasattr(var, "extent") or var.lo != 0 or not var.extent.is_const or coeff != stride:
            return None
        stride *= var.extent.const
    return [(var, var.extent.const) for var, _ in terms]


def _affine_subs(read: Read) -> Optional[tuple]:
    subs = tuple(affine.affine_of(s) for s in read.subs)
    if any(s is None or any(getattr(k, "extent", 0) is None for k in s.keys()) for s in subs):
        return None
    return subs


def _scalar_constant(v: Value):
    if isinstance(v, Const) and v.array.ndim == 0:
        return v.array.item()
    return None


# ------------------------------------------------------------------------------ emission

def view_tensor(lw, view: View, fenced: bool = False) -> Optional[ir.Value]:
    """The viewed tensor at function level (memoized, so kernels reading one view share it);
    None when the read's tensor is not a device tensor. With `fenced`, a computed tensor is read
    where fence_sources put it through a barrier."""
    key = (id(view.read.tensor), view.fixed, view.reverse, view.keep, view.skip, view.pad_lo, view.pad_hi, view.pad_value, view.splits,
           view.windows, view.order, view.merges, fenced)
    if key not in lw.views:
        constant = _constant_slice(view)
        source = lw.lower(view.read.tensor if constant is None else lw.keep(constant))
        cut = False
        if fenced and constant is None:
            source, cut = _behind_fence(lw, view, source)
        if not is_tensor(source):
            return None
        if view.fixed and constant is None:
            source = _slice(lw, source, view)
        if view.reverse:
            source = _reverse(lw, source, view)
        if view.keep and not cut:
            source = _prefix(lw, source, view)
        if view.pad_lo:
            source = _pad(lw, source, view)
        if view.splits:
            source = _expand(lw, source, view)
        if view.windows:
            source = _cut_windows(lw, source, view)
        if view.order:
            source = _reorder(lw, source, view)
        lw.views[key] = source
    return lw.views[key]


def fence_sources(lw, views: list[View]) -> None:
    """The computed tensors `views` read, each through a barrier (memoized), for
    view_tensor(.., fenced=True): the barrier sits before each view's slices, reshapes and
    transposes, so IREE fuses the reshapes and transposes into its encoding of the operand
    while the tensor's producer stays out. A tensor whose views here each read one aligned part of an inner axis (attention's
    q, k and v in qkv) passes the barrier part-major (_part_major): behind it, IREE copies a
    slice of an inner axis in a dispatch of its own, but reads a slice of the leading one in
    place."""
    todo: dict = {}
    for view in views:
        source = view.read.tensor
        if isinstance(source, (Input, Const)) or _fenced_key(source) in lw.views:
            continue
        value = lw.lower(source)
        if is_tensor(value):
            todo[_fenced_key(source)] = _part_major(lw, value, [v for v in views if v.read.tensor is source])
    if todo:
        fenced = [fence(lw.target, t.value if isinstance(t, _Parts) else t) for t in todo.values()]
        lw.views.update((key, replace(t, value=f) if isinstance(t, _Parts) else f)
                        for (key, t), f in zip(todo.items(), fenced))


def _fenced_key(source: Value) -> tuple:
    return ("fenced", id(source))


@dataclass(frozen=True)
class _Parts:
    """A computed tensor fenced part-major: its `axis` split into parts `width` long, the axis
    of the parts moved first (the others in their order)."""
    value: ir.Value
    axis: int
    width: int


def _part(view: View) -> Optional[tuple[int, int, int]]:
    """(axis, width, k) when the view first cuts the k-th part `width` long of one inner axis
    of constant size (a multiple of the width), and reads the other axes whole."""
    if view.fixed or view.reverse or view.pad_lo or not view.keep:
        return None
    cut = [axis for axis, kept in enumerate(view.keep) if kept is not None]
    if len(cut) != 1 or cut[0] == 0:
        return None
    axis = cut[0]
    size, width = view.read.tensor.shape[axis], view.keep[axis]
    offsets = list(view.skip) or [0] * len(view.keep)
    if not (size.is_const and width.is_const) or any(o for a, o in enumerate(offsets) if a != axis):
        return None
    if size.const % width.const or offsets[axis] % width.const:
        return None
    return axis, width.const, offsets[axis] // width.const


def _part_major(lw, value: ir.Value, views: list[View]):
    """`value` (the tensor `views` read) with the axis the views cut split into their parts,
    the parts' axis first, as a _Parts; `value` itself unless every view reads one part of
    one axis, all parts of one width."""
    parts = {_part(view) for view in views}
    layouts = {part[:2] for part in parts if part is not None}
    if None in parts or len(layouts) != 1:
        return value
    (axis, width), = layouts
    shape = list(views[0].read.tensor.shape)
    split = shape[:axis] + [Lin(shape[axis].const // width), Lin(width)] + shape[axis + 1:]
    groups = [[k] for k in range(axis)] + [[axis, axis + 1]] + [[k + 1] for k in range(axis + 1, len(shape))]
    element = ir.RankedTensorType(value.type).element_type
    expanded = tensor.expand_shape(ir.RankedTensorType.get(_static(split), element), value, groups,
                                   lw.sizes.dynamic_dims(split), _static(split))
    order = [axis] + [k for k in range(len(split)) if k != axis]
    moved = linalg.transpose(expanded, outs=[lw.sizes.empty(tuple(split[k] for k in order), element)],
                             permutation=order)
    return _Parts(moved.results[0], axis, width)


def _behind_fence(lw, view: View, source: ir.Value) -> tuple:
    """The tensor a fenced view reads behind its barrier (fence_sources), and whether that is
    already the view's cut: its part of a tensor fenced part-major. A view of such a tensor
    that reads no part of that layout reads the tensor through a barrier of its own."""
    fenced = lw.views.get(_fenced_key(view.read.tensor), source)
    if not isinstance(fenced, _Parts):
        return fenced, False
    part = _part(view)
    if part is None or part[:2] != (fenced.axis, fenced.width):
        key = ("fenced whole", id(view.read.tensor))
        if key not in lw.views:
            lw.views[key] = fence(lw.target, source)
        return lw.views[key], False
    shape = _kept_shape(view)
    result = ir.RankedTensorType.get(_static(shape), ir.RankedTensorType(source.type).element_type)
    offsets = [part[2]] + [0] * len(shape)
    cut = tensor.extract_slice(result, fenced.value, [], lw.sizes.dynamic_dims(shape), [], offsets,
                               [1] + _static(shape), [1] * len(offsets))
    return cut, True


def split_groups(splits: tuple) -> list[list[int]]:
    """The reassociation of a split: per original axis, the viewed axes it became."""
    groups, k = [], 0
    for split in splits:
        width = len(split) or 1
        groups.append(list(range(k, k + width)))
        k += width
    return groups


def _kept_shape(view: View) -> list:
    return [size if not view.keep or view.keep[axis] is None else view.keep[axis]
            for axis, size in enumerate(view.base_shape)]


def _constant_slice(view: View) -> Optional[Const]:
    """The slice at build-time coordinates of a build-time array (a layer's weights taken from a
    stack), as a constant of its own: IREE packs a constant matmul operand once, when it builds
    the module, but a slice cut from a larger constant at every call (4x the matmul's time)."""
    tensor = view.read.tensor
    if not view.fixed or not isinstance(tensor, Const) or any(at is not None and not at.is_const for at in view.fixed):
        return None
    index = tuple(slice(None) if at is None else at.const for at in view.fixed)
    return Const(np.ascontiguousarray(tensor.array[index]), tensor.span)


def _slice(lw, source: ir.Value, view: View) -> ir.Value:
    """The rank-reduced slice at the fixed coordinates (a constant or a size expression each).
    A slice with run-time sizes passes a barrier (IREE-33: fused into a matmul's packing, it asks
    for a vector of 2^53 - 1 rows)."""
    full = view.read.tensor.shape
    offsets = [Lin(0) if at is None else at for at in view.fixed]
    sizes = [size if at is None else Lin(1) for at, size in zip(view.fixed, full)]
    result = ir.RankedTensorType.get(_static(view.base_shape), element_type(view.read.tensor.dtype))
    sliced = tensor.extract_slice(result, source, lw.sizes.dynamic_dims(offsets), lw.sizes.dynamic_dims(sizes), [],
                                  _static(offsets), _static(sizes), [1] * len(full))
    return fence(lw.target, sliced) if DYNAMIC in _static(view.base_shape) else sliced


def _static(shape) -> list:
    return [d.const if d.is_const else DYNAMIC for d in shape]


def _reverse(lw, source: ir.Value, view: View) -> ir.Value:
    """A copy of `source` with the axes of `view.reverse` taken last element first: each point
    reads its mirror through tensor.extract (a map `size - 1 - d` needs the size as a symbol,
    which linalg maps do not take, and IREE-36 rules out negative coefficients)."""
    element = ir.RankedTensorType(source.type).element_type
    rank = len(view.base_shape)
    identity = ir.AffineMap.get_identity(rank)
    op = linalg.GenericOp_([], [lw.sizes.empty(view.base_shape, element)], [identity],
                           [linalg.IteratorType.parallel] * rank)
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        at = []
        for axis, back in enumerate(view.reverse):
            index = linalg.IndexOp(axis).result
            if back:
                last = arith.subi(tensor.dim(source, index_const(axis)), index_const(1))
                index = arith.subi(last, index)
            at.append(index)
        linalg.YieldOp([tensor.extract(source, at)])
    if lw.target.has_defect("IREE-43") and DYNAMIC in _static(view.base_shape):
        return fence(lw.target, op.result)     # IREE-43: the gather fused into a matmul's packing of run-time size
    return op.result


def _prefix(lw, source: ir.Value, view: View) -> ir.Value:
    shape = _kept_shape(view)
    result = ir.RankedTensorType.get([d.const if d.is_const else DYNAMIC for d in shape],
                                     element_type(view.read.tensor.dtype))
    dynamic = lw.sizes.dynamic_dims(shape)
    static = [d.const if d.is_const else DYNAMIC for d in shape]
    rank = len(shape)
    offsets = list(view.skip) or [0] * rank
    return tensor.extract_slice(result, source, [], dynamic, [], offsets, static, [1] * rank)


def _pad(lw, source: ir.Value, view: View) -> ir.Value:
    dtype = view.read.tensor.dtype
    if view.pad_value == EDGE:
        return _edge_pad(lw, source, view)
    if view.pad_lo[-1] != 0:
        source = written_shifted(lw.target, source)
    shape = _padded_shape(view)
    result = ir.RankedTensorType.get([d.const if d.is_const else DYNAMIC for d in shape], element_type(dtype))
    op = tensor.PadOp(result, source, [], [], list(view.pad_lo), list(view.pad_hi))
    block = op.regions[0].blocks.append(*([index_type()] * len(shape)))
    with ir.InsertionPoint(block):
        tensor.YieldOp(scalar_ops.constant(dtype, _as_dtype(view.pad_value, dtype)))
    return op.result


def _edge_pad(lw, source: ir.Value, view: View) -> ir.Value:
    """`source` padded by `pad_lo`/`pad_hi` copies of each axis' first and last element: each
    point reads the source at its coordinates clamped into the source (one gather pass)."""
    dtype = view.read.tensor.dtype
    shape = _padded_shape(view)
    out = lw.sizes.empty(tuple(shape), element_type(dtype))
    last = [arith.subi(tensor.dim(source, index_const(k)), index_const(1)) for k in range(len(shape))]
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(len(shape)))
    op = linalg.GenericOp([out.type], [], [out], ir.ArrayAttr.get([identity]),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * len(shape)))
    block = op.regions[0].blocks.append(element_type(dtype))
    with ir.InsertionPoint(block):
        at = [arith.minsi(arith.maxsi(arith.subi(linalg.IndexOp(k).result, index_const(lo)), index_const(0)), last[k])
              for k, lo in enumerate(view.pad_lo)]
        linalg.YieldOp([tensor.extract(source, at)])
    return op.result


def _padded_shape(view: View) -> list:
    return [size + lo + hi for size, lo, hi in zip(_kept_shape(view), view.pad_lo, view.pad_hi)]


def _as_dtype(value, dtype):
    return np.asarray(value).astype(dtype.numpy).item()


def _cut_windows(lw, source: ir.Value, view: View) -> ir.Value:
    shape = view.shape
    static = [d.const if d.is_const else DYNAMIC for d in shape]
    result = ir.RankedTensorType.get(static, ir.RankedTensorType(source.type).element_type)
    offsets = [0 if w is None else w.offset for w in view.windows]
    strides = [1 if w is None else w.stride for w in view.windows]
    return tensor.extract_slice(result, source, [], lw.sizes.dynamic_dims(shape), [], offsets, static, strides)


def _reorder(lw, source: ir.Value, view: View) -> ir.Value:
    """The axes in `view.order`, then the groups of `view.merges` (if any) collapsed."""
    element = ir.RankedTensorType(source.type).element_type
    unmerged = replace(view, merges=()).shape
    if lw.target.has_defect("IREE-41"):
        source = fence(lw.target, source)      # IREE-41: fused with a batch_matmul computing it, wrong values
    moved = linalg.transpose(source, outs=[lw.sizes.empty(unmerged, element)], permutation=list(view.order))
    if not view.merges:
        if lw.target.has_defect("IREE-43") and view.splits and DYNAMIC in _static(unmerged):
            return fence(lw.target, moved.results[0])   # IREE-43: patches of a run-time batch, ukernels
        return moved.results[0]
    result = ir.RankedTensorType.get(_static(view.shape), element)
    return tensor.collapse_shape(result, moved.results[0], [list(g) for g in view.merges])


def _expand(lw, source: ir.Value, view: View) -> ir.Value:
    groups = split_groups(view.splits)
    shape = replace(view, windows=(), order=(), merges=()).shape     # as split, before the rest
    static = [d.const if d.is_const else DYNAMIC for d in shape]
    result = ir.RankedTensorType.get(static, ir.RankedTensorType(source.type).element_type)
    return tensor.expand_shape(result, source, groups, lw.sizes.dynamic_dims(shape), static)
