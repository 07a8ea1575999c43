"""The attention stage: softmax attention written out as its five definitions, as
examples/transformer/layers.ein does (scores `sum[e](q k)`, scaled, multiplied or divided, or
not; their row maximum; `exp(s - m)`; its row sum; `sum[j](p v) / z`) or with the probabilities
normalised first (`p / z`, then `sum[j](p v)`, as after std::ml's softmax). Queries come from
the stage before (a batched [n, i, e] tensor) or are new; keys and values are new inputs, keys
stored [n, j, e] or transposed [n, e, j]. Near misses keep their own kernels: scores not
centred on their maximum, or a maximum over part of the keys.
"""
from __future__ import annotations

from fuzz.dense.builder import Builder, Tensor, plain_read
from fuzz.dense.spec import Loop, Reduction, Size, Step
from fuzz.dense.windows import BATCH

POSITIONS = (1, 2, 5, 13, 16, 17, 33)
HEADS = (1, 3, 4, 8, 16)


def attention(b: Builder, source: Tensor | None) -> Tensor:
    rng = b.rng
    if source is None:
        n = Loop("n", b.size(rng.choice(BATCH), 0.5), b.written())
        i = Loop("i", b.size(rng.choice(POSITIONS), 0.5), b.written())
        e = Loop("e", Size.of(rng.choice(HEADS)), b.written())
        queries = plain_read(b.input("a", (n.extent, i.extent, e.extent)), [n, i, e])
    else:
        n, i, e = (Loop(name, size, b.written()) for name, size in zip("nie", source.shape))
        queries = plain_read(source.name, [n, i, e])
    j = Loop("j", b.size(rng.choice(POSITIONS), 0.5), True)
    f = Loop("f", Size.of(rng.choice(HEADS)), True)
    key_axes = [n, e, j] if rng.random() < 0.3 else [n, j, e]
    keys = plain_read(b.input("k", tuple(loop.extent for loop in key_axes)), key_axes)
    values = plain_read(b.input("v", (n.extent, j.extent, f.extent)), [n, j, f])
    reads = (queries, keys) if rng.random() < 0.6 else (keys, queries)
    scale = rng.choice(((), (Step("scale", constant=0.25),), (Step("divide", constant=2.0),)))
    scores = b.define((n, i, j), Reduction("sum", (e,), reads), scale)
    exps = _exponentials(b, scores, n, i, j)
    total = b.define((n, i), Reduction("sum", (j,), (plain_read(exps, [n, i, j]),)))
    by_total = Step("divide_by", plain_read(total, [n, i]))
    if rng.random() < 0.5:
        weighted = (plain_read(exps, [n, i, j]), values)
        context = b.define((n, i, f), Reduction("sum", (j,), weighted), (by_total,))
    else:
        probabilities = b.define((n, i, j), plain_read(exps, [n, i, j]), (by_total,))
        weighted = (values, plain_read(probabilities, [n, i, j]))
        context = b.define((n, i, f), Reduction("sum", (j,), weighted))
    return Tensor(context, (n.extent, i.extent, f.extent), "batched")


def _exponentials(b: Builder, scores: str, n: Loop, i: Loop, j: Loop) -> str:
    """`exp(s - max[j](s))`, or a near miss: no maximum, or one over all keys but the last."""
    at = plain_read(scores, [n, i, j])
    if b.near(0.25):
        return b.define((n, i, j), at, (Step("exp"),))
    keys = j
    if b.near(0.2) and j.extent.static and j.extent.value > 1:
        keys = Loop("j", Size.of(j.extent.value - 1), True)
    peak = b.define((n, i), Reduction("max", (keys,), (plain_read(scores, [n, i, keys]),)))
    return b.define((n, i, j), at, (Step("subtract", plain_read(peak, [n, i])), Step("exp")))
