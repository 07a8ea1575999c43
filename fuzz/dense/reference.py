"""What a dense program means, in float64 NumPy, from the generator's description alone.

A definition is evaluated over the grid of its loops (result loops, then reduction loops, one
NumPy axis each): every subscript is its affine index evaluated on the grid, a guard is its
tests, a read gathers the tensor at the subscripts, and the reduction reduces the trailing axes.

Besides the value, each tensor carries what bounds its rounding error in the program's own
precision (a forward error bound, as for a sum of products): `magnitude`, the same computation
on absolute values (a sum adds |terms|, max and min keep the largest |term|, `1 - x` is
`1 + |x|`), and `length`, the most roundings along any chain of operations to it (a sum of n
products n + 1, a chain of definitions the sum of theirs). einc's result in precision u must be
within about u * length * magnitude (fuzz.dense.compare).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fuzz.dense.spec import Affine, DenseProgram, Definition, Read, Reduction, Step

REDUCE = {"sum": np.sum, "max": np.max, "min": np.min}


class GeneratorError(Exception):
    """The generator described a program that is not valid (a read outside its tensor)."""


@dataclass
class Meaning:
    value: np.ndarray              # float64
    magnitude: np.ndarray          # bound on the |terms| rounding acts on, per element
    length: int                    # roundings along the longest chain to any element


def evaluate(program: DenseProgram, inputs: dict) -> dict:
    """Every definition's Meaning, by name."""
    env = {name: Meaning(np.asarray(a, np.float64), np.abs(np.asarray(a, np.float64)), 0)
           for name, a in inputs.items()}
    for definition in program.definitions:
        env[definition.name] = _definition(definition, env)
    return {d.name: env[d.name] for d in program.definitions}


def _definition(d: Definition, env: dict) -> Meaning:
    if d.whole:
        out = env[d.value.tensor]
        for step in d.steps:
            out = _step(step, out, {}, env, ())
        return out
    result = _grid(list(d.loops))             # the result's loops come first in either grid
    if isinstance(d.value, Reduction):
        out = _reduction(d.value, _grid(list(d.loops) + list(d.value.loops)), env)
    else:
        out = _read(d.value, result, env)
    for step in d.steps:
        out = _step(step, out, result, env, d.loops)
    shape = tuple(loop.extent.value for loop in d.loops)
    return Meaning(np.broadcast_to(out.value, shape).copy(), np.broadcast_to(out.magnitude, shape).copy(),
                   out.length)


def _grid(loops: list) -> dict:
    """Each loop's index values along its own axis of the grid."""
    rank = len(loops)
    grid = {}
    for axis, loop in enumerate(loops):
        shape = [1] * rank
        shape[axis] = loop.extent.value
        grid[loop.name] = np.arange(loop.extent.value).reshape(shape)
    return grid


def _index(index: Affine, grid: dict):
    start = index.const + (index.base.value if index.base is not None else 0)
    return sum((c * grid[name] for name, c in index.terms), np.int64(start))


def _read(read: Read, grid: dict, env: dict, mask=None) -> Meaning:
    """The tensor at the read's subscripts on the grid; points outside `mask` may leave it."""
    source = env[read.tensor]
    subs = [_index(s.index, grid) for s in read.subs]
    subs = [np.clip(sub, 0, size - 1) if s.clamp is not None else sub
            for s, sub, size in zip(read.subs, subs, source.value.shape)]
    if len(subs) != source.value.ndim:
        raise GeneratorError(f"{read.text()}: {len(subs)} subscripts of a rank {source.value.ndim} tensor")
    inside = np.ones((), bool)
    for sub, size in zip(subs, source.value.shape):
        inside = inside & (sub >= 0) & (sub < size)
    if not np.all(inside | (True if mask is None else ~mask)):
        raise GeneratorError(f"{read.text()} leaves its tensor")
    at = tuple(np.clip(sub, 0, size - 1) for sub, size in zip(subs, source.value.shape))
    if not at:
        return source
    return Meaning(source.value[at], source.magnitude[at], source.length)


