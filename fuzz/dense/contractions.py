"""Contraction stages: matmul, batch matmul (with a shared or a batched right operand), matvec,
vecmat, dot, and the dense layer after a convolution, which sums over several axes at once with
a weight of as many axes (a run of letters) or a flattened one (`Wf[12 * c + 4 * h + w, j]`,
row-major, column-major, or longer than the product: a near miss). Sizes cover 1, primes, and
the sides of the llvm-cpu register tile (8 x 32, 14 x 32 before) below, at and above it; operands stored
transposed are near misses (matched with a transpose); an operand may be read backwards along
one axis (`a[i, K - 1 - k]`). A weight may be one layer of a stack,
`w[1, k, j]` (a slice operand).
"""
from __future__ import annotations

from fuzz.dense.builder import Builder, Tensor, plain_read
from fuzz.dense.spec import Affine, Loop, Read, Reduction, Size, Step, Sub
from fuzz.dense.windows import BATCH

MATRIX = (1, 2, 3, 5, 7, 8, 9, 13, 14, 15, 16, 17, 28, 29, 31, 32, 33, 45, 64)
OUTPUTS = (1, 2, 3, 10, 16, 33)


def _size(b: Builder):
    return b.size(b.rng.choice(MATRIX), 0.4)


def _operand(b: Builder, letter: str, loops: list, transposed: bool = False) -> Read:
    """A new input read plainly at `loops` (stored in the reverse order when `transposed`), or
    one in six along one axis backwards (`a[i, K - 1 - k]`: a reversed view, then the named op)."""
    order = loops[::-1] if transposed else loops
    read = plain_read(b.input(letter, tuple(loop.extent for loop in order)), order)
    if not order or b.rng.random() >= 1 / 6:
        return read
    axis = b.rng.randrange(len(order))
    subs = list(read.subs)
    subs[axis] = Sub(Affine.backwards(order[axis].name, order[axis].extent))
    return Read(read.tensor, tuple(subs))


def _weight(b: Builder, letter: str, loops: list) -> Read:
    """A new input read plainly at `loops`, or one layer of a new stack of 2 or 3 read so."""
    if b.rng.random() < 0.8:
        return _operand(b, letter, loops, transposed=b.near(0.1))
    layers = b.rng.choice((2, 3))
    name = b.input(letter, (Size.of(layers),) + tuple(loop.extent for loop in loops))
    layer = Sub(Affine((), b.rng.randrange(layers)))
    return Read(name, (layer,) + plain_read(name, loops).subs)


def _contract(b: Builder, out: list, summed: list, reads: list, bias: Loop | None, layout: str) -> Tensor:
    if b.rng.random() < 0.4:
        reads = reads[::-1]
    reduction = Reduction("sum", tuple(summed), tuple(reads))
    steps = b.steps(bias) + (_row_reduction(b, out) if len(out) >= 2 and b.rng.random() < 0.2 else ())
    if out and b.rng.random() < 0.15:
        steps += (_mask(b, out),)
    name = b.define(tuple(out), reduction, steps)
    return Tensor(name, tuple(loop.extent for loop in out), layout)


def _mask(b: Builder, out: list) -> Step:
    """A step keeping the result where a new bool input of its shape holds (IREE-98: a mask
    packed beside a data-tiled contraction's result)."""
    return Step("mask", plain_read(b.input("m", tuple(loop.extent for loop in out), "bool"), out))


def _row_reduction(b: Builder, out: list) -> tuple:
    """A step adding a sum or max over a loop of its own of a new input indexed by the
    result's loops but its last: `+ sum[r](q[n, i, r])` beside a batch matmul's `[n, i, j]`."""
    r = Loop("r", Size.of(b.rng.choice((1, 3, 7, 16))), True)
    read = plain_read(b.input("q", tuple(loop.extent for loop in out[:-1]) + (r.extent,)), out[:-1] + [r])
    return (Step("add_reduced", reduction=Reduction(b.rng.choice(("sum", "max")), (r,), (read,))),)


