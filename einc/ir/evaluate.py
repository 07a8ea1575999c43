"""Build-time evaluation of IR values that depend on no run-time input.

The front end folds scalar literals as it goes; this evaluates whole tensors when a decision
needs their numbers at build time (which elements a comprehension filter keeps, a string that
interpolates a computed value, the arguments of a Python function called during the build).
It follows the `Op` semantics of einc.ir.nodes in each value's own precision with NumPy, point
by point over the domain of a `Generic` or `Reduce` at once: a point value at nesting depth d is
an array of exactly d axes, one per enclosing index variable (size 1 where it does not vary).

`NotBuildTime` is raised for anything that needs run-time data (an input, a recurrence's state),
and for domains too large to be worth folding.
"""
from __future__ import annotations

import math

import numpy as np

from einc.ir.nodes import (Const, Generic, IndexRef, Op, Piecewise, Read, Reduce, Size, Stack,
                           Value)
from einc.ir.traversal import fold
from einc.ir.types import Lin

MAX_POINTS = 1 << 22          # the largest domain evaluated at build time


class NotBuildTime(Exception):
    """`value` needs run-time data (or too much work) to be evaluated."""

    def __init__(self, value):
        super().__init__(type(value).__name__)
        self.value = value


def evaluate(value: Value) -> np.ndarray:
    """The array of program-level `value` (a scalar is a 0-d array), in its dtype."""
    return _Evaluator().whole(value)


def try_evaluate(value: Value):
    """`evaluate(value)`, or None when it needs run-time data."""
    try:
        return evaluate(value)
    except NotBuildTime:
        return None


class _Evaluator:
    def __init__(self):
        self.tensors: dict[int, np.ndarray] = {}

    def whole(self, v: Value) -> np.ndarray:
        """`v`'s array. The tensors it reads are evaluated first, deepest first, so that a chain of
        definitions each reading the one before (a sum of hundreds of rows) is not a recursion as
        deep as the chain."""
        if id(v) not in self.tensors:
            fold(v, _tensors_read, lambda t, _: self._evaluated(t), {})
        return self.tensors[id(v)]

    def _evaluated(self, v: Value) -> None:
        if id(v) not in self.tensors:
            self.tensors[id(v)] = np.asarray(self._whole(v), dtype=v.dtype.numpy)

    def _whole(self, v: Value) -> np.ndarray:
        if isinstance(v, Const):
            return v.array
        if isinstance(v, Generic):
            return self._generic(v)
        if isinstance(v, Piecewise):
            return self._piecewise(v)
        if isinstance(v, Stack):
            return np.stack([self.whole(e) for e in v.elems]) if v.elems else np.zeros(0, v.dtype.numpy)
        if isinstance(v, (Size, Op, Read, Reduce)) and v.rank == 0:
            return self.point(v, {}, 0)
        raise NotBuildTime(v)

    def _generic(self, g: Generic) -> np.ndarray:
        extents = [_const(var.extent, g) for var in g.vars]
        if int(np.prod(extents, dtype=np.int64)) > MAX_POINTS:
            raise NotBuildTime(g)
        env = {var: _axis(_const(var.lo, g), n, k, len(extents)) for k, (var, n) in enumerate(zip(g.vars, extents))}
        body = self.point(g.body, env, len(extents))
        if g.guard is not None:
            body = np.where(self.point(g.guard, env, len(extents)), body, np.zeros((), body.dtype))
        return np.broadcast_to(body, extents)

    def _piecewise(self, p: Piecewise) -> np.ndarray:
        out = np.zeros([_const(s, p) for s in p.shape], dtype=p.dtype.numpy)
        for clause in p.clauses:
            part = self.whole(clause.value)
            part = part.reshape((1,) * (out.ndim - part.ndim) + part.shape)
            at = tuple(slice(_const(o, p), _const(o, p) + n) for o, n in zip(clause.offsets, part.shape))
            out[at] = part
        return out

    # ------------------------------------------------------------------ per point

    def point(self, v: Value, env: dict, depth: int) -> np.ndarray:
        """`v` at every point of the variables in `env`: an array of `depth` axes. Chains of
        scalar operations (a sum of thousands of terms) are folded without recursion."""
        return fold(v, _op_args, lambda node, args: self._point(node, args, env, depth), {})

    def _point(self, v: Value, args: list, env: dict, depth: int) -> np.ndarray:
        """`v` at every point of `env`, given its arguments there when it is an Op."""
        if isinstance(v, IndexRef):
            if v.var not in env:
                raise NotBuildTime(v)
            return env[v.var]
        if isinstance(v, Size):
            return _full(np.asarray(_const(v.lin, v), np.int32), depth)
        if isinstance(v, Op):
            return _full(_apply(v, args), depth)
        if isinstance(v, Read):
            return self._read(v, env, depth)
        if isinstance(v, Reduce):
            return self._reduce(v, env, depth)
        if v.rank == 0:
            return _full(self.whole(v), depth)
        raise NotBuildTime(v)

    def _read(self, r: Read, env: dict, depth: int) -> np.ndarray:
        tensor = self.whole(r.tensor)
        subs = tuple(np.clip(self.point(s, env, depth), 0, max(n - 1, 0)) for s, n in zip(r.subs, tensor.shape))
        if tensor.size == 0:
            raise NotBuildTime(r)
        return _full(tensor[subs], depth)

    def _reduce(self, r: Reduce, env: dict, depth: int) -> np.ndarray:
        extents = [_const(var.extent, r) for var in r.vars]
        inner = depth + len(extents)
        grown = {var: a.reshape(a.shape + (1,) * len(extents)) for var, a in env.items()}
        outer = np.broadcast_shapes(*[a.shape for a in env.values()]) if env else ()
        if int(np.prod(tuple(outer) + tuple(extents), dtype=np.int64)) > MAX_POINTS:
            raise NotBuildTime(r)
        for k, (var, n) in enumerate(zip(r.vars, extents)):
            grown[var] = _axis(_const(var.lo, r), n, depth + k, inner)
        body = self.point(r.body, grown, inner)
        identity = _identity(r)
        if r.guard is not None:
            body = np.where(self.point(r.guard, grown, inner), body, identity)
        body = np.broadcast_to(body, body.shape[:depth] + tuple(extents))
        axes = tuple(range(depth, inner))
        return np.asarray(_REDUCERS[r.kind](body, axes, identity), dtype=r.dtype.numpy)


