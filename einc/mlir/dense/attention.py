"""Softmax attention as one fused kernel (IREE's `iree_linalg_ext.attention`).

Attention as einc elaborates it is five tensors: scores `S = sum[k](q * k) * c` (c optional, a
build-time constant; `/ c` too), their row maximum `M = max[t](S)`, `E = exp(S - M)`, its row sum
`Z = sum[t](E)`, and the context, either `sum[t](E * v) / Z` (examples/transformer/layers.ein),
`C / Z` with `C = sum[t](E * v)`, or `sum[t](P * v)` with `P = E / Z` (std::ml's softmax). M and
Z may be tensors of their own or written inline where they are read (`exp(S - max[t](S))`,
`/ sum[t](E)`). Every read between them is the whole tensor at the reader's own point (the row
reductions over the whole key axis), and every axis before the query one is a batch axis shared
by all of them (heads included). Lowered as written that is four passes over the
probabilities (the largest tensor: heads x queries x keys); the fused op runs blocks of query
rows through the scores, an online softmax and the product with v, so the probabilities are
never written. Any other form (a mask added to the scores, another normalisation, a partial
key range, a maximum over the queries) is not matched and lowers as written. A target takes the
fused form from a number of scores per head on (`Target.fused_attention_scores`): on the CPU the
op runs slower than the form as written while a head's probabilities stay in the cache.

q, k (transposed: keys on the last axis, which IREE's CPU code vectorizes along; its rows
padded off the L1 cache's sets) and v are materialized as kernels of their own from the reads
in the definitions (a head split of qkv becomes a copy), their batch axes collapsed into one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import arith, tensor

from einc import host_cpu
from einc.ir import affine
from einc.ir.nodes import Const, Generic, Op, Read, Reduce, Value
from einc.ir.types import F32, Lin
from einc.mlir.core import scalar_ops
from einc.mlir.core.cpu_tiles import compilation_info
from einc.mlir.core.dispatch_captures import fence
from einc.mlir.core.shapes import index_const
from einc.mlir.core.types import element_type
from einc.mlir.dense import named_ops
from einc.mlir.dense.width_blocks import zero_padded

DYNAMIC = ir.ShapedType.get_dynamic_size()
# IREE-64: einc's CPU tiles for the op: a vector step of 2 query rows and 32 keys over the whole head
# (fastest of 1-8 rows by 8-64 keys at Whisper's 6 x 1500 x 64, one thread on AVX-512; 4 x 16: 12%
# slower, odd counts 2x); one step's scores and products ([rows, keys, head]) must stay under IREE's
# limit on one op's vectors (512 vector registers: 32 KB with AVX-512, 16 KB with AVX2), which
# bounds the head's width and, on narrower vectors, the step (_step).
WIDEST_HEAD = 128
KEYS_PER_STEP = 32
VECTORS_PER_OP = 512
ROWS_PER_WORKGROUP = 64
# k's rows are an odd number of 64-byte cache lines long, so the rows of a head fall in
# different sets of the L1 cache (_rows_apart)
LINE = 16


@dataclass(frozen=True)
class Attention:
    q: Generic          # [batch.., queries, head]
    k: Generic          # [batch.., head, keys]
    v: Generic          # [batch.., keys, value head]
    scale: Optional[Value]
    divides: bool       # the scores are divided by `scale` (else multiplied)
    batch: int          # the number of batch axes

    def operands(self) -> tuple:
        """What the fused op reads, in place of the definitions it fuses."""
        return (self.q, self.k, self.v) + ((self.scale,) if self.scale is not None else ())


def match(lw, ctx: Generic) -> Optional[Attention]:
    """The attention whose context is `ctx`, None when `ctx` is anything else."""
    if ctx.guard is not None or ctx.dtype != F32 or len(ctx.vars) < 2 or not _from_zero(ctx.vars):
        return None
    body = ctx.body
    if _is_op(body, "div", 2):                                            # sum[t](E v) / Z
        found = _unnormalised_context(lw, body.args[0], ctx.vars)
        if found is None or not _row_reduced(body.args[1], ctx.vars[:-1], "sum", found[0]):
            return None
        exps, v = found
    elif isinstance(body, Reduce):                                        # sum[t](P v)
        found = _weighted_sum(lw, body, ctx.vars)
        if found is None:
            return None
        exps, v = _normalised(found[0]), found[1]
    else:
        return None
    if exps is None:
        return None
    scores = _exp_of_centred(exps)
    return None if scores is None else _scores(lw, scores, v, len(ctx.vars) - 2)


def _unnormalised_context(lw, numerator: Value, vars_: tuple) -> Optional[tuple]:
    """(E, v's kernel) of `sum[t](E v)` at the point `vars_`: written there, or read whole from a
    tensor so defined (the division after the context, in a definition of its own)."""
    if isinstance(numerator, Reduce):
        return _weighted_sum(lw, numerator, vars_)
    if _whole_read(numerator, vars_) and _plain_generic(numerator.tensor) and isinstance(numerator.tensor.body, Reduce):
        return _weighted_sum(lw, numerator.tensor.body, numerator.tensor.vars)
    return None


def _weighted_sum(lw, total: Reduce, vars_: tuple) -> Optional[tuple]:
    """(the weights' tensor, v's kernel) of `sum[t](W[.., s, t] * v[.., t, e])` at the point `vars_`."""
    if total.kind != "sum" or total.guard is not None or len(total.vars) != 1 or not _is_op(total.body, "mul", 2):
        return None
    t = total.vars[0]
    batch, s, e = vars_[:-2], vars_[-2], vars_[-1]
    for weights, values in (total.body.args, total.body.args[::-1]):
        if _whole_read(weights, (*batch, s, t)) and isinstance(values, Read):
            v = _operand(lw, values, (*batch, t, e))
            if v is not None:
                return weights.tensor, v
    return None


def _normalised(p: Value) -> Optional[Value]:
    """E of `P = E / Z` with Z E's row sum (None for another P)."""
    if not _plain_generic(p) or not _is_op(p.body, "div", 2):
        return None
    exps, sums = p.body.args
    if not _whole_read(exps, p.vars) or not _row_reduced(sums, p.vars[:-1], "sum", exps.tensor):
        return None
    return exps.tensor


def _exp_of_centred(exps: Value) -> Optional[Value]:
    """S of `E = exp(S - max[t](S))`."""
    if not _plain_generic(exps) or not _is_op(exps.body, "exp", 1) or not _is_op(exps.body.args[0], "sub", 2):
        return None
    scores, peak = exps.body.args[0].args
    if not _whole_read(scores, exps.vars):
        return None
    if not _row_reduced(peak, exps.vars[:-1], "max", scores.tensor):
        return None
    return scores.tensor


def _scores(lw, scores: Value, v: Generic, batch: int) -> Optional[Attention]:
    """The attention of `S = sum[k](q * k) [* or / c]`, given v's kernel."""
    if not _plain_generic(scores) or len(scores.vars) != batch + 2:
        return None
    total, scale, divides = scores.body, None, False
    if _is_op(total, "mul", 2) or _is_op(total, "div", 2):
        divides = total.op == "div"
        pairs = [total.args] if divides else [total.args, total.args[::-1]]
        found = next(((r, c) for r, c in pairs if isinstance(r, Reduce) and _build_time_scalar(c)), None)
        if found is None:
            return None
        total, scale = found
    if not isinstance(total, Reduce) or total.kind != "sum" or total.guard is not None or len(total.vars) != 1 \
            or not _is_op(total.body, "mul", 2) or not _from_zero(total.vars):
        return None
    k = total.vars[0]
    lead, s, t = scores.vars[:-2], scores.vars[-2], scores.vars[-1]
    for a, b in (total.body.args, total.body.args[::-1]):
        if isinstance(a, Read) and isinstance(b, Read):
            q_kernel, k_kernel = _operand(lw, a, (*lead, s, k)), _operand(lw, b, (*lead, k, t))
            if q_kernel is not None and k_kernel is not None and _fits(q_kernel, v) and _pays(lw, s, t):
                return Attention(q_kernel, k_kernel, v, scale, divides, batch)
    return None


def _fits(q: Generic, v: Generic) -> bool:
    """Whether the heads' widths are fixed and within IREE's CPU tiles."""
    widths = (q.vars[-1].extent, v.vars[-1].extent)
    return all(w.is_const and 0 < w.const <= WIDEST_HEAD for w in widths)


def _pays(lw, queries, keys) -> bool:
    """Whether a head's scores are many enough for the fused op on this target: below that they
    stay in the cache between the passes of the form as written, which runs faster; a run-time
    count may be any, and the form as written slows most for large ones."""
    if not (queries.extent.is_const and keys.extent.is_const):
        return True
    return queries.extent.const * keys.extent.const >= fewest_fused_scores(lw.target)


def fewest_fused_scores(target) -> int:
    """A head's scores from which `target` takes the fused form: its own figure (measured with
    AVX-512), or 1 on a host without AVX-512, where the form as written lost to the fused op at
    DeiT-tiny's 197 positions too (its 16-float steps are half as wide there)."""
    if target.tuned_to_host and not host_cpu.has_avx512():
        return 1
    return target.fused_attention_scores


def _operand(lw, read: Read, vars_: tuple) -> Optional[Generic]:
    """`read` as a kernel of its own over `vars_` (None where it reads another variable)."""
    if not lw.free_vars(read) <= frozenset(vars_) or read.dtype != F32:
        return None
    return lw.keep(Generic(tuple(vars_), read, span=read.span))


def _build_time_scalar(c: Value) -> bool:
    return isinstance(c, Const) and c.array.ndim == 0 and c.dtype == F32


def _row_reduced(value: Value, vars_: tuple, kind: str, of: Value) -> bool:
    """Whether `value` at the point `vars_` is `kind[t](of[vars_.., t])`, t over the whole last
    axis of `of`: written there (`max[t](s[i, t])`), or read whole from a tensor so defined."""
    if isinstance(value, Reduce):
        return _reduces_row(value, vars_, kind, of)
    return (_whole_read(value, vars_) and _plain_generic(value.tensor) and isinstance(value.tensor.body, Reduce)
            and _reduces_row(value.tensor.body, value.tensor.vars, kind, of))


def _reduces_row(reduce: Reduce, vars_: tuple, kind: str, of: Value) -> bool:
    return (reduce.kind == kind and reduce.guard is None and len(reduce.vars) == 1
            and _whole_read(reduce.body, (*vars_, *reduce.vars)) and reduce.body.tensor is of)


def _whole_read(read: Value, vars_: tuple) -> bool:
    """Whether `read` reads a tensor of the rank of `vars_` at exactly those coordinates, each
    variable spanning its whole axis."""
    if not isinstance(read, Read) or len(read.subs) != len(vars_) or not _from_zero(vars_):
        return False
    return all(affine.affine_of(sub) == Lin.of(var) and var.extent == size
               for sub, var, size in zip(read.subs, vars_, read.tensor.shape))


def _plain_generic(value: Value) -> bool:
    return isinstance(value, Generic) and value.guard is None and _from_zero(value.vars)


def _from_zero(vars_) -> bool:
    return all(var.lo == 0 and var.extent is not None for var in vars_)


def _is_op(value: Value, name: str, arity: int) -> bool:
    return isinstance(value, Op) and value.op == name and len(value.args) == arity


# ------------------------------------------------------------------------------ emission

def attention_tensor(lw, found: Attention, out_shape: tuple) -> tuple[ir.Value, bool]:
    """The context [batch.., queries, value head] of `found`, and whether its keys were padded."""
    # each operand is computed by a dispatch of its own (IREE-64: k transposed once, not by each
    # of the op's workgroups; IREE-65: a head split moved into the op's dispatch breaks its tiles)
    q = fence(lw.target, _batched(lw.lower(found.q), found.batch))
    k, v = (_batched(lw.lower(g), found.batch) for g in (found.k, found.v))
    extra = padded_keys(lw.target, _dim(q, 1), _dim(k, 1), _dim(v, 2), _dim(k, 2))
    k, v = _rows_apart(lw.target, k, extra), fence(lw.target, zero_padded(v, 1, extra) if extra else v)
    mask = [_padding_mask(_dim(k, 2), extra)] if extra else []
    f32 = element_type(F32)
    shape = [_dim(q, 0), _dim(q, 1), _dim(v, 2)]
    dims = [tensor.dim(q, index_const(0)) if shape[0] == DYNAMIC else None,
            tensor.dim(q, index_const(1)) if shape[1] == DYNAMIC else None]
    out_type = ir.RankedTensorType.get(shape, f32)
    init = _empty(shape, dims, f32)
    op = ir.Operation.create("iree_linalg_ext.attention", results=[out_type],
                             operands=[q, k, v, _scale(lw, found), *mask, init],
                             attributes=_attributes(lw.target, q, k, v, bool(mask)), regions=1)
    block = op.regions[0].blocks.append(f32)
    with ir.InsertionPoint(block):
        ir.Operation.create("iree_linalg_ext.yield", operands=[block.arguments[0]])
    # and the result leaves it whole (IREE-65: a reshape moved through the op breaks its tiles)
    return _unbatched(lw, fence(lw.target, op.results[0]), found.batch, out_shape), bool(extra)


def padded_keys(target, queries: int, head: int, value_head: int, keys: int) -> int:
    """How many zero keys (masked out) make a fixed key count a whole number of the op's vector
    steps: IREE masks every step of a partial count (IREE-195), and AVX2's masked loads and stores
    (`vmaskmovps`) are slow on AMD's cores (3 x 197 x 64 on a Zen 3: 197 keys 3.2 ms, 224 keys
    2.3). 0 for a run-time count, where einc sets no tiles (_attributes), and where the vector unit
    masks a step cheaply (AVX-512's mask registers: its emission unchanged)."""
    if not target.has_defect("IREE-195") or keys == DYNAMIC or 1 in (queries, head, value_head, keys) \
            or host_cpu.vector_registers(target.tuned_to_host).masks:
        return 0
    step = _step(target, max(head, value_head))[1]
    return -keys % step


def _padding_mask(keys: int, extra: int) -> ir.Value:
    """The op's mask over its `keys` keys, added to the scores: 0, then -inf on the last `extra`
    (the padding; every vector step keeps a real key, so no row's sum is 0)."""
    values = np.zeros(keys, np.float32)
    values[keys - extra:] = -np.inf
    return arith.constant(ir.RankedTensorType.get([keys], element_type(F32)), ir.DenseElementsAttr.get(values))


def _rows_apart(target, k: ir.Value, extra: int = 0) -> ir.Value:
    """k [batch, head, keys] with `extra` zero keys after its own, fenced in rows an odd number of
    cache lines long, read as a view of its keys: a vector step reads 32 keys down all the head's
    rows, which at 1,024 keys (rows 4 KB apart) fall in one set of the L1 cache and evict each
    other (the op ran 1.4x slower per score than at 1,000 or 1,100 keys, on one core)."""
    shape = [_dim(k, a) for a in range(3)]
    shape[2] = shape[2] if shape[2] == DYNAMIC else shape[2] + extra
    padded = fence(target, zero_padded(k, 2, _row_padding(k, shape[2])))
    dims = [tensor.dim(k, index_const(a)) for a in range(3) if shape[a] == DYNAMIC]
    view = ir.RankedTensorType.get(shape, ir.RankedTensorType(k.type).element_type)
    return tensor.extract_slice(view, padded, [], dims, [], [0, 0, 0], shape, [1, 1, 1])


def _row_padding(k: ir.Value, keys: int):
    """The fewest zeros after k's keys that make rows of `keys` keys (k's own and its padding) an
    odd number of lines long (at most 2 lines less one): a number, or for a run-time count an
    index value."""
    if keys != DYNAMIC:
        return (-(-keys // LINE) | 1) * LINE - _dim(k, 2)
    count = tensor.dim(k, index_const(2))
    lines = arith.ori(arith.divui(arith.addi(count, index_const(LINE - 1)), index_const(LINE)), index_const(1))
    return arith.subi(arith.muli(lines, index_const(LINE)), count)


def _empty(shape: list, dims: list, element: ir.Type) -> ir.Value:
    sizes = [d if s == DYNAMIC else s for s, d in zip(shape, dims + [None])]
    return tensor.empty(sizes, element)


def _scale(lw, found: Attention) -> ir.Value:
    one = scalar_ops.constant(F32, 1.0)
    if found.scale is None:
        return one
    scale = lw.lower(found.scale)
    return arith.divf(one, scale) if found.divides else scale


def _attributes(target, q: ir.Value, k: ir.Value, v: ir.Value, masked: bool) -> dict:
    """The op's maps over (batch, queries, value head, head, keys), the mask's (by the key alone)
    where `masked`, and einc's CPU tiles.
    IREE-65: IREE drops an axis of size 1 from the op before it reads the tiles, which are by
    position: a batch of one gets tiles without it; with another such axis IREE picks them."""
    b, m, n, k1, k2 = (ir.AffineDimExpr.get(i) for i in range(5))
    maps = [(b, m, k1), (b, k1, k2), (b, k2, n), ()] + ([(k2,)] if masked else []) + [(b, m, n)]
    attributes = {"indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get(5, 0, list(r)))
                                                     for r in maps])}
    sizes = [_dim(q, 0), _dim(q, 1), _dim(v, 2), _dim(q, 2), _dim(k, 2)]
    if 1 in sizes[1:]:
        return attributes
    rows, keys = _step(target, max(sizes[2], sizes[3]))
    levels = {"distribution": [1, ROWS_PER_WORKGROUP, 0, 0, 0], "vector_common_parallel": [1, rows, sizes[2], 0, 0],
              "vector_reduction": [0, 0, 0, 0, keys]}
    kept = 1 if sizes[0] == 1 else 0
    attributes["compilation_info"] = compilation_info({name: tiles[kept:] for name, tiles in levels.items()},
                                                      "LinalgExtTileAndVectorize")
    return attributes


def _step(target, widest: int) -> tuple[int, int]:
    """(query rows, keys) of one vector step over heads `widest` wide: 2 x 32 (1 x 32 past 64
    wide), halved, rows first (on AVX2 1 x 32 ran 1.2x faster than 2 x 16), until the step's
    [rows, keys, head] floats are under IREE's limit for the target's vector registers (the
    host's, or 16 bytes for a portable build)."""
    limit = VECTORS_PER_OP * (host_cpu.vector_bytes() if target.tuned_to_host else 16)
    rows, keys = (2 if widest <= 64 else 1), KEYS_PER_STEP
    while 4 * rows * keys * widest >= limit and rows > 1:
        rows //= 2
    while 4 * rows * keys * widest >= limit and keys > 8:
        keys //= 2
    return rows, keys


def _dim(value: ir.Value, axis: int) -> int:
    return ir.RankedTensorType(value.type).get_dim_size(axis)


def _batched(value: ir.Value, batch: int) -> ir.Value:
    """`value` [batch.., a, b] as [one batch, a, b]."""
    source = ir.RankedTensorType(value.type)
    sizes = [source.get_dim_size(i) for i in range(source.rank)]
    if batch == 1:
        return value
    if batch == 0:
        result = ir.RankedTensorType.get([1] + sizes, source.element_type)
        dynamic = [tensor.dim(value, index_const(i)) for i, s in enumerate(sizes) if s == DYNAMIC]
        return tensor.expand_shape(result, value, [[0, 1], [2]], dynamic, [1] + sizes)
    lead = sizes[:batch]
    merged = DYNAMIC if DYNAMIC in lead else math.prod(lead)
    result = ir.RankedTensorType.get([merged] + sizes[batch:], source.element_type)
    return tensor.collapse_shape(result, value, [list(range(batch)), [batch], [batch + 1]])


def _unbatched(lw, value: ir.Value, batch: int, shape: tuple) -> ir.Value:
    """The op's [one batch, queries, value head] result back as `shape`."""
    if batch == 1:
        return value
    static = [d.const if d.is_const else DYNAMIC for d in shape]
    result = ir.RankedTensorType.get(static, ir.RankedTensorType(value.type).element_type)
    if batch == 0:
        return tensor.collapse_shape(result, value, [[0, 1], [2]])
    groups = [list(range(batch)), [batch], [batch + 1]]
    return tensor.expand_shape(result, value, groups, lw.sizes.dynamic_dims(shape), static)


def emitted(lw, found: Attention, ctx: Generic) -> ir.Value:
    """The context `ctx` computed by the fused op, recorded for `einc build --explain`."""
    extents = [var.extent for g in (found.q, found.k, found.v) for var in g.vars]
    context, padded = attention_tensor(lw, found, ctx.shape)
    lw.dense_kernels.append(named_ops.DenseKernel("attention", ctx.span, named_ops.run_time_sizes(extents), (),
                                                  form=named_ops.PADDED_KEYS if padded else ""))
    return context
