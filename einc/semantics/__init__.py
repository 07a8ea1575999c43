"""Semantics: modules are loaded and parsed, names resolved, and the program elaborated to IR.

Layers, bottom first; a module imports only modules of lower layers (tests/test_import_layers.py
reads this list and checks it):
  1. values, bounds, builtins, modules, affine_ranges, untaken_branches: compile-time values,
     bounds checks, the built-in names, loading the module tree, the ranges affine reads give
     indices, the ranges reads in branches a constant condition skips give them
  2. resolve, scalar_ops, state, sequences, folding, match_coverage: name resolution; operations
     on scalars and literals; elaboration book-keeping (pending index ranges and the reads that
     give them); strings and other build-time lists; values known at build time; exhaustiveness
     of `match`
  3. tensors: reads, partial reads, point-by-point application (`lift`), lazy Jacobian reads
  4. pointwise, types, printing, einsum, outputs, stacking, variables, guarded_clauses:
     elementwise/cast_to/select (shared by the rules), annotations, `print`, `__einsum`, which
     values leave the program, elements stacked into one value, the bindings derivatives
     differentiate, several guarded clauses of one definition
  5. definitions, derivative_rules, patterns, dynamic_length: indexed definitions, user `@fn`
     rules, `match`, sequences of a length computed on the device
  6. recurrences, membership, comprehensions, python_calls: recurrence groups; `x in coll`;
     `[body | clauses]`; Python functions called during the build
  7. derivatives: `@y / @x` requests
  8. evaluator: the `Elaborator` and the tables it dispatches through (EXPR_RULES by AST node
     type, BUILTIN_RULES by name, INTRINSIC_RULES by name and argument count)
  9. expressions, builtin_calls: the rules, each module's own tables
 10. elaborate: the entry point, the one module that imports the rule modules and installs
     their tables into the evaluator
"""
