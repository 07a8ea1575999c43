"""Forward mode: the tangent of every value on the way from x to y, as new IR (thesis 6.3.3).

A `Tangent` is given x and a seed: the tangent of element x[subs]. The tangent of a tensor T
is a tensor of T's shape (an indexed definition whose body is the tangent of T's body), so
forward-mode code reaches MLIR as linalg like hand-written code. A seed may depend on
*direction* variables `dirs`: then every tangent tensor gets those as extra trailing axes,
which computes a whole batch of directions at once (a dense Jacobian, when the seed is the
identity). Recurrences get tangent members in their own group, so the tangent loop runs beside
the primal loop (einc.autodiff.tangent_recurrence).

`None` stands for an identically zero tangent, so nothing is generated for values x does not
reach. Tangents are memoized and computed parts first over an explicit stack (`_parts` names
what each rule asks for), so a chain as long as the program does not recurse in Python.
"""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir.nodes import (Compact, Const, Generic, IndexRef, IndexVar, Input, Op, Piecewise, Clause, Read, RecValue,
                           Reduce, Size, Stack, StateRead, Value, fresh_index_vars, is_stored_tensor)
from einc.ir.traversal import fold
from einc.ir.types import BOOL, Lin
from einc.autodiff.compact_rules import compact_tangent
from einc.autodiff.custom_rules import NO_RULES
from einc.autodiff.local_rules import const, mul, op, partials, selected_share
from einc.autodiff.rewrite import replace_nodes
from einc.autodiff.scalar_adjoint import reads_a_point_stack
from einc.autodiff.seeds import positions
from einc.autodiff.substitute import substitute
from einc.autodiff.tangent_recurrence import recurrence_tangent


