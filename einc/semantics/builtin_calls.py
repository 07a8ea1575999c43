"""Built-in functions: print, assert, len, shape, typeof, load_npy and the math intrinsics."""
from __future__ import annotations

import os

import numpy as np

from einc import diagnostics as d
from einc.ir import nodes as ir
from einc.ir.types import BOOL, I32, Lin
from einc.semantics import builtins, scalar_ops, tensors
from einc.semantics.values import PartialRead, StrVal, TupleVal, Weak, describe
from einc.syntax import ast

MATH_UNARY = set(builtins.UNARY_MATH) | {"abs", "isnan", "isinf"}
MATH_BINARY = {"min", "max", "pow", "atan2", "fmod"}


def call(el, name: str, args: list, span):
    rule = _RULES.get(name)     # looked up first: `x.size` is the rule `__size`
    if rule is None and name.startswith("__"):
        return call_intrinsic(el, name[2:], args, span)
    if rule is None:
        raise d.error(d.UNSUPPORTED, f"`{name}` has no meaning in a compiled program", span)
    return rule(el, args, span)


def call_intrinsic(el, name: str, args: list, span, hint: str = ""):
    from einc.semantics.expressions import elementwise
    if name in MATH_UNARY and len(args) == 1:
        return elementwise(el, name, args, span)
    if name in MATH_BINARY and len(args) == 2:
        op = {"fmod": "rem"}.get(name, name)
        return elementwise(el, op, args, span)
    if name == "select" and len(args) == 3:
        return elementwise(el, "select", args, span)
    if name in ("inf", "nan") and not args:
        return Weak(np.asarray(np.inf if name == "inf" else np.nan), "float", span)
    if name == "cast_like" and len(args) == 2:
        return _cast_like(el, *args, span)
    if name == "einsum" and len(args) == 2:
        from einc.semantics.einsum import einsum
        return einsum(el, *args, span)
    count = f"{len(args)} argument" + ("" if len(args) == 1 else "s")
    raise d.error(d.UNDEFINED, f"no function `{name}` taking {count}", span, hint=hint)


def _cast_like(el, x, like, span):
    """`x` converted to the element type of `like`: lets generic library code turn a count into
    the float type of its data (`sum / __cast_like(n, sum)`), which `as` cannot name."""
    from einc.semantics.expressions import _cast_to
    like = scalar_ops.materialize(tensors.whole(like, span), None, span)
    if not isinstance(like, ir.Value):
        raise d.error(d.TYPE, f"`__cast_like` needs a number or an array, found {describe(like)}", span)
    return _cast_to(el, x, like.dtype, span)


def _len(el, args, span):
    (x,) = _arity(args, 1, "len", span)
    x = tensors.shape_only(x, span)
    if not isinstance(x, (ir.Value, PartialRead)) or x.rank == 0:
        raise d.error(d.TYPE, f"`len` needs an array, found {describe(x)}", span)
    return ir.size_value(x.shape[0], span)


def _shape(el, args, span):
    (x,) = _arity(args, 1, "shape", span)
    x = tensors.shape_only(x, span)
    if not isinstance(x, (ir.Value, Weak, PartialRead)):
        raise d.error(d.TYPE, f"`shape` needs a number or an array, found {describe(x)}", span)
    dims = [ir.size_value(s, span) for s in getattr(x, "shape", ())]
    if all(isinstance(v, ir.Const) for v in dims):
        return ir.Const(np.asarray([int(v.array) for v in dims], dtype=np.int32), span=span)
    return ir.Stack(tuple(dims), span=span)


def _numel(el, args, span):
    (x,) = _arity(args, 1, "size", span)
    x = tensors.shape_only(x, span)
    total = ir.size_value(Lin(1), span)
    for s in x.shape:
        total = scalar_ops.apply("mul", [total, ir.size_value(s, span)], span)
    return total


def _typeof(el, args, span):
    (x,) = _arity(args, 1, "typeof", span)
    return StrVal(describe(tensors.whole(x, span) if tensors.is_array(x) else x), span)


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


_RULES = {"len": _len, "shape": _shape, "__size": _numel, "typeof": _typeof,
          "assert": _assert, "load_npy": _load_npy}


# ---------------------------------------------------------------- print

def print_call(el, arg_nodes: list, env, span):
    parts, args = [], []
    for k, node in enumerate(arg_nodes):
        if k:
            parts.append({"text": " "})
        if isinstance(node, ast.StrLit):
            p, a = format_parts(el, node, env, first_arg=len(args))
        else:
            p, a = _value_parts(el.ev(node, env), "", len(args), span)
        parts += p
        args += a
    parts.append({"text": "\n"})
    el.ir.effects.append(ir.Print(_merge_text(parts), tuple(args), span=span))
    return TupleVal(())


def format_parts(el, node: ast.StrLit, env, first_arg: int = 0):
    parts, args = [], []
    for piece in node.parts:
        if isinstance(piece, str):
            parts.append({"text": piece})
            continue
        p, a = _value_parts(el.ev(piece.expr, env), piece.spec, first_arg + len(args), piece.span)
        parts += p
        args += a
    return _merge_text(parts), args


def _value_parts(v, spec: str, next_arg: int, span):
    if isinstance(v, StrVal):
        return [{"text": format(v.text, spec)}], []
    if isinstance(v, TupleVal):
        parts, args = [{"text": "("}], []
        for k, item in enumerate(v.items):
            p, a = _value_parts(item, spec, next_arg + len(args), span)
            parts += ([{"text": ", "}] if k else []) + p
            args += a
        return parts + [{"text": ")"}], args
    v = tensors.whole(scalar_ops.materialize(v, None, span), span)
    if not isinstance(v, ir.Value):
        raise d.error(d.TYPE, f"cannot print {describe(v)}", span)
    return [{"arg": next_arg, "spec": spec}], [v]


def _merge_text(parts: list) -> list:
    out = []
    for p in parts:
        if "text" in p and out and "text" in out[-1]:
            out[-1] = {"text": out[-1]["text"] + p["text"]}
        elif p != {"text": ""}:
            out.append(p)
    return out


__all__ = ["call", "call_intrinsic", "print_call", "format_parts", "I32"]
