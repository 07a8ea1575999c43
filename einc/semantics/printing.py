"""`print`: its arguments become an `ir.Print` effect of text pieces and run-time values.

The format fields of a string argument (`"{x:.3}"`) are values like the other arguments; a
string elsewhere may only hold values known at build time (expressions uses `format_parts`).
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir import nodes as ir
from einc.semantics import scalar_ops, tensors
from einc.semantics.values import StrVal, TupleVal, describe
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
