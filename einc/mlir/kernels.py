"""`linalg.generic` kernels for `Generic` and `Reduce` nodes.

A kernel iterates a domain of index variables (parallel ones first, then reduction ones). Before
the op is built, its body is planned: reads with affine subscripts that are proven in bounds, nested
reductions (each its own kernel over its free variables) and device scalars become `ins` operands
with indexing maps; everything else is computed inside the region (see body_rules).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg

from einc.ir import affine
from einc.ir.nodes import Generic, IndexVar, Read, Reduce, Value
from einc.ir.types import Sym
from einc.mlir import scalar_ops
from einc.mlir.body_rules import Region
from einc.mlir.types import element_type, is_tensor


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


# ------------------------------------------------------------------------------------ planning

def plan_operands(lw, domain: Domain, roots: list[Value], inline: frozenset) -> list[Operand]:
    """The `ins` of a kernel whose body computes `roots`; `inline` names program-level nodes
    that this kernel itself computes (the root of a 0-d kernel)."""
    operands: list[Operand] = []
    seen: set[int] = set()
    stack = [r for r in reversed(roots) if r is not None]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if lw.is_program_level(v) and id(v) not in inline:
            value = lw.lower(v)
            if v.rank == 0 and is_tensor(value):   # a device scalar: every point reads its one element
                operands.append(Operand(v, value, domain.map([])))
        elif isinstance(v, Reduce):
            operands.append(_reduction_operand(lw, domain, v))
        elif isinstance(v, Read) and (mapped := _affine_read(lw, domain, v)) is not None:
            operands.append(mapped)
        else:
            stack.extend(reversed(v.operands()))
    return operands


def _reduction_operand(lw, domain: Domain, reduce: Reduce) -> Operand:
    free = [v for v in domain.vars if v in lw.free_vars(reduce)]
    tensor, free = reduction_tensor(lw, reduce, free)
    return Operand(reduce, tensor, domain.projection(free))


def _affine_read(lw, domain: Domain, read: Read) -> Optional[Operand]:
    """`read` as an indexing map when it is proven in bounds and every subscript is affine in the
    domain's variables with constant offsets (symbolic offsets fall back to tensor.extract)."""
    if not read.in_bounds or not lw.is_program_level(read.tensor):
        return None
    tensor = lw.lower(read.tensor)
    if not is_tensor(tensor):
        return None
    exprs = [_subscript_expr(domain, sub, size) for sub, size in zip(read.subs, read.tensor.shape)]
    if any(e is None for e in exprs):
        return None
    return Operand(read, tensor, domain.map(exprs))


def _subscript_expr(domain: Domain, sub: Value, size) -> Optional[ir.AffineExpr]:
    """An affine subscript over an axis of `size`. linalg takes a loop's trip count from any
    operand indexed by that bare loop dimension, so a bare `d_k` is only allowed over an axis whose
    size is the variable's extent (reading a prefix of a longer axis takes tensor.extract)."""
    lin = affine.affine_of(sub)
    if lin is None:
        return None
    const = lin.const
    expr = None
    for key, coeff in lin.terms.items():
        if isinstance(key, Sym) or domain.pos(key) is None or not key.lo.is_const:
            return None
        const += coeff * key.lo.const          # the coordinate is lo + loop index
        term = ir.AffineDimExpr.get(domain.pos(key)) * coeff
        expr = term if expr is None else expr + term
    if expr is None:
        return ir.AffineConstantExpr.get(const)
    if const == 0 and len(lin.terms) == 1:     # a bare d_k, also `f[n - 1]` with n in 1..
        (key, coeff), = lin.terms.items()
        if coeff == 1 and key.extent != size:
            return None
    return expr + const if const else expr


