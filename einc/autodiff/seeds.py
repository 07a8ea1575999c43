"""Seeds of derivative passes: basis tangents and cotangents, and reading an adjoint.

A row of a Jacobian is the pullback of a basis cotangent (1 at one point of y, 0 elsewhere),
a column the push-forward of a basis tangent. A basis is pure index arithmetic, so it is
substituted where it is read instead of being stored as a tensor.
"""
from __future__ import annotations

from einc.ir.nodes import Const, Generic, IndexRef, Input, Op, Read, Size, Value, fresh_index_vars
from einc.ir.types import BOOL
from einc.autodiff.local_rules import const
from einc.autodiff.delta import lin_value
from einc.autodiff.rewrite import scalar_nodes
from einc.autodiff.simplify import build
from einc.autodiff.substitute import substitute


def indicator(subs: tuple, at: tuple, like: Value) -> Value:
    """1 where every subs[k] == at[k], else 0 (in like's float type)."""
    cond = None
    for s, a in zip(subs, at):
        eq = Op("eq", (s, a), BOOL)
        cond = eq if cond is None else build("and", (cond, eq), BOOL)
    if cond is None:
        return const(1.0, like)
    return Op("select", (cond, const(1.0, like), const(0.0, like)), like.dtype)


def basis(like: Value, at: tuple) -> Generic:
    """The basis tensor of like's shape with its 1 at `at`."""
    vars_ = fresh_index_vars(like.shape, "b")
    return Generic(vars_, indicator(tuple(IndexRef(v) for v in vars_), at, like))


def positions(vars_: tuple) -> tuple:
    """The element a Generic over `vars_` writes at the current point: coordinates minus lo."""
    return tuple(build("sub", (IndexRef(v), lin_value(v.lo)), IndexRef(v).dtype) for v in vars_)


def read_adjoint(adjoint: Value, refs: tuple) -> Value:
    """The adjoint at one point. An adjoint that is pure index arithmetic (a basis) is
    substituted in place rather than read from a stored tensor."""
    if isinstance(adjoint, Generic) and adjoint.guard is None and _is_index_arithmetic(adjoint.body):
        return substitute(adjoint.body, dict(zip(adjoint.vars, refs)))
    return Read(adjoint, refs, in_bounds=True)


def _is_index_arithmetic(v: Value) -> bool:
    return all(isinstance(n, (Const, IndexRef, Size, Op)) or (isinstance(n, Input) and n.rank == 0)
               for n in scalar_nodes([v]))