def _reduction(r: Reduction, grid: dict, env: dict) -> Meaning:
    mask = None
    for test in r.guard:
        sub = _index(test.sub.index, grid)
        ok = sub >= test.bound.value if test.lower else sub < test.bound.value
        mask = ok if mask is None else mask & ok
    reads = [_read(read, grid, env, mask) for read in r.reads]
    value, magnitude = _guarded(r, reads, mask)
    if r.factor is not None:
        value, magnitude = value * r.factor, magnitude * abs(r.factor)
    axes = tuple(range(-len(r.loops), 0))
    shape = np.broadcast_shapes(*(np.shape(grid[loop.name]) for loop in r.loops), np.shape(value))
    value, magnitude = np.broadcast_to(value, shape), np.broadcast_to(magnitude, shape)
    if r.skip:          # the point left out adds nothing: the reduction's identity there
        kept = np.zeros((), bool)
        for loop, k in zip(r.loops, r.skip):
            kept = kept | (grid[loop.name] != k)
        value = np.where(kept, value, {"sum": 0.0, "max": -np.inf, "min": np.inf}[r.kind])
        magnitude = np.where(kept, magnitude, 0.0)
    terms = int(np.prod([loop.extent.value for loop in r.loops]))
    length = max(m.length for m in reads) + len(reads) - 1 + (r.factor is not None) + \
        (terms if r.kind == "sum" else 0)
    return Meaning(REDUCE[r.kind](value, axis=axes),
                   (np.sum if r.kind == "sum" else np.max)(magnitude, axis=axes), length)


def _guarded(r: Reduction, reads: list, mask) -> tuple:
    """Each term's value and magnitude: the product of the reads, the fill where the guard fails."""
    fill = np.float64(r.fill)
    if mask is None:
        return _product(reads, "value"), _product(reads, "magnitude")
    if r.guard_first_only:
        first = Meaning(np.where(mask, reads[0].value, fill), np.where(mask, reads[0].magnitude, abs(fill)), 0)
        reads = [first] + reads[1:]
        return _product(reads, "value"), _product(reads, "magnitude")
    return (np.where(mask, _product(reads, "value"), fill),
            np.where(mask, _product(reads, "magnitude"), abs(fill)))


def _product(reads: list, field: str):
    out = getattr(reads[0], field)
    for m in reads[1:]:
        out = out * getattr(m, field)
    return out


def _step(step: Step, m: Meaning, grid: dict, env: dict, loops: tuple) -> Meaning:
    """`step` applied to `m` on `grid`, the grid of the definition's `loops`."""
    if step.op == "bias":
        b = _read(step.read, grid, env)
        return Meaning(m.value + b.value, m.magnitude + b.magnitude, max(m.length, b.length) + 1)
    if step.op == "relu":
        return Meaning(np.maximum(m.value, 0.0), m.magnitude, m.length)     # 1-Lipschitz: no new error
    if step.op == "scale":
        return Meaning(m.value * step.constant, m.magnitude * abs(step.constant), m.length + 1)
    if step.op == "divide":
        return Meaning(m.value / step.constant, m.magnitude / abs(step.constant), m.length + 1)
    if step.op == "one_minus":
        return Meaning(1.0 - m.value, 1.0 + m.magnitude, m.length + 1)
    if step.op == "subtract":
        r = _operand(step, grid, env, loops)
        return Meaning(m.value - r.value, m.magnitude + r.magnitude, max(m.length, r.length) + 1)
    if step.op == "divide_by":        # first-order bound: each operand's error relative to it, added
        r = _operand(step, grid, env, loops)
        value, size = m.value / r.value, np.abs(r.value)
        return Meaning(value, m.magnitude / size + np.abs(value) * (1 + r.magnitude / size),
                       max(m.length, r.length) + 1)
    if step.op == "exp":              # exp(x + d) = exp(x) (1 + d): the error relative; 2 ulp of its own
        value = np.exp(m.value)
        return Meaning(value, value * (1 + m.magnitude), m.length + 2)
    if step.op == "mask":             # a bool input reads as 1.0 or 0.0
        keep = _read(step.read, grid, env).value != 0
        return Meaning(np.where(keep, m.value, 0.0), np.where(keep, m.magnitude, 0.0), m.length)
    if step.op == "add_reduced":
        r = _operand(step, grid, env, loops)
        return Meaning(m.value + r.value, m.magnitude + r.magnitude, max(m.length, r.length) + 1)
    raise ValueError(step.op)


def _operand(step: Step, grid: dict, env: dict, loops: tuple) -> Meaning:
    """What `step` combines with: its read on `grid`, or its reduction over loops of its own."""
    if step.read is not None:
        return _read(step.read, grid, env)
    return _reduction(step.reduction, _grid(list(loops) + list(step.reduction.loops)), env)