class Tangent:
    def __init__(self, x: Value, seed, dirs: tuple = (), span=None, rules=NO_RULES):
        self.x = x
        self.rules = rules
        self.seed = seed                  # seed(subs) -> scalar tangent of x[subs], or None
        self.dirs = dirs
        self.dir_refs = tuple(IndexRef(v) for v in dirs)
        self.span = span
        self.memo: dict[tuple, object] = {}     # ("t" or "s", id(value)) -> tangent or None
        self.op_partials: dict[int, list] = {}
        self.states: dict[int, object] = {}     # id(RecMember) -> tangent RecMember or None

    # ------------------------------------------------------------ program-level tensors

    def of_value(self, y: Value):
        """Tangent of a program-level value: shape y.shape ++ dirs, or None when zero."""
        if self._as_scalar(y):
            body = self.of_scalar(y)
            if body is None or not self.dirs:
                return body
            return Generic(self.dirs, body)
        return self.of_tensor(y)

    def _as_scalar(self, y: Value) -> bool:
        return y.rank == 0 and not isinstance(y, Generic) and y is not self.x

    def of_tensor(self, t: Value):
        return fold(("t", t), self._parts, self._combine, self.memo, key=_key)

    def of_scalar(self, e: Value):
        return fold(("s", e), self._parts, self._combine, self.memo, key=_key)

    def _combine(self, item: tuple, _parts: list):
        """A rule's tangent; its parts' tangents are memoized, so its calls do not go deeper."""
        kind, v = item
        return self._tensor(v) if kind == "t" else self._scalar(v)

    def _parts(self, item: tuple) -> list:
        """The tangents the rule for `item` asks for, in the order it asks."""
        kind, v = item
        if v is self.x or isinstance(v, (Const, Input, Size, IndexRef)) or not v.dtype.is_float:
            return []
        if kind == "t":
            return self._tensor_parts(v)
        if reads_a_point_stack(v):
            return [("s", e) for e in v.tensor.elems]
        if isinstance(v, Read):
            return [] if v.tensor is self.x else [("t", v.tensor)]
        if is_stored_tensor(v):
            return [("t", v)]
        if isinstance(v, Op):
            return [("s", a) for a in self._op_operands(v)]
        if isinstance(v, Reduce) and v.kind not in ("all", "any"):
            return [("s", v.body)]
        return []

    def _tensor_parts(self, t: Value) -> list:
        if isinstance(t, Generic):
            return [("s", t.body)]
        if isinstance(t, Stack):
            return [("s" if self._as_scalar(e) else "t", e) for e in t.elems]
        if isinstance(t, Piecewise):
            return [("t", c.value) for c in t.clauses]
        if isinstance(t, Compact):
            return [("t", t.source)]
        return []

    def _tensor(self, t: Value):
        if t is self.x:
            vars_ = fresh_index_vars(t.shape, "x")
            body = self.seed(tuple(IndexRef(v) for v in vars_))
            return None if body is None else Generic(vars_ + self.dirs, body)
        if isinstance(t, (Const, Input, Size)) or not t.dtype.is_float:
            return None
        if isinstance(t, Generic):
            body = self.of_scalar(t.body)
            if body is None:
                return None
            # partials that repeat the whole body read the stored value instead
            stored = Read(t, positions(t.vars), in_bounds=True)
            body = replace_nodes(body, {id(t.body): stored})
            return Generic(t.vars + self.dirs, body, t.guard, span=t.span)
        if isinstance(t, Stack):
            return self._stack(t)
        if isinstance(t, Piecewise):
            return self._piecewise(t)
        if isinstance(t, RecValue):
            return recurrence_tangent(self, t)
        if isinstance(t, Compact):
            source = self.of_tensor(t.source)
            return None if source is None else compact_tangent(t, source)
        raise d.error(d.UNSUPPORTED, f"no forward derivative through {type(t).__name__}", self.span)

    def _stack(self, s: Stack):
        elems = [self.of_value(e) for e in s.elems]
        if all(e is None for e in elems):
            return None
        return Stack(tuple(self.zeros(s.elems[k]) if e is None else e for k, e in enumerate(elems)),
                     span=s.span)

    def _piecewise(self, p: Piecewise):
        values = [self.of_tensor(c.value) for c in p.clauses]
        if all(v is None for v in values):
            return None
        pad = (Lin(0),) * len(self.dirs)
        clauses = tuple(Clause(c.offsets + pad, self.zeros(c.value) if v is None else v)
                        for c, v in zip(p.clauses, values))
        return Piecewise(p.dtype, tuple(p.shape) + tuple(v.extent for v in self.dirs), clauses,
                         span=p.span)

    def zeros(self, like: Value) -> Value:
        """A zero tangent of `like`'s shape ++ dirs (where a neighbour's tangent is not zero)."""
        return Generic(fresh_index_vars(like.shape, "z") + self.dirs, const(0.0, like))

    # ------------------------------------------------------------ scalar expressions

    def _scalar(self, e: Value):
        if e is self.x:
            return self.seed(())
        if isinstance(e, (Const, Size, IndexRef, Input)) or not e.dtype.is_float:
            return None
        if isinstance(e, Read):
            return self._read(e)
        if is_stored_tensor(e):
            return self._read(Read(e, ()))     # a rank-0 tensor standing in a scalar expression
        if isinstance(e, Op):
            return self._op(e)
        if isinstance(e, Reduce):
            return self._reduce(e)
        if isinstance(e, StateRead):
            member = self.states.get(id(e.member))
            return None if member is None else StateRead(member, tuple(e.subs) + self.dir_refs)
        raise d.error(d.UNSUPPORTED, f"no forward derivative through {type(e).__name__}", self.span)

    def _read(self, r: Read):
        if r.tensor is self.x:
            return self.seed(tuple(r.subs))
        if reads_a_point_stack(r):       # built at each point: so is its tangent
            elems = [self.of_scalar(e) for e in r.tensor.elems]
            if all(e is None for e in elems):
                return None
            return Read(Stack(tuple(const(0.0, r) if t is None else t for t in elems), span=r.tensor.span),
                        tuple(r.subs), span=r.span, in_bounds=r.in_bounds)
        tt = self.of_tensor(r.tensor)
        if tt is None:
            return None
        return Read(tt, tuple(r.subs) + self.dir_refs, span=r.span, in_bounds=r.in_bounds)

    def _op(self, n: Op):
        if n.op == "cast" and self.rules.partials(n) is None:
            (x,) = n.args
            inner = self.of_scalar(x) if x.dtype.is_float else None
            return None if inner is None else Op("cast", (inner,), n.dtype)
        if n.op == "select" and self.rules.partials(n) is None:
            return self._select(n)
        terms = []
        for arg, partial in self._partials(n):
            darg = self.of_scalar(arg)
            if darg is not None:
                terms.append(mul(partial, darg))
        return _sum(terms)

    def _select(self, n: Op):
        """The tangent of the side taken, as a select: a side's tangent (its reads, its values)
        is evaluated only where that side is, as the side itself (not `[c] da + [!c] db`, which
        would read an index the condition guards, or give 0 * inf)."""
        cond, a, b = n.args
        da, db = self.of_scalar(a), self.of_scalar(b)
        if da is None and db is None:
            return None
        zero = const(0.0, n)
        return Op("select", (cond, zero if da is None else da, zero if db is None else db), n.dtype)

    def _op_operands(self, n: Op) -> list:
        if n.op == "cast" and self.rules.partials(n) is None:
            return [a for a in n.args if a.dtype.is_float]
        return [arg for arg, _ in self._partials(n)]

    def _partials(self, n: Op) -> list:
        """[(operand, partial)] of the operands `n` depends on: a custom rule's, or the local ones."""
        if id(n) not in self.op_partials:
            pairs = self.rules.partials(n)
            if pairs is None:
                pairs = [(a, p) for a, p in zip(n.args, partials(n)) if p is not None]
            self.op_partials[id(n)] = list(pairs)
        return self.op_partials[id(n)]

    def _reduce(self, r: Reduce):
        if r.kind in ("all", "any"):
            return None
        inner = self.of_scalar(r.body)
        if inner is None:
            return None
        if r.kind == "prod":
            inner = mul(op("div", r, r.body), inner)
        elif r.kind in ("max", "min"):       # through the selected points
            inner = selected_share(r, inner)
        # fresh variables: `inner` may hold the primal reduction, which binds r.vars itself
        fresh = tuple(IndexVar(v.name, v.lo, v.extent, span=v.span) for v in r.vars)
        mapping = {old: IndexRef(new) for old, new in zip(r.vars, fresh)}
        guard = substitute(r.guard, mapping) if r.guard is not None else None
        return Reduce("sum", fresh, substitute(inner, mapping), guard, span=r.span)


def _key(item: tuple) -> tuple:
    return item[0], id(item[1])


def _sum(terms: list):
    if not terms:
        return None
    total = terms[0]
    for t in terms[1:]:
        total = op("add", total, t)
    return total
