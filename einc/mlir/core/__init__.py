"""The lowering core every kernel shares: MLIR types, shapes, loops, scalar operations and the
rules that lower one scalar expression of a kernel body."""
