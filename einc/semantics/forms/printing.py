"""`print`: its arguments become an `ir.Print` effect of text pieces and run-time values.

The format fields of a string argument (`"{x:.3}"`) are values like the other arguments; a
string elsewhere is a build-time value, so its fields are formatted during the build
(`interpolate`), the way `print` would format them at run time (einc.formatting); an assert's
message may hold run-time fields (`message`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from einc import diagnostics as d
from einc import formatting
from einc.ir import nodes as ir
from einc.semantics.core import scalar_ops, sequences, tensors
from einc.semantics.core.folding import depends_on, known
from einc.semantics.core.values import ListVal, StrVal, TupleVal, describe
from einc.syntax import ast


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


def save_npy(el, path, value, span):
    """`save_npy(path, x)`: an effect in program order, like `print`, that writes x to the .npy
    file `path` (relative to the folder the program runs in) when the program runs."""
    if not isinstance(path, StrVal):
        raise d.error(d.TYPE, f"`save_npy` takes a file name known at build time first, found {describe(path)}",
                      span)
    value = tensors.whole(scalar_ops.materialize(value, None, span), span)
    if not isinstance(value, ir.Value):
        raise d.error(d.TYPE, f"`save_npy` writes a number or an array, found {describe(value)}", span)
    part = {"save": path.text, "arg": 0}
    if value.dtype.is_unsigned:
        part["dtype"] = value.dtype.numpy.name
    el.ir.effects.append(ir.Print([part], (value,), span=span))
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


@dataclass(frozen=True)
class RunTimeText:
    """An assert's message whose fields depend on run-time values: formatted by the runner from
    the values traced when the assertion fails (`text` stands for them until then)."""
    parts: list
    args: list
    text: str


def message(el, node: ast.StrLit, env):
    """An assert's message: a StrVal when every field is known at build time, else RunTimeText."""
    parts, args = format_parts(el, node, env)
    if all(known(a) is not None for a in args):
        return StrVal(interpolate(parts, args, node.span), node.span)
    text = "".join(p["text"] if "text" in p else "{..}" for p in parts)
    return RunTimeText(parts, args, text)


def _check_spec(v: ir.Value, spec: str, span) -> None:
    """A format spec that fits no value of the field's type is a build error, not a run-time one."""
    try:
        formatting.format_value(np.zeros((), v.dtype.numpy), spec)
    except (ValueError, TypeError) as err:
        raise d.error(d.TYPE, f"the format `{{..:{spec}}}` does not fit {v.dtype}: {err}", span,
                      hint="Python's format specs: `{x:.4f}`, `{x:>8}`, `{n:05d}`") from None


def _value_parts(v, spec: str, next_arg: int, span):
    if isinstance(v, StrVal):
        return [{"text": format(v.text, spec)}], []
    if isinstance(v, ListVal):
        texts = sequences.text_array(v)     # strings print as a NumPy array of str would
        if texts is not None:
            return [{"text": str(texts)}], []
        return _items_parts(v.items, "[]", spec, next_arg, span)
    if isinstance(v, TupleVal):
        return _items_parts(v.items, "()", spec, next_arg, span)
    v = tensors.whole(scalar_ops.materialize(v, None, span), span)
    if not isinstance(v, ir.Value):
        raise d.error(d.TYPE, f"cannot print {describe(v)}", span)
    _check_spec(v, spec, span)
    part = {"arg": next_arg, "spec": spec}
    if v.dtype.is_unsigned:
        part["dtype"] = v.dtype.numpy.name
    return [part], [v]


def _items_parts(items: tuple, brackets: str, spec: str, next_arg: int, span):
    parts, args = [{"text": brackets[0]}], []
    for k, item in enumerate(items):
        p, a = _value_parts(item, spec, next_arg + len(args), span)
        parts += ([{"text": ", "}] if k else []) + p
        args += a
    return parts + [{"text": brackets[1]}], args


def interpolate(parts: list, args: list, span) -> str:
    """The text of a string whose fields hold `args`, each known at build time."""
    out = []
    for part in parts:
        if "text" in part:
            out.append(part["text"])
            continue
        arg = args[part["arg"]]
        value = known(arg)
        if value is None:
            raise d.error(d.UNSUPPORTED, f"a string is a build-time value, but this field depends on "
                          f"{depends_on(arg)}", span, hint="`print` formats run-time values: "
                          "print(\"x = {x}\")")
        try:
            out.append(formatting.format_value(value, part.get("spec", "")))
        except (ValueError, TypeError) as err:
            raise d.error(d.TYPE, f"cannot format {describe(arg)} with `{part.get('spec')}`: {err}",
                          span) from None
    return "".join(out)


def _merge_text(parts: list) -> list:
    out = []
    for p in parts:
        if "text" in p and out and "text" in out[-1]:
            out[-1] = {"text": out[-1]["text"] + p["text"]}
        elif p != {"text": ""}:
            out.append(p)
    return out
