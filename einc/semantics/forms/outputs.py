"""Which values leave the program (LANGUAGE.md section 1)."""
from __future__ import annotations

import difflib

from einc import diagnostics as d
from einc.ir.nodes import Value
from einc.semantics.core import scalar_ops, tensors
from einc.semantics.core.values import LazyJacobian, TupleVal, Weak
from einc.syntax import ast


def collect(el, bindings: list, wanted: list[str] | None) -> None:
    main = _main_function(el)
    if main is not None:
        result = el.call(main, [], main.node.span)
        candidates = _flatten("main", result)
    else:
        candidates = []
        for name, def_id, is_const in bindings:
            if not is_const:
                candidates += _flatten(name, el.globals.lookup(def_id))
    by_name = dict(candidates)
    if wanted:
        candidates = [(n, by_name[n]) for n in _chosen(wanted, by_name)]
    # a derivative is computed only once it is known to leave the program
    el.ir.outputs = [(n, tensors.whole(v) if isinstance(v, LazyJacobian) else v) for n, v in candidates]


def _chosen(wanted: list[str], by_name: dict) -> list[str]:
    """The outputs `wanted` names: a name, or a tuple binding's name for all its parts
    (`top` for `top.0` and `top.1`)."""
    chosen: list[str] = []
    for name in wanted:
        parts = [n for n in by_name if n == name or n.startswith(name + ".")]
        if not parts:
            raise _no_such_output(name, list(by_name))
        chosen += [n for n in parts if n not in chosen]
    return chosen


def _no_such_output(name: str, names: list[str]) -> d.OptionError:
    """`--output NAME` is a command-line argument, not source: an option error (no location),
    with the values there are and the closest one."""
    close = difflib.get_close_matches(name, names, n=1)
    guess = f"; did you mean `{close[0]}`?" if close else ""
    listing = ", ".join(names) or "none"
    return d.OptionError(f"cannot output `{name}`: the program has no top-level value named `{name}`"
                         f"{guess} (its outputs: {listing})")


def _main_function(el):
    for item in el.program.entry.items:
        if isinstance(item, ast.FnDef) and item.name == "main":
            if item.params:
                raise d.error(d.TYPE, "`fn main()` takes no parameters; declare inputs with "
                              "top-level `let name: type;`", item.span)
            return el.globals.lookup(item.def_id)
    return None


def _flatten(name: str, value) -> list:
    if isinstance(value, TupleVal):
        out = []
        for k, item in enumerate(value.items):
            out += _flatten(f"{name}.{k}", item)
        return out
    if isinstance(value, LazyJacobian):
        return [(name, value)]
    if isinstance(value, Weak) or tensors.is_array(value):
        value = tensors.whole(scalar_ops.materialize(value, None), None)
    return [(name, value)] if isinstance(value, Value) else []
