"""What the stages of a dense program share: the program being built (its inputs and
definitions), fresh names, sizes that are numbers or named dims, and elementwise steps."""
from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass

from fuzz.dense.spec import Affine, DenseProgram, Definition, Input, Loop, Read, Reduction, Size, Step, Sub

GRID_LIMIT = 250_000           # loop points of one definition: the NumPy reference's cost


class TooBig(Exception):
    """A definition's grid is past GRID_LIMIT: the program is drawn again."""


@dataclass(frozen=True)
class Tensor:
    """What a stage made: a tensor and the roles of its axes. `layout` is `first` ([n, c,
    spatial..]), `last` ([n, spatial.., c]), `spatial`, `matrix`, `vector`, `batched` ([b, m,
    k]), `scalar`, or `other` (axes in an order no later stage reads)."""
    name: str
    shape: tuple                   # Sizes
    layout: str

    @property
    def spatial_rank(self) -> int:
        return len(self.shape) - (0 if self.layout == "spatial" else 2)


class Builder:
    def __init__(self, rng: random.Random, dtype: str):
        self.rng, self.dtype = rng, dtype
        self.inputs: list[Input] = []
        self.definitions: list[Definition] = []
        self.counts: Counter = Counter()
        self.named_dims = rng.random() < 0.3       # whether this program has run-time sizes
        self.near_misses = rng.random() < 0.6      # whether it may hold forms no named op takes

    def name(self, letter: str) -> str:
        self.counts[letter] += 1
        return f"{letter}{self.counts[letter]}"

    def size(self, value: int, named: float = 0.5) -> Size:
        """`value`, written as a fresh named dim with probability `named` in a program that has them."""
        if self.named_dims and self.rng.random() < named:
            return Size(value, f"${self.name('N')}")
        return Size.of(value)

    def input(self, letter: str, shape: tuple, dtype: str | None = None) -> str:
        name = self.name(letter)
        self.inputs.append(Input(name, tuple(shape), dtype))
        return name

    def near(self, chance: float) -> bool:
        """Whether to write a near miss of a named op here (never in a program without them)."""
        return self.rng.random() < chance and self.near_misses

    def written(self, chance: float = 0.5) -> bool:
        return self.rng.random() < chance

    def define(self, loops: tuple, value, steps: tuple = (), whole: bool = False) -> str:
        # the grid of each reduction, in the value or a step, is the reference's cost
        reductions = [r for r in (value, *(step.reduction for step in steps)) if isinstance(r, Reduction)]
        for own in [r.loops for r in reductions] or [()]:
            points = math.prod(loop.extent.value for loop in (*loops, *own))
            if points > GRID_LIMIT:
                raise TooBig(points)
        name = self.name("y")
        self.definitions.append(Definition(name, tuple(loops), value, tuple(steps), whole))
        return name

    def program(self) -> DenseProgram:
        names = [d.name for d in self.definitions]
        outputs = names if self.rng.random() < 0.5 else names[-1:]
        return DenseProgram(self.dtype, tuple(self.inputs), tuple(self.definitions), tuple(outputs))

    def steps(self, channel: Loop | None) -> tuple:
        """Elementwise work around a reduction, as networks have: a bias along `channel`, ReLU,
        a scale, `1 - x`."""
        rng, steps = self.rng, []
        if channel is not None and rng.random() < 0.45:
            bias = self.input("b", (channel.extent,))
            steps.append(Step("bias", Read(bias, (Sub(Affine.of(channel.name)),)), left=rng.random() < 0.5))
        if rng.random() < 0.35:
            steps.append(Step("relu"))
        if rng.random() < 0.1:
            steps.append(Step("scale", constant=rng.choice((0.5, 2.0, -1.5))))
        if rng.random() < 0.1:
            steps.append(Step("one_minus"))
        return tuple(steps)


def plain_read(tensor: str, loops: list) -> Read:
    return Read(tensor, tuple(Sub(Affine.of(loop.name)) for loop in loops))
