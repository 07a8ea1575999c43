"""The facts about run-time sizes that every run must satisfy (`Program.size_facts`).

The front end proves reads in bounds assuming every dim is at least 1; a negative extent or a
read of an empty axis breaks that. This pass lists, for the runner to check before the call
(einc/runtime/sizes.py): `ExtentFact`, an index range's extent is >= 0, and `IndexFact`, when
an access runs at all, the indices it touches along an axis lie in `[0, size)` (a proven read
gives its range, a clamped one only needs a non-empty axis; clauses that write are checked the
same way). Facts true for every size are dropped; facts with no size left are decided here, a
false one being a diagnostic, as is an access that leaves its axis whenever it runs
(`z[i in 2..N, j in -1..N]`). Lengths computed on the device (`DataSize`) are not checked
before the call: their sequences are read in bounds by construction, a fixed read of one is an
assert (semantics.dynamic_length).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from einc import diagnostics as d
from einc.diagnostics import Span
from einc.ir import affine
from einc.ir.nodes import (Generic, IndexVar, Input, Piecewise, Program, Read, RecurrenceGroup, RecValue,
                           Reduce, Stack, StateRead, Value, free_vars)
from einc.ir.traversal import run_in_order
from einc.ir.types import DataSize, Lin, Quotient, SizeOp


@dataclass(frozen=True)
class ExtentFact:
    """`extent` (of index `var`) must be >= 0."""
    extent: Lin
    var: str
    span: Optional[Span]


@dataclass(frozen=True)
class IndexFact:
    """If every Lin in `when` is >= 1, `access` ("read" or "write") of `array` touches indices
    `first ..= last` of axis `axis`, which must lie in [0, size)."""
    access: str
    array: str
    axis: int
    size: Lin
    first: Lin
    last: Lin
    when: tuple
    span: Optional[Span]

    @property
    def requirements(self) -> tuple[Lin, Lin]:
        return self.first, self.size - 1 - self.last


SizeFact = ExtentFact | IndexFact


def collect_size_facts(program: Program) -> list:
    """The facts of `program` that depend on run-time sizes, in program order, each once."""
    collector = _Collector()
    run_in_order([(root, ()) for root in program.roots()], collector.value)
    facts, extents = [], set()
    for fact in dict.fromkeys(collector.facts):
        if _holds_for_every_size(fact) or getattr(fact, "extent", None) in extents or _after_the_call(fact):
            continue
        if isinstance(fact, ExtentFact):
            extents.add(fact.extent)       # the first range with an extent names it
        if _is_constant(fact) or _fails_for_every_size(fact):
            raise _violated(fact)
        facts.append(fact)
    return facts


class _Collector:
    def __init__(self) -> None:
        self.facts: list = []
        self._seen: set = set()
        self._free: dict = {}             # memo of free_vars
        self._steps: dict = {}            # inside a recurrence clause: its step var -> the clause's steps

    def value(self, task: tuple) -> list:
        """Visit value `v` of `task` = (v, domain), evaluated at every point of `domain`
        (extents); a value that uses no index variable runs once, whatever the domain. Returns
        the visits that follow (einc.ir.traversal.run_in_order)."""
        v, domain = task
        if not free_vars(v, self._free):
            domain = ()
        key = (id(v), domain, tuple(map(id, self._steps.values())))
        if key in self._seen:
            return []
        self._seen.add(key)
        rule = _RULES.get(type(v))
        if rule is not None:
            return rule(self, v, domain)
        return [(operand, domain) for operand in v.operands()]

    def ranges(self, variables, domain: tuple, span: Optional[Span]) -> tuple:
        """Record the extents of `variables` (of a definition at `span`); the domain they open
        inside `domain`."""
        for var in variables:
            self.facts.append(ExtentFact(var.extent, var.name, var.span or span))
        return domain + tuple(var.extent for var in variables)

    def generic(self, v: Generic, _domain: tuple) -> list:
        return _body(v.body, v.guard, self.ranges(v.vars, (), v.span))

    def reduce(self, v: Reduce, domain: tuple) -> list:
        return _body(v.body, v.guard, self.ranges(v.vars, domain, v.span))

    def read(self, v: Read, domain: tuple) -> list:
        per_point = isinstance(v.tensor, Stack) and free_vars(v.tensor, self._free)
        return ([(sub, domain) for sub in v.subs] + [(v.tensor, domain if per_point else ())]
                + [lambda: self._read_facts(v, domain)])

    def _read_facts(self, v: Read, domain: tuple) -> None:
        name = _array_name(v.tensor)
        for axis, size in enumerate(v.tensor.shape):
            first, last = _touched(v, axis, self._steps)
            self.facts.append(IndexFact("read", name, axis, size, first, last, domain, v.span))
        for axis, index in v.extreme_points:        # a read in ranges that depend on outer indices
            self.facts.append(IndexFact("read", name, axis, v.tensor.shape[axis], index, index, domain, v.span))

    def piecewise(self, v: Piecewise, _domain: tuple) -> list:
        tasks = []
        for clause in v.clauses:
            tasks += [(clause.value, ()), lambda clause=clause: self._clause_facts(v, clause)]
        return tasks

    def _clause_facts(self, v: Piecewise, clause) -> None:
        when = tuple(clause.value.shape)
        for axis, (offset, extent) in enumerate(zip(clause.offsets, clause.value.shape)):
            self.facts.append(IndexFact("write", "a piecewise definition", axis, v.shape[axis],
                                        offset, offset + extent - 1, when,
                                        getattr(clause.value, "span", None) or v.span))

    def rec_value(self, v: RecValue, _domain: tuple) -> list:
        group = v.group
        if id(group) in self._seen:
            return []
        self._seen.add(id(group))
        self.ranges([group.t_var], (), group.members[0].span)
        return [lambda member=member, clause=clause: self._rec_clause(group, member, clause)
                for member in group.members for clause in member.clauses]

    def _rec_clause(self, group: RecurrenceGroup, member, clause) -> list:
        span = clause.body.span or member.span     # a clause has no span of its own
        steps = IndexVar(group.t_var.name, clause.t_lo, clause.t_hi - clause.t_lo)
        domain = self.ranges([steps] + list(clause.vars), (), span)
        outer = self._steps           # a group reached from a clause of another: restored after
        self._steps = {**outer, group.t_var: Lin.of(steps)}   # an outer step var stays narrowed
        return _body(clause.body, clause.guard, domain) + [
            lambda: self._rec_clause_done(member, clause, steps, domain, outer)]

    def _rec_clause_done(self, member, clause, steps: IndexVar, domain: tuple, outer: dict) -> None:
        self._steps = outer
        firsts = [clause.t_lo] + [var.lo for var in clause.vars]
        extents = [steps.extent] + [var.extent for var in clause.vars]
        for axis, (first, extent) in enumerate(zip(firsts, extents)):
            self.facts.append(IndexFact("write", member.name, axis, member.shape[axis],
                                        first, first + extent - 1, domain, member.span))

    def state_read(self, v: StateRead, domain: tuple) -> list:
        return [(sub, domain) for sub in v.subs]


def _body(body: Value, guard: Optional[Value], domain: tuple) -> list:
    """The visits of a body and its guard over `domain`."""
    return [(body, domain)] + ([(guard, domain)] if guard is not None else [])


_RULES = {
    Generic: _Collector.generic,
    Reduce: _Collector.reduce,
    Read: _Collector.read,
    Piecewise: _Collector.piecewise,
    RecValue: _Collector.rec_value,
    StateRead: _Collector.state_read,
}


def _touched(read: Read, axis: int, steps: dict) -> tuple[Lin, Lin]:
    """The first and last index a read touches along `axis`: its affine range when it was proven
    in bounds or must stay inside (`strict`), else 0 ..= 0 (a clamped read, under a guard or
    generated, only needs a non-empty axis). `steps` narrows a recurrence's step variable to
    the steps of the clause the read is in."""
    lin = affine.affine_of(read.subs[axis]) if read.in_bounds or read.strict else None
    if lin is None or any(getattr(k, "extent", 0) is None for k in lin.keys()):
        return Lin(0), Lin(0)
    return affine.bounds(lin.substitute(steps))


def _array_name(v: Value) -> str:
    if isinstance(v, Input):
        return v.name
    if isinstance(v, RecValue):
        return v.member.name
    return "an intermediate array"


# ---------------------------------------------------------------- deciding facts

def _requirements(fact: SizeFact) -> tuple:
    return (fact.extent,) if isinstance(fact, ExtentFact) else fact.requirements


def _conditions(fact: SizeFact) -> tuple:
    return () if isinstance(fact, ExtentFact) else fact.when


def _holds_for_every_size(fact: SizeFact) -> bool:
    """Whether `fact` is true whatever the sizes: no access happens, or each requirement r
    follows from a condition w >= 1 because r - (w - 1) is never negative."""
    conditions = _with_implied(_conditions(fact))
    if any(_never_positive(w) for w in conditions):
        return True
    return all(any(_never_negative(r - w + 1) for w in conditions + (Lin(1),)) for r in _requirements(fact))


def _with_implied(conditions: tuple) -> tuple:
    """floor(n / k) >= 1 means n >= k: add n - k + 1 >= 1 for each condition that is a quotient."""
    implied = []
    for w in conditions:
        if w.const == 0 and len(w.terms) == 1:
            [(key, coeff)] = w.terms.items()
            if isinstance(key, Quotient) and coeff == 1:
                implied.append(key.numer - key.denom + 1)
    return tuple(conditions) + tuple(implied)


def _after_the_call(fact: SizeFact) -> bool:
    """Whether the fact names a size known only once the program runs."""
    return any(isinstance(key, DataSize) for lin in _requirements(fact) + _conditions(fact) for key in lin.keys())


def _never_negative(lin: Lin) -> bool:
    """`lin` >= 0 for every size >= 0 (a quotient, a product or a min is >= 0 when its
    arguments are, a max when one is)."""
    return lin.const >= 0 and all(c >= 0 and _never_negative_key(k) for k, c in lin.terms.items())


def _never_negative_key(key) -> bool:
    if isinstance(key, Quotient):
        return _never_negative(key.numer)
    if isinstance(key, SizeOp):
        return (any if key.op == "max" else all)(_never_negative(a) for a in key.args)
    return True


def _fails_for_every_size(fact: SizeFact) -> bool:
    """Whether `fact` is false at every size where its access happens: one of its requirements
    is a negative constant (`z[i in -1..M]` writes index -1 for every M). Only sizes at which
    the access does not happen at all (`z[i in 2..N, j in -1..N]` at N = 2) would pass, so the
    access itself is the program's error."""
    return any(r.is_const and r.const < 0 for r in _requirements(fact))


def _never_positive(lin: Lin) -> bool:
    return lin.is_const and lin.const <= 0


def _is_constant(fact: SizeFact) -> bool:
    return all(lin.is_const for lin in _requirements(fact) + _conditions(fact))


def _violated(fact: SizeFact) -> d.CompileError:
    """A fact without sizes in it is false for every run: the program's error."""
    if isinstance(fact, ExtentFact):
        return d.error(d.SHAPE, f"the range of `{fact.var}` has extent {fact.extent!r}, below zero", fact.span)
    return d.error(d.BOUNDS, f"this {fact.access} of {fact.array} touches indices {fact.first!r} to "
                  f"{fact.last!r} of axis {fact.axis}, which has size {fact.size!r}", fact.span)
