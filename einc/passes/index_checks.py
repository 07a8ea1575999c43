"""Run-time checks of data-dependent subscripts (`table[idx[i]]`): `Program.index_checks`.

A read whose subscript reads run-time data (an array, a scalar input, recurrence state) cannot
be proven in bounds, and the lowering clamps it. Unless the build opts out
(`--unchecked-indices`), each such subscript gets a check: one extra reduction that finds the
first point (in the order the loops run) where the read happens and the index leaves its axis,
and computes the index there. The check reads only what the subscript and the conditions the
read happens under read (for `table[idx[i]]`, one pass over `idx`), never the hot loop itself.
Its status, [first point (row-major position, NONE_BAD where none), index, axis size,
coordinates..], is an extra result of `main` that the runner inspects before returning any
output. Positions are i32: a check over more than 2^31 - 1 points would wrap.

A read happens under the guards around it: a definition's or reduction's `where`, the taken
side of `if` (a select), the right side of `&&`/`||` only where the left one lets it run, and a
recurrence clause only at its steps; a whole tensor (`row - x` of a row `c[id[i]]`) read at one
point under such a condition is computed for the program only there, so its body is visited
under the condition moved onto its own variables (`_Finder._pointwise`). Recurrence state in a subscript is read from the member's
whole tensor after the loop, which holds the same values (the first bad step saw correct state).
A tensor a step computes (`let h[j] = ..` or `argmax(logits)` in a step) exists only inside the
loop: the check computes it again after the loop for every step at once, as a tensor with a
leading step axis over the clause's steps (the step's tensor work once more, in parallel, only
where a subscript reads such a tensor).

An integer `/` or `%` whose divisor reads run-time data or an index (`a[i] / d[i]`, `10 / i`)
is checked the same way (`kind` "divisor"): the first point where the division happens and its
divisor is 0; its status is [first point, coordinates..]. A divisor of sizes and constants alone
(a comprehension's `k / n`) is left total (0), as is every division under `--unchecked-indices`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

import numpy as np

from einc.diagnostics import Span
from einc.ir import affine
from einc.ir.nodes import (Const, Generic, IndexRef, IndexVar, Input, Op, Piecewise, Program, Read, RecValue, Reduce, Size,
                           Stack, StateRead, Value, free_vars, size_value, walk)
from einc.ir.traversal import fold
from einc.ir.types import BOOL, I32, Lin
from einc.semantics.core.modules import stdlib_dir

NONE_BAD = np.iinfo(np.int32).max     # the status's first point when every index is in range
POINTWISE_CONDS = 8                   # conditions a whole tensor's body is visited under, at most; then whole


@dataclass(eq=False)
class IndexCheck:
    """The check of subscript `axis` of a read (source text `text`, at `span`) of `array` (of
    rank `rank`), over the point variables `vars`; `status` is the i32 vector the runner reads."""
    axis: int
    text: str
    array: str
    rank: int
    span: Optional[Span]
    vars: tuple
    status: Stack
    kind: str = "index"           # "divisor": a division by zero (`axis` unused, `text` the division)


def add_index_checks(program: Program, source_text) -> None:
    """Fill `program.index_checks`; `source_text(span)` gives the text of a read."""
    finder = _Finder()
    for root in program.roots():
        finder.visit(root, (), None)
    groups = {id(member): group for group in program.recurrences for member in group.members}
    checks = []
    # copies of one read check once, where any of the conditions it happens under holds
    for (read, axis, variables), cond in _merged(finder.found, _subscript_key):
        if any(var in finder.nested for var in variables):
            continue          # inside a loop nested in another's step: clamped (docs/DECISIONS.md)
        if not _known_in_range(read.subs[axis], _shape(read)[axis]):
            steps = {finder.steps[var]: IndexRef(var) for var in variables if var in finder.steps}
            checks.append(_check(read, axis, variables, cond, source_text(read.span), groups, steps))
    for (division, variables), cond in _merged(finder.divisions, lambda division, _: (id(division),)):
        if not any(var in finder.nested for var in variables):
            steps = {finder.steps[var]: IndexRef(var) for var in variables if var in finder.steps}
            checks.append(_division_check(division, variables, cond, source_text(division.span), groups, steps))
    library = str(stdlib_dir().resolve())
    program.index_checks = [_at_users_call(c, program.call_chains, library, source_text)
                            for c in checks if c is not None]


def _subscript_key(read, axis: int, _variables) -> tuple:
    return id(read.subs[axis]), repr(_shape(read)[axis])


def _merged(found: list, copies_of) -> list:
    """`found` (entries ending in their loop variables and a condition, None for always) with
    the copies of one access (equal `copies_of` of the entry's other fields, in the same loops)
    made one entry under the `or` of their conditions: a read that a function's body shares
    below a chain of `if`s is reached under one condition per path (a support vector machine's
    pair update had 140 checks of two reads), and each check is a reduction of its own."""
    merged: dict = {}
    for *access, cond in found:
        key = copies_of(*access) + tuple(map(id, access[-1]))
        if key not in merged:
            merged[key] = (tuple(access), cond, {id(cond)})
            continue
        first, before, ids = merged[key]
        if before is not None and id(cond) not in ids:
            ids.add(id(cond))
            merged[key] = (first, None if cond is None else _or(before, cond), ids)
    return [(access, cond) for access, cond, _ in merged.values()]


def _at_users_call(check: IndexCheck, call_chains: dict, library: str, source_text) -> IndexCheck:
    """A check of a read or division in the standard library, reported at the user's call that
    reached it (the innermost call outside the library; the library's line follows its text),
    where every chain of calls into the body holding it agrees on that call."""
    if check.span is None or not str(Path(check.span.file).resolve()).startswith(library):
        return check
    bodies = [body for body in call_chains if check.span.within(body)]
    if not bodies:
        return check
    chains = call_chains[min(bodies, key=lambda s: (s.end_line - s.line, s.end_col - s.col))]
    outside = {next((span for span, _ in chain if not str(Path(span.file).resolve()).startswith(library)), None)
               for chain in chains}
    if len(outside) != 1 or None in outside:
        return check
    (call,) = outside
    text = f"in `{source_text(call)}`, the library's `{check.text}` at {check.span}"
    return replace(check, span=call, text=text)


def _known_in_range(sub: Value, size) -> bool:
    """Whether a subscript that reads a build-time table (`positions[m]`, the kept elements of a
    comprehension filtered during the build) is in range at every point: an empty table is
    never read; otherwise its values lie in [0, size) of a fixed size."""
    if not (isinstance(sub, Read) and isinstance(sub.tensor, Const)):
        return False
    table = sub.tensor.array
    if table.size == 0:
        return True
    return size.is_const and int(table.min()) >= 0 and int(table.max()) < size.const


def is_data_dependent(sub: Value) -> bool:
    """Whether a subscript is not affine and uses run-time data (an array, a scalar input,
    recurrence state): a subscript computed from indices and sizes alone (`(k + 1) % n`) is
    left as it is."""
    return affine.affine_of(sub) is None and any(not isinstance(v, _INDEX_ARITHMETIC) for v in walk([sub]))


_INDEX_ARITHMETIC = (IndexRef, Size, Const, Op)


def is_checked_division(v: Value) -> bool:
    """Whether `v` is an integer `/` or `%` whose divisor may be 0 at run time: it reads data or
    an index (sizes and constants alone are left total, and a constant 0 is E006 at build time)."""
    if not (isinstance(v, Op) and v.op in ("div", "rem") and v.dtype.is_int):
        return False
    return any(not isinstance(node, (Size, Const, Op)) for node in walk([v.args[1]]))


class _Finder:
    """Every read with a data-dependent subscript, with the variables of the loops around it
    (outermost first) and the condition under which it happens (None: always)."""

    def __init__(self) -> None:
        self.found: list = []
        self.divisions: list = []         # (integer division, variables, condition)
        self._seen: set = set()
        self._free: dict = {}
        self._groups: set = set()
        self.steps: dict = {}             # a clause's steps -> its group's step variable
        self.nested: set = set()          # the clause steps of groups run inside another's step
        self._guarded: dict = {}          # memo of _cond_matters
        self._moved: dict = {}            # (id(tensor), id(read), id(cond)) -> (read, cond, cond on the tensor's variables)
        self._conds_of: dict = {}         # id(tensor) -> the ids of the conditions its body was visited under

    def visit(self, root: Value, variables: tuple, cond: Optional[Value]) -> None:
        """Depth first from `root`, without recursion (programs may be thousands of values deep):
        a task is a value to visit with its loop variables and condition, or a note to make once
        the values before it are done."""
        stack = [(root, variables, cond)]
        while stack:
            task = stack.pop()
            if callable(task):
                task()
                continue
            v, variables, cond = task
            if v is None:
                continue
            if v.rank > 0 and not (isinstance(v, Stack) and free_vars(v, self._free)):
                # a whole tensor is computed wherever it is used; one a recurrence step computes
                # (it reads the step) is computed at each of the clause's steps, so those stay (a
                # check keeps only the variables its subscript reads)
                variables, cond = tuple(var for var in variables if var in self.steps), None
            if cond is not None and not self._cond_matters(v):
                cond = None
            key = (id(v), id(cond), tuple(map(id, variables)))
            if key in self._seen:
                continue
            self._seen.add(key)
            rule = _RULES.get(type(v))
            tasks = rule(self, v, variables, cond) if rule is not None else \
                [(operand, variables, cond) for operand in v.operands()]
            stack.extend(reversed(tasks))

    def _cond_matters(self, v: Value) -> bool:
        """Whether the condition a value is visited under can reach a check: some read below it
        in the code that passes the condition on has a data-dependent subscript. Elsewhere the
        visit drops the condition, so that a value the code shares (a derivative's inlined
        stages) is visited once, not once per path of branches leading to it."""
        return fold(v, self._passes_cond_to, self._holds_checked_read, self._guarded)

    def _passes_cond_to(self, v: Value) -> tuple:
        if isinstance(v, Generic):
            # a whole tensor is reached only through a point-by-point read (`_pointwise`); a
            # scalar one (`let b[..lead] = min[k](v[..lead, k])` at rank 0) is computed where it is read
            return tuple(x for x in (v.guard, v.body) if x is not None)
        if isinstance(v, Piecewise):
            return v.operands()
        keeps = v.rank == 0 or (isinstance(v, Stack) and free_vars(v, self._free))
        return v.operands() if keeps and not isinstance(v, (Generic, RecValue)) else ()

    def _holds_checked_read(self, v: Value, below: list) -> bool:
        own = isinstance(v, (Read, StateRead)) and any(is_data_dependent(sub) for sub in v.subs)
        return own or is_checked_division(v) or any(below)

    def generic(self, v: Generic, variables: tuple, cond) -> list:
        # `cond` is None for a whole tensor (visit); a scalar one is read under its reader's
        return [(v.guard, variables + v.vars, cond), (v.body, variables + v.vars, _and(cond, v.guard))]

    def reduce(self, v: Reduce, variables: tuple, cond) -> list:
        inner = variables + tuple(v.vars)
        return [(v.guard, inner, cond), (v.body, inner, _and(cond, v.guard))]

    def op(self, v: Op, variables: tuple, cond) -> list:
        if v.op == "select":
            test, taken, other = v.args
            return [(test, variables, cond), (taken, variables, _and(cond, test)),
                    (other, variables, _and(cond, _not(test)))]
        if v.op in ("and", "or"):
            left, right = v.args
            return [(left, variables, cond), (right, variables, _and(cond, left if v.op == "and" else _not(left)))]
        if is_checked_division(v):
            self.divisions.append((v, variables, cond))
        return [(arg, variables, cond) for arg in v.args]

    def read(self, v: Read | StateRead, variables: tuple, cond) -> list:
        """A read of an array, or of a recurrence member inside its loop."""
        tasks = [(sub, variables, cond) for sub in v.subs]
        if isinstance(v, Read):
            tasks += self._pointwise(v, variables, cond) or [(v.tensor, variables, cond)]
            if v.in_bounds:
                return tasks
        return tasks + [lambda: self._note(v, variables, cond)]

    def _pointwise(self, v: Read, variables: tuple, cond) -> list:
        """The body of a whole tensor read at one point under a condition (`if c { row - x }
        else { .. }` reads the tensor `row - x` at the select's point, `dot(v, v)` reads `v[0]`):
        a point of the tensor is computed for the program only where some read of it happens, so
        its body is visited under the condition moved onto the tensor's own variables. A loop
        variable the read's subscripts take plainly is renamed to the tensor's; any other the
        condition or a subscript names becomes an `any` over a fresh copy of its range, with
        each remaining subscript equal to the tensor's variable (the point is read where the
        condition holds for some of their values). Empty where the read is unconditional, is not
        of a whole tensor at full rank, or names a variable that is not the loop's: the tensor is
        then visited whole. A piecewise tensor's clauses are each read at the point less the
        clause's offsets."""
        tensor = v.tensor
        if cond is not None and isinstance(tensor, Piecewise):
            tasks = []
            for clause in tensor.clauses:
                at = tuple(sub if _is_zero(off) else _sub(sub, size_value(off)) for sub, off in zip(v.subs, clause.offsets))
                point = Read(clause.value, at, span=v.span) if len(at) == len(v.subs) == len(clause.offsets) else None
                tasks += (self._pointwise(point, variables, cond) if point is not None else []) or \
                    [(clause.value, variables, cond)]
            return tasks
        if cond is None or not (isinstance(tensor, Generic) and tensor.rank > 0 and len(v.subs) == len(tensor.vars)):
            return []
        key = (id(tensor), id(v), id(cond))
        if key not in self._moved:
            # a tensor shared under a chain of branches would be visited once per path: past a
            # few conditions it is visited whole (its reads checked wherever it is computed)
            conds = self._conds_of.setdefault(id(tensor), set())
            if id(cond) not in conds and len(conds) >= POINTWISE_CONDS:
                return []
            conds.add(id(cond))
            self._moved[key] = (v, cond, self._moved_cond(v, variables, cond))
        moved = self._moved[key][2]
        if moved is None:
            return []
        inner = tuple(var for var in variables if var in self.steps) + tuple(tensor.vars)
        return [(tensor.guard, inner, moved), (tensor.body, inner, _and(moved, tensor.guard))]

    def _moved_cond(self, v: Read, variables: tuple, cond: Value) -> Optional[Value]:
        """`cond`, under which `v` reads its tensor, as a condition on the tensor's variables
        (None where it names a variable that is not the loop's)."""
        renamed, rest = {}, []
        for sub, own in zip(v.subs, v.tensor.vars):
            if isinstance(sub, IndexRef) and sub.var not in renamed and sub.var in variables:
                renamed[sub.var] = IndexRef(own)
            else:
                rest.append((sub, own))
        # a tensor a step computes is computed per step: the step (the clause's steps or the
        # group's step variable, which a branch's test in the clause names) stays as it is
        steps = {var for var in variables if var in self.steps}
        steps |= {self.steps[var] for var in steps}
        others = (free_vars(cond, self._free).union(*(free_vars(sub, self._free) for sub, _ in rest))
                  - renamed.keys() - steps)
        if not others <= set(variables):
            return None
        fresh = {var: IndexVar(var.name, var.lo, var.extent, span=var.span) for var in others}
        renamed.update((var, IndexRef(copy)) for var, copy in fresh.items())
        renamed = {var: ref for var, ref in renamed.items() if ref.var is not var}
        memo: dict = {}
        moved = _substitute(cond, renamed, memo)
        for sub, own in rest:
            moved = _and(moved, _compare("eq", _substitute(sub, renamed, memo), IndexRef(own)))
        return Reduce("any", tuple(fresh.values()), moved, span=cond.span) if fresh else moved

    def _note(self, v: Read | StateRead, variables: tuple, cond) -> None:
        for axis, sub in enumerate(v.subs):
            if is_data_dependent(sub):
                self.found.append((v, axis, variables, cond))

    def rec_value(self, v: RecValue, variables_around: tuple, _cond) -> list:
        if id(v.group) in self._groups:
            return []
        self._groups.add(id(v.group))
        nested = any(var in self.steps for var in variables_around)
        t_var, tasks = v.group.t_var, []
        for member in v.group.members:
            for clause in member.clauses:
                # the clause's own steps: a check runs over those only (`x[t - 1]` of a clause
                # from step 1 would leave x at step 0)
                steps = IndexVar(t_var.name, clause.t_lo, clause.t_hi - clause.t_lo, span=t_var.span)
                self.steps[steps] = t_var
                if nested:
                    self.nested.add(steps)
                variables = (steps,) + tuple(clause.vars)
                tasks += [(clause.guard, variables, None), (clause.body, variables, clause.guard)]
        return tasks


_RULES = {
    Generic: _Finder.generic,
    Reduce: _Finder.reduce,
    Op: _Finder.op,
    Read: _Finder.read,
    StateRead: _Finder.read,
    RecValue: _Finder.rec_value,
}


def _check(read: Read | StateRead, axis: int, variables: tuple, cond: Optional[Value], text: str,
           groups: dict, steps: dict) -> Optional[IndexCheck]:
    """The check of one subscript, or None where it reads a tensor a step computes inside the
    clauses of two recurrences (no single step axis to compute it over; the front end refuses
    the nested recurrences that would put one there, E011). `groups` maps
    id(member) to its recurrence group, `steps` a group's step variable to the clause's steps
    (inside a recurrence clause)."""
    outside = _Outside(groups, steps)
    sub = outside.value(read.subs[axis], steps)
    cond = outside.value(cond, steps) if cond is not None else None
    if any(_step_tensor(v, groups) for v in (sub, cond) if v is not None):
        return None
    size = size_value(_shape(read)[axis])
    bad = _and(cond, _or(_compare("lt", sub, _i32(0)), _compare("ge", sub, size)))
    used = free_vars(sub) | (free_vars(cond) if cond is not None else frozenset())
    point = tuple(var for var in dict.fromkeys(variables) if var in used)
    first, coords, at_first = _first_point(point, bad, read.span)
    index = _index_at(sub, point, coords, at_first, read.span)
    status = Stack((first, index, size) + coords, span=read.span)
    return IndexCheck(axis, text, _array_name(read), len(_shape(read)), read.span, point, status)


def _division_check(division: Op, variables: tuple, cond: Optional[Value], text: str, groups: dict,
                    steps: dict) -> Optional[IndexCheck]:
    """The check that `division`'s divisor is not 0 where it is computed (as `_check`)."""
    outside = _Outside(groups, steps)
    divisor = outside.value(division.args[1], steps)
    cond = outside.value(cond, steps) if cond is not None else None
    if any(_step_tensor(v, groups) for v in (divisor, cond) if v is not None):
        return None
    zero = Const(np.zeros((), divisor.dtype.numpy))
    bad = _and(cond, _compare("eq", divisor, zero))
    used = free_vars(divisor) | (free_vars(cond) if cond is not None else frozenset())
    point = tuple(var for var in dict.fromkeys(variables) if var in used)
    first, coords, _ = _first_point(point, bad, division.span)
    status = Stack((first,) + coords, span=division.span)
    return IndexCheck(-1, text, "", 0, division.span, point, status, kind="divisor")


def _first_point(point: tuple, bad: Value, span) -> tuple:
    """The row-major position of the first point over the variables `point` where `bad` holds
    (NONE_BAD where none does), and that point's coordinates."""
    if not point:
        return Op("select", (bad, _i32(0), _i32(NONE_BAD)), I32, span=span), (), None
    extents = [_at_least_one(size_value(var.extent)) for var in point]
    strides = _strides(extents)
    linear = _sum([_mul(_sub(IndexRef(var), size_value(var.lo)), stride) for var, stride in zip(point, strides)])
    first = Reduce("min", point, linear, guard=bad, span=span)
    coords = tuple(_add(size_value(var.lo), _rem(_div(first, stride), extent))
                   for var, stride, extent in zip(point, strides, extents))
    return first, coords, _and(bad, _compare("eq", linear, first))


def _index_at(sub: Value, point: tuple, coords: tuple, at_first: Optional[Value], span) -> Value:
    """The subscript's value at the first bad point: a reduction over the point's own range
    guarded to that point, so that it reads its data only inside the axes the read covers (an
    empty one, zero tokens, is never read); a subscript of no point variable is computed once."""
    if at_first is None:
        return _substitute(sub, dict(zip(point, coords)), {})
    return Reduce("max", point, sub, guard=at_first, span=span)


class _Outside:
    """A check's subscript or condition as computed after the recurrence loops: state read from
    the members' tensors, and a tensor a step computes (it reads state or the step) read from
    that tensor computed for every step of the clause (`_batch`). `steps` maps a group's step
    variable to the clause's steps; a step tensor is lifted only under a single clause."""

    def __init__(self, groups: dict, steps: dict):
        self.groups = groups
        self.steps = steps
        self.memo: dict = {}              # (id(value), id(step values)) -> the value outside
        self.contexts = [steps]           # the step values memo keys name, kept alive
        self.in_step: dict = {}
        self.batched: dict = {}

    def value(self, v: Value, at: dict) -> Value:
        """`v` (a scalar) with each group's step variable at its value in `at`."""
        key = (id(v), id(at))
        if key in self.memo:
            return self.memo[key]
        if isinstance(v, IndexRef) and v.var in at:
            out = at[v.var]
        elif isinstance(v, StateRead):
            out = Read(RecValue(self.groups[id(v.member)], v.member, span=v.span),
                       tuple(self.value(s, at) for s in v.subs), span=v.span)
        elif isinstance(v, Read) and self._lifted(v.tensor):
            out = Read(self._batch(v.tensor), (self._position(v.tensor, at),) +
                       tuple(self.value(s, at) for s in v.subs), span=v.span)
        elif isinstance(v, Generic) and v.rank == 0 and self._lifted(v):
            out = Read(self._batch(v), (self._position(v, at),), span=v.span)
        elif isinstance(v, Generic) or (v.rank > 0 and not isinstance(v, Stack)):
            out = v                       # a tensor computed before the loops (or left unchecked)
        else:
            out = _rebuilt(v, [self.value(o, at) for o in v.operands()])
        self.memo[key] = out
        return out

    def _lifted(self, tensor: Value) -> bool:
        return len(self.steps) == 1 and isinstance(tensor, Generic) and self._reads_step(tensor)

    def _position(self, tensor: Generic, at: dict) -> Value:
        """The row of the batched `tensor` at the step's value in `at`."""
        (t_var,) = self.steps
        return _sub(at[t_var], size_value(self.batched[id(tensor)].vars[0].lo))

    def _batch(self, tensor: Generic) -> Generic:
        """`tensor` at every step of the clause: a leading axis over a fresh copy of its steps."""
        if id(tensor) not in self.batched:
            ((t_var, steps),) = self.steps.items()
            s = IndexVar(steps.var.name, steps.var.lo, steps.var.extent, span=steps.var.span)
            at = {t_var: IndexRef(s)}
            self.contexts.append(at)
            guard = self.value(tensor.guard, at) if tensor.guard is not None else None
            self.batched[id(tensor)] = Generic((s,) + tuple(tensor.vars), self.value(tensor.body, at), guard,
                                               span=tensor.span)
        return self.batched[id(tensor)]

    def _reads_step(self, tensor: Value) -> bool:
        """Whether `tensor` reads recurrence state or the step (it is computed in a step)."""
        (t_var,) = self.steps
        if id(tensor) not in self.in_step:
            self.in_step[id(tensor)] = _reads(tensor, lambda n: isinstance(n, StateRead) or
                                              (isinstance(n, IndexRef) and n.var is t_var))
        return self.in_step[id(tensor)]


def _is_zero(offset) -> bool:
    """Whether a clause's offset along an axis (a Lin, or an int) is 0."""
    return offset.is_const and offset.const == 0 if isinstance(offset, Lin) else offset == 0


def _substitute(v: Value, coords: dict, memo: dict) -> Value:
    """`v` at the point `coords` (index variable -> scalar value)."""
    if id(v) in memo:
        return memo[id(v)]
    if isinstance(v, IndexRef):
        out = coords.get(v.var, v)
    elif not (free_vars(v) & coords.keys()) or (v.rank > 0 and not isinstance(v, Stack)):
        out = v
    else:
        out = _rebuilt(v, [_substitute(o, coords, memo) for o in v.operands()])
    memo[id(v)] = out
    return out


def _rebuilt(v: Value, operands: list) -> Value:
    """A copy of scalar node `v` over new operands (the same ones: `v` itself)."""
    if all(a is b for a, b in zip(operands, v.operands())):
        return v
    if isinstance(v, Op):
        return replace(v, args=tuple(operands))
    if isinstance(v, Read):
        return replace(v, tensor=operands[0], subs=tuple(operands[1:]), in_bounds=False, strict=False,
                       extreme_points=())
    if isinstance(v, Reduce):
        return replace(v, body=operands[0], guard=operands[1] if len(operands) > 1 else None)
    if isinstance(v, Stack):
        return replace(v, elems=tuple(operands))
    if isinstance(v, StateRead):
        return replace(v, subs=tuple(operands))
    raise TypeError(f"no rule to rebuild a {type(v).__name__} in an index check")


def _step_tensor(v: Value, groups: dict) -> bool:
    """Whether `v` reads a tensor computed from recurrence state inside a loop: a step's own
    tensor, or a loop run inside another's step (an inner loop's result under an adjoint's
    select): neither exists after the loops."""
    return _reads(v, lambda node: isinstance(node, StateRead) or
                  (isinstance(node, RecValue) and _runs_in_step(node.group, groups)))


def _runs_in_step(group, groups: dict) -> bool:
    """Whether a group's clauses read another group's state or step (it runs inside that
    loop's steps; passes/step_work.py nests it)."""
    others = {id(g.t_var) for g in groups.values() if g is not group}
    reads_other = lambda n: (isinstance(n, StateRead) and n.member not in group.members) or (
        isinstance(n, IndexRef) and id(n.var) in others)
    return any(_reads(part, reads_other) for member in group.members for clause in member.clauses
               for part in (clause.body, clause.guard) if part is not None)


def _reads(v: Value, found) -> bool:
    """Whether `found` holds for `v` or a value it reads, short of the tensors a loop leaves."""
    stack, seen = [v], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if found(node):
            return True
        if not isinstance(node, (RecValue, Input, Const)):
            stack.extend(node.operands())
    return False


def _shape(read: Read | StateRead) -> tuple:
    return read.member.shape if isinstance(read, StateRead) else read.tensor.shape


def _array_name(read: Read | StateRead) -> str:
    """The name of the array read, where it has one ("" for an intermediate array)."""
    array = read if isinstance(read, StateRead) else read.tensor
    if isinstance(array, Input):
        return array.name
    if isinstance(array, (RecValue, StateRead)):
        return array.member.name
    return ""


def _i32(n: int) -> Const:
    return Const(np.asarray(n, dtype=np.int32))


def _compare(op: str, a: Value, b: Value) -> Op:
    return Op(op, (a, b), BOOL)


def _and(a: Optional[Value], b: Optional[Value]) -> Optional[Value]:
    if a is None or b is None:
        return b if a is None else a
    return Op("and", (a, b), BOOL)


def _or(a: Value, b: Value) -> Op:
    return Op("or", (a, b), BOOL)


def _not(a: Value) -> Op:
    return Op("not", (a,), BOOL)


def _add(a: Value, b: Value) -> Op:
    return Op("add", (a, b), I32)


def _sub(a: Value, b: Value) -> Op:
    return Op("sub", (a, b), I32)


def _mul(a: Value, b: Value) -> Op:
    return Op("mul", (a, b), I32)


def _div(a: Value, b: Value) -> Op:
    return Op("div", (a, b), I32)


def _rem(a: Value, b: Value) -> Op:
    return Op("rem", (a, b), I32)


def _at_least_one(extent: Value) -> Value:
    """An extent as a divisor: an empty range has no bad point, and its coordinate is unused."""
    return Op("max", (extent, _i32(1)), I32)


def _strides(extents: list) -> list:
    """Row-major strides of a point over `extents` (the last variable varies fastest)."""
    strides, stride = [], _i32(1)
    for extent in reversed(extents):
        strides.append(stride)
        stride = _mul(stride, extent)
    return strides[::-1]


def _sum(terms: list) -> Value:
    total = terms[0]
    for term in terms[1:]:
        total = _add(total, term)
    return total
