"""The attention stage: softmax attention written out as its five definitions, as
examples/transformer/layers.ein does (scores `sum[e](q k)`, scaled, multiplied or divided, or
not; their row maximum; `exp(s - m)`; its row sum; `sum[j](p v) / z`), with the division in a
definition after the context's (`c / z`), or with the probabilities normalised first (`p / z`,
then `sum[j](p v)`, as after std::ml's softmax). The row maximum and sum are definitions of
their own or written inline where they are read (`exp(s - max[u](s[n, i, u]))`, `/ sum[u](p[n,
i, u])`). Queries come from the stage before (a batched [n, i, e] tensor) or are new; keys and
values are new inputs, keys stored [n, j, e] or transposed [n, e, j]. Near misses keep their own
kernels: scores not centred on their maximum, a maximum over part of the keys, or one inline
over the queries.
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
    by_total = _with_row(b, "divide_by", "sum", exps, n, i, j)
    form = rng.random()
    if form < 0.35:
        weighted = (plain_read(exps, [n, i, j]), values)
        context = b.define((n, i, f), Reduction("sum", (j,), weighted), (by_total,))
    elif form < 0.55:
        unnormalised = b.define((n, i, f), Reduction("sum", (j,), (plain_read(exps, [n, i, j]), values)))
        context = b.define((n, i, f), plain_read(unnormalised, [n, i, f]), (by_total,))
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
    elif b.near(0.1) and i.extent == j.extent:
        over_queries = Loop("u", i.extent, b.written())
        peak = Reduction("max", (over_queries,), (plain_read(scores, [n, over_queries, j]),))
        return b.define((n, i, j), at, (Step("subtract", reduction=peak), Step("exp")))
    return b.define((n, i, j), at, (_with_row(b, "subtract", "max", scores, n, i, keys), Step("exp")))


def _with_row(b: Builder, op: str, kind: str, tensor: str, n: Loop, i: Loop, keys: Loop) -> Step:
    """Step `op` by `kind[keys](tensor[n, i, keys])`: written inline, over a loop `u` of its own,
    or a definition of its own read at [n, i]."""
    if b.rng.random() < 0.5:
        u = Loop("u", keys.extent, keys.written or b.written())
        return Step(op, reduction=Reduction(kind, (u,), (plain_read(tensor, [n, i, u]),)))
    total = b.define((n, i), Reduction(kind, (keys,), (plain_read(tensor, [n, i, keys]),)))
    return Step(op, plain_read(total, [n, i]))