def _tensors_read(v: Value) -> list:
    """The values whose whole arrays evaluating `v` takes: the tensors its reads read (through
    scalar expressions, reductions included), a Stack's elements, a Piecewise's clauses."""
    if isinstance(v, Stack):
        return list(v.elems)
    if isinstance(v, Piecewise):
        return [clause.value for clause in v.clauses]
    if isinstance(v, Const):
        return []
    found, seen = [], set()
    stack = [v.body, v.guard] if isinstance(v, Generic) else [v]
    while stack:
        x = stack.pop()
        if x is None or id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, Op):
            stack.extend(x.args)
        elif isinstance(x, Read):
            found.append(x.tensor)
            stack.extend(x.subs)
        elif isinstance(x, Reduce):
            stack.extend((x.body, x.guard))
        elif x.rank == 0 and not isinstance(x, (IndexRef, Size)) and x is not v:
            found.append(x)
    return found


def _op_args(v: Value) -> tuple:
    return v.args if isinstance(v, Op) else ()


def _const(lin: Lin, v) -> int:
    if not lin.is_const:
        raise NotBuildTime(v)
    return max(lin.const, 0)


def _axis(lo: int, n: int, k: int, ndim: int) -> np.ndarray:
    """The coordinates lo .. lo + n - 1 along axis k of an array of `ndim` axes."""
    shape = [1] * ndim
    shape[k] = n
    return (np.arange(n, dtype=np.int32) + np.int32(lo)).reshape(shape)


def _full(a: np.ndarray, depth: int) -> np.ndarray:
    a = np.asarray(a)
    return a.reshape(a.shape + (1,) * (depth - a.ndim)) if a.ndim < depth else a


def _identity(r: Reduce):
    return reduction_identity(r.kind, r.dtype)


def reduction_identity(kind: str, dtype):
    """What a `kind` reduction over no point gives (0, 1, -inf, +inf, true, false; the extremes
    of an integer type)."""
    if kind in ("all", "any"):
        return np.bool_(kind == "all")
    dt = dtype.numpy
    if kind in ("sum", "prod"):
        return dt.type(kind == "prod")
    if dtype.is_float:
        return dt.type(-np.inf if kind == "max" else np.inf)
    info = np.iinfo(dt)
    return dt.type(info.min if kind == "max" else info.max)


_REDUCERS = {
    "sum": lambda a, axes, i: np.sum(a, axis=axes, dtype=a.dtype),
    "prod": lambda a, axes, i: np.prod(a, axis=axes, dtype=a.dtype),
    "max": lambda a, axes, i: np.max(a, axis=axes, initial=i),
    "min": lambda a, axes, i: np.min(a, axis=axes, initial=i),
    "all": lambda a, axes, i: np.all(a, axis=axes),
    "any": lambda a, axes, i: np.any(a, axis=axes),
}


# ---------------------------------------------------------------------- scalar operations

def _apply(op: Op, args: list) -> np.ndarray:
    dtype = op.dtype.numpy
    operand = op.args[0].dtype.numpy
    with np.errstate(all="ignore"):
        if op.op == "cast":
            return _cast(args[0], dtype)
        if op.op == "select":
            return np.where(args[0], args[1], args[2])
        if operand.kind in "iu" and op.op in ("div", "rem", "pow"):
            return _integer(op.op, args[0], args[1]).astype(dtype)
        rule = _NUMPY.get(op.op)
        if rule is None:
            raise NotBuildTime(op)
        return np.asarray(rule(*args)).astype(dtype)


def _cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "b":
        return x != 0
    if dtype.kind in "iu" and x.dtype.kind == "f":
        return np.trunc(x).astype(dtype)
    return x.astype(dtype)


def _integer(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Truncating division and a remainder with the dividend's sign (Rust); a power with a
    negative exponent is 1 / base^-n truncated, as the lowering computes it: 0, or base^-n
    for a base of 1 or -1."""
    a, b = np.broadcast_arrays(a.astype(np.int64), b.astype(np.int64))
    if name == "pow":
        power = np.power(a, np.abs(b))
        return np.where((b < 0) & (np.abs(a) != 1), 0, power)
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe) * np.where((a >= 0) == (safe >= 0), 1, -1)
    return q if name == "div" else a - safe * q


def _round_half_away(a):
    return np.sign(a) * np.floor(np.abs(a) + a.dtype.type(0.5))


_NUMPY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "rem": np.fmod,
    "pow": np.power, "min": np.minimum, "max": np.maximum, "atan2": np.arctan2,
    "and": np.logical_and, "or": np.logical_or, "not": np.logical_not, "neg": np.negative,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "abs": np.abs, "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a),
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
    "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor,
    "ceil": np.ceil, "trunc": np.trunc, "round": _round_half_away, "isnan": np.isnan,
    "isinf": np.isinf, "erf": np.vectorize(math.erf, otypes=[np.float64]),
}
