"""What every drawn call shares: the element type, inputs with their values, sizes that are
numbers or named (run-time) dims, and literals written in the call's type."""
from __future__ import annotations

import random

import numpy as np

from fuzz.stdlib.spec import Input, StdProgram, Want

NUMPY_TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}


class Draw:
    def __init__(self, rng: random.Random, dtype: str):
        self.rng, self.dtype = rng, dtype
        self.values = np.random.default_rng(rng.getrandbits(32))
        self.inputs: list[Input] = []
        self.arrays: dict[str, np.ndarray] = {}
        self.named = rng.random() < 0.3            # whether this call's inputs have named dims
        self.dims: dict[int, str | None] = {}      # size -> its named dim or None (a number),
                                                   # the same for every axis of that size

    @property
    def floating(self) -> bool:
        return self.dtype in ("f32", "f64")

    def shape(self, rank: int, low: int = 1, high: int = 5) -> list:
        return [self.rng.choice([1, self.rng.randint(low, high)]) if low <= 1 else self.rng.randint(low, high)
                for _ in range(rank)]

    def input(self, shape, lo: float = -1.0, hi: float = 1.0, dtype: str | None = None, fixed=()) -> str:
        """A fresh input of `shape`, uniform in [lo, hi) (integers: in [lo, hi]). In a call with
        named dims, a size is a named dim with some chance, on every axis of that size (so
        axes the function ties agree), except on axes in `fixed`, where it is a number."""
        dtype = dtype or self.dtype
        name = f"x{len(self.inputs) + 1}"
        if dtype in ("f32", "f64"):
            value = self.values.uniform(lo, hi, shape).astype(NUMPY_TYPES[dtype])
        elif dtype == "bool":
            value = self.values.random(shape) < 0.5
        else:
            value = self.values.integers(int(lo), int(hi) + 1, shape).astype(NUMPY_TYPES[dtype])
        dims = []
        for axis, size in enumerate(shape):
            if size not in self.dims:
                self.dims[size] = f"$N{len(self.dims) + 1}" if self.named and self.rng.random() < 0.5 else None
            named = self.dims[size] if axis not in fixed else None
            dims.append(named or size)
        self.inputs.append(Input(name, dtype, tuple(dims)))
        self.arrays[name] = value
        return f"${name}"

    def named_size(self, size: int) -> str:
        """`size` as a named dim in the call's text: the one axis of a fresh input (which the
        call need not read), so that the runner binds it."""
        dim = f"$S{len(self.inputs) + 1}"
        name = f"x{len(self.inputs) + 1}"
        self.inputs.append(Input(name, "f32", (dim,)))
        self.arrays[name] = np.zeros(size, np.float32)
        return dim

    def wide(self, name: str) -> np.ndarray:
        """An input's value in float64 (integers exact)."""
        value = self.arrays[name.lstrip("$")]
        return value.astype(np.float64) if value.dtype.kind == "f" else value

    def literal(self, value: float) -> str:
        """A float scalar of the call's type."""
        text = repr(float(value))
        return text + "f64" if self.dtype == "f64" else text

    def program(self, function: str, call: str, *wants: Want, tuple_: bool = False) -> tuple:
        """The call's program, inputs and meaning; `tuple_`: its value is a tuple (of `wants`)."""
        many = tuple_ or len(wants) > 1
        outputs = tuple(f"y.{i}" for i in range(len(wants))) if many else ("y",)
        program = StdProgram(function, self.dtype, tuple(self.inputs), call, outputs)
        return program, dict(self.arrays), dict(zip(outputs, wants))

    def close(self, value, scale=None) -> Want:
        """A float output of the call's type, within rounding of `value` relative to `scale`
        (default 1 + |value|)."""
        value = np.asarray(value, np.float64)
        return Want(value, self.dtype, np.abs(value) + 1.0 if scale is None else np.broadcast_to(scale, value.shape))

    def exact(self, value, dtype: str | None = None) -> Want:
        return Want(np.asarray(value), dtype or self.dtype)


def ints(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"
