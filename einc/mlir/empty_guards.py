"""Kernels over tensors that are empty at build time: none is built.

A kernel whose domain is empty computes nothing: its value is what it writes into. Every read
that runs is inside its axis (einc.passes.size_facts), so a kernel that reads or writes an empty
tensor has an empty domain:
- a linalg op whose ins or outs are empty is its outs;
- an empty slice inserted leaves the destination as it is; an empty slice taken is
  tensor.empty; an empty tensor padded is the padding value everywhere.
An extent known to be zero at build time (`--dim N=2` and a clause over `2..N`) is decided here
on every target (IREE-20: a zero-extent matvec crashes the compiler; MLIR rejects an empty
slice inserted at the end of an axis).

A run-time extent is not decided here: a host `scf.if` on the extents (to spare Vulkan the
empty bindings of IREE-21) is not waited for (IREE-40), so an empty tensor at run time on
vulkan-spirv is a run error (einc.runtime.program), never a wrong value.
"""
from __future__ import annotations

from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.mlir.core.shapes import index_const

DEVICE_CODE = ("flow.dispatch.region", "tensor.pad")   # with every linalg op: regions that run on the device


def skip_empty_kernels(module: ir.Module) -> None:
    """Replace each host-level op of `module` that has a build-time zero extent by its value
    without a kernel."""
    found = []

    def collect(op):
        if _rule(op) is not None and not _in_device_code(op.parent):
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(collect)
    for op in found:
        with ir.InsertionPoint(op), op.location:
            extents, otherwise = _rule(op)(op)
            if 0 in extents:
                _replace(op, otherwise())


def _rule(op) -> Optional[Callable]:
    name = op.name
    if name.startswith("linalg.") and name != "linalg.fill" and len(op.results):
        return _linalg
    return RULES.get(name)


def _in_device_code(op) -> bool:
    while op is not None:
        if op.name.startswith("linalg.") or op.name in DEVICE_CODE:
            return True
        op = op.parent
    return False


# ------------------------------------------------------------------------------------ rules:
# each gives the build-time extents of `op`'s tensors and a builder of its value when one is zero

def _linalg(op):
    outs = list(op.operands)[len(op.operands) - len(op.results):]
    return _static_extents(list(op.operands)), lambda: outs


def _insert_slice(op):
    source, dest = list(op.operands)[:2]
    return _static_extents([source]), lambda: [dest]


def _extract_slice(op):
    # the result's run-time extents are the op's dynamic sizes, in order (a rank-reducing
    # slice drops only static unit axes)
    shape = ir.ShapedType(op.results[0].type)
    sizes = iter(op.opview.sizes)
    extents = [next(sizes) if shape.is_dynamic_dim(k) else d for k, d in enumerate(shape.shape)]
    return [e for e in extents if isinstance(e, int)], lambda: [tensor.empty(extents, shape.element_type)]


def _pad(op):
    pad = op.opview
    source, result = op.operands[0], op.results[0]
    shape = ir.ShapedType(result.type)
    widths = [lo + hi for lo, hi in zip(pad.static_low, pad.static_high)]

    def padding():
        # einc pads by constants only; one made in the pad's own region is made again here
        sizes = [arith.addi(tensor.dim(source, index_const(k)), index_const(widths[k]))
                 if shape.is_dynamic_dim(k) else d for k, d in enumerate(shape.shape)]
        value = list(pad.region.blocks[0].operations)[-1].operands[0]
        if _defined_inside(value, op):
            value = value.owner.clone().result
        return [linalg.fill(value, outs=[tensor.empty(sizes, shape.element_type)])]
    return _static_extents([source]), padding


RULES: dict[str, Callable] = {
    "tensor.insert_slice": _insert_slice,
    "tensor.extract_slice": _extract_slice,
    "tensor.pad": _pad,
}


# ------------------------------------------------------------------------------------ helpers

def _replace(op, values: list[ir.Value]) -> None:
    for old, new in zip(op.results, values):
        old.replace_all_uses_with(new)
    op.erase()


def _defined_inside(value: ir.Value, op) -> bool:
    owner = value.owner
    parent = owner.owner if isinstance(owner, ir.Block) else owner
    parent = getattr(parent, "operation", parent)
    while parent is not None:
        if parent == op:
            return True
        parent = parent.parent
    return False


def _static_extents(values: list[ir.Value]) -> list[int]:
    """The build-time extents of the tensors among `values`."""
    extents: list[int] = []
    for value in values:
        if isinstance(value.type, ir.RankedTensorType):
            shape = ir.ShapedType(value.type)
            extents += [shape.get_dim_size(k) for k in range(shape.rank) if not shape.is_dynamic_dim(k)]
    return extents
