"""Local derivative rules: for each scalar operation, the partial derivative with respect to
each operand, as IR expressions built from the operation's own operands and result."""
from __future__ import annotations

import math

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import Const, IndexRef, IndexVar, Op, Reduce, Value, is_folding_constant
from einc.ir.types import BOOL
from einc.autodiff.simplify import build
from einc.autodiff.substitute import substitute


def const(value: float, like: Value) -> Const:
    return Const(np.asarray(value, dtype=like.dtype.numpy))


def op(name: str, *args, dtype=None) -> Value:
    return build(name, tuple(args), dtype or args[-1].dtype)


def mul(a, b):
    return op("mul", a, b)


def selected_share(r: Reduce, d: Value) -> Value:
    """What a point of a max/min reduction passes on of the derivative `d`: an equal share if it
    is selected (as in JAX and PyTorch: `max[i in 0..4](x)` of one value x has derivative 1, not
    4), else 0."""
    chosen = Op("eq", (r.body, r), BOOL)
    return Op("select", (chosen, op("div", d, _selected_count(r)), const(0.0, d)), d.dtype)


def _selected_count(r: Reduce) -> Reduce:
    """How many points of `r` hold its result (its own variables, fresh: `r` binds the old)."""
    fresh = tuple(IndexVar(v.name, v.lo, v.extent, span=v.span) for v in r.vars)
    mapping = {old: IndexRef(new) for old, new in zip(r.vars, fresh)}
    hit = Op("select", (Op("eq", (substitute(r.body, mapping), r), BOOL), const(1.0, r), const(0.0, r)),
             r.dtype)
    guard = substitute(r.guard, mapping) if r.guard is not None else None
    return Reduce("sum", fresh, hit, guard, span=r.span)


def _recip(x):
    return op("div", const(1.0, x), x)


def _sq(x):
    return mul(x, x)


def _select(cond, a, b):
    return build("select", (cond, a, b), a.dtype)


def _zero(x):
    return const(0.0, x)


def _one(x):
    return const(1.0, x)


UNARY = {
    "neg": lambda x, y: op("neg", _one(x)),
    "exp": lambda x, y: y,
    "expm1": lambda x, y: op("exp", x),
    "log": lambda x, y: _recip(x),
    "log1p": lambda x, y: _recip(op("add", _one(x), x)),
    "log2": lambda x, y: _recip(mul(x, const(math.log(2.0), x))),
    "log10": lambda x, y: _recip(mul(x, const(math.log(10.0), x))),
    "sqrt": lambda x, y: op("div", const(0.5, x), y),
    "rsqrt": lambda x, y: mul(const(-0.5, x), op("div", y, x)),
    "sin": lambda x, y: op("cos", x),
    "cos": lambda x, y: op("neg", op("sin", x)),
    "tan": lambda x, y: op("add", _one(x), _sq(y)),
    "asin": lambda x, y: op("rsqrt", op("sub", _one(x), _sq(x))),
    "acos": lambda x, y: op("neg", op("rsqrt", op("sub", _one(x), _sq(x)))),
    "atan": lambda x, y: _recip(op("add", _one(x), _sq(x))),
    "sinh": lambda x, y: op("cosh", x),
    "cosh": lambda x, y: op("sinh", x),
    "tanh": lambda x, y: op("sub", _one(x), _sq(y)),
    "asinh": lambda x, y: op("rsqrt", op("add", _sq(x), _one(x))),
    "acosh": lambda x, y: op("rsqrt", op("sub", _sq(x), _one(x))),
    "atanh": lambda x, y: _recip(op("sub", _one(x), _sq(x))),
    "erf": lambda x, y: mul(const(2.0 / math.sqrt(math.pi), x), op("exp", op("neg", _sq(x)))),
    "abs": lambda x, y: _sign(x),
}


