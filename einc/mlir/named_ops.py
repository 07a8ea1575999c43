"""Named linalg ops for the contractions IREE compiles best (`linalg.matmul` and friends).

A `Generic` is a contraction when its body is exactly `sum[k](A[..] * B[..])` with plain index
subscripts over whole axes (every range starts at 0 and spans its axis), no guards, and float
operands of one dtype. Anything else stays a linalg.generic, which is always correct.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import linalg

from einc.ir.nodes import Generic, IndexRef, Op, Read, Reduce, is_program_level
from einc.mlir import scalar_ops
from einc.mlir.types import element_type

# name, result subscripts, lhs subscripts, rhs subscripts; `k` is the summed variable
PATTERNS: list[tuple[str, str, str, str]] = [
    ("matmul", "ij", "ik", "kj"),
    ("batch_matmul", "bij", "bik", "bkj"),
    ("matvec", "i", "ik", "k"),
    ("vecmat", "j", "k", "kj"),
]


@dataclass
class Contraction:
    builder: Callable
    lhs: Read
    rhs: Read
    result: Generic

    def emit(self, lw) -> ir.Value:
        zero = scalar_ops.constant(self.result.dtype, 0)
        init = linalg.fill(zero, outs=[lw.sizes.empty(self.result.shape, element_type(self.result.dtype))])
        return self.builder(lw.lower(self.lhs.tensor), lw.lower(self.rhs.tensor), outs=[init])


def match(g: Generic) -> Optional[Contraction]:
    product = _summed_product(g)
    if product is None:
        return None
    reduce, reads = product
    for name, out, lhs, rhs in PATTERNS:
        if len(out) != len(g.vars):
            continue
        letters = dict(zip(out, g.vars), k=reduce.vars[0])
        for a, b in (reads, reads[::-1]):
            if _reads_axes(a, [letters[c] for c in lhs]) and _reads_axes(b, [letters[c] for c in rhs]):
                return Contraction(getattr(linalg, name), a, b, g)
    return None


def _summed_product(g: Generic) -> Optional[tuple[Reduce, tuple[Read, Read]]]:
    """(the reduction, its two factors) when `g` is `sum[k](Read * Read)` over zero-based ranges."""
    reduce = g.body
    if g.guard is not None or not isinstance(reduce, Reduce) or reduce.kind != "sum":
        return None
    if reduce.guard is not None or len(reduce.vars) != 1 or not g.dtype.is_float:
        return None
    if any(v.lo != 0 for v in g.vars + reduce.vars):
        return None
    product = reduce.body
    if not isinstance(product, Op) or product.op != "mul":
        return None
    if not all(isinstance(r, Read) and r.dtype == g.dtype for r in product.args):
        return None
    return reduce, tuple(product.args)


def _reads_axes(read: Read, vars_: list) -> bool:
    """Whether `read` is `T[v0, v1, ..]` and each variable spans exactly its axis of T."""
    if not is_program_level(read.tensor) or len(read.subs) != len(vars_) or read.tensor.rank != len(vars_):
        return False
    return all(isinstance(s, IndexRef) and s.var is v and read.tensor.shape[axis] == v.extent
               for axis, (s, v) in enumerate(zip(read.subs, vars_)))
