"""Algebraic shortcuts while building derivative expressions: x * 1, x + 0, constant folding.

Derivative code is generated mechanically; without these it carries chains of `* 1.0` and
`- 0` that the reader of `--emit ir` (and the kernel) would have to wade through.
"""
from __future__ import annotations

import numpy as np

from einc.ir.nodes import Const, Op, Value, is_folding_constant


def is_const(v: Value, value) -> bool:
    return is_folding_constant(v) and v.array.ndim == 0 and v.array[()] == value


def build(name: str, args: tuple, dtype) -> Value:
    folded = _fold(name, args, dtype)
    return folded if folded is not None else Op(name, args, dtype)


def _fold(name: str, args: tuple, dtype):
    if all(is_folding_constant(a) and a.array.ndim == 0 for a in args) and name in _NUMPY:
        with np.errstate(all="ignore"):
            return Const(np.asarray(_NUMPY[name](*(a.array[()] for a in args)), dtype=dtype.numpy))
    if name == "mul":
        a, b = args
        if is_const(a, 1):
            return b
        if is_const(b, 1):
            return a
        if (is_const(a, 0) or is_const(b, 0)) and dtype.is_float:
            return Const(np.asarray(0, dtype=dtype.numpy))
    if name in ("add", "sub") and is_const(args[1], 0):
        return args[0]
    if name == "add" and is_const(args[0], 0):
        return args[1]
    if name == "div" and is_const(args[1], 1):
        return args[0]
    if name == "pow" and is_const(args[1], 1):
        return args[0]
    if name == "and":
        a, b = args
        if is_const(a, True):
            return b
        if is_const(b, True):
            return a
    if name == "select" and isinstance(args[0], Const):
        return args[1] if bool(args[0].array) else args[2]
    return None


_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "neg": np.negative,
          "div": lambda a, b: a / b if not isinstance(a, np.integer) else None}
