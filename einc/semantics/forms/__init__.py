"""The forms a program is written in, each elaborated to IR: elementwise expressions, indexed
definitions, recurrences, comprehensions, patterns, prints.

Layers, bottom first (numbered on from einc.semantics.core; checked by tests/test_import_layers.py):
  4. pointwise, types, printing, einsum, outputs, stacking, variables, guarded_clauses, point_asserts, recurrence_coverage, step_axis:
     elementwise/cast_to/select (shared by the rules), annotations, `print`, `__einsum`, which
     values leave the program, elements stacked into one value, the bindings derivatives
     differentiate, several guarded clauses of one definition, asserts in bodies over points,
     the points a recurrence's reads need some clause to define, the axis a recurrence steps along
  5. definitions, derivative_rules, patterns, dynamic_length: indexed definitions, user `@fn`
     rules, `match`, sequences of a length computed on the device
  6. recurrences, membership, comprehensions, python_calls, unrolled_reductions: recurrence
     groups; `x in coll`; `[body | clauses]`; Python functions called during the build; a
     reduction reading strings at its indices, point by point during the build
"""
