"""How NCHW convolutions run fastest on llvm-cpu (measured: benchmarks/, the conv and CNN rows).

IREE picks the tile sizes of its CPU convolution pipeline by heuristics that, for
`linalg.conv_2d_nchw_fchw`, keep 2 output channels by 8 columns per step and vectorize the input
channels: three to four times slower on this CPU than a step of 8 output channels by a row of
up to 16 columns with the channels, rows and columns of the window as scalar loops (a broadcast
weight times a row of pixels). The op carries that choice as its `compilation_info`. The row
must divide the output's width: IREE 3.13 runs a partial row as scalar code, 18x slower
(measured: 28 columns in rows of 16, 13.5 ms a batch of 100; in rows of 14, 0.73 ms).

With one input channel IREE folds the unit axis away before choosing, the op is no longer a
convolution to it and runs as a scalar loop nest (about 9x slower; so does a window of one row,
and a run-time channel count). Such a convolution gets a second input channel of zeros: twice
the multiplies, still 6x faster than the windows copied out and multiplied as a matrix (im2col:
the copy and IREE's packing of it cost 3.5 ms of 4.4 for the MNIST CNN's first layer at batch 100).

Other targets (Vulkan) and other convolution layouts keep IREE's own choices.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.mlir.named_ops import Match, emit as emit_named

TARGETS = ("llvm-cpu", "llvm-cpu-generic")
DYNAMIC = ir.ShapedType.get_dynamic_size()
VECTOR_CHANNELS, VECTOR_COLUMNS, DISTRIBUTED_ROWS = 8, 16, 4


def emit(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """The convolution `found` as llvm-cpu runs it best, or None where IREE's defaults stay."""
    if lw.target not in TARGETS or found.pattern.op != "conv_2d_nchw_fchw":
        return None
    tiles = _nchw_tiles(_output_channels(found), ir.RankedTensorType(init.type).get_dim_size(3))
    one_channel = _input_channels(found) == 1

    def convolution(ins: list, out: ir.Value) -> ir.Value:
        if one_channel:
            ins = [_second_channel_of_zeros(v) for v in ins]
        result = linalg.conv_2d_nchw_fchw(*ins, outs=[out], strides=found.strides, dilations=found.dilations)
        result.owner.attributes["compilation_info"] = tiles
        return result
    return emit_named(lw, found, init, build=convolution)


def _input_channels(found: Match):
    size = found.views[1].read.tensor.shape[1]      # filter [F, C, KH, KW]
    return size.const if size.is_const else None


def _output_channels(found: Match):
    size = found.views[1].read.tensor.shape[0]
    return size.const if size.is_const else None


def _row(columns: int) -> int:
    """The widest row of at most VECTOR_COLUMNS that divides the output's width (a run-time
    width gets VECTOR_COLUMNS)."""
    if columns == DYNAMIC:
        return VECTOR_COLUMNS
    return max(d for d in range(1, min(columns, VECTOR_COLUMNS) + 1) if columns % d == 0)


def _nchw_tiles(channels, columns: int) -> ir.Attribute:
    """Loops (n, f, oh, ow, c, kh, kw): a workgroup takes DISTRIBUTED_ROWS output rows of one
    image, all channels and columns; a vector step VECTOR_CHANNELS channels by a row."""
    f = VECTOR_CHANNELS if channels is None else min(channels, VECTOR_CHANNELS)
    levels = {"distribution": [1, 0, DISTRIBUTED_ROWS, 0, 0, 0, 0],
              "vector_common_parallel": [1, f, 1, _row(columns), 0, 0, 0],
              "vector_reduction": [0, 0, 0, 0, 1, 1, 1]}
    fields = ", ".join(f"{name} = [{', '.join(map(str, sizes))}]" for name, sizes in levels.items())
    # IREE's Python bindings have no builders for #iree_cpu attributes, so this one is parsed.
    return ir.Attribute.parse(
        f"#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<{fields}>, "
        "translation_info = #iree_codegen.translation_info<pipeline = "
        "#iree_cpu.pipeline<ConvTileAndDecomposeExpert>>>")


def _second_channel_of_zeros(value: ir.Value) -> ir.Value:
    """An NCHW image or FCHW filter with one channel, padded with a channel of zeros."""
    source = ir.RankedTensorType(value.type)
    shape = [source.get_dim_size(a) for a in range(source.rank)]
    shape[1] = 2
    op = tensor.PadOp(ir.RankedTensorType.get(shape, source.element_type), value, [], [],
                      [0] * source.rank, [0, 1] + [0] * (source.rank - 2))
    block = op.regions[0].blocks.append(*([ir.IndexType.get()] * source.rank))
    with ir.InsertionPoint(block):
        tensor.YieldOp(arith.constant(source.element_type, 0.0))
    return op.result