def matmul(b: Builder, source: Tensor | None) -> Tensor:
    rng = b.rng
    if source is None:
        i, k = Loop("i", _size(b), b.written()), Loop("k", _size(b), b.written())
        left = _operand(b, "a", [i, k], transposed=b.near(0.1))
    else:
        i, k = Loop("i", source.shape[0], b.written()), Loop("k", source.shape[1], b.written())
        left = plain_read(source.name, [i, k])
    j = Loop("j", _size(b), b.written())
    return _contract(b, [i, j], [k], [left, _weight(b, "w", [k, j])], j, "matrix")


def matvec(b: Builder, source: Tensor | None) -> Tensor:
    if source is None:
        i, k = Loop("i", _size(b), b.written()), Loop("k", _size(b), b.written())
        left = _operand(b, "a", [i, k])
    else:
        i, k = Loop("i", source.shape[0], b.written()), Loop("k", source.shape[1], b.written())
        left = plain_read(source.name, [i, k])
    return _contract(b, [i], [k], [left, _operand(b, "v", [k])], i, "vector")


def vecmat(b: Builder, source: Tensor | None) -> Tensor:
    k = Loop("k", source.shape[0] if source else _size(b), b.written())
    left = plain_read(source.name, [k]) if source else _operand(b, "u", [k])
    j = Loop("j", _size(b), b.written())
    return _contract(b, [j], [k], [left, _operand(b, "w", [k, j])], j, "vector")


def dot(b: Builder, source: Tensor | None) -> Tensor:
    k = Loop("k", source.shape[0] if source else _size(b), b.written())
    left = plain_read(source.name, [k]) if source else _operand(b, "u", [k])
    right = left if b.rng.random() < 0.2 else _operand(b, "v", [k])     # a square: one operand twice
    return _contract(b, [], [k], [left, right], None, "scalar")


def batch_matmul(b: Builder, source: Tensor | None) -> Tensor:
    rng = b.rng
    if source is None:
        n = Loop("n", b.size(rng.choice(BATCH), 0.5), b.written())
        i, k = Loop("i", _size(b), b.written()), Loop("k", _size(b), b.written())
        left = _operand(b, "a", [n, i, k])
    else:
        n, i, k = (Loop(name, size, b.written()) for name, size in zip("nik", source.shape))
        left = plain_read(source.name, [n, i, k])
    j = Loop("j", _size(b), b.written())
    shared = rng.random() < 0.3                      # one right operand for every batch: a matmul
    right = _weight(b, "w", [k, j]) if shared else _operand(b, "w", [n, k, j])
    return _contract(b, [n, i, j], [k], [left, right], j, "batched")


def dense_layer(b: Builder, source: Tensor | None) -> Tensor:
    """The layer after a convolution: every axis but the batch summed against a weight."""
    rng = b.rng
    if source is None:
        shape = (b.size(rng.choice(BATCH), 0.5),) + tuple(Size.of(rng.choice((1, 2, 3, 4, 5, 7))) for _ in
                                                          range(rng.choice((1, 2, 3))))
        source = Tensor(b.input("x", shape), shape, "first")
    n = Loop("n", source.shape[0], b.written())
    axes = [Loop(name, size, b.written()) for name, size in zip("cdhw"[-(len(source.shape) - 1):], source.shape[1:])]
    j = Loop("j", Size.of(rng.choice(OUTPUTS)), b.written())
    weight = _dense_weight(b, axes, j)
    return _contract(b, [n, j], axes, [plain_read(source.name, [n] + axes), weight], j, "matrix")


def _dense_weight(b: Builder, axes: list, j: Loop) -> Read:
    rng = b.rng
    form = rng.random()
    if len(axes) == 1 or form < 0.35 or not all(a.extent.static for a in axes):
        return _operand(b, "w", axes + [j])
    sizes = [a.extent.value for a in axes]
    order = list(range(len(axes))) if form < 0.85 else list(range(len(axes)))[::-1]   # column-major
    coefficients, stride = [0] * len(axes), 1
    for k in reversed(order):
        coefficients[k], stride = stride, stride * sizes[k]
    extra = 3 if b.near(0.1) else 0           # longer than the product: not a reshape
    terms = [(a.name, c) for a, c in zip(axes, coefficients)]
    rng.shuffle(terms)
    weight = b.input("w", (Size.of(stride + extra), j.extent))
    return Read(weight, (Sub(Affine(tuple(terms))), Sub(Affine.of(j.name))))
