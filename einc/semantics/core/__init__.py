"""The base of elaboration: compile-time values, names, scalars, and reads of tensors.

Layers, bottom first; a module imports only modules of lower layers (tests/test_import_layers.py
reads the lists of einc.semantics.core, einc.semantics.forms and einc.semantics and checks them):
  1. values, coverage, builtins, modules, affine_ranges, untaken_branches: compile-time values,
     reads of points no clause defines, the built-in names, loading the module tree, the ranges
     affine reads give indices, the ranges reads in branches a constant condition skips give them
  2. bounds, resolve, scalar_ops, state, sequences, folding, match_coverage: bounds checks;
     name resolution; operations on scalars and literals; elaboration book-keeping (pending
     index ranges and the reads that give them); strings and other build-time lists; values
     known at build time; exhaustiveness of `match`
  3. tensors: reads, partial reads, point-by-point application (`lift`), lazy Jacobian reads
"""
