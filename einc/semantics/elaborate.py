"""Elaboration: the resolved AST becomes typed tensor IR (see evaluator).

This is the top of einc.semantics, the one module that imports the rule modules; it installs
their tables into the evaluator once, here, before any program is evaluated.
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir import nodes as ir
from einc.semantics import builtin_calls, evaluator, expressions
from einc.semantics.forms import outputs as output_rules
from einc.semantics.evaluator import Elaborator

evaluator.install(expressions.RULES, builtin_calls.BUILTIN_RULES, builtin_calls.INTRINSIC_RULES)


def elaborate(program, resolution, outputs: list[str] | None = None,
              fixed_dims: dict[str, int] | None = None, allow_python: bool = False,
              ranks: dict[str, int] | None = None) -> ir.Program:
    """The IR of a loaded, resolved program; `outputs` restricts which bindings leave it,
    `fixed_dims` gives named dims a size at build time (`einc build --dim`), `allow_python`
    lets `python::mod::f(..)` run during the build and `ranks` gives any-rank inputs
    (`[f32; *]`) a rank (einc.specialize)."""
    el = Elaborator(program, resolution, fixed_dims, allow_python, ranks)
    bindings = el.exec_block(program.entry.items, el.globals, top_level=True)
    _check_fixed_dims_exist(el)
    output_rules.collect(el, bindings, outputs)
    return el.ir


def _check_fixed_dims_exist(el: Elaborator) -> None:
    unknown = sorted(set(el.ir.fixed_dims) - set(el.named_dims))
    if unknown:
        listing = ", ".join(el.named_dims) or "none"
        raise d.OptionError(f"cannot fix dim {unknown[0]}: the program has no named dim {unknown[0]} "
                            f"(its named dims: {listing})")
