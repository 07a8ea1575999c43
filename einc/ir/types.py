"""Element types and symbolic sizes of the tensor IR.

Sizes are linear forms (`Lin`) over symbols: a symbol is a run-time dimension of an input
(`N` in `let X: [f32; N, K];`, or one `?`). Linear forms make `N + 1 == 1 + N` decidable and
let shape checks name both sides when they disagree. The same class also describes affine
subscripts, where the keys are index variables as well as symbols.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Hashable, Iterable, Optional

import ml_dtypes  # noqa: F401  (registers NumPy's "bfloat16" dtype name)
import numpy as np


@dataclass(frozen=True)
class DType:
    name: str            # "f16" "bf16" "f32" "f64" "i8" "i16" "i32" "i64" "u8" "u16" "u32" "u64" "bool"

    @property
    def is_float(self) -> bool:
        return self.name in ("f16", "bf16", "f32", "f64")

    @property
    def is_half(self) -> bool:
        """f16 or bf16: stored in 16 bits, computed in f32 (docs/DECISIONS.md, half precision)."""
        return self.name in ("f16", "bf16")

    @property
    def is_int(self) -> bool:
        return self.name[0] in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self.name[0] == "u"

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def bits(self) -> int:
        return 1 if self.is_bool else int(self.name.lstrip("bfiu"))

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(NUMPY_NAMES[self.name])

    def __str__(self) -> str:
        return self.name


F32, F64, I32, I64, BOOL = DType("f32"), DType("f64"), DType("i32"), DType("i64"), DType("bool")
F16, BF16 = DType("f16"), DType("bf16")
# narrower and unsigned integers: the element types of .npy data and quantized models
I8, I16, U8, U16, U32, U64 = (DType(n) for n in ("i8", "i16", "u8", "u16", "u32", "u64"))
BY_NAME = {d.name: d for d in (F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL)}
# the names other languages give Einlang's number types, for a did-you-mean
OTHER_NAMES = {"float": "f32", "float32": "f32", "double": "f64", "float64": "f64", "half": "f16",
               "float16": "f16", "int": "i32", "int32": "i32", "long": "i64", "int64": "i64", "uint8": "u8",
               "int8": "i8", "int16": "i16", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bfloat16": "bf16"}


def closest_type(name: str) -> Optional[str]:
    """The element type a mistyped or foreign type name most likely means (`flaot32` -> f32)."""
    lowered = name.lower()
    if lowered in OTHER_NAMES:
        return OTHER_NAMES[lowered]
    close = difflib.get_close_matches(lowered, list(BY_NAME) + list(OTHER_NAMES), n=1)
    return OTHER_NAMES.get(close[0], close[0]) if close else None


NUMPY_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i8": "int8",
               "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
               "u32": "uint32", "u64": "uint64", "bool": "bool"}


def dtype_of_numpy(dt: np.dtype) -> Optional[DType]:
    for name, np_name in NUMPY_NAMES.items():
        if np.dtype(np_name) == dt:
            return BY_NAME[name]
    return None


@dataclass(frozen=True, eq=False)
class Sym:
    """A run-time size: axis `axis` of input number `input_pos` (the first input that has it)."""

    name: str            # "N", or "A.1" for a `?`
    input_pos: int
    axis: int

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False, repr=False)
class DataSize(Sym):
    """A run-time size computed from data rather than read off an input: the length of a
    comprehension whose filter needs run-time values (`input_pos` and `axis` are -1). It may be
    0, where an input dim is at least 1."""

    @staticmethod
    def named(name: str) -> "DataSize":
        return DataSize(name, -1, -1)


class Quotient:
    """floor(numer / denom) for a size expression `numer` and a positive constant `denom`:
    the extent of a strided axis such as `(H - KH + 1) / 2`. Interned, so equal expressions
    are the same key and shape checks can compare them."""

    _interned: dict = {}

    def __new__(cls, numer: "Lin", denom: int):
        key = (numer, denom)
        if key not in cls._interned:
            obj = super().__new__(cls)
            obj.numer, obj.denom = numer, denom
            obj.name = f"({numer!r}) / {denom}"
            cls._interned[key] = obj
        return cls._interned[key]

    def __repr__(self) -> str:
        return self.name


class SizeOp:
    """`op` ("mul", "min" or "max") of size expressions `args` that no affine form expresses:
    the product B * C of a flatten, the clamps of a slice's ends to its axis. Interned (and the
    order of its arguments fixed), so equal expressions are the same key."""

    _interned: dict = {}

    def __new__(cls, op: str, args: tuple):
        args = tuple(sorted(args, key=repr))
        key = (op, args)
        if key not in cls._interned:
            obj = super().__new__(cls)
            obj.op, obj.args = op, args
            joined = " * ".join(f"({a!r})" for a in args) if op == "mul" else \
                f"{op}({', '.join(map(repr, args))})"
            obj.name = joined
            cls._interned[key] = obj
        return cls._interned[key]

    def __repr__(self) -> str:
        return self.name


class Lin:
    """const + sum(coeff * key); keys are Syms, Quotients, SizeOps or index variables. Immutable."""

    __slots__ = ("const", "terms")

    def __init__(self, const: int = 0, terms: Optional[dict] = None):
        self.const = int(const)
        self.terms = {k: c for k, c in (terms or {}).items() if c != 0}

    @staticmethod
    def of(key: Hashable, coeff: int = 1) -> "Lin":
        return Lin(0, {key: coeff})

    @property
    def is_const(self) -> bool:
        return not self.terms

    def __add__(self, other: "Lin | int") -> "Lin":
        other = _lin(other)
        terms = dict(self.terms)
        for k, c in other.terms.items():
            terms[k] = terms.get(k, 0) + c
        return Lin(self.const + other.const, terms)

    __radd__ = __add__

    def __neg__(self) -> "Lin":
        return Lin(-self.const, {k: -c for k, c in self.terms.items()})

    def __sub__(self, other: "Lin | int") -> "Lin":
        return self + (-_lin(other))

    def __rsub__(self, other: "Lin | int") -> "Lin":
        return _lin(other) - self

    def scale(self, k: int) -> "Lin":
        return Lin(self.const * k, {key: c * k for key, c in self.terms.items()})

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int):
            other = Lin(other)
        if not isinstance(other, Lin):
            return NotImplemented
        return self.const == other.const and self.terms == other.terms

    def __hash__(self) -> int:
        return hash((self.const, frozenset(self.terms.items())))

    def keys(self) -> Iterable:
        return self.terms.keys()

    def substitute(self, mapping: dict) -> "Lin":
        """Replace keys found in `mapping` (key -> Lin)."""
        out = Lin(self.const)
        for k, c in self.terms.items():
            out = out + (mapping[k].scale(c) if k in mapping else Lin.of(k, c))
        return out

    def __repr__(self) -> str:
        parts = []
        for k, c in self.terms.items():
            name = getattr(k, "name", repr(k))
            if c != 1 and " " in name:
                name = f"({name})"      # 2*((H) / 2), never 2*(H) / 2, which reads as H
            parts.append(name if c == 1 else f"-{name}" if c == -1 else f"{c}*{name}")
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")


def _lin(x: "Lin | int") -> Lin:
    return x if isinstance(x, Lin) else Lin(int(x))


Shape = tuple  # tuple[Lin, ...]


def shape_str(shape: Shape) -> str:
    return "[" + ", ".join(repr(d) for d in shape) + "]"


def static_shape(shape: Shape) -> Optional[tuple[int, ...]]:
    if all(d.is_const for d in shape):
        return tuple(d.const for d in shape)
    return None
