"""MLIR lowering of the tensor IR: `func.func @main` built with the iree.compiler.ir bindings.

Program-level values become function-level ops (program_rules), bodies become linalg regions
(kernels, body_rules), prints and asserts are emitted in program order (effects), and `main`
carries its signature and its target as reflection metadata (signature).
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import func, tensor

from einc.ir.nodes import Program
from einc.mlir.dense.batch_matmul_epilogues import fence_reductions_beside_batch_matmuls
from einc.mlir.dense.broadcast_reductions import fence_broadcast_reductions, fence_reductions_read_along_two_loops
from einc.mlir.dense.block_epilogues import move_epilogues
from einc.mlir.dense.packed_epilogues import fence_odd_tiled_pack_sources, fence_unpackable_epilogue_operands
from einc.mlir.dense.pooling_rows import run_rows
from einc.mlir.dense.row_gathers import fence_gathered_rows
from einc.mlir.effects import emit_effect
from einc.mlir.empty_guards import skip_empty_kernels
from einc.mlir.folded_reductions import FoldedReductions
from einc.mlir.lowering import Lowering
from einc.mlir.returned_bools import fence_returned_bools
from einc.mlir.core.rounding import round_products_separately
from einc.mlir.core.shapes import emit_read_checks, emit_shape_checks
from einc.mlir.strided_gathers import fence_strided_gathers, fence_widened_strided_slices
from einc.mlir.signature import function_type, record_input_alignment, record_read_once_inputs, reflection
from einc.passes.target_support import check_target
from einc.mlir.core.types import is_tensor
from einc.mlir.weights import Weights
from einc.target import Target

__all__ = ["lower_program", "lower_to_text"]


def lower_program(program: Program, target: Target, context: Optional[ir.Context] = None,
                  fp_contract: bool = False, weights: Optional[Weights] = None,
                  dense_kernels: Optional[list] = None, packed_weights: Optional[list] = None) -> ir.Module:
    """The verified module for `program`. `context` may be an IREE compiler Session's context
    (load its dialects first: `ctx.load_all_available_dialects()`); default a fresh one.
    Without `fp_contract`, float products in CPU kernels are rounded before they are added
    (einc.mlir.core.rounding); with it, LLVM may fuse them into FMAs. Constant arrays `weights` takes
    become parameters it collects (einc.mlir.weights); without it every constant is embedded.
    `dense_kernels` receives a named_ops.DenseKernel per reduction emitted as a named op;
    `packed_weights`, per group of `program.recurrences`, the names of the weights its steps read
    from a packed copy (einc.mlir.recurrences.packed_weights)."""
    check_target(program, target)
    weights = weights or Weights(None)
    folded = FoldedReductions()
    with (context or ir.Context()), ir.Location.unknown():
        # IREE-264: lowered again while IREE's folders leave a reduction kernel's loop unread
        while True:
            module, main, lw = _emit_module(program, target, weights, folded)
            if not target.has_defect("IREE-264") or not folded.record_folded(module):
                break
        folded.unmark(module)
        if dense_kernels is not None:
            dense_kernels.extend(lw.dense_kernels)
        if packed_weights is not None:
            packed_weights.extend(lw.packed_weights.get(id(g), []) for g in program.recurrences)
        weights.drop_unused()
        move_epilogues(module)
        run_rows(module)
        if target.has_defect("IREE-19") and not fp_contract:
            round_products_separately(module)
        if target.has_defect("IREE-53"):
            fence_reductions_beside_batch_matmuls(target, module)
        if target.has_defect("IREE-90"):
            fence_broadcast_reductions(target, module)
        if target.has_defect("IREE-267"):
            fence_reductions_read_along_two_loops(target, module)
        if target.has_defect("IREE-105"):
            fence_strided_gathers(target, module)
        if target.has_defect("IREE-269"):
            fence_widened_strided_slices(target, module)
        if target.has_defect("IREE-150"):
            fence_gathered_rows(target, module)
        if any(target.has_defect(d) for d in ("IREE-98", "IREE-99", "IREE-268")):
            fence_unpackable_epilogue_operands(target, module)
        if target.has_defect("IREE-145"):
            fence_odd_tiled_pack_sources(target, module)
        if target.has_defect("IREE-261") or target.has_defect("IREE-270"):
            fence_returned_bools(target, module)
        skip_empty_kernels(module)
        if target.input_alignment is not None:
            record_read_once_inputs(main, program)
        module.operation.verify()
    return module


def _emit_module(program: Program, target: Target, weights: Weights, folded: FoldedReductions) -> tuple:
    """The module with `main` and its body, `main`, and the Lowering that emitted it."""
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        main = func.FuncOp("main", function_type(program))
    main.attributes["iree.reflection"] = reflection(program, target)
    if target.input_alignment is not None:
        module.operation.attributes["stream.resources"] = resource_config(target.input_alignment)
        record_input_alignment(main, target.input_alignment)
    entry = main.add_entry_block()
    weights.start(main)
    with ir.InsertionPoint(entry):
        lw = _emit_body(program, _scalar_arguments(program, entry.arguments), target, weights, folded)
    return module, main, lw


def lower_to_text(program: Program, target: Target, fp_contract: bool = False) -> str:
    return str(lower_program(program, target, fp_contract=fp_contract))


def resource_config(alignment: int) -> ir.Attribute:
    """IREE's CPU resource limits with buffers (inputs among them) starting on `alignment` bytes.
    The option that sets it (--iree-stream-resource-min-offset-alignment) is process-global in
    IREE; an attribute on the module holds for that module only."""
    fields = {"max_allocation_size": 2 ** 63 - 1, "min_buffer_offset_alignment": alignment,
              "max_buffer_range": 2 ** 63 - 1, "min_buffer_range_alignment": alignment, "index_bits": 64,
              "alias_mutable_bindings": "false", "memory_model": "Unified"}
    # the stream dialect is IREE's, not loaded in einc's context: its attribute goes as text
    text = "resource_config<{%s}>" % ", ".join(f"{k} = {v}" for k, v in fields.items())
    return ir.OpaqueAttr.get("stream", text.encode(), ir.NoneType.get())


def _scalar_arguments(program: Program, args) -> list[ir.Value]:
    """`main`'s arguments, with a half scalar's 0-d tensor (einc.mlir.signature) read as its value."""
    return [tensor.extract(arg, []) if inp.rank == 0 and inp.dtype.is_half else arg
            for inp, arg in zip(program.inputs, args)]


def _emit_body(program: Program, args: list[ir.Value], target: Target, weights: Weights,
               folded: FoldedReductions) -> Lowering:
    emit_shape_checks(program.inputs, args, program.fixed_dims)
    lw = Lowering(program, args, target, weights, folded)
    emit_read_checks(program.size_facts, lw.sizes)
    for filtered in program.compactions:      # their lengths are sizes: defined before any use
        lw.lower(filtered)
    for effect in program.effects:
        emit_effect(lw, effect)
    results = [v for _, v in program.outputs] + [check.status for check in program.index_checks]
    func.ReturnOp([_as_tensor(lw, lw.lower(v)) for v in results])
    return lw


def _as_tensor(lw: Lowering, value: ir.Value) -> ir.Value:
    """Outputs are always tensors: a host scalar is returned as a 0-d tensor."""
    return value if is_tensor(value) else lw.sizes.scalar_tensor(value)
