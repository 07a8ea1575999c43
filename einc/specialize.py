"""Builds specialized to the sizes they are called with, as `jax.jit` traces per shape.

A program's named dims (`let X: [f32; B, H, W];`) are run-time sizes in the module `einc build`
makes, and IREE's code for run-time sizes is slower for windows (convolutions, poolings) than
for sizes it knows. `einc run FILE.ein` and `einc.jit` read the named dims' sizes from the inputs
of each call (its size signature) and build the program with those dims fixed (`--dim`), one
module per size signature in the build cache. A dim no input fixes stays a run-time size.
"""
from __future__ import annotations

from typing import Mapping

from einc.mlir.signature import size_check
from einc.runtime.inputs import named_dim_sizes
from einc.runtime.signature import InputSpec, Signature
from einc.runtime.sizes import check_sizes, has_empty_range


def input_signature(ir_program) -> Signature:
    """What `main` of the front end's `ir_program` takes, and what its sizes must fit (no
    outputs): enough to read and check a call's inputs before any module is built."""
    inputs = ir_program.inputs
    specs = [InputSpec(i.name, i.dtype.numpy.name, None if i.declared_dims is None else list(i.declared_dims))
             for i in inputs]
    return Signature(specs, [], {}, ir_program.source, None, fixed_dims=dict(ir_program.fixed_dims),
                     sizes={sym.name: (inputs[sym.input_pos].name, sym.axis) for sym in ir_program.syms},
                     size_checks=[size_check(fact) for fact in ir_program.size_facts])


def size_signature(signature: Signature, shapes: Mapping[str, tuple[int, ...]]) -> dict[str, int]:
    """The size of each named dim the inputs' `shapes` (by input name) give and the build has not
    fixed already. RunError, as the run-time-size module's call gives it, when two inputs give
    one dim different sizes or the sizes do not fit the program; {} (that module, whose call
    says what is wrong) when an input is missing or of another rank, and when the sizes make a
    range of the program empty (which that module runs, with empty results, and a build for the
    sizes would reject)."""
    if not all(_of_declared_rank(spec, shapes.get(spec.name)) for spec in signature.inputs):
        return {}
    sizes = named_dim_sizes(signature.inputs, shapes)
    check_sizes(signature, shapes)
    if has_empty_range(signature, shapes):
        return {}
    return {dim: size for dim, size in sorted(sizes.items()) if dim not in signature.fixed_dims}


def describe_sizes(sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{dim}={size}" for dim, size in sizes.items())


def _of_declared_rank(spec: InputSpec, shape) -> bool:
    return shape is not None and (spec.dims is None or len(shape) == len(spec.dims))
