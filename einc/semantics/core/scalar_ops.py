"""Typing rules of scalar operations (LANGUAGE.md section 2), with constant folding.

`apply(op, args, span)` takes scalars (IR values or `Weak` literals), checks the dtypes, gives an
untyped literal the type of its typed partner, folds constants, and returns an IR `Op` (or a
folded `Const`/`Weak`). Array operands are handled one level up, in `elementwise`.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import (COMPARISONS, Compact, Const, Generic, Op, Read, Reduce, Value, decided_by_a_constant,
                           is_folding_constant)
from einc.ir.types import BOOL, F32, F64, I32, DType
from einc.semantics.core.values import Traced, Weak, describe
from einc.syntax.parser import INT_LIMIT

ARITHMETIC = ("add", "sub", "mul", "div", "rem", "min", "max", "atan2")
LOGICAL = ("and", "or")
FLOAT_ONLY = ("sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos",
              "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
              "erf", "floor", "ceil", "round", "trunc", "isnan", "isinf", "atan2")
DEFAULT = {"int": I32, "float": F32, "bool": BOOL}
SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "pow": "**", "and": "&&",
          "or": "||", "neg": "-", "not": "!", "select": "if", "eq": "==", "ne": "!=", "lt": "<",
          "le": "<=", "gt": ">", "ge": ">="}


def kind_of(dtype: DType) -> str:
    return "float" if dtype.is_float else "int" if dtype.is_int else "bool"


def materialize(v, dtype: DType | None = None, span=None):
    """An IR value for `v`; an untyped literal takes `dtype` (or its default type). An int
    literal takes a float type as well (LANGUAGE.md section 9), the way a float literal does."""
    if isinstance(v, Weak):
        target = dtype or DEFAULT[v.kind]
        if kind_of(target) != v.kind and not (v.kind == "int" and target.is_float) and v.value.size:
            raise d.error(d.TYPE, f"expected {target}, found {v.kind} literal", v.span or span,
                          hint=_literal_hint(v, target))     # an empty literal takes any type
        if v.value.size:
            check_fits(v, target, span)
        if v.trace is not None:
            return v.trace.at(target)
        return Const(np.asarray(v.value).astype(target.numpy), span=v.span or span, literal=np.asarray(v.value))
    if dtype is not None and isinstance(v, Value) and _retypable(v, dtype):
        return _retyped(v, dtype)
    if dtype is not None and isinstance(v, Value) and v.dtype != dtype:
        raise _mismatch(v, dtype, span)
    return v


def _mismatch(v: Value, dtype: DType, use) -> d.CompileError:
    """A value of the wrong type, shown where it is made when that is inside the use checked,
    else at the use, with where it was made (a named binding's definition) in a note."""
    own = getattr(v, "span", None)
    hint = f"convert with `as {dtype}`"
    if own is None or use is None or own.within(use):
        return d.error(d.TYPE, f"expected {dtype}, found {describe(v)}", own or use, hint=hint)
    return d.error(d.TYPE, f"expected {dtype}, found {describe(v)}", use, hint=hint,
                   notes=[d.Label(own, f"this is {describe(v)}")])


def check_fits(v: Weak, target: DType, span) -> None:
    """A literal (or a constant folded from literals) must fit its type, as in Rust: an integer
    must not wrap around, a finite float must not become infinite."""
    if target.is_int:
        info = np.iinfo(target.numpy)
        outside = v.value[(v.value < info.min) | (v.value > info.max)]
    elif target.is_float:
        with np.errstate(over="ignore"):    # rounding to the type decides: 3.4028235e38 is f32's max
            rounded = np.asarray(v.value).astype(target.numpy)
        outside = v.value[np.isfinite(v.value) & np.isinf(rounded)]
    else:
        return
    if outside.size:
        value = outside.flat[0]
        shown = int(value) if target.is_int else float(value)
        hint = f"write `{shown}i64`" if target.name == "i32" and abs(shown) < 2 ** 63 else \
            "write it as an f64" if target.name == "f32" else ""
        raise d.error(d.VALUE, f"the constant {shown} does not fit in {target}", v.span or span, hint=hint)


def _literal_hint(v: Weak, target: DType) -> str:
    if v.kind == "float" and target.is_int and v.rank == 0:
        return f"write an integer, or convert with `as {target}`"
    return f"convert with `as {target}`"


def unify(args: list, span) -> list:
    """Give untyped literals the dtype of the typed operands; all typed ones must agree."""
    typed = [a for a in args if isinstance(a, Value)]
    if not typed:
        return args
    args = _literals_retyped(args, typed)
    typed = [a for a in args if isinstance(a, Value)]
    first = typed[0].dtype
    for other in typed[1:]:
        if other.dtype != first:
            raise d.error(d.TYPE, f"mismatched types {first} and {other.dtype}", span,
                          hint="Einlang never converts implicitly; use `as` to convert one side")
    return [materialize(a, first, span) if isinstance(a, Weak) else a for a in args]


def _literals_retyped(args: list, typed: list) -> list:
    """Operands computed from untyped literals alone take the type of the others (of their own
    kind), as an untyped literal does: `F[i, a] * P[a, j]` with `let F = [[1.0, 0.5], ..];` and P f64 is
    f64, though F, read at a point known only when the program runs, was made in its default f32."""
    others = {a.dtype for a in typed if not from_literals(a)}
    if len(others) != 1:
        return args
    (dtype,) = others
    return [_retyped(a, dtype) if isinstance(a, Value) and _retypable(a, dtype) else a for a in args]


def from_literals(v) -> bool:
    """Whether `v` is a typed value made of untyped literals alone, given their default type
    where it was built: literal arrays read at run-time points, arithmetic on such values, and
    a choice between them (`if x > 0.0 { 1.0 } else { 0.0 }`, `match` arms) whatever decides it,
    and arrays of such values (`let I[i, j] = if i == j { 1.0 } else { 0.0 };`).
    Walked with a stack, last operand first: a chain of 2,000 sums of reads ends at its first read."""
    todo = [v]
    while todo:
        v = todo.pop()
        if isinstance(v, Const) and v.literal is not None:
            continue
        if isinstance(v, Read):
            todo.append(v.tensor)
        elif isinstance(v, Compact):
            todo.append(v.source)       # the kept elements of `[0.5 ** k | k in 0..n, x[k] > 0.0]`
        elif isinstance(v, Generic) and v.guard is None:
            todo.append(v.body)
        elif isinstance(v, Reduce) and v.kind in ("sum", "prod", "max", "min"):
            todo.append(v.body)         # `sum[n](if y[n] > 0.0 { 1.0 } else { 0.0 }) / (N as f64)`
        elif isinstance(v, Op) and v.op == "select":
            todo.extend(v.args[1:])
        elif isinstance(v, Op) and v.op in ARITHMETIC + ("neg",):
            todo.extend(v.args)
        elif isinstance(v, Op) and v.op == "pow" and v.args[1].dtype.is_int:
            todo.append(v.args[0])      # `0.1 ** n`: an integer exponent types nothing
        else:
            return False
    return True


def fixed(v):
    """`v` with its type fixed for good: a suffix, an annotation or a declared parameter or
    return type types the literals in it, so that no later context gives them another one
    (`let w: f64 = if c { 1.0 } else { 0.0 };` stays f64 in a definition that has no other type)."""
    if isinstance(v, Const) and v.literal is not None:
        return replace(v, literal=None)
    if isinstance(v, Read) and from_literals(v):
        return replace(v, tensor=fixed(v.tensor))
    if isinstance(v, Generic) and from_literals(v):
        return replace(v, body=fixed(v.body))
    if isinstance(v, Compact) and from_literals(v):
        return replace(v, source=fixed(v.source))
    if isinstance(v, Op) and from_literals(v):
        return replace(v, args=tuple(fixed(a) for a in v.args))
    return v


def typed_beside(v, other: Value, span):
    """`v` typed as one side of a choice whose other side is `other` (`if c { v } else { other }`):
    an untyped literal takes other's type, and stays retypable only where `other` is made of
    literals too, as the choice would be."""
    v, other = unify([v, other], span)
    return v if from_literals(other) else fixed(v)


def _retypable(v: Value, dtype: DType) -> bool:
    """A value made of literals alone still takes the type its context asks for: one of its own
    kind, or a float type where it only picks int literals (`if c { 2 } else { -1 } * x[i]`),
    as an int literal does; int arithmetic (`7 / 2`) would change meaning in floats."""
    if v.dtype == dtype or v.dtype.is_bool or dtype.is_bool or not from_literals(v):
        return False
    return kind_of(v.dtype) == kind_of(dtype) or (dtype.is_float and _picks_only(v))


def _picks_only(v: Value) -> bool:
    """Whether `v` only picks among literals (chooses, reads, negates): no arithmetic."""
    todo = [v]
    while todo:
        v = todo.pop()
        if isinstance(v, (Read, Generic)):
            todo.append(v.tensor if isinstance(v, Read) else v.body)
        elif isinstance(v, Op) and v.op in ("select", "neg"):
            todo.extend(v.args[1:] if v.op == "select" else v.args)
        elif not isinstance(v, Const):
            return False
    return True


def _retyped(v: Value, dtype: DType) -> Value:
    if isinstance(v, Const):
        check_fits(Weak(np.asarray(v.literal), kind_of(dtype), v.span), dtype, v.span)   # 1e5 is no f16
        return Const(v.literal.astype(dtype.numpy), span=v.span, literal=v.literal)
    if isinstance(v, Read):
        return replace(v, tensor=_retyped(v.tensor, dtype))
    if isinstance(v, (Generic, Reduce)):
        return replace(v, body=_retyped(v.body, dtype))
    if isinstance(v, Compact):          # the same kept positions, of the elements retyped
        return replace(v, source=_retyped(v.source, dtype))
    if v.op == "pow":           # an integer exponent keeps its type
        return Op("pow", (_retyped(v.args[0], dtype), v.args[1]), dtype, span=v.span)
    if v.op == "select":        # the condition keeps its type: only the chosen values change
        return Op("select", (v.args[0],) + tuple(_retyped(a, dtype) for a in v.args[1:]), dtype, span=v.span)
    return Op(v.op, tuple(_retyped(a, dtype) for a in v.args), dtype, span=v.span)


def apply(op: str, args: list, span):
    """Type-check and build (or fold) the scalar operation `op`."""
    if all(isinstance(a, Weak) for a in args):
        return _fold_weak(op, args, span)
    if op == "pow":
        return _pow(args, span)
    if op == "select":
        cond = materialize(args[0], BOOL, span)
        branches = unify(args[1:], span)
        dtype = literal_dtype(branches, span) if all(isinstance(x, Weak) for x in branches) else None
        a, b = [materialize(x, dtype, span) for x in branches]
        return _build(op, [cond, a, b], a.dtype, span)
    args = unify(args, span)
    dtype = args[0].dtype
    if op in FLOAT_ONLY and dtype.is_int:
        # `sqrt` and friends of integers, as `sqrt(x) = x ** 0.5` defines them: in floats
        dtype = float_for(dtype)
        args = [cast(a, dtype, span) for a in args]
    _check_operand_kind(op, dtype, span)
    result = BOOL if op in COMPARISONS or op in ("isnan", "isinf") else dtype
    return _build(op, args, result, span)


def float_for(dtype: DType) -> DType:
    """The float type an integer converts to where a float is needed: 64-bit ones keep more."""
    return F64 if dtype.bits == 64 else F32


def cast(v, to: DType, span):
    if isinstance(v, Weak):
        if v.trace is not None:         # a literal a derivative differentiates stays in the graph
            return v.trace.at(to) if to.is_float else cast(v.trace.at(DEFAULT[v.kind]), to, span)
        return Const(np.asarray(_cast_np(v.value, to)), span=span)
    if v.dtype == to:
        return v
    if is_folding_constant(v) and v.array.ndim == 0:
        return Const(np.asarray(_cast_np(v.array, to)), span=span)   # sizes derived at build time
    return _build("cast", [v], to, span)


def _check_operand_kind(op: str, dtype: DType, span) -> None:
    if op in LOGICAL or op == "not":
        if not dtype.is_bool:
            raise d.error(d.TYPE, f"`{SYMBOL.get(op, '!')}` needs bool operands, found {dtype}", span)
    elif op in FLOAT_ONLY:
        if not dtype.is_float:
            raise d.error(d.TYPE, f"`{op}` needs a float argument, found {dtype}", span,
                          hint="convert with `as f32` or `as f64`")
    elif op not in COMPARISONS and dtype.is_bool:
        raise d.error(d.TYPE, f"`{SYMBOL.get(op, op)}` is not defined for bool", span)


def _pow(args: list, span):
    base, exp = args
    if (isinstance(base, Weak) and base.kind == "float" and base.trace is None and is_folding_constant(exp)
            and exp.dtype.is_int and exp.array.ndim == 0):
        # `0.5 ** k` with k an integer known at build time (a comprehension's `k in 0..20`) is
        # an untyped literal still, as with k a run-time integer: the exponent types nothing
        return _fold_weak("pow", [base, Weak(np.asarray(int(exp.array[()])), "int", span)], span)
    if isinstance(exp, Weak) and exp.kind == "int" and exp.trace is None:
        exp = materialize(exp, I32, span)
    if isinstance(base, Weak):
        base = materialize(base, exp.dtype if exp.dtype.is_float else None, span)
    if isinstance(exp, Weak):       # a float literal, or an int one a derivative differentiates
        exp = materialize(exp, base.dtype if base.dtype.is_float else float_for(base.dtype), span)
    if base.dtype.is_bool or exp.dtype.is_bool:
        raise d.error(d.TYPE, "`**` is not defined for bool", span)
    if base.dtype.is_int and exp.dtype.is_float:
        base = cast(base, exp.dtype, span)      # `n ** 0.5`: an integer to a float power is a float
    if base.dtype.is_float and exp.dtype.is_int:
        exp = cast(exp, I32, span)          # float ** integer: math.fpowi takes an i32
    elif exp.dtype != base.dtype and not (base.dtype.is_int and exp.dtype.is_int):
        # integers of two widths (`w ** k`, w: i64, k: i32): the exponent keeps its own type
        raise d.error(d.TYPE, f"mismatched types {base.dtype} and {exp.dtype} in `**`", span)
    if is_folding_constant(exp) and _is_zero(exp):
        # IREE-264: x ** 0 is 1 for every x (C's pow, NaN and 0 included); built, its power's
        # loop folds to 1 inside IREE, and a reduction whose body then reads no element is summed once
        return Const(np.asarray(1).astype(base.dtype.numpy), span=span)
    return _build("pow", [base, exp], base.dtype, span)


def _build(op: str, args: list, dtype: DType, span):
    if op in ("div", "rem") and dtype.is_int and _is_zero(args[1]):
        raise _by_zero(op, span)
    decided = decided_by_a_constant(op, args)
    if decided is not None:
        return decided
    if all(is_folding_constant(a) and a.array.ndim == 0 for a in args):
        folded = _fold_values(op, [a.array[()] for a in args], dtype)
        if folded is not None:
            return Const(np.asarray(folded).astype(dtype.numpy), span=span)   # integers wrap
    return Op(op, tuple(args), dtype, span=span)


def _is_zero(v) -> bool:
    return isinstance(v, Const) and v.array.ndim == 0 and v.array[()] == 0


def _by_zero(op: str, span) -> d.CompileError:
    """An integer `/` or `%` by a constant 0 has no value (a float one is IEEE's infinity or NaN)."""
    what = "division" if op == "div" else "remainder"
    return d.error(d.VALUE, f"integer {what} by zero", span,
                   hint="the divisor is the constant 0; guard the operation (`if d != 0 { .. }`) or divide floats")


def _literal_kind(literals: list[Weak], span, op: str = "") -> str:
    """The kind untyped literals combine to: an int literal meeting a float one is a float."""
    kinds = {a.kind if isinstance(a, Weak) else kind_of(a.dtype) for a in literals}
    if kinds == {"float", "int"} or (op in FLOAT_ONLY and kinds == {"int"}):
        kinds = {"float"}
    if len(kinds) > 1:
        raise d.error(d.TYPE, "mismatched literal types: " + " and ".join(sorted(kinds)), span,
                      hint="convert one side with `as`")
    return kinds.pop()


def literal_dtype(literals: list, span) -> DType:
    """The type untyped literals (and values made of them alone) that must share one take where
    nothing else types them: `let y[0] = 0.0; let y[1] = -1;` is f32, an int literal beside a
    float one being a float."""
    return DEFAULT[_literal_kind(literals, span)]


def typed_values(values: list) -> list:
    """The values among `values` that fix a type: neither untyped literals nor made of them."""
    return [v for v in values if isinstance(v, Value) and not from_literals(v)]


def _fold_weak(op: str, args: list[Weak], span):
    kind = _literal_kind(args[1:] if op == "select" else args, span, op)
    _check_operand_kind(op, DEFAULT[kind], span)
    values = [a.value[()] for a in args]
    if kind == "int":
        # exactly, as Python integers: NumPy's int64 would wrap around silently
        values = [int(v) for v in values]
        if op == "pow":
            _check_power_fits(*values, span)
    # Untyped float literals fold in f64, the precision they are stored in, and are rounded once
    # when a context gives them a type; folding in f32 would lose digits before meeting an f64.
    result = _fold_values(op, values, {"int": None, "float": F64, "bool": BOOL}[kind])
    if result is None and op in ("div", "rem") and kind == "int":
        raise _by_zero(op, span)
    if result is None and op == "pow" and kind == "int":
        raise d.error(d.VALUE, f"an integer to a negative power ({values[0]} ** {values[1]}) is not an integer",
                      span, hint=f"write a float base for a fraction: `{values[0]}.0 ** {values[1]}`")
    if result is None:
        raise d.error(d.VALUE, f"cannot evaluate `{SYMBOL.get(op, op)}` on these constants", span)
    if kind == "int" and not INT_LITERAL_MIN <= result <= INT_LITERAL_MAX:
        raise d.error(d.VALUE, f"the constant {result} does not fit in any integer type", span,
                      hint=_FLOAT_HINT)
    out_kind = "bool" if op in COMPARISONS or op in ("isnan", "isinf") else kind
    return Weak(np.asarray(result), out_kind, span, _traced_result(op, args, out_kind, span))


def _check_power_fits(base: int, exponent: int, span) -> None:
    """An untyped integer power too large for any integer type is E006 before it is computed
    (`2 ** 2147483647` has 2^31 bits): at least 2^((bits of |base|) - 1) * exponent."""
    if abs(base) > 1 and exponent > 0 and (abs(base).bit_length() - 1) * exponent > 64:
        raise d.error(d.VALUE, f"`{base} ** {exponent}` does not fit in any integer type", span,
                      hint=_FLOAT_HINT)


# An untyped integer constant, like an integer literal, lies between i64's least and u64's
# greatest value: one some integer type holds.
INT_LITERAL_MIN, INT_LITERAL_MAX = -2 ** 63, INT_LIMIT
_FLOAT_HINT = "integer arithmetic is exact at build time and never wraps; for a float, write a float operand (`2.0`)"


def _traced_result(op: str, args: list[Weak], kind: str, span):
    """The graph of a result computed from a traced literal (values.Traced), so that a
    derivative with respect to that literal sees this operation; None otherwise. Integer
    arithmetic stays integer (`7 / 2` is 3 in any context) and is converted after."""
    if kind == "bool" or all(a.trace is None for a in args):
        return None
    if kind == "float":
        return Traced(lambda dtype: apply(op, [a.trace.at(dtype) if a.trace is not None else a
                                               for a in args], span))
    return Traced(lambda dtype: cast(apply(op, [a.trace.at(I32) if a.trace is not None else a
                                                for a in args], span), dtype, span))


def _fold_values(op: str, v: list, dtype: DType | None):
    """Fold with NumPy in the operation's own precision; None when the result is undefined."""
    is_int = dtype is None or dtype.is_int
    if is_int and op in ("div", "rem"):
        a, b = int(v[0]), int(v[1])
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if op == "div" else a - b * q
    if is_int and op == "pow":
        base, exponent = int(v[0]), int(v[1])
        if exponent < 0 and abs(base) == 1:
            return base ** -exponent        # 1 / base^-n is an integer: 1 or -1
        if exponent < 0:
            return None         # not folded: the device's rule applies (einc.mlir.core.scalar_ops)
        # a typed integer wraps, as on the device: the power modulo 2^bits
        return base ** exponent if dtype is None else pow(base, exponent, 1 << dtype.bits)
    if dtype is not None and dtype.is_float:
        v = [dtype.numpy.type(x) for x in v]
    fn = _FOLDERS.get(op)
    if fn is None:
        return None
    with np.errstate(all="ignore"):
        return fn(*v)


def _cast_np(value, to: DType):
    # a value outside the target type (1e10 as i32, 1e300 as f32) converts as the CPU does,
    # without NumPy's warning reaching the user
    with np.errstate(all="ignore"):
        if to.is_int and np.asarray(value).dtype.kind == "f":
            return np.trunc(value).astype(to.numpy)
        return np.asarray(value).astype(to.numpy)


_FOLDERS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "rem": np.fmod, "pow": lambda a, b: a ** b,
    "min": lambda a, b: min(a, b), "max": lambda a, b: max(a, b), "atan2": np.arctan2,
    "and": lambda a, b: bool(a) and bool(b), "or": lambda a, b: bool(a) or bool(b),
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "neg": lambda a: -a, "not": lambda a: not a, "abs": abs, "select": lambda c, a, b: a if c else b,
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": lambda a: np.sign(a) * np.floor(np.abs(a) + 0.5),  # half away from zero, as math.round
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "expm1": np.expm1,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "isnan": np.isnan,
    "isinf": np.isinf, "rsqrt": lambda a: 1 / np.sqrt(a),
    "erf": lambda a: math.erf(float(a)),
}
