"""einc/ir/affine `periodic_of`: a wrapped subscript `x % N` keyed by its value, so that reads of
one point through different wraps share it (a cyclic stencil's Runge-Kutta stages, whose
reverse-mode derivative inlined each point once per path to it: Lorenz-96, holdout 8b)."""
import numpy as np

from einc.ir.affine import periodic_of
from einc.ir.nodes import Const, IndexRef, IndexVar, Op, Size
from einc.ir.types import I32, Lin, Sym

N = Lin.of(Sym("N", 0, 0))
I = IndexVar("i", Lin(0), N)


def _add(a, b):
    return Op("add", (a, b), I32)


def _wrap(x):
    return Op("rem", (x, Size(N)), I32)


def _c(k):
    return Const(np.asarray(k, np.int32))


def test_a_wrap_of_a_wrap_is_keyed_by_its_point():
    i = IndexRef(I)
    back = _wrap(_add(_add(_wrap(_add(i, _c(1))), Size(N)), _c(-1)))     # ((i + 1) % N + N - 1) % N
    assert periodic_of(back) == ("lin", Lin.of(I))
    assert periodic_of(_wrap(_add(i, _c(1)))) == periodic_of(_wrap(_add(_wrap(i), _c(1)))) == ("mod", Lin.of(I) + 1, N)
    assert periodic_of(_wrap(_add(_add(i, Size(N)), _c(-2)))) == ("mod", Lin.of(I) - 2, N)   # N = 1 leaves 0


def test_a_dividend_that_may_be_negative_has_no_key():
    """`(i - 1) % N` is -1 at i = 0 where `((i + N - 1) % N` is N - 1 (under a guard, that read
    must not take the other's point)."""
    i = IndexRef(I)
    assert periodic_of(Op("rem", (Op("sub", (i, _c(1)), I32), Size(N)), I32)) is None
    assert periodic_of(_wrap(_add(_add(i, Size(N)), _c(-3)))) is None
