"""Sizes at run time: IR `Lin`s over input dimensions become `index` SSA values.

Every `Sym` is read once with `tensor.dim` at function entry, so a size can be rebuilt anywhere
in the function (inside linalg regions too) from values that dominate everything. A `DataSize`
(a length computed from data) is defined by the lowering of its `Compact`, which the function
emits before anything else that could use it.
"""
from __future__ import annotations

import functools

from iree.compiler import ir
from iree.compiler.dialects import arith, cf, linalg, tensor

from einc.ir.nodes import Input
from einc.ir.types import DataSize, Lin, Quotient, Shape, SizeOp, Sym
from einc.mlir.core import scalar_ops
from einc.mlir.core.types import element_type, i32_type, index_type


_SIZE_OPS = {"mul": arith.muli, "min": arith.minsi, "max": arith.maxsi}


def index_const(n: int) -> ir.Value:
    return arith.constant(index_type(), n)


class Sizes:
    """The `index` value of each Sym, plus Lin -> index arithmetic over them."""

    def __init__(self, args: list[ir.Value], syms: list[Sym]):
        self.dims = {sym: tensor.dim(args[sym.input_pos], index_const(sym.axis)) for sym in syms}

    def dim(self, sym: Sym) -> ir.Value:
        return self.dims[sym]

    def define(self, size: DataSize, value: ir.Value) -> None:
        self.dims[size] = value

    def index(self, lin: Lin) -> ir.Value:
        """`lin` as an index value; a constant when `lin` has no symbols."""
        total = None
        for key, coeff in lin.terms.items():
            value = self._key(key)
            term = value if coeff == 1 else arith.muli(value, index_const(coeff))
            total = term if total is None else arith.addi(total, term)
        if total is None:
            return index_const(lin.const)
        return arith.addi(total, index_const(lin.const)) if lin.const else total

    def _key(self, key) -> ir.Value:
        if isinstance(key, Sym):
            return self.dims[key]
        if isinstance(key, Quotient):
            return arith.floordivsi(self.index(key.numer), index_const(key.denom))
        if isinstance(key, SizeOp):
            args = [self.index(a) for a in key.args]
            return functools.reduce(_SIZE_OPS[key.op], args)
        raise ValueError(f"a size depends on index variable {key!r}")

    def i32(self, lin: Lin) -> ir.Value:
        if lin.is_const:
            return arith.constant(i32_type(), lin.const)
        return arith.index_cast(i32_type(), self.index(lin))

    def empty(self, shape: Shape, element: ir.Type) -> ir.Value:
        """An uninitialised tensor of `shape`."""
        sizes = [d.const if d.is_const else self.index(d) for d in shape]
        return tensor.empty(sizes, element)

    def scalar_tensor(self, value: ir.Value) -> ir.Value:
        """A host scalar as a 0-d device tensor. linalg.fill rather than tensor.from_elements,
        which IREE mis-converts for i1 (IREE-17)."""
        return linalg.fill(value, outs=[tensor.empty([], value.type)])

    def dynamic_dims(self, shape: Shape) -> list[ir.Value]:
        """The values of the non-constant sizes, as ops like flow.tensor.trace list them."""
        return [self.index(d) for d in shape if not d.is_const]


def emit_shape_checks(inputs: list[Input], args: list[ir.Value], fixed_dims: dict[str, int]) -> None:
    """A named dim used on several input axes must have one size: IREE does not check that
    (a dim fixed at build time is part of each argument's static type instead)."""
    seen: dict[str, tuple[Input, ir.Value]] = {}
    for inp in inputs:
        for axis, dim in enumerate(inp.declared_dims or []):
            if not isinstance(dim, str) or dim in fixed_dims:
                continue
            size = tensor.dim(args[inp.pos], index_const(axis))
            if dim not in seen:
                seen[dim] = (inp, size)
                continue
            first, first_size = seen[dim]
            same = arith.cmpi(arith.CmpIPredicate.eq, first_size, size)
            cf.assert_(same, f"shape mismatch: named dim {dim} differs between {first.name} and {inp.name}")


def emit_read_checks(facts: list, sizes: Sizes) -> None:
    """The runner's checks of the reads (passes/size_facts `IndexFact`s) as asserts in the
    module too: a strict read is lowered unclamped (semantics/core/bounds), so a module run
    outside einc, which skips those checks, must not read outside a buffer either."""
    for fact in facts:
        if getattr(fact, "access", None) != "read" or _computed_length(fact):
            continue
        inside = arith.andi(_at_least(fact.first, Lin(0), sizes), _at_least(fact.size - 1, fact.last, sizes))
        idle = [_at_least(Lin(0), extent, sizes) for extent in fact.when if not extent.is_const]
        for empty in idle:
            inside = arith.ori(inside, empty)
        where = f" at {fact.span}" if fact.span is not None else ""
        cf.assert_(inside, f"assertion failed{where}: a read leaves axis {fact.axis} of {fact.array} for these sizes")


def _computed_length(fact) -> bool:
    """Whether a size of `fact` is a length computed on the device (not checked before a run)."""
    lins = (fact.first, fact.last, fact.size, *fact.when)
    return any(isinstance(k, DataSize) for lin in lins for k in lin.keys())


def _at_least(a: Lin, b: Lin, sizes: Sizes) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.sge, sizes.index(a), sizes.index(b))


def converted(value: ir.Value, source, target) -> ir.Value:
    """The tensor `value` (elements of DType `source`) with its elements converted to DType
    `target` by one elementwise op."""
    kind = ir.RankedTensorType(value.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    out = tensor.empty([tensor.dim(value, index_const(k)) if kind.get_dim_size(k) == dynamic else kind.get_dim_size(k)
                        for k in range(kind.rank)], element_type(target))
    identity = ir.AffineMap.get_identity(kind.rank)
    op = linalg.GenericOp_([value], [out], [identity, identity], [linalg.IteratorType.parallel] * kind.rank)
    with ir.InsertionPoint(op.regions[0].blocks[0]):
        linalg.YieldOp([scalar_ops.cast(op.regions[0].blocks[0].arguments[0], source, target)])
    return op.result
