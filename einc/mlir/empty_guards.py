"""Kernels over empty tensors: none is built, and on Vulkan none is dispatched.

A kernel whose domain is empty computes nothing: its value is what it writes into. Every read
that runs is inside its axis (einc.passes.size_facts), so a kernel that reads or writes an empty
tensor has an empty domain:
- a linalg op whose ins or outs are empty is its outs;
- an empty slice inserted leaves the destination as it is; an empty slice taken is
  tensor.empty; an empty tensor padded is the padding value everywhere.
An extent known to be zero at build time (`--dim N=2` and a clause over `2..N`) is decided here
on every target: IREE 3.13 crashes (SIGFPE) compiling a linalg.matvec with a zero-extent
reduction for llvm-cpu, and MLIR rejects an empty slice inserted at the end of an axis.

A run-time extent is decided when the program runs, on vulkan-spirv only: IREE 3.13's Vulkan
HAL refuses to record a dispatch any of whose bindings has zero bytes ("Vulkan dispatch binding
1 resolved to an empty buffer range"), even one of zero workgroups, where the CPU targets run
zero iterations. With run-time sizes any tensor may be empty (an empty input, a clause over
`2..N` at N = 2, a filter that keeps nothing), so there each host-level op that IREE may turn
into a dispatch and that touches a tensor with a run-time extent runs under a host `scf.if` that
gives the value above when a tensor is empty. A tensor a kernel reads inside its body (a
tensor.extract of a clamped or data-dependent read, a recurrence's input) may be empty while
the kernel's domain is not; such a read never runs, so the kernel reads a one-element stand-in.
Linalg fills are left alone (IREE makes them buffer fills, which may be empty).
"""
from __future__ import annotations

from typing import Callable, Optional, Union

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, scf, tensor

from einc.mlir.shapes import index_const

DEVICE_CODE = ("flow.dispatch.region", "tensor.pad")   # with every linalg op: regions that run on the device

# an extent: known at build time, a run-time index value, or axis k of a tensor
Extent = Union[int, ir.Value, tuple]


def skip_empty_kernels(module: ir.Module, at_run_time: bool) -> None:
    """Replace each host-level op of `module` that has a build-time zero extent by its value
    without a kernel; with `at_run_time` (vulkan-spirv), guard those with run-time extents."""
    found = []

    def collect(op):
        if _rule(op) is not None and not _in_device_code(op.parent):
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(collect)
    for op in found:
        with ir.InsertionPoint(op), op.location:
            extents, otherwise = _rule(op)(op)
            if any(e == 0 for e in extents if isinstance(e, int)):
                _replace(op, otherwise())
                continue
        if not at_run_time:
            continue
        loop = _outermost_host_loop(op.parent)
        if loop is not None:
            # IREE 3.13 cannot resolve a tensor.dim of anything computed from a loop-carried
            # tensor ("dynamic dimensions must have been resolved prior to leaving the flow
            # dialect"): inside a host loop (a recurrence's steps or chunks) only the tensors
            # from before the loop get stand-ins, made before it; nothing there is guarded
            with ir.InsertionPoint(loop), loop.location:
                _stand_in_captured(op, loop)
            continue
        with ir.InsertionPoint(op), op.location:
            _stand_in_captured(op, op)
            _run_if(op, _all_positive(extents), otherwise)


def _rule(op) -> Optional[Callable]:
    name = op.name
    if name.startswith("linalg.") and name != "linalg.fill" and len(op.results):
        return _linalg
    return RULES.get(name)


def _outermost_host_loop(op):
    loop = None
    while op is not None:
        if op.name in ("scf.for", "scf.while"):
            loop = op
        op = op.parent
    return loop


def _in_device_code(op) -> bool:
    while op is not None:
        if op.name.startswith("linalg.") or op.name in DEVICE_CODE:
            return True
        op = op.parent
    return False


# ------------------------------------------------------------------------------------ rules:
# each gives the extents that must all be positive for `op` to run, and a builder of its value
# when one is zero

def _linalg(op):
    outs = list(op.operands)[len(op.operands) - len(op.results):]
    return _extents(list(op.operands)), lambda: outs


def _insert_slice(op):
    source, dest = list(op.operands)[:2]
    return _unless_copied(dest, _extents([source])), lambda: [dest]


def _extract_slice(op):
    # the result's run-time extents are the op's dynamic sizes, in order (a rank-reducing
    # slice drops only static unit axes)
    shape = ir.ShapedType(op.results[0].type)
    sizes = iter(op.opview.sizes)
    extents = [next(sizes) if shape.is_dynamic_dim(k) else d for k, d in enumerate(shape.shape)]
    return _unless_copied(op.operands[0], extents), lambda: [tensor.empty(extents, shape.element_type)]


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
    return _extents([source]), padding


def _unless_copied(whole: ir.Value, extents: list[Extent]) -> list[Extent]:
    """The extents of a slice of `whole` to guard: only the build-time ones where the slice is
    one run of elements (a one-dimensional `whole`; einc's strides are 1), which IREE copies
    instead of dispatching a kernel. An empty copy is fine, and guards around the copies of a
    host loop of Vulkan chunks, constant-hoisted, made IREE record a copy out of range."""
    return [e for e in extents if isinstance(e, int)] if ir.ShapedType(whole.type).rank == 1 else extents


def _dispatch_region(op):
    return [], lambda: []   # only its captured tensors (stand-ins) concern it


RULES: dict[str, Callable] = {
    "flow.dispatch.region": _dispatch_region,
    "tensor.insert_slice": _insert_slice,
    "tensor.extract_slice": _extract_slice,
    "tensor.pad": _pad,
}


# ------------------------------------------------------------------------------------ helpers

def _replace(op, values: list[ir.Value]) -> None:
    for old, new in zip(op.results, values):
        old.replace_all_uses_with(new)
    op.erase()


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


def _stand_in_captured(op, scope) -> None:
    """Every tensor with a run-time extent that `op`'s regions read from outside `scope` (`op`
    itself, or the host loop it is in) is replaced there by itself, or by a one-element tensor
    where it is empty."""
    reads = []

    def collect(inner):
        if inner != op:
            reads.extend((inner, k, v) for k, v in enumerate(inner.operands)
                         if _run_time_axes(v) and not _defined_inside(v, scope))
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
    branch = scf.IfOp(_all_positive(_extents([value])), [value.type], has_else=True)
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


def _run_time_axes(value: ir.Value) -> list[int]:
    if not isinstance(value.type, ir.RankedTensorType):
        return []
    shape = ir.ShapedType(value.type)
    return [k for k in range(shape.rank) if shape.is_dynamic_dim(k)]


def _extents(values: list[ir.Value]) -> list[Extent]:
    """The extents of the tensors among `values`: ints, or (tensor, axis) for run-time ones."""
    extents: list[Extent] = []
    for value in values:
        if isinstance(value.type, ir.RankedTensorType):
            shape = ir.ShapedType(value.type)
            extents += [(value, k) if shape.is_dynamic_dim(k) else shape.get_dim_size(k) for k in range(shape.rank)]
    return extents


def _all_positive(extents: list[Extent]) -> Optional[ir.Value]:
    """Whether every run-time extent is positive (None: there is none); build-time ones are
    left to the caller."""
    condition = None
    for extent in extents:
        if isinstance(extent, int):
            continue
        if isinstance(extent, tuple):
            extent = tensor.dim(extent[0], index_const(extent[1]))
        positive = arith.cmpi(arith.CmpIPredicate.ugt, extent, index_const(0))
        condition = positive if condition is None else arith.andi(condition, positive)
    return condition
