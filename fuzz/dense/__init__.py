"""The dense campaign: generated programs whose definitions are the reductions einc emits as
named linalg ops (matmuls, convolutions, depthwise convolutions, poolings; einc/mlir/dense/named_ops.py)
and their near misses, read through padded, reshaped and cut views (einc/mlir/dense/operand_views.py),
chained as in a CNN, against float64 NumPy references computed from the generator's own
description (fuzz.dense.spec, fuzz.dense.reference), never from einc.
"""
