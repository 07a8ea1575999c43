"""Elaboration: the resolved AST becomes typed tensor IR (see evaluator).

This is the top of einc.semantics, the one module that imports the rule modules, so that
they fill the evaluator's tables before a program is evaluated.
"""
from __future__ import annotations

from einc.ir import nodes as ir
from einc.semantics import builtin_calls, expressions  # noqa: F401  (they fill the evaluator's tables)
from einc.semantics import outputs as output_rules
from einc.semantics.evaluator import Elaborator


def elaborate(program, resolution, outputs: list[str] | None = None,
              allow_python: bool = False) -> ir.Program:
    """The IR of a loaded, resolved program; `outputs` restricts which bindings leave it;
    `allow_python` lets `python::mod::f(..)` run during the build."""
    el = Elaborator(program, resolution, allow_python)
    bindings = el.exec_block(program.entry.items, el.globals, top_level=True)
    output_rules.collect(el, bindings, outputs)
    return el.ir