def _trip_count_operand(lw, domain: Domain, operands: list[Operand]) -> list[Operand]:
    """linalg derives each loop's trip count from an operand indexed by that bare dimension; a
    reduction loop that only computes or gathers has none, so it gets an unread tensor.empty
    whose shape is those loops' extents."""
    defined = {r.position for o in operands for r in o.map.results if isinstance(r, ir.AffineDimExpr)}
    missing = [v for k, v in enumerate(domain.vars) if k not in defined]
    if not missing:
        return []
    shape = lw.sizes.empty(tuple(v.extent for v in missing), ir.IntegerType.get_signless(8))
    return [Operand(None, shape, domain.projection(missing))]


# ------------------------------------------------------------------------------------ kernels

def build_kernel(lw, domain: Domain, body: Value, guard: Optional[Value], init: ir.Value,
                 out_map: ir.AffineMap, finish: Callable, inline: frozenset = frozenset()) -> ir.Value:
    """A linalg.generic over `domain` writing into `init`; the region yields
    `finish(body value, guard value or None, current output element)`."""
    operands = plan_operands(lw, domain, [body, guard], inline)
    operands += _trip_count_operand(lw, domain, operands + [Operand(None, init, out_map)])
    op = linalg.GenericOp_([o.tensor for o in operands], [init],
                           [o.map for o in operands] + [out_map], domain.iterator_types())
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        bound = {id(o.node): arg for o, arg in zip(operands, block.arguments)}
        region = Region(lw, domain, bound, inline)
        value = region.value(body)
        guard_value = region.value(guard) if guard is not None else None
        linalg.YieldOp([finish(value, guard_value, block.arguments[-1])])
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


# identity element and combiner of each reduction kind, by element kind
IDENTITIES = {"sum": lambda d: 0, "prod": lambda d: 1, "all": lambda d: True, "any": lambda d: False,
              "max": lambda d: float("-inf") if d.is_float else _int_limits(d)[0],
              "min": lambda d: float("inf") if d.is_float else _int_limits(d)[1]}
# arith op names: (float, signed integer, unsigned integer or bool)
COMBINERS = {"sum": ("addf", "addi", "addi"), "prod": ("mulf", "muli", "muli"),
             "max": ("maximumf", "maxsi", "maxui"), "min": ("minimumf", "minsi", "minui"),
             "all": ("andi", "andi", "andi"), "any": ("ori", "ori", "ori")}


def reduce_identity(reduce: Reduce) -> ir.Value:
    return scalar_ops.constant(reduce.dtype, IDENTITIES[reduce.kind](reduce.dtype))


def reduce_combiner(reduce: Reduce) -> Callable:
    """The arith op that adds one value to a reduction's accumulator."""
    names = COMBINERS[reduce.kind]
    dtype = reduce.dtype
    return getattr(arith, names[0] if dtype.is_float else names[2] if dtype.is_unsigned else names[1])


def _int_limits(dtype) -> tuple[int, int]:
    if dtype.is_unsigned:
        return 0, (1 << dtype.bits) - 1
    return -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1


def reduction_tensor(lw, reduce: Reduce, free: list[IndexVar]) -> tuple[ir.Value, list[IndexVar]]:
    """`reduce` over its own variables for every point of its free variables `free` (the axes
    of the result, in that order). Memoized: a reduction used twice keeps its first axis order."""
    if id(reduce) in lw.reductions:
        return lw.reductions[id(reduce)]
    domain = Domain(free + list(reduce.vars), len(free))
    init = linalg.fill(reduce_identity(reduce), outs=[lw.sizes.empty(tuple(v.extent for v in free),
                                                                       element_type(reduce.dtype))])
    combine = reduce_combiner(reduce)

    def finish(value, guard, acc):
        if guard is not None:
            value = arith.select(guard, value, reduce_identity(reduce))
        return combine(value, acc)
    tensor = build_kernel(lw, domain, reduce.body, reduce.guard, init, domain.projection(free), finish)
    lw.reductions[id(reduce)] = (tensor, free)
    return tensor, free
