"""How NCHW convolutions run fastest on llvm-cpu (measured: benchmarks/, the conv and CNN rows).

IREE picks the tile sizes of its CPU convolution pipeline by heuristics that, for
`linalg.conv_2d_nchw_fchw`, keep 2 output channels by 8 columns per step and vectorize the input
channels: three to four times slower on this CPU than a step of 8 output channels by 16 columns
with the channels, rows and columns of the window as scalar loops (a broadcast weight times a row
of 16 pixels). The op carries that choice as its `compilation_info`.

With one input channel IREE folds the unit axis away before choosing, the op is no longer a
convolution to it and runs as a generic loop nest (about 3x slower again). Such a convolution is
emitted as im2col instead: the windows are copied out (`col[n, 0, p, q, y, x]`, a padded affine
copy) and multiplied by the weights as a contraction over the window.

Other targets (Vulkan) and other convolution layouts keep IREE's own choices.
"""
from __future__ import annotations

from typing import Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.mlir.named_ops import Match, emit as emit_named
from einc.mlir.operand_views import view_tensor

TARGETS = ("llvm-cpu", "llvm-cpu-generic")
DYNAMIC = ir.ShapedType.get_dynamic_size()
VECTOR_CHANNELS, VECTOR_COLUMNS, DISTRIBUTED_ROWS = 8, 16, 4


def emit(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """The convolution `found` as llvm-cpu runs it best, or None where IREE's defaults stay."""
    if lw.target not in TARGETS or found.pattern.op != "conv_2d_nchw_fchw":
        return None
    if _input_channels(found) == 1:
        return _im2col(lw, found, init)
    result = emit_named(lw, found, init)
    if result is not None:
        result.owner.attributes["compilation_info"] = _nchw_tiles(_output_channels(found))
    return result


def _input_channels(found: Match):
    size = found.views[1].read.tensor.shape[1]      # filter [F, C, KH, KW]
    return size.const if size.is_const else None


def _output_channels(found: Match):
    size = found.views[1].read.tensor.shape[0]
    return size.const if size.is_const else None


def _nchw_tiles(channels) -> ir.Attribute:
    """Loops (n, f, oh, ow, c, kh, kw): a workgroup takes DISTRIBUTED_ROWS output rows of one
    image, all channels and columns; a vector step VECTOR_CHANNELS x VECTOR_COLUMNS outputs."""
    f = VECTOR_CHANNELS if channels is None else min(channels, VECTOR_CHANNELS)
    levels = {"distribution": [1, 0, DISTRIBUTED_ROWS, 0, 0, 0, 0],
              "vector_common_parallel": [1, f, 1, VECTOR_COLUMNS, 0, 0, 0],
              "vector_reduction": [0, 0, 0, 0, 1, 1, 1]}
    fields = ", ".join(f"{name} = [{', '.join(map(str, sizes))}]" for name, sizes in levels.items())
    # IREE's Python bindings have no builders for #iree_cpu attributes, so this one is parsed.
    return ir.Attribute.parse(
        f"#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<{fields}>, "
        "translation_info = #iree_codegen.translation_info<pipeline = "
        "#iree_cpu.pipeline<ConvTileAndDecomposeExpert>>>")


# ------------------------------------------------------------------------------ im2col

def _im2col(lw, found: Match, init: ir.Value) -> Optional[ir.Value]:
    """out[n, f, y, x] = sum[k](W[f, k] * col[n, k, y * OW + x]) with k = (c, p, q)."""
    source, weights = view_tensor(lw, found.views[0]), view_tensor(lw, found.views[1])
    if source is None or weights is None:
        return None
    element = ir.RankedTensorType(init.type).element_type
    (n, f, oh, ow), (_, c, kh, kw) = _sizes(init), _sizes(weights)
    shape = [_size_value(init, 0, n)] + [_size_value(weights, a, s) for a, s in ((1, c), (2, kh), (3, kw))] \
        + [_size_value(init, 2, oh), _size_value(init, 3, ow)]
    col = _windows(found, source, shape, element)
    depth, pixels = _product(c, kh, kw), _product(oh, ow)
    col = tensor.collapse_shape(ir.RankedTensorType.get([n, depth, pixels], element), col,
                                [[0], [1, 2, 3], [4, 5]])
    flat_weights = tensor.collapse_shape(ir.RankedTensorType.get([f, depth], element), weights,
                                         [[0], [1, 2, 3]])
    flat_out = tensor.collapse_shape(ir.RankedTensorType.get([n, f, pixels], element), init,
                                     [[0], [1], [2, 3]])
    product = _contraction(flat_weights, col, flat_out)
    dynamic = [_size_value(init, axis, size) for axis, size in enumerate((n, f, oh, ow)) if size == DYNAMIC]
    return tensor.expand_shape(init.type, product, [[0], [1], [2, 3]], dynamic, [n, f, oh, ow])


def _windows(found: Match, source: ir.Value, shape: list, element: ir.Type) -> ir.Value:
    """col[n, c, p, q, y, x] = input[n, c, sy * y + dy * p, sx * x + dx * q]."""
    (sy, sx), (dy, dx) = found.strides, found.dilations
    d = [ir.AffineDimExpr.get(k) for k in range(6)]
    read = ir.AffineMap.get(6, 0, [d[0], d[1], d[4] * sy + d[2] * dy, d[5] * sx + d[3] * dx])
    op = linalg.GenericOp_([source], [tensor.empty(shape, element)], [read, ir.AffineMap.get_identity(6)],
                           [linalg.IteratorType.parallel] * 6)
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])
    return op.result


def _sizes(value: ir.Value) -> list[int]:
    t = ir.RankedTensorType(value.type)
    return [t.get_dim_size(a) for a in range(t.rank)]


def _size_value(value: ir.Value, axis: int, size: int):
    """A size as tensor.empty takes it: the int, or the tensor's dim when dynamic."""
    return tensor.dim(value, arith.constant(ir.IndexType.get(), axis)) if size == DYNAMIC else size


def _product(*sizes: int) -> int:
    out = 1
    for s in sizes:
        if s == DYNAMIC:
            return DYNAMIC
        out *= s
    return out


def _contraction(weights: ir.Value, col: ir.Value, out: ir.Value) -> ir.Value:
    """out[n, f, m] += weights[f, k] * col[n, k, m]: loops (n, f, m, k)."""
    d = [ir.AffineDimExpr.get(k) for k in range(4)]
    maps = [ir.AffineMap.get(4, 0, [d[1], d[3]]), ir.AffineMap.get(4, 0, [d[0], d[3], d[2]]),
            ir.AffineMap.get(4, 0, [d[0], d[1], d[2]])]
    parallel, reduction = linalg.IteratorType.parallel, linalg.IteratorType.reduction
    op = linalg.GenericOp_([weights, col], [out], maps, [parallel] * 3 + [reduction])
    element = ir.RankedTensorType(out.type).element_type
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        w, v, acc = block.arguments
        linalg.YieldOp([arith.addf(acc, arith.mulf(w, v))])
    return op.result
