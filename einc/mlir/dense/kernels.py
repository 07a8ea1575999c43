"""`linalg.generic` kernels for `Generic` and `Reduce` nodes.

A kernel iterates a domain of index variables (parallel ones first, then reduction ones). Before
the op is built, its body is planned: reads with affine subscripts that are proven in bounds (or
read through a padded or reshaped view, see operand_views), nested reductions (each its own
kernel over its free variables, or a named op, see named_ops) and device scalars become `ins`
operands with indexing maps; everything else is computed inside the region (see body_rules). A
reduction variable that no operand is indexed by runs as a scalar loop inside the region instead
(see reduction_tensor).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from einc.ir.evaluate import reduction_identity
from einc.ir.nodes import Const, Generic, IndexRef, IndexVar, Read, Reduce, Value
from einc.ir.types import F32, F64, Lin
from einc.mlir.dense.gpu import matmuls as gpu_matmuls
from einc.mlir.dense import (computed_operands, cpu_convolutions, cpu_matmuls, cpu_poolings, named_ops, operand_views,
                             patch_matmuls, pooling_pairs, window_matmuls)
from einc.mlir.core import decided_guards, scalar_ops
from einc.mlir.core.body_rules import Region
from einc.mlir.core.dispatch_captures import fence
from einc.mlir.core.loops import point_loops, var_bounds
from einc.mlir.core.shapes import converted, index_const
from einc.mlir.core.types import element_type, is_tensor


class Domain:
    """The loops of one kernel: `vars[k]` is loop dimension k; the first `n_parallel` are parallel."""

    def __init__(self, vars_: list[IndexVar], n_parallel: int):
        self.vars = list(vars_)
        self.n_parallel = n_parallel
        self._pos = {v: k for k, v in enumerate(self.vars)}

    def pos(self, var: IndexVar) -> Optional[int]:
        return self._pos.get(var)

    def map(self, exprs: list) -> ir.AffineMap:
        return ir.AffineMap.get(len(self.vars), 0, exprs)

    def projection(self, vars_: list[IndexVar]) -> ir.AffineMap:
        return self.map([ir.AffineDimExpr.get(self._pos[v]) for v in vars_])

    def iterator_types(self) -> list:
        n_reduction = len(self.vars) - self.n_parallel
        return [linalg.IteratorType.parallel] * self.n_parallel + [linalg.IteratorType.reduction] * n_reduction


@dataclass
class Operand:
    node: Value           # the body value this block argument stands for
    tensor: ir.Value
    map: ir.AffineMap
    vars: frozenset = frozenset()   # the index variables its map is a function of
    extracted: bool = False         # read in the body by tensor.extract, not an `ins` (IREE-196)


# ------------------------------------------------------------------------------------ planning

def plan_operands(lw, domain: Domain, roots: list[Value], inline: frozenset) -> tuple[list[Operand], dict, bool]:
    """The `ins` of a kernel whose body computes `roots`, the body nodes that stand for
    others (a guarded select read through a padded view is its guarded branch), and whether the
    region computes coordinates (linalg.index); `inline` names program-level nodes that this
    kernel itself computes (the root of a 0-d kernel).
    IREE-196: a kernel with no loops (or loops of one point each, which IREE folds away) inside
    a recurrence step reads its device scalars and reductions by tensor.extract in its body; as
    0-d `ins`, fused with their producers, IREE vectorized them to mismatched types (at the top
    level, a chain of such extracts fused into one dispatch of a stack slot each: a sum of 2000
    scalars passed IREE's stack limit)."""
    extracted = all(v.extent == Lin(1) for v in domain.vars) and bool(lw.given_step_tensors) \
        and lw.target.has_defect("IREE-196")
    operands: list[Operand] = []
    aliases: dict[int, Value] = {}
    seen: set[int] = set()
    coordinates = False
    stack = [r for r in reversed(roots) if r is not None]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if lw.is_program_level(v) and id(v) not in inline:
            value = lw.lower(v)
            if v.rank == 0 and is_tensor(value):   # a device scalar: every point reads its one element
                operands.append(Operand(v, value, domain.map([]), extracted=extracted))
        elif isinstance(v, Reduce):
            operands.append(_reduction_operand(lw, domain, v, extracted))
        elif isinstance(v, Read) and (mapped := _read_operand(lw, domain, v)) is not None:
            operands.append(mapped)
        elif (found := _padded_operand(lw, domain, v, seen)) is not None:
            operand, padded = found
            operands.append(operand)
            seen.add(id(operand.node))
            aliases[id(v)] = padded.value
            for twin in padded.twins:
                seen.add(id(twin))
                aliases[id(twin)] = operand.node
            stack.append(padded.value)
        else:
            coordinates = coordinates or isinstance(v, IndexRef)
            stack.extend(reversed(v.operands()))
    if lw.target.has_defect("IREE-212"):
        operands = [replace(o, tensor=fence(lw.target, o.tensor)) if _broadcast_vector_product(domain, o) else o
                    for o in operands]
    return operands, aliases, coordinates


def _broadcast_vector_product(domain: Domain, operand: Operand) -> bool:
    """IREE-212: a matvec's or vecmat's result read across a variable of run-time extent that
    its map does not use (broadcast along it) is fused with the data-tiled product's unpack,
    whose buffer then has no bound on the stack."""
    owner = operand.tensor.owner
    if isinstance(owner, ir.Block) or owner.name not in ("linalg.matvec", "linalg.vecmat"):
        return False
    used = {e.position for e in operand.map.results if isinstance(e, ir.AffineDimExpr)}
    return any(k not in used and v.extent is not None and not v.extent.is_const
               for k, v in enumerate(domain.vars))


def _reduction_operand(lw, domain: Domain, reduce: Reduce, extracted: bool) -> Operand:
    free = [v for v in domain.vars if v in lw.free_vars(reduce)]
    tensor, free = reduction_tensor(lw, reduce, free)
    return Operand(reduce, tensor, domain.projection(free), frozenset(free), extracted)


def _read_operand(lw, domain: Domain, read: Read) -> Optional[Operand]:
    """`read` through an indexing map: plain, or of a reshaped view for flattened or split
    subscripts, or of a reversed one for subscripts running backwards. A build-time array read
    at subscripts fixed at build time (`b[1, d]`: a layer's bias taken from a stack) is read as
    that slice, a constant of its own: a constant map result makes IREE's CPU code for the whole
    kernel 8-10x slower (scalar, not vectorized)."""
    if not lw.is_program_level(read.tensor):
        return None
    constant = isinstance(read.tensor, Const)
    view = (operand_views.flattened_view(read, sliced=constant)
            or (operand_views.sliced_view(read) if constant else None)
            or operand_views.plain_view(read) or operand_views.merged_view(read)
            or operand_views.reversed_view(read))
    return None if view is None else _view_operand(lw, domain, view)


def _padded_operand(lw, domain: Domain, v: Value, seen: set):
    """The operand of the padded read that a guarded select `v` is (operand_views.padded_read),
    and that PaddedRead, unless one of its reads is already planned otherwise."""
    padded = operand_views.padded_read(v)
    reads = (padded.view.read,) + padded.twins if padded is not None else ()
    if not reads or any(id(r) in seen for r in reads) or not lw.is_program_level(reads[0].tensor):
        return None
    operand = _view_operand(lw, domain, padded.view)
    return None if operand is None else (operand, padded)


def _view_operand(lw, domain: Domain, view: operand_views.View) -> Optional[Operand]:
    view = operand_views.windowed(view)
    subscripts = [_subscript_expr(domain, sub, size) for sub, size in zip(view.subs, view.shape)]
    if any(s is None for s in subscripts):
        return None
    tensor = operand_views.view_tensor(lw, view)
    if tensor is None:
        return None
    return Operand(view.read, tensor, domain.map([e for e, _ in subscripts]),
                   frozenset().union(*(vars_ for _, vars_ in subscripts)))


def _subscript_expr(domain: Domain, lin, size) -> Optional[tuple[ir.AffineExpr, frozenset]]:
    """An affine subscript over an axis of `size` as a map result, and the variables it is a
    function of, when its variables are loops of `domain` starting at constants and it has no
    symbolic offset; None where the read must be a tensor.extract. Maps IREE gets wrong are
    avoided:
    - linalg takes a loop's trip count from any operand indexed by that bare loop dimension, so
      a bare `d_k` is only allowed over an axis whose size is the variable's extent (views cut
      such axes to fit, see operand_views);
    - IREE-08: a variable of extent 1 is the constant it is (a folded loop leaves a bare `d_k`);
    - IREE-36: no negative coefficient (`q[t + 2 - s]`): tiling takes wrong slices of it;
    - IREE-151: a kernel with no loops reads its points by tensor.extract, not through a map of
      constants, which IREE vectorized to mismatched types once fused with their producer."""
    const = lin.const
    terms = {}
    for key, coeff in lin.terms.items():
        if not hasattr(key, "extent") or not key.lo.is_const:      # a size, not an index
            return None
        const += coeff * key.lo.const          # the coordinate is lo + loop index
        if key.extent == 1:
            continue
        if domain.pos(key) is None or coeff < 0:
            return None
        terms[key] = coeff
    if not terms:
        return (ir.AffineConstantExpr.get(const), frozenset()) if domain.vars else None
    if const == 0 and len(terms) == 1:         # a bare d_k, also `f[n - 1]` with n in 1..
        (key, coeff), = terms.items()
        if coeff == 1 and key.extent != size:
            return None
    expr = sum((ir.AffineDimExpr.get(domain.pos(key)) * coeff for key, coeff in terms.items()),
               ir.AffineConstantExpr.get(const))
    return expr, frozenset(terms)


def _trip_count_operand(lw, domain: Domain, operands: list[Operand]) -> list[Operand]:
    """linalg derives each loop's trip count from an operand indexed by that bare dimension; a
    reduction loop read only at sums of indices (`sig[j + m]`) has none, so it gets an unread
    tensor.empty whose shape is those loops' extents (loops read by no operand at all run
    inside the region instead, see reduction_tensor)."""
    defined = {r.position for o in operands for r in o.map.results if isinstance(r, ir.AffineDimExpr)}
    missing = [v for k, v in enumerate(domain.vars) if k not in defined]
    if not missing:
        return []
    shape = lw.sizes.empty(tuple(v.extent for v in missing), ir.IntegerType.get_signless(8))
    return [Operand(None, shape, domain.projection(missing))]


def _window_not_first(operands: list[Operand]) -> list[Operand]:
    """The operands with a plain one first, when the first reads windows (`x[h + kh, ..]`).
    IREE-14: IREE takes such a generic for a convolution and, adding a batch axis, leaves its
    linalg.index ops numbered as before; a plain operand first keeps it a generic."""
    if not operands or not _reads_windows(operands[0].map):
        return operands
    plain = next((o for o in operands if not _reads_windows(o.map)), None)
    return operands if plain is None else [plain] + [o for o in operands if o is not plain]


def _reads_windows(map_: ir.AffineMap) -> bool:
    return any(isinstance(r, ir.AffineAddExpr) for r in map_.results)


# ------------------------------------------------------------------------------------ kernels

def build_kernel(lw, domain: Domain, body: Value, guard: Optional[Value], init: ir.Value,
                 out_map: ir.AffineMap, finish: Callable, inline: frozenset = frozenset(),
                 loops: tuple = (), start: Optional[Callable] = None) -> ir.Value:
    """A linalg.generic over `domain` writing into `init`; the region yields
    `finish(body value, guard value or None, current output element)`, or with `loops`
    (variables outside `domain`) that folded over their points by scalar loops in the region,
    from `start()` where given and `domain` has no reduction loop of its own (each point then
    folds all of its values, and the kernel does not read `init`), else from the output element.
    IREE-15: a kernel that reads an init of run-time size, fused into a reduction, needs
    unbounded workgroup memory on Vulkan."""
    operands, aliases, coordinates = plan_operands(lw, domain, [body, guard], inline)
    operands += _trip_count_operand(lw, domain, operands + [Operand(None, init, out_map)])
    if coordinates or loops:
        operands = _window_not_first(operands)
    # reads of the same elements (two Read nodes of `x[k]`) share one block argument, as IREE's
    # folders will make them, so that the folds this enables are seen here too (IREE-264)
    twins = {}
    for o in operands:
        if not o.extracted:
            twins.setdefault((o.tensor, o.map), o)
    ins = list(twins.values())
    op = linalg.GenericOp_([o.tensor for o in ins], [init], [o.map for o in ins] + [out_map],
                           domain.iterator_types())
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        args = {(o.tensor, o.map): arg for o, arg in zip(ins, block.arguments)}
        bound = {id(o.node): args[o.tensor, o.map] for o in operands if not o.extracted}
        # an extracted operand's axes are the kernel's loops of one point: its element 0
        bound.update({id(o.node): tensor.extract(o.tensor, [index_const(0)] * ir.RankedTensorType(o.tensor.type).rank)
                      for o in operands if o.extracted})
        region = Region(lw, domain, bound, inline, aliases)
        if loops:
            region.take_coordinates()

        def point(ivs, carried):
            here = region.inside_loops(dict(zip(loops, ivs))) if loops else region
            guard_value = here.value(guard) if guard is not None else None
            return [finish(here.value(body), guard_value, carried[0])]
        own_reduction = len(domain.vars) > domain.n_parallel
        first = start() if start is not None and loops and not own_reduction else block.arguments[-1]
        linalg.YieldOp(point_loops(var_bounds(lw, list(loops)), [first], point))
    return op.result


def generic_tensor(lw, g: Generic, inline: frozenset = frozenset()) -> ir.Value:
    """Element [c..] = body (or 0 where the guard is false) at coordinates lo + c."""
    domain = Domain(list(g.vars), len(g.vars))
    init = lw.sizes.empty(g.shape, element_type(g.dtype))

    def finish(value, guard, _out):
        if guard is None:
            return value
        return arith.select(guard, value, scalar_ops.constant(g.dtype, 0))
    return build_kernel(lw, domain, g.body, g.guard, init, ir.AffineMap.get_identity(len(g.vars)),
                        finish, inline)


WIDE_SUM_TERMS = 4096     # an f32 sum of a value of this many terms or a run-time count adds them in f64

# The rules for a reduction that is a named op, each with the form it emits (named_ops.FORMS, or
# "": the op; or a function of the target and the op that says which): the first that takes it, a
# target's own form, else the named op.
DENSE_RULES = ((window_matmuls.emit, window_matmuls.form), (cpu_convolutions.emit, ""),
               (pooling_pairs.emit, named_ops.PAIRS), (cpu_poolings.emit, cpu_poolings.form),
               (cpu_matmuls.emit, ""), (gpu_matmuls.emit, ""), (named_ops.emit, ""))

# arith op names: (float, signed integer, unsigned integer or bool)
COMBINERS = {"sum": ("addf", "addi", "addi"), "prod": ("mulf", "muli", "muli"),
             "max": ("maximumf", "maxsi", "maxui"), "min": ("minimumf", "minsi", "minui"),
             "all": ("andi", "andi", "andi"), "any": ("ori", "ori", "ori")}


def reduce_identity(reduce: Reduce, wide: bool = False) -> ir.Value:
    dtype = F64 if wide else reduce.dtype
    return scalar_ops.constant(dtype, reduction_identity(reduce.kind, dtype))


def reduce_combiner(reduce: Reduce) -> Callable:
    """The arith op that adds one value to a reduction's accumulator."""
    names = COMBINERS[reduce.kind]
    dtype = reduce.dtype
    combine = getattr(arith, names[0] if dtype.is_float else names[2] if dtype.is_unsigned else names[1])
    return scalar_ops.in_f32(dtype, combine) if dtype.is_half else combine



def reduction_tensor(lw, reduce: Reduce, free: list[IndexVar]) -> tuple[ir.Value, list[IndexVar]]:
    """`reduce` over its own variables for every point of its free variables `free` (the axes
    of the result, in that order). Memoized: a reduction used twice keeps its first axis order."""
    if id(reduce) in lw.reductions:
        return lw.reductions[id(reduce)]
    wide = accumulates_wide(lw, reduce, free)
    init = linalg.fill(reduce_identity(reduce, wide), outs=[lw.sizes.empty(tuple(v.extent for v in free),
                                                                             element_type(F64 if wide else reduce.dtype))])
    found = named_ops.match(reduce, free) or computed_operands.match(lw, reduce, free)
    if found is not None:
        found = patch_matmuls.as_matmul(found) or found
    tensor = None
    if found is not None and named_ops.emitted_on(lw.target, found):
        form, tensor = next(((form, t) for rule, form in DENSE_RULES if (t := rule(lw, found, init)) is not None),
                            ("", None))
        if tensor is not None:
            form = form(lw, found) if callable(form) else form
            lw.dense_kernels.append(_dense_kernel(lw, found, reduce, init, form))
    if found is None and (unproven := named_ops.unproven_kernel(reduce, free, lw.target)) is not None:
        lw.dense_kernels.append(unproven)
    if tensor is None:
        tensor = _reduction_kernel(lw, reduce, free, init, wide)
    if wide:
        tensor = converted(tensor, F64, reduce.dtype)
    lw.reductions[id(reduce)] = (tensor, free)
    return tensor, free


def accumulates_wide(lw, reduce: Reduce, free: list) -> bool:
    """Whether `reduce` is a long f32 sum to accumulate in f64 and round once (where the target
    has f64): added in f32 in loop order across vector lanes, a million terms drift from the sum
    by 1e-5 (a dot product by 4e-4), where NumPy's pairwise sum stays within 1e-7. A sum to one
    value (`free` empty: a dot product stays linalg.dot, into an f64 result) of a run-time or long
    range; a contraction per point (a matmul's K) stays in f32, its ranges being far shorter."""
    if reduce.kind != "sum" or reduce.dtype != F32 or free or lw.target.replacement_for("f64") is not None:
        return False
    extents = [v.extent for v in reduce.vars]
    return not all(e.is_const for e in extents) or math.prod(e.const for e in extents) >= WIDE_SUM_TERMS


def _dense_kernel(lw, found: named_ops.Match, reduce: Reduce, init: ir.Value, form: str) -> named_ops.DenseKernel:
    """The record of `found` emitted in `form` (named_ops.FORMS), or as the op ("")."""
    if form:
        return named_ops.dense_kernel(found, reduce.span, form=form)
    return named_ops.dense_kernel(found, reduce.span, blocks=cpu_convolutions.blocks(lw, found, init),
                                  fast_letters=cpu_convolutions.fast_letters(lw, found))


def _reduction_kernel(lw, reduce: Reduce, free: list[IndexVar], init: ir.Value, wide: bool = False) -> ir.Value:
    """`reduce` as one linalg.generic into `init`; with `wide`, each f32 term added in f64."""
    body, guard = decided_guards.fold(lw, reduce.body), decided_guards.fold(lw, reduce.guard)
    domain = Domain(free + list(reduce.vars), len(free))
    loops = _loop_vars(lw, reduce, body, guard, domain)
    domain = Domain([v for v in domain.vars if v not in loops], len(free))
    combine = reduce_combiner(reduce)

    def finish(value, guard_value, acc):
        if guard_value is not None:
            value = arith.select(guard_value, value, reduce_identity(reduce))
        return combine(scalar_ops.cast(value, F32, F64) if wide else value, acc)
    tensor = build_kernel(lw, domain, body, guard, init, domain.projection(free), finish, loops=loops,
                          start=lambda: reduce_identity(reduce, wide))
    lw.folded_reductions.mark(tensor.owner, reduce, domain.vars)
    return tensor


def _loop_vars(lw, reduce: Reduce, body: Value, guard: Optional[Value], domain: Domain) -> tuple:
    """The reduction's variables run as scalar loops inside the kernel's region: those no planned
    operand changes along (such a loop would have no operand to give its trip count, and IREE-10:
    a reduction whose combined value comes from no operand is vectorized wrongly; an operand that
    reads a tensor of one repeated value does not count, since IREE folds that tensor into the
    kernel as a scalar, einc.passes.uniform_tensors), and those IREE-264 folded away
    (einc.mlir.folded_reductions) unless an inner reduction's tensor has an axis for them, which
    a scalar loop could not read along (a unit range, `min[k in 0..1, l in 0..k + 1](..)`)."""
    operands, _, _ = plan_operands(lw, domain, [body, guard], frozenset())
    forced = lw.folded_reductions.forced(reduce)
    return tuple(v for v in reduce.vars
                 if not any(v in o.vars and _needs_axis(lw, o, v) for o in operands)
                 or (v in forced and not any(v in o.vars and isinstance(o.node, Reduce) for o in operands)))


def _needs_axis(lw, operand: Operand, var: IndexVar) -> bool:
    """Whether the kernel must iterate `var` for `operand`: it changes along `var`, or it is a
    reduction's tensor with an axis for `var` (read from inside a scalar loop over `var`, it
    would have lost that axis)."""
    return isinstance(operand.node, Reduce) or lw.uniformity.varies(operand.node, frozenset([var]))
