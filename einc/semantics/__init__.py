"""Semantics: modules are loaded and parsed, names resolved, and the program elaborated to IR.

Folders, bottom first: core (values, names, scalars, tensor reads), forms (what a program is
written in), then the modules here, which tie them together. Layers of the modules here (numbered on
from einc.semantics.forms; tests/test_import_layers.py checks every folder's list):
  7. derivatives: `@y / @x` requests
  8. evaluator: the `Elaborator` and the tables it dispatches through (EXPR_RULES by AST node
     type, BUILTIN_RULES by name, INTRINSIC_RULES by name and argument count)
  9. expressions, builtin_calls: the rules, each module's own tables
 10. elaborate: the entry point, the one module that imports the rule modules and installs
     their tables into the evaluator
"""
