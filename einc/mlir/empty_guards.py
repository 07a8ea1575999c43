"""No Vulkan dispatch binds an empty buffer (vulkan-spirv).

IREE 3.13's Vulkan HAL refuses to record a dispatch any of whose bindings has zero bytes
("Vulkan dispatch binding 1 resolved to an empty buffer range"), even one of zero workgroups,
where the CPU targets run zero iterations. With run-time sizes any tensor may be empty: an
empty input (N = 0), a clause over `2..N` at N = 2, a filter that keeps nothing. So on
vulkan-spirv each host-level op that IREE may turn into a dispatch and that touches a tensor
with a run-time extent runs under a host `scf.if` that skips it when it would bind an empty
tensor, and gives the value it has then without a kernel:
- a linalg op whose ins or outs are empty has an empty domain (every read that runs is inside
  its axis, einc.passes.size_facts, so an empty operand is indexed by an empty loop): its
  value is its outs;
- an empty slice inserted leaves the destination as it is; an empty slice taken is
  tensor.empty; an empty tensor padded is the padding value everywhere.
A tensor a kernel reads inside its body (a tensor.extract of a clamped or data-dependent
read, a recurrence's input) may be empty while the kernel's domain is not; such a read never
runs, so the kernel reads a one-element stand-in instead.
Linalg fills are left alone: IREE makes them buffer fills, which may be empty. Static zero
extents are IREE's own business (it removes zero-extent tensors at build time).
"""
from __future__ import annotations

from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc.mlir.shapes import index_const

DEVICE_CODE = ("flow.dispatch.region", "tensor.pad")   # with every linalg op: regions that run on the device


def guard_empty_bindings(module: ir.Module) -> None:
    """Put every host-level op of `module` that may bind an empty tensor under a guard."""
    found = []

    def collect(op):
        if _rule(op) is not None and not _in_device_code(op.parent):
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(collect)
    for op in found:
        with ir.InsertionPoint(op), op.location:
            _rule(op)(op)


def _rule(op) -> Optional[Callable]:
    name = op.name
    if name.startswith("linalg.") and name != "linalg.fill" and len(op.results):
        return _guard_linalg
    return RULES.get(name)


def _in_device_code(op) -> bool:
    while op is not None:
        if op.name.startswith("linalg.") or op.name in DEVICE_CODE:
            return True
        op = op.parent
    return False


# ------------------------------------------------------------------------------------ rules

def _guard_linalg(op) -> None:
    _stand_in_captured(op)
    outs = list(op.operands)[len(op.operands) - len(op.results):]
    _run_if(op, _non_empty([v for v in op.operands if _dynamic_dims(v)]), lambda: outs)


def _guard_dispatch_region(op) -> None:
    _stand_in_captured(op)


def _guard_insert_slice(op) -> None:
    source, dest = list(op.operands)[:2]
    _run_if(op, _non_empty([source]), lambda: [dest])


def _guard_extract_slice(op) -> None:
    # the result's run-time extents are the op's dynamic sizes, in order (a rank-reducing
    # slice drops only static unit axes)
    shape = ir.ShapedType(op.results[0].type)
    sizes = list(op.opview.sizes)

    def empty():
        dynamic = iter(sizes)
        return [tensor.empty([next(dynamic) if shape.is_dynamic_dim(k) else d for k, d in enumerate(shape.shape)],
                             shape.element_type)]
    _run_if(op, _all_positive(sizes), empty)


def _guard_pad(op) -> None:
    pad = op.opview
    if len(pad.low) or len(pad.high):
        return   # einc pads by constants only
    source, result = op.operands[0], op.results[0]
    shape = ir.ShapedType(result.type)
    lows, highs = pad.static_low, pad.static_high

    def padding():
        sizes = [arith.addi(tensor.dim(source, index_const(k)), index_const(lows[k] + highs[k]))
                 if shape.is_dynamic_dim(k) else d for k, d in enumerate(shape.shape)]
        value = pad.region.blocks[0].operations[0].operands[0]
        constant = value.owner.clone()   # the padding constant lives in the pad's own region
        return [linalg.fill(constant.result, outs=[tensor.empty(sizes, shape.element_type)])]
    _run_if(op, _non_empty([source]), padding)


RULES: dict[str, Callable] = {
    "flow.dispatch.region": _guard_dispatch_region,
    "tensor.insert_slice": _guard_insert_slice,
    "tensor.extract_slice": _guard_extract_slice,
    "tensor.pad": _guard_pad,
}


# ------------------------------------------------------------------------------------ helpers

def _run_if(op, condition: Optional[ir.Value], otherwise: Callable) -> None:
    """`op` moved into the then-branch of an scf.if on `condition` (none: it stays as it is);
    the else-branch yields `otherwise()`, built there."""
    if condition is None:
        return
    branch = scf.IfOp(condition, [r.type for r in op.results], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        done = scf.YieldOp(list(op.results))
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp(otherwise())
    for old, new in zip(op.results, branch.results):
        old.replace_all_uses_except(new, done.operation)
    op.move_before(done.operation)


def _stand_in_captured(op) -> None:
    """Every tensor with a run-time extent that `op`'s regions read from outside it is
    replaced there by itself, or by a one-element tensor where it is empty."""
    reads = []

    def collect(inner):
        if inner != op:
            reads.extend((inner, k, v) for k, v in enumerate(inner.operands)
                         if _dynamic_dims(v) and not _defined_inside(v, op))
        return ir.WalkResult.ADVANCE
    op.walk(collect)
    stand_ins: list[tuple[ir.Value, ir.Value]] = []
    for inner, k, value in reads:
        found = next((s for v, s in stand_ins if v == value), None)
        if found is None:
            found = _stand_in(value)
            stand_ins.append((value, found))
        inner.operands[k] = found


def _stand_in(value: ir.Value) -> ir.Value:
    shape = ir.ShapedType(value.type)
    branch = scf.IfOp(_non_empty([value]), [value.type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([value])
    with ir.InsertionPoint(branch.else_block):
        sizes = [index_const(1) if shape.is_dynamic_dim(k) else d for k, d in enumerate(shape.shape)]
        scf.YieldOp([tensor.empty(sizes, shape.element_type)])
    return branch.results[0]


def _defined_inside(value: ir.Value, op) -> bool:
    owner = value.owner
    parent = owner.owner if isinstance(owner, ir.Block) else owner
    parent = getattr(parent, "operation", parent)
    while parent is not None:
        if parent == op:
            return True
        parent = parent.parent
    return False


def _dynamic_dims(value: ir.Value) -> list[int]:
    if not isinstance(value.type, ir.RankedTensorType):
        return []
    shape = ir.ShapedType(value.type)
    return [k for k in range(shape.rank) if shape.is_dynamic_dim(k)]


def _non_empty(values: list[ir.Value]) -> Optional[ir.Value]:
    """Whether none of `values` is empty, from their run-time extents (None: none has one)."""
    return _all_positive([tensor.dim(v, index_const(k)) for v in values for k in _dynamic_dims(v)])


def _all_positive(extents: list[ir.Value]) -> Optional[ir.Value]:
    condition = None
    for extent in extents:
        positive = arith.cmpi(arith.CmpIPredicate.ugt, extent, index_const(0))
        condition = positive if condition is None else arith.andi(condition, positive)
    return condition
