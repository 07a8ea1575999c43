"""Built-in functions: assert, len, shape, typeof, load_npy and the intrinsics (`__sqrt`, ..),
entered into the evaluator's tables. `print` takes format strings, not values, so the call rule
of expressions handles it (printing)."""
from __future__ import annotations

import os

import numpy as np

from einc import diagnostics as d
from einc.ir import nodes as ir
from einc.ir.types import BOOL, Lin
from einc.semantics import builtins, scalar_ops, tensors
from einc.semantics.einsum import einsum
from einc.semantics.evaluator import INTRINSIC_RULES, builtin_rule, intrinsic_rule
from einc.semantics.pointwise import cast_to, elementwise
from einc.semantics.values import PartialRead, StrVal, TupleVal, Weak, describe

MATH_UNARY = set(builtins.UNARY_MATH) | {"abs", "isnan", "isinf"}
MATH_BINARY = {"min": "min", "max": "max", "pow": "pow", "atan2": "atan2", "fmod": "rem"}  # -> scalar op


def _pointwise(op: str):
    """The rule of an intrinsic that is the scalar operation `op`, point by point on arrays."""
    return lambda el, args, span: elementwise(el, op, args, span)


def _float_constant(value: float):
    return lambda el, args, span: Weak(np.asarray(value), "float", span)


INTRINSIC_RULES.update({(name, 1): _pointwise(name) for name in MATH_UNARY})
INTRINSIC_RULES.update({(name, 2): _pointwise(op) for name, op in MATH_BINARY.items()})
INTRINSIC_RULES.update({("select", 3): _pointwise("select"), ("inf", 0): _float_constant(np.inf),
                        ("nan", 0): _float_constant(np.nan)})


@intrinsic_rule(("cast_like", 2))
def _cast_like(el, args, span):
    """`x` converted to the element type of `like`: lets generic library code turn a count into
    the float type of its data (`sum / __cast_like(n, sum)`), which `as` cannot name."""
    x, like = args
    like = scalar_ops.materialize(tensors.whole(like, span), None, span)
    if not isinstance(like, ir.Value):
        raise d.error(d.TYPE, f"`__cast_like` needs a number or an array, found {describe(like)}", span)
    return cast_to(el, x, like.dtype, span)


@intrinsic_rule(("einsum", 2))
def _einsum(el, args, span):
    return einsum(el, *args, span)


@builtin_rule("len")
def _len(el, args, span):
    (x,) = _arity(args, 1, "len", span)
    x = tensors.shape_only(x, span)
    if not isinstance(x, (ir.Value, PartialRead)) or x.rank == 0:
        raise d.error(d.TYPE, f"`len` needs an array, found {describe(x)}", span)
    return ir.size_value(x.shape[0], span)


@builtin_rule("shape")
def _shape(el, args, span):
    (x,) = _arity(args, 1, "shape", span)
    x = tensors.shape_only(x, span)
    if not isinstance(x, (ir.Value, Weak, PartialRead)):
        raise d.error(d.TYPE, f"`shape` needs a number or an array, found {describe(x)}", span)
    dims = [ir.size_value(s, span) for s in getattr(x, "shape", ())]
    if all(isinstance(v, ir.Const) for v in dims):
        return ir.Const(np.asarray([int(v.array) for v in dims], dtype=np.int32), span=span)
    return ir.Stack(tuple(dims), span=span)


@builtin_rule("__size")
def _numel(el, args, span):
    (x,) = _arity(args, 1, "size", span)
    x = tensors.shape_only(x, span)
    total = ir.size_value(Lin(1), span)
    for s in x.shape:
        total = scalar_ops.apply("mul", [total, ir.size_value(s, span)], span)
    return total


@builtin_rule("typeof")
def _typeof(el, args, span):
    (x,) = _arity(args, 1, "typeof", span)
    return StrVal(describe(tensors.whole(x, span) if tensors.is_array(x) else x), span)


@builtin_rule("assert")
def _assert(el, args, span):
    if not 1 <= len(args) <= 2:
        raise d.error(d.TYPE, "`assert` takes a condition and an optional message", span)
    cond = scalar_ops.materialize(args[0], BOOL, span)
    if not isinstance(cond, ir.Value) or cond.rank or cond.dtype != BOOL:
        raise d.error(d.TYPE, f"`assert` needs a bool, found {describe(cond)}", span)
    msg = args[1].text if len(args) == 2 and isinstance(args[1], StrVal) else "condition is false"
    text = f"assertion failed at {span}: {msg}"
    if isinstance(cond, ir.Const):
        if not bool(cond.array):
            raise d.error(d.VALUE, f"this assertion always fails: {msg}", span)
        return TupleVal(())
    el.ir.effects.append(ir.Assert(cond, text, span=span))
    return TupleVal(())


@builtin_rule("load_npy")
def _load_npy(el, args, span):
    (path,) = _arity(args, 1, "load_npy", span)
    if not isinstance(path, StrVal):
        raise d.error(d.TYPE, "`load_npy` needs a string path known at build time", span)
    full = os.path.join(os.path.dirname(os.path.abspath(span.file)), path.text)
    try:
        array = np.load(full, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise d.error(d.IO, f"cannot load `{path.text}`: {exc}", span) from None
    if array.dtype.kind not in "fiub":
        raise d.error(d.IO, f"`{path.text}` holds {array.dtype}, not numbers", span)
    if array.dtype == np.float16:
        array = array.astype(np.float32)
    el.ir.data_files.append(full)
    return ir.Const(np.ascontiguousarray(array), span=span)


def _arity(args, n, name, span):
    if len(args) != n:
        raise d.error(d.TYPE, f"`{name}` takes {n} argument{'s' * (n != 1)}, got {len(args)}", span)
    return args
