"""Window stages: convolutions (channels first or last, or spatial only, 1 to 3 spatial axes),
depthwise convolutions and poolings, with strides 1-3, dilations 1-2 and padding written as a
bounds guard (symmetric, asymmetric, with a zero or non-zero constant), plus near misses: a
weight or result in another axis order, a guard tighter than the bounds or testing a result
index, the guard around one factor only, a literal factor in the product.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace

from fuzz.dense.builder import Builder, Tensor, plain_read
from fuzz.dense.spec import Affine, Conjunct, Loop, Read, Reduction, Size, Step, Sub

SPATIAL_SIZES = (1, 2, 4, 5, 6, 7, 8, 9, 9, 11, 12, 13, 14, 16, 17, 19, 28)
SMALL_SPATIAL_SIZES = (1, 2, 3, 4, 5, 6, 7, 9)         # three spatial axes
CHANNELS = (1, 1, 2, 3, 4, 5, 8, 24)     # one input channel is its own rule on llvm-cpu; 24 makes
#                                          a 1-d window deep enough to run as a matmul (window_matmuls)
FILTERS = (1, 2, 3, 4, 7, 8, 9, 16)
BATCH = (1, 2, 3)
AXIS_NAMES = {1: ("w",), 2: ("h", "w"), 3: ("d", "h", "w")}
FILLS = (0.0,) * 4 + (-1.0, 0.5)           # a non-zero one keeps a product's guard a select
PATCH_SHARE = 0.3              # convolutions over patches (stride = window), where they can be
PATCHES = (2, 2, 3, 4)
SKIP_SHARE, SKIP_STREAM = 0.5, 0x736B6970     # poolings leaving one window point out (_skipped_point)
CLAMP_SHARE, CLAMP_STREAM = 0.3, 0x636C6D70   # windows reading clamped into the image (_clamps)
PAIRS_SHARE = 0.3              # channels-first poolings whose last window axis is 2 points 2 apart (a
#                                CNN's pool; llvm-cpu reads its rows as pairs, einc/mlir/dense/pooling_pairs.py)


@dataclass(frozen=True)
class WindowAxis:
    """One spatial axis: the result's point `o` reads the input at `stride * o + dilation * k
    - pad_lo` for k in 0..kernel; `out` results."""
    size: Size
    kernel: int
    stride: int
    dilation: int
    pad_lo: int
    pad_hi: int
    out: Size

    @property
    def span(self) -> int:
        return self.dilation * (self.kernel - 1) + 1

    def crosses_low(self) -> bool:
        return self.pad_lo > 0

    def crosses_high(self) -> bool:
        last = self.stride * (self.out.value - 1) + self.span - 1 - self.pad_lo
        return last > self.size.value - 1 or (not self.size.static and self.pad_hi > 0)


def window_axis(b: Builder, size: Size) -> WindowAxis:
    rng = b.rng
    for _ in range(20):
        kernel, stride = rng.choice((1, 2, 2, 3, 3, 3, 3, 4, 5, 5)), rng.choice((1, 1, 1, 2, 2, 3))
        dilation = 2 if rng.random() < 0.2 else 1
        span = dilation * (kernel - 1) + 1
        style = rng.random()
        lo, hi = (0, 0) if style < 0.35 else ((span - 1) // 2,) * 2 if style < 0.7 else \
            (rng.randint(0, span - 1), rng.randint(0, span - 1))
        full = size.plus(lo + hi).windows(span, stride)
        if full.value > 1 or (full.value == 1 and rng.random() < 0.3):    # one result: a near miss
            break
    else:
        kernel = stride = dilation = 1
        lo = hi = 0
        full = size
    out = full
    if full.static and full.value > 1 and rng.random() < 0.1:
        out = Size.of(rng.randint(1, full.value - 1))        # fewer results than would fit
    return WindowAxis(size, kernel, stride, dilation, lo, hi, out)


def patch_axis(b: Builder, size: Size) -> WindowAxis:
    """Non-overlapping windows (stride = window, no dilation or padding) over a constant extent:
    einc turns such a convolution into a matmul of patches (einc/mlir/dense/patch_matmuls.py);
    the input past the last whole window is left unread."""
    kernel = b.rng.choice([k for k in PATCHES if k <= size.value] or [1])
    return WindowAxis(size, kernel, kernel, 1, 0, 0, Size.of(size.value // kernel))


def pair_axis(size: Size) -> WindowAxis:
    """2 points 2 apart, unpadded, as many windows as fit (the last column of an odd width unread)."""
    return WindowAxis(size, 2, 2, 1, 0, 0, size.windows(2, 2))


def fresh_image(b: Builder, layouts: tuple, named: float = 0.4) -> Tensor:
    """An input image; each spatial size a named dim with chance `named`."""
    rng = b.rng
    layout = rng.choice(layouts)
    rank = rng.choice((1, 2, 2, 2, 2, 3))
    sizes = SMALL_SPATIAL_SIZES if rank == 3 else SPATIAL_SIZES
    spatial = [b.size(rng.choice(sizes), named) for _ in range(rank)]
    n, c = b.size(rng.choice(BATCH), 0.6), b.size(rng.choice(CHANNELS), 0.2)
    shape = {"first": [n, c] + spatial, "last": [n] + spatial + [c], "spatial": spatial}[layout]
    return Tensor(b.input("x", tuple(shape)), tuple(shape), layout)


def one_channel_image(b: Builder) -> Tensor:
    """A batch of grayscale images, as a CNN's first convolution reads them (llvm-cpu gives
    such a convolution a second channel of zeros, einc/mlir/dense/cpu_convolutions.py)."""
    rng = b.rng
    shape = (b.size(rng.choice(BATCH), 0.6), Size.of(1)) + tuple(
        b.size(rng.choice((5, 7, 8, 12, 14, 16, 19, 28)), 0.3) for _ in range(2))
    return Tensor(b.input("x", shape), shape, "first")


# ------------------------------------------------------------------------------ stages

def convolution(b: Builder, source: Tensor | None) -> Tensor:
    patches = b.rng.random() < PATCH_SHARE
    layouts = ("first", "last") if patches else ("first", "first", "first", "last", "spatial")
    x = source or fresh_image(b, layouts, 0.0 if patches else 0.4)
    return _window_stage(b, x, "conv", patches)


def depthwise(b: Builder, source: Tensor | None) -> Tensor:
    x = source or fresh_image(b, ("first", "last"))
    return _window_stage(b, x, "depthwise")


def pooling(b: Builder, source: Tensor | None) -> Tensor:
    x = source or fresh_image(b, ("first", "last", "last", "spatial"))
    return _window_stage(b, x, "pool")


def _window_stage(b: Builder, x: Tensor, op: str, patches: bool = False) -> Tensor:
    """With `patches`, non-overlapping windows where the sizes are fixed and there are filters."""
    names = AXIS_NAMES[x.spatial_rank]
    spatial_sizes = x.shape[2:] if x.layout == "first" else x.shape[1:-1] if x.layout == "last" else x.shape
    patches = patches and x.layout in ("first", "last") and all(s.static for s in spatial_sizes)
    axes = [(patch_axis if patches else window_axis)(b, size) for size in spatial_sizes]
    if op == "pool" and x.layout == "first" and spatial_sizes[-1].value >= 2 and b.rng.random() < PAIRS_SHARE:
        axes[-1] = pair_axis(spatial_sizes[-1])
    plan = _guard_plan(b, axes, names)
    subs = [Sub(_window_index(b, a, name), f"i{name}" if plan and b.written(0.6) else None)
            for a, name in zip(axes, names)]
    guard = [Conjunct(subs[on] if isinstance(on, int) else Sub(Affine.of(on)), lower, bound, b.rng.randrange(3))
             for on, lower, bound in plan]
    clamped = bool(guard) and _clamps(b, axes)
    batch_loop = channels_loop = None
    if x.layout != "spatial":
        batch_loop = Loop("n", x.shape[0], b.written(0.3))
        channels_loop = Loop("c", x.shape[1] if x.layout == "first" else x.shape[-1], b.written())
    out_loops = [Loop(name, a.out, bool(guard) or a.out != _full(a) or b.written()) for a, name in zip(axes, names)]
    if clamped:             # the edges replicated instead of the padding: reads clamped into the image
        subs = [replace(sub, clamp=a.size) if a.crosses_low() or a.crosses_high() else sub
                for sub, a in zip(subs, axes)]
        guard = []
    kernel_loops = [Loop(f"k{name}", Size.of(a.kernel), op == "pool" or b.written()) for a, name in zip(axes, names)]
    image = Read(x.name, tuple(_layout_order(x.layout, Sub(Affine.of("n")), Sub(Affine.of("c")), subs)))
    if op == "pool":
        return _pool(b, x, image, batch_loop, channels_loop, out_loops, kernel_loops, guard)
    return _convolve(b, x, op, image, batch_loop, channels_loop, out_loops, kernel_loops, guard)


def _full(a: WindowAxis) -> Size:
    return a.size.plus(a.pad_lo + a.pad_hi).windows(a.span, a.stride)


def _window_index(b: Builder, a: WindowAxis, name: str) -> Affine:
    terms = [(name, a.stride), (f"k{name}", a.dilation)]
    return Affine(tuple(terms if b.written() else terms[::-1]), -a.pad_lo)


def _guard_plan(b: Builder, axes: list, names: tuple) -> list:
    """The tests of a padded read as (what it tests: a spatial axis number or a result loop,
    lower, bound): each side a window crosses; sometimes a side it does not cross, a tighter
    bound or a test of a result index (near misses)."""
    rng, plan = b.rng, []
    for k, a in enumerate(axes):
        if a.crosses_low() or rng.random() < 0.05:
            plan.append((k, True, Size.of(0)))
        if a.crosses_high() or rng.random() < 0.05:
            plan.append((k, False, a.size))
    if plan and b.near(0.08):
        plan.append((rng.randrange(len(axes)), True, Size.of(1)))          # tighter than the bounds
    if plan and b.near(0.08):
        plan.append((names[-1], True, Size.of(1)))                         # a result index
    rng.shuffle(plan)
    return plan


def _layout_order(layout: str, n, c, spatial: list) -> list:
    return {"first": [n, c] + spatial, "last": [n] + spatial + [c], "spatial": spatial}[layout]


def _pool(b: Builder, x: Tensor, image: Read, batch_loop, channels_loop, out_loops, kernel_loops, guard) -> Tensor:
    rng = b.rng
    skip = _skipped_point(b, kernel_loops)
    kind = rng.choice(("max", "max", "min", "sum"))
    loops = _layout_order(x.layout, batch_loop, channels_loop, out_loops)
    reduction = Reduction(kind, tuple(kernel_loops), (image,), tuple(guard), rng.choice(FILLS),
                          factor=1.0 if b.near(0.08) else None)
    if skip and not reduction.wheres():
        reduction = replace(reduction, skip=skip)
    steps = b.steps(channels_loop)
    if kind == "sum" and rng.random() < 0.5:
        steps = (Step("divide", constant=float(_product(k.extent.value for k in kernel_loops))),) + steps
    name = b.define(tuple(loops), reduction, steps)
    return Tensor(name, tuple(loop.extent for loop in loops), x.layout)


def _clamps(b: Builder, axes: list) -> bool:
    """Now and then a window that crosses the image's edges reads clamped into it, `X[min(max(h +
    kh - 1, 0), H - 1), ..]`, in place of its padding; never with a padding the read does not
    cross (a near miss)."""
    clamps = _side_stream(b, CLAMP_STREAM)
    return clamps.random() < CLAMP_SHARE and any(a.crosses_low() or a.crosses_high() for a in axes)


def _skipped_point(b: Builder, kernel_loops: list) -> tuple:
    """Now and then a window point the pooling leaves out, `where kh != 1 || kw != 1`; only where
    the window has a point besides it and binds no names (`where ih = ..`)."""
    masks = _side_stream(b, SKIP_STREAM)
    if masks.random() >= SKIP_SHARE or _product(k.extent.value for k in kernel_loops) < 2:
        return ()
    return tuple(masks.randrange(k.extent.value) for k in kernel_loops)


def _side_stream(b: Builder, salt: int) -> random.Random:
    """A stream derived from the builder's without taking from it, so that what it draws leaves
    every other program as it was; from the state's ints alone (hash(None) varies by process)."""
    return random.Random(hash(b.rng.getstate()[1]) ^ salt)


def _convolve(b: Builder, x: Tensor, op: str, image: Read, batch_loop, channels_loop, out_loops,
              kernel_loops, guard) -> Tensor:
    rng = b.rng
    layout, odd = x.layout, False
    if op == "depthwise":
        weight_loops = [channels_loop] + kernel_loops if layout == "first" else kernel_loops + [channels_loop]
        summed, filters = kernel_loops, channels_loop
        loops = _layout_order(layout, batch_loop, channels_loop, out_loops)
    else:
        filters = Loop("o", b.size(rng.choice(FILTERS), 0.15), b.written()) if layout != "spatial" else None
        weight_loops = _conv_weight_axes(b, layout, filters, channels_loop, kernel_loops)
        summed = kernel_loops + ([channels_loop] if channels_loop else [])
        loops = _layout_order(layout, batch_loop, filters, out_loops)
    if b.near(0.08):                                 # a weight in another axis order
        rng.shuffle(weight_loops)
    if b.near(0.06):                                 # a result in another axis order
        rng.shuffle(loops)
        odd = True
    weight = b.input("w", tuple(loop.extent for loop in weight_loops))
    weight_read = plain_read(weight, weight_loops)
    reads = (image, weight_read) if rng.random() < 0.7 else (weight_read, image)
    summed = list(summed)
    rng.shuffle(summed)
    fill = rng.choice(FILLS[-2:]) if guard and b.near(0.3) else 0.0
    reduction = Reduction("sum", tuple(summed), reads, tuple(guard), fill,
                          guard_first_only=bool(guard) and reads[0] is image and b.near(0.25),
                          factor=1.0 if b.near(0.06) else None)
    name = b.define(tuple(loops), reduction, b.steps(filters))
    return Tensor(name, tuple(loop.extent for loop in loops), "other" if odd else layout)


def _conv_weight_axes(b: Builder, layout: str, filters: Loop, channels: Loop | None, kernel: list) -> list:
    if layout == "spatial":
        return list(kernel)
    if layout == "first":
        return [channels, filters] + kernel if b.near(0.15) else [filters, channels] + kernel
    return kernel + [channels, filters] if b.written() else [filters] + kernel + [channels]


def _product(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out