def _sign(x):
    """abs's derivative: 0 at 0, the mean of its slopes either side, as at tied max/min points
    (and as `sign` and PyTorch have it)."""
    negative = _select(Op("lt", (x, _zero(x)), BOOL), const(-1.0, x), _zero(x))
    return _select(Op("gt", (x, _zero(x)), BOOL), _one(x), negative)
PIECEWISE_CONSTANT = ("floor", "ceil", "round", "trunc", "isnan", "isinf", "not", "and", "or",
                      "eq", "ne", "lt", "le", "gt", "ge")


def partials(node: Op) -> list:
    """Partial derivative of `node` with respect to each operand (None: no dependence)."""
    if node.op in PIECEWISE_CONSTANT or not node.dtype.is_float:
        return [None] * len(node.args)
    if node.op in UNARY:
        return [UNARY[node.op](node.args[0], node)]
    rule = BINARY.get(node.op)
    if rule is None:
        raise d.error(d.UNSUPPORTED, f"no derivative rule for `{node.op}`", node.span)
    return rule(node)


def _add(n):
    return [_one(n), _one(n)]


def _sub(n):
    return [_one(n), const(-1.0, n)]


def _mul(n):
    a, b = n.args
    return [b, a]


def _div(n):
    a, b = n.args
    return [_recip(b), op("neg", op("div", n, b))]


def _pow(n):
    """d/da a ** b = b a^(b - 1), but 0 where b is 0 (a^0 is 1 everywhere; at a = 0 the formula
    is 0 * inf, NaN); d/db = a^b ln a, but 0 where a is 0 (ln 0 is -inf): JAX's rules."""
    a, b = n.args
    if b.dtype.is_int:
        bf = _int_as_float(b, a)
        by_a = mul(bf, build("pow", (a, op("sub", b, Const(np.asarray(1, np.int32)))), a.dtype))
        return [by_a if is_folding_constant(b) else _unless_zero(b, by_a), None]
    by_a = mul(b, build("pow", (a, op("sub", b, _one(b))), a.dtype))
    zero = Op("eq", (a, _zero(a)), BOOL)
    return [_unless_zero(b, by_a), mul(n, op("log", _select(zero, _one(a), a)))]


def _unless_zero(b, value):
    """`value`, or 0 where `b` is 0."""
    return _select(Op("eq", (b, Const(np.asarray(0, dtype=b.dtype.numpy))), BOOL), _zero(value), value)


def _int_as_float(b, like):
    if is_folding_constant(b):
        return Const(np.asarray(b.array, dtype=like.dtype.numpy))
    return Op("cast", (b,), like.dtype)


def _min_max(n):
    """The argument that is the result takes the derivative; at a tie both share it equally,
    as the points that tie for a max/min reduction do (and JAX, PyTorch, central differences)."""
    a, b = n.args
    first = Op("lt" if n.op == "min" else "gt", (a, b), BOOL)
    tie = Op("eq", (a, b), BOOL)
    half = const(0.5, n)
    return [_select(first, _one(n), _select(tie, half, _zero(n))),
            _select(first, _zero(n), _select(tie, half, _one(n)))]


def _select_rule(n):
    cond, a, b = n.args
    return [None, _select(cond, _one(n), _zero(n)), _select(cond, _zero(n), _one(n))]


def _atan2(n):
    y, x = n.args
    r2 = op("add", _sq(x), _sq(y))
    return [op("div", x, r2), op("neg", op("div", y, r2))]


def _rem(n):
    a, b = n.args
    return [_one(n), op("neg", op("trunc", op("div", a, b)))]


def _cast(n):
    (x,) = n.args
    return [Op("cast", (_one(n),), x.dtype) if x.dtype.is_float else None]


BINARY = {"add": _add, "sub": _sub, "mul": _mul, "div": _div, "pow": _pow, "min": _min_max,
          "max": _min_max, "select": _select_rule, "atan2": _atan2, "rem": _rem, "cast": _cast}
