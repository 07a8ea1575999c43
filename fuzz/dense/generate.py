"""Random dense programs: one to three stages chained as in a CNN (each reads what the last one
made), elementwise producers and consumers around them, in f32 or f64, with inputs and the
float64 NumPy meaning of every definition.

`generate_case(seed, number)` is deterministic.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from fuzz.dense import attention, contractions, windows
from fuzz.dense.builder import Builder, Tensor, TooBig, plain_read
from fuzz.dense.reference import evaluate
from fuzz.dense.spec import DenseProgram, Loop, Read, Step

ATTEMPTS = 50


def elementwise(b: Builder, source: Tensor | None) -> Tensor:
    """A producer or consumer: `1.0 - x` or `x * 0.5` on the whole array, or a ReLU of x plus a
    bias along its last axis, point by point."""
    rng = b.rng
    if source is None:
        source = windows.fresh_image(b, ("first", "last"))
    if rng.random() < 0.5:
        step = Step("one_minus") if rng.random() < 0.7 else Step("scale", constant=0.5)
        name = b.define((), Read(source.name, ()), (step,), whole=True)
    else:
        loops = [Loop(f"a{k}", size, b.written(0.3)) for k, size in enumerate(source.shape)]
        bias = loops[-1] if loops[-1].extent.declarable else None
        name = b.define(tuple(loops), plain_read(source.name, loops), b.steps(bias))
    return Tensor(name, source.shape, source.layout)


# stage -> the layouts it reads (None: it makes its own inputs), and how often it is drawn
STAGES = (
    (windows.convolution, (None, "first", "last", "spatial"), 30),
    (windows.depthwise, (None, "first", "last"), 8),
    (windows.pooling, (None, "first", "last", "spatial"), 14),
    (contractions.matmul, (None, "matrix"), 14),
    (contractions.dense_layer, (None, "first", "last"), 10),
    (contractions.matvec, (None, "matrix"), 4),
    (contractions.vecmat, (None, "vector"), 4),
    (contractions.dot, (None, "vector"), 3),
    (contractions.batch_matmul, (None, "batched"), 5),
    (attention.attention, (None, "batched"), 5),
    (elementwise, (None, "first", "last", "spatial", "matrix", "vector", "batched", "other"), 8),
)


def _values(values: np.random.Generator, shape: tuple, dtype) -> np.ndarray:
    """Uniform in [-1, 1), or a bool mask with 70% of its points kept."""
    if dtype == "bool":
        return values.random(shape) < 0.7
    return values.uniform(-1.0, 1.0, shape).astype(dtype)


def dense_program(rng: random.Random) -> DenseProgram:
    for _ in range(ATTEMPTS):
        b = Builder(rng, "f32" if rng.random() < 0.75 else "f64")
        try:
            made = None
            if rng.random() < 0.12:        # a CNN's first layer, as in examples/mnist/cnn.ein
                b.near_misses = False
                made = windows.convolution(b, windows.one_channel_image(b))
            for _ in range(rng.choice((1, 1, 2, 2, 2, 3))):
                stages = [(stage, weight) for stage, reads, weight in STAGES
                          if (made.layout if made else None) in reads and _fits(stage, made)]
                if not stages:
                    break
                made = _pick(rng, stages)(b, made)
        except TooBig:
            continue
        return b.program()
    raise RuntimeError("no dense program within the size limit")


def _fits(stage, made: Tensor | None) -> bool:
    """The dense layer's weight states the sizes of the axes it sums over."""
    return stage is not contractions.dense_layer or made is None or all(s.declarable for s in made.shape[1:])


def _pick(rng: random.Random, weighted: list):
    return rng.choices([s for s, _ in weighted], [w for _, w in weighted])[0]


@dataclass(frozen=True)
class DenseCase:
    program: DenseProgram
    inputs: dict                   # name -> np.ndarray
    meaning: dict                  # definition name -> fuzz.dense.reference.Meaning


def generate_case(seed: int, number: int) -> DenseCase:
    rng = random.Random(f"dense/{seed}/{number}")
    values = np.random.default_rng([seed, number, 7])
    program = dense_program(rng)
    dtype = np.float32 if program.dtype == "f32" else np.float64
    inputs = {i.name: _values(values, tuple(s.value for s in i.shape), i.dtype or dtype) for i in program.inputs}
    return DenseCase(program, inputs, evaluate(program, inputs))
