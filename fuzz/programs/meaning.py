"""What a generated program means, computed with NumPy from the generator's structure.

Every value is evaluated twice at once (`Pair`): in the program's own types (f32 arithmetic
for f32, as LANGUAGE.md requires) and in a wider type (f32 in f64, f64 in long double). The
distance between the two estimates how much rounding the computation amplifies; the
comparison's tolerance uses it (fuzz.programs.compare), and a decision (a comparison, a cast to
an integer, a floor) whose two evaluations could go different ways is `Fragile`: the inputs are
redrawn. A program that reads out of bounds, divides an integer by zero, overflows, leaves a
function's domain or produces a non-finite or subnormal value at a point that matters is
`Invalid` for those inputs; the generator only keeps valid programs.

Definitions are evaluated over a grid of their indices, vectorized; a reduction adds axes. Only
points that matter (`active`) are checked: the untaken branch of an `if`, a point filtered by a
guard, or a reduction index outside its range for this outer point is computed but ignored.
Recurrences are evaluated step by step along their first axis, members in their order.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from fuzz.programs.structure import (
    FLOATS, UNSIGNED, Binary, Block, Bound, Call, Cast, Define, Derivative, DimRef, Function, Group, IfElse,
    Index, Lit, Local, Match, Pattern, Prelude, Prev, PrevRow, Program, Read, Recur, Reduce, RestRead, RowMap, RowMatch,
    StepTensor, Unary, Var, Whole, PARAM, ROW, SCALES)

# f16 and bf16 as NumPy float16 and ml_dtypes bfloat16: their ufuncs compute each operation in
# f32 and round once, as einc does (docs/DECISIONS.md, Half precision)
NARROW = {"i8": np.int8, "i16": np.int16, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
# i32 and i64 are computed in int64 and kept in i32's range (INT_LIMIT); the narrow integer
# types in their own NumPy types, wrapping as einc's do: exact, so wide is the same value
EXACT = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
         "i32": np.int64, "i64": np.int64, "bool": np.bool_, **NARROW}
WIDE = {"f32": np.float64, "f64": np.longdouble, "f16": np.float64, "bf16": np.float64,
        "i32": np.int64, "i64": np.int64, "bool": np.bool_, **NARROW}
OUTPUT_TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
                "i32": np.int32, "i64": np.int64, "bool": np.bool_, **NARROW}    # what einc reads and writes
INT_LIMIT = 2 ** 31 - 1              # i32 and i64 values are kept in i32's range
FLOAT_LIMIT = {"f32": 1e6, "f64": 1e12, "f16": 1e3, "bf16": 1e4}
# below this a nonzero value is (nearly) subnormal: IREE flushes f32's; f16's smallest normal is 6.1e-5
TINY = {"f32": 1e-30, "f64": 1e-30, "f16": 6.2e-5, "bf16": 1e-30}
DECISION_RTOL = {"f32": 1e-5, "f64": 1e-12, "f16": 2e-3, "bf16": 1.6e-2}
FD_STEP = 1e-6


class Invalid(Exception):
    """The program is not valid for these inputs (or these sizes)."""


class Fragile(Exception):
    """A decision is too close to call: rounding could take it either way."""


@dataclass
class Pair:
    ex: np.ndarray                   # in the program's own type
    wd: np.ndarray                   # in the wider type
    dtype: str
    # a derivative's only: how far the program's own precision moves the value it is of
    # (largest |ex - wd| over max(1, largest |wd|)); the program differentiates its own values
    drift: float = 0.0

    def map(self, fn, dtype: str | None = None) -> "Pair":
        return Pair(fn(self.ex), fn(self.wd), dtype or self.dtype)


def typed(value, dtype: str) -> Pair:
    return Pair(np.asarray(value, EXACT[dtype]), np.asarray(value, EXACT[dtype]).astype(WIDE[dtype]),
                dtype)


@dataclass(frozen=True)
class Grid:
    env: dict                        # index variables and local names -> Pair
    ndim: int
    active: np.ndarray               # bool, broadcastable to the grid


def evaluate(program: Program, inputs: dict, perturb: tuple | None = None, stop: str | None = None,
             strays: list | None = None, flip: bool = False) -> dict:
    """Name -> Pair for every binding (inputs included), in the order of the program.

    `perturb` = (name, flat position, step) adds `step` to the wide value of that binding as soon
    as it is computed (finite differences); `stop` ends after that binding. A data-dependent
    subscript (`t[idx[i]]`) outside its axis where the read happens is Invalid, or with `strays`
    a run-time error einc must report: each (index, axis size) is appended there, and the read
    goes on clamped, as einc's module would have until its check (or with `flip` clamped to the
    other end: whether the outputs differ tells whether the read matters to them)."""
    with np.errstate(all="ignore"):
        return Evaluator(program, inputs, perturb, strays, flip).run(stop)


class Evaluator:
    def __init__(self, program: Program, inputs: dict, perturb: tuple | None, strays: list | None = None,
                 flip: bool = False):
        self.program = program
        self.strays, self.flip = strays, flip
        self.dims = program.dim_values()
        self.functions = program.functions()
        self.inputs = inputs
        self.perturb = perturb
        self.values: dict[str, Pair] = {}
        self.rows_done: dict[str, np.ndarray] = {}    # recurrence members: rows already final
        self.derivatives = any(isinstance(item, Derivative) for item in program.items)

    def run(self, stop: str | None) -> dict:
        for inp in self.program.inputs:
            self._store(inp.name, typed(self.inputs[inp.name], inp.dtype))
        for item in self.program.items:
            if isinstance(item, Function):
                continue
            for name in self._item(item):
                if name == stop:
                    return self.values
        return self.values

    def _store(self, name: str, value: Pair) -> None:
        if self.perturb is not None and self.perturb[0] == name:
            _, position, step = self.perturb
            wd = value.wd.copy()
            wd.reshape(-1)[position] += step
            value = Pair(value.ex, wd, value.dtype)
        self.values[name] = value

    def _item(self, item) -> list[str]:
        if isinstance(item, Define):
            self._store(item.name, self._define(item))
            return [item.name]
        if isinstance(item, Group):
            self._group(item)
            return [m.name for m in item.members]
        if isinstance(item, Whole):
            self._store(item.name, self._whole(item))
            return [item.name]
        if isinstance(item, RowMap):
            self._store(item.name, self._row_map(item))
            return [item.name]
        if isinstance(item, Derivative):
            value = derivative(self.program, self.inputs, item)
            if item.per_point == "sum":     # each row's gradient, summed over the rows
                wide = value.wd.sum(0)
                value = Pair(wide.astype(EXACT[item.dtype]), wide, item.dtype, value.drift)
            if item.padded:         # one 0 more along the last axis
                pad = [(0, 0)] * (value.ex.ndim - 1) + [(0, 1)]
                value = Pair(np.pad(value.ex, pad), np.pad(value.wd, pad), value.dtype, value.drift)
            self._store(item.name, value)
            return [item.name]
        raise TypeError(f"not a statement: {item!r}")

    # ------------------------------------------------------------ statements

    def bound(self, b: Bound, env: dict | None = None) -> np.ndarray:
        value = np.asarray(b.const + (self.dims[b.dim] if b.dim else 0), np.int64)
        if b.index is not None:
            value = value + env[b.index].ex
        if b.data is not None:      # a subscript outside the input is at a point that does not matter
            data = self.values[b.data[0]].ex
            value = value + data[np.clip(self.bound(b.data[1], env), 0, len(data) - 1)].astype(np.int64)
        for op, other in b.clamp:
            value = (np.maximum if op == "max" else np.minimum)(value, self.bound(other, env))
        return value

    def shape_of(self, define: Define) -> tuple:
        rank = len(define.clauses[0].slots)
        return tuple(max(int(self.bound(c.slots[a].hi, self._at_step(c, None))) for c in define.clauses)
                     for a in range(rank))

    def _at_step(self, clause, row: int | None) -> dict:
        """The first index's value for ends that name it (a triangular state's `j in 0..t + 1`):
        `row`, or with None its last value, where such a growing end is largest."""
        first = clause.slots[0] if clause.slots else None
        if first is None or first.var is None:
            return {}
        value = int(self.bound(first.hi)) - 1 if row is None else row
        return {first.var: typed(np.asarray(value), "i32")}

    def _define(self, define: Define) -> Pair:
        out = _zeros(self.shape_of(define), define.dtype)
        for clause in define.clauses:
            self._write_clause(out, define.dtype, clause, None, splits_by_guards(define))
        return out

    def _write_clause(self, out: Pair, dtype: str, clause, row: int | None, split: bool = False) -> bool:
        """Evaluate `clause` (at `row` of the first axis only, for a recurrence step) into `out`:
        0 where its guard fails, or, for clauses that split a definition by their guards
        (LANGUAGE.md section 10), nothing there. Whether it wrote (a step clause may not run at `row`)."""
        env, target, axes = {}, [], []
        step = self._at_step(clause, row) if row is not None else {}
        for k, slot in enumerate(clause.slots):
            lo, hi = int(self.bound(slot.lo, step)), int(self.bound(slot.hi, step))
            if k == 0 and row is not None:
                if not lo <= row < hi:
                    return False
                lo, hi = row, row + 1
            if slot.var is None:
                target.append(lo)
                continue
            target.append(slice(lo, hi))
            axes.append((slot.var, np.arange(lo, hi)))
        shape = tuple(len(values) for _, values in axes)
        for a, (var, values) in enumerate(axes):
            env[var] = typed(values.reshape([-1 if b == a else 1 for b in range(len(axes))]), "i32")
        grid = Grid(env, len(axes), np.ones(shape, bool))
        for where in clause.wheres:
            value = self.eval(where.expr, grid)
            if where.name is not None:
                grid = Grid({**grid.env, where.name: value}, grid.ndim, grid.active)
            else:
                _decided(value, grid.active)
                grid = Grid(grid.env, grid.ndim, grid.active & value.ex)
        value = _convert(self.eval(clause.body, grid), dtype, grid.active)
        for part, fill in ((out.ex, value.ex), (out.wd, value.wd)):
            filled = np.broadcast_to(fill, shape)
            rest = part[tuple(target)] if split else 0
            part[tuple(target)] = np.where(np.broadcast_to(grid.active, shape), filled, rest)
        return True

    def _group(self, group: Group) -> None:
        members = {m.name: m for m in group.members}
        outs = {name: _zeros(self.shape_of(m), m.dtype) for name, m in members.items()}
        steps = max(out.ex.shape[0] for out in outs.values())
        for name, out in outs.items():
            self.values[name] = out
            self.rows_done[name] = np.zeros(out.ex.shape[0], bool)
        for row in range(steps):
            for name in group.order:
                member = members[name]
                if row < outs[name].ex.shape[0]:
                    for clause in member.clauses:
                        # a clause after the first one writing the row may read it (an edge)
                        self.rows_done[name][row] |= self._write_clause(outs[name], member.dtype, clause, row,
                                                                        splits_by_guards(member))
                    self.rows_done[name][row] = True
        for name in group.order:
            del self.rows_done[name]
            self._store(name, outs[name])

    def _whole(self, whole: Whole) -> Pair:
        shape = tuple(int(self.bound(b)) for b in whole.shape)
        grid = Grid({}, len(shape), np.ones(shape, bool))
        value = self.eval(whole.expr, grid)
        return value.map(lambda part: np.broadcast_to(part, shape).copy())

    def _row_map(self, item: RowMap) -> Pair:
        """The row's elementwise work over every row at once (it is elementwise), then each
        row's reduction."""
        shape = tuple(int(self.bound(b)) for b in item.shape)
        grid = Grid({}, 2, np.ones(shape, bool))
        self.values[ROW] = self.values[item.source]
        if item.param:
            self.values[PARAM] = self.values[item.param]
        try:
            value = self.eval(item.expr, grid).map(lambda part: np.broadcast_to(part, shape))
        finally:
            del self.values[ROW]
            self.values.pop(PARAM, None)
        rows = Pair(*(_reduce_part(item.op, part, grid.active, (1,), types[item.dtype])
                      for part, types in ((value.ex, EXACT), (value.wd, WIDE))), item.dtype)
        if item.through:                # the picked rows, 0 where the pick is -1
            picks = self.values[item.through].ex
            return rows.map(lambda part: np.where(picks >= 0, part[np.maximum(picks, 0)], 0).astype(part.dtype))
        return rows

    # ------------------------------------------------------------ expressions

    def eval(self, node, grid: Grid) -> Pair:
        rule = getattr(self, "_" + type(node).__name__.lower())
        value = rule(node, grid)
        _check(value, grid.active)
        return value

    def _lit(self, node: Lit, grid: Grid) -> Pair:
        return typed(node.value, node.dtype)

    def _index(self, node: Index, grid: Grid) -> Pair:
        return grid.env[node.name]

    def _var(self, node: Var, grid: Grid) -> Pair:
        return grid.env[node.name]

    def _dimref(self, node: DimRef, grid: Grid) -> Pair:
        return typed(self.dims[node.name], "i32")

    def _read(self, node: Read, grid: Grid) -> Pair:
        tensor = self.values[node.name]
        if not node.subs:
            return tensor
        subs = [self.eval(s, grid) for s in node.subs]
        ex_subs = list(np.broadcast_arrays(*[s.ex for s in subs], grid.active))
        active = ex_subs.pop()
        wd_subs = np.broadcast_arrays(*[s.wd for s in subs])
        if any(np.any(active & (e != w)) for e, w in zip(ex_subs, wd_subs)):
            raise Fragile(f"a subscript of {node.name} depends on rounding")
        for axis, (sub, size) in enumerate(zip(ex_subs, tensor.ex.shape)):
            outside = active & ((sub < 0) | (sub >= size))
            if not np.any(outside):
                continue
            if self.strays is None or not isinstance(node.subs[axis], Read):
                raise Invalid(f"{node.name} read out of bounds on axis {axis}")
            self.strays.extend((int(v), int(size)) for v in np.unique(sub[outside]))
            if self.flip:
                ex_subs[axis] = np.where(sub < 0, size - 1, np.where(sub >= size, 0, sub))
        if node.name in self.rows_done and np.any(active & ~self.rows_done[node.name][np.clip(ex_subs[0], 0, len(self.rows_done[node.name]) - 1)]):
            raise AssertionError(f"generator bug: {node.name} read at a step not computed yet")
        where = tuple(np.clip(s, 0, size - 1) for s, size in zip(ex_subs, tensor.ex.shape))
        return Pair(tensor.ex[where], tensor.wd[where], tensor.dtype)

    def _unary(self, node: Unary, grid: Grid) -> Pair:
        value = self.eval(node.arg, grid)
        return value.map(np.logical_not if node.op == "!" else np.negative)

    def _binary(self, node: Binary, grid: Grid) -> Pair:
        if node.op in ("&&", "||"):
            # the right side counts only where the left lets it run (its reads are checked there)
            left = self.eval(node.left, grid)
            runs = left.ex if node.op == "&&" else ~left.ex
            right = self.eval(node.right, Grid(grid.env, grid.ndim, grid.active & runs))
            fn = np.logical_and if node.op == "&&" else np.logical_or
            return Pair(fn(left.ex, right.ex), fn(left.wd, right.wd), "bool")
        left, right = self.eval(node.left, grid), self.eval(node.right, grid)
        if node.op in COMPARISONS:
            if left.dtype in FLOATS:
                _tie(left, right, grid.active)
            fn = COMPARISONS[node.op]
            return Pair(fn(left.ex, right.ex), fn(left.wd, right.wd), "bool")
        return arithmetic(node.op, left, right, grid.active)

    def _ifelse(self, node: IfElse, grid: Grid) -> Pair:
        cond = self.eval(node.cond, grid)
        _decided(cond, grid.active)
        then = self.eval(node.then, Grid(grid.env, grid.ndim, grid.active & cond.ex))
        other = self.eval(node.other, Grid(grid.env, grid.ndim, grid.active & ~cond.ex))
        return Pair(np.where(cond.ex, then.ex, other.ex), np.where(cond.wd, then.wd, other.wd),
                    node.dtype)

    def _call(self, node: Call, grid: Grid) -> Pair:
        args = [self.eval(a, grid) for a in node.args]
        if node.fn in self.functions:
            fn = self.functions[node.fn]
            env = {p: _convert(a, t, grid.active) for (p, t), a in zip(fn.params, args)}
            return _convert(self.eval(fn.body, Grid(env, grid.ndim, grid.active)), fn.dtype, grid.active)
        return math_call(node.fn, args, grid.active)

    def _cast(self, node: Cast, grid: Grid) -> Pair:
        return _convert(self.eval(node.arg, grid), node.dtype, grid.active)

    def _block(self, node: Block, grid: Grid) -> Pair:
        for name, expr in node.lets:
            grid = Grid({**grid.env, name: self.eval(expr, grid)}, grid.ndim, grid.active)
        return self.eval(node.result, grid)

    def _match(self, node: Match, grid: Grid) -> Pair:
        """The first arm whose pattern (and guard) holds, point by point."""
        scrutinee = self.eval(node.scrutinee, grid)
        if np.any(grid.active & (scrutinee.ex != scrutinee.wd)):
            raise Fragile("a match's integer depends on rounding")
        left = np.broadcast_to(grid.active, np.broadcast(grid.active, scrutinee.ex).shape)
        chosen = []
        for arm in node.arms:
            taken = left & _pattern_holds(arm.pattern, scrutinee.ex)
            env = {**grid.env, arm.pattern.bind: scrutinee} if arm.pattern.bind else grid.env
            if arm.guard is not None:
                guard = self.eval(arm.guard, Grid(env, grid.ndim, taken))
                _decided(guard, taken)
                taken = taken & guard.ex
            chosen.append((taken, self.eval(arm.body, Grid(env, grid.ndim, taken))))
            left = left & ~taken
        if np.any(left):
            raise AssertionError("generator bug: a match leaves values uncovered")
        ex, wd = chosen[-1][1].ex, chosen[-1][1].wd
        for taken, value in reversed(chosen[:-1]):
            ex, wd = np.where(taken, value.ex, ex), np.where(taken, value.wd, wd)
        return Pair(ex, wd, node.dtype)

    def _rowmatch(self, node: RowMatch, grid: Grid) -> Pair:
        """The row's elements, each read as `x[s, j]`, bound by position."""
        row = [self.eval(Read(node.row.name, node.row.subs + (Lit(j, "i32"),), node.row.dtype), grid)
               for j in range(node.length)]
        env = dict(zip(node.before, row))
        env.update(zip(node.after, row[node.length - len(node.after):]))
        env.pop(None, None)
        if node.rest:
            env[node.rest] = tuple(row[len(node.before):node.length - len(node.after)])
        return self.eval(node.body, Grid({**grid.env, **env}, grid.ndim, grid.active))

    def _restread(self, node: RestRead, grid: Grid) -> Pair:
        return grid.env[node.rest][node.offset]

    def _recur(self, node: Recur, grid: Grid) -> Pair:
        """The loop, point by point of the grid: each step sees the state of the step before (a
        row's lanes along a new leading axis, as a step tensor's)."""
        if node.lanes:
            grid = _with_lanes(grid, node.lane, node.lanes)
        state = _convert(self.eval(node.init, grid), node.dtype, grid.active)
        for k in range(1, node.steps):
            held = _full(state, grid) if node.lanes else state
            inner = Grid({**grid.env, node.name: held, node.var: typed(k, "i32")}, grid.ndim, grid.active)
            state = _convert(self.eval(node.step, inner), node.dtype, grid.active)
        return state.map(lambda part: _full_part(part, grid)[node.pick]) if node.lanes else state

    def _steptensor(self, node: StepTensor, grid: Grid) -> Pair:
        """The vector over a new leading axis (as a reduction's index), at every point of the grid."""
        inner = _with_lanes(grid, node.var, node.size)
        body = _convert(self.eval(node.body, inner), node.dtype, inner.active)
        return self.eval(node.result, Grid({**grid.env, node.name: _full(body, inner)}, grid.ndim, grid.active))

    def _local(self, node: Local, grid: Grid) -> Pair:
        """Element `sub` of the vector at each point (its leading axis picked point by point)."""
        vector = grid.env[node.name]
        sub = self.eval(node.sub, grid)
        if np.any(grid.active & (sub.ex != sub.wd)):
            raise Fragile(f"a subscript of {node.name} depends on rounding")

        def pick(part):
            moved = np.moveaxis(part, 0, -1)
            shape = np.broadcast_shapes(np.shape(sub.ex), moved.shape[:-1])
            at = np.broadcast_to(np.clip(sub.ex, 0, part.shape[0] - 1), shape)[..., None]
            return np.take_along_axis(np.broadcast_to(moved, shape + moved.shape[-1:]), at, -1)[..., 0]
        return Pair(pick(vector.ex), pick(vector.wd), node.dtype)

    def _prelude(self, node: Prelude, grid: Grid) -> Pair:
        """Every element of the array (or of a member's row `t - back` in its step) reduced,
        whatever the grid: a scalar."""
        value = self.values[node.name]
        if node.back or node.by_step:       # a row: at `t - back`, or the step's own (`current`)
            t = int(np.ravel(grid.env["t"].ex)[0])
            value = value.map(lambda part: part[t - node.back])
            if node.by_step:
                value = value.map(lambda part: part * np.asarray(t, part.dtype))
        axes = tuple(range(value.ex.ndim))
        return Pair(*(_reduce_part(node.op, part, True, axes, types[node.dtype])
                      for part, types in ((value.ex, EXACT), (value.wd, WIDE))), node.dtype)

    def _prev(self, node: Prev, grid: Grid) -> Pair:
        if node.lane is None:
            return grid.env[node.name]
        return self._local(Local(node.name, node.lane, node.dtype), grid)

    def _prevrow(self, node: PrevRow, grid: Grid) -> Pair:
        """The row's lanes (the leading axis of the state) reduced, at every point of the grid."""
        row = grid.env[node.name]
        return Pair(*(_reduce_part(node.op, part, True, (0,), types[node.dtype])
                      for part, types in ((row.ex, EXACT), (row.wd, WIDE))), node.dtype)

    def _reduce(self, node: Reduce, grid: Grid) -> Pair:
        """Each reduction index is a new leading axis, so outer values broadcast against it."""
        env, active = dict(grid.env), grid.active
        for r in node.ranges:
            lo, hi = self.bound(r.lo, env), self.bound(r.hi, env)
            if r.within is not None:
                lo, hi = self._within(r, lo, hi, active)
            low, high = _span(lo, hi, active)
            ndim = np.ndim(active)
            values = np.arange(low, high).reshape((-1,) + (1,) * ndim)
            active = active[None] & (values >= lo[None]) & (values < hi[None])
            env = {**env, r.var: typed(values, "i32")}
        axes = tuple(reversed(range(len(node.ranges))))     # the first range outermost, as einc loops
        inner = Grid(env, grid.ndim + len(axes), active)
        if node.guard is not None:
            guard = self.eval(node.guard, inner)
            _decided(guard, inner.active)
            inner = Grid(env, inner.ndim, inner.active & guard.ex)
        if node.op in ("max", "min") and np.any(~np.any(inner.active, axis=axes) & grid.active):
            raise Invalid(f"{node.op} over an empty range")
        body = self.eval(node.body, inner)
        if node.op in ("max", "min") and self.derivatives and node.dtype in FLOATS:
            _near_ties(node.op, body, inner.active, axes)
        return Pair(*(_reduce_part(node.op, part, inner.active, axes, types[node.dtype])
                      for part, types in ((body.ex, EXACT), (body.wd, WIDE))), node.dtype)

    def _within(self, r, lo, hi, active) -> tuple:
        """A range with an end read from data must lie inside the axis the body's reads give its
        index, or be empty: einc's run fails past it. With `strays` that is recorded as the error
        expected, ("range", index), and the range goes on cut to the axis (with `flip`, empty)."""
        size = self.bound(r.within)
        past = active & (lo < hi) & ((lo < 0) | (hi > size))
        if not np.any(past):
            return lo, hi
        if self.strays is None:
            raise Invalid(f"the range of {r.var} runs past its axis")
        self.strays.append(("range", r.var))
        lo, hi = np.clip(lo, 0, size), np.clip(hi, 0, size)
        return (lo, lo) if self.flip else (lo, hi)


def _pattern_holds(p: Pattern, values) -> np.ndarray:
    if p.kind == "wild":
        return np.ones(np.shape(values), bool)
    if p.kind == "range":
        lo, hi, inclusive = p.values
        holds = np.ones(np.shape(values), bool) if lo is None else values >= lo
        if hi is not None:
            holds = holds & ((values <= hi) if inclusive else (values < hi))
        return holds
    return np.isin(values, p.values)


COMPARISONS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
               "==": np.equal, "!=": np.not_equal}
IDENTITIES = {"sum": 0, "prod": 1, "max": -np.inf, "min": np.inf, "all": True, "any": False}
REDUCERS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "all": np.all, "any": np.any}


def splits_by_guards(define: Define) -> bool:
    """Whether the clauses of `define` split its points by their guards (several clauses, one
    with a guard): the generator makes such guards cover each point once."""
    return len(define.clauses) > 1 and any(w.name is None for c in define.clauses for w in c.wheres)


def _reduce_part(op: str, part, active, axes: tuple, dtype) -> np.ndarray:
    full = np.broadcast_to(part, np.broadcast_shapes(np.shape(part), np.shape(active)))
    mask = np.broadcast_to(active, full.shape)
    identity = IDENTITIES[op]
    if op in ("max", "min") and not np.issubdtype(dtype, np.floating):
        # i32 and i64 are kept in i32's range (bf16, no NumPy float, takes i32's too)
        limits = np.iinfo(dtype if np.issubdtype(dtype, np.integer) and dtype != np.int64 else np.int32)
        identity = limits.min if op == "max" else limits.max
    identity = np.asarray(identity).astype(dtype)
    filled = np.where(mask, full, identity)
    if op in ("sum", "prod") and dtype in ACCUMULATED:
        return _accumulated(op, filled, axes, identity)
    extra = {"initial": identity} if op in ("max", "min") else {}    # an untaken branch may be empty
    return np.asarray(REDUCERS[op](filled, axis=axes, **extra), dtype)


HALVES = (np.float16, ml_dtypes.bfloat16)
# f32 too: NumPy's pairwise sum of f32 is far more exact than einc's loops, so `exact - wide`
# allowed nothing for a long sum with cancellation (seed 505: 512 terms, 9e-4 off 11.94)
ACCUMULATED = HALVES + (np.float32,)


def _accumulated(op: str, values: np.ndarray, axes: tuple, identity) -> np.ndarray:
    """A sum or product in a half type or f32 as einc computes it: term by term in row-major
    order of the reduced axes, rounded to f32 after each, a half type's total rounded to it
    once at the end (as NumPy reduces float16; NumPy sums f32 pairwise)."""
    terms = np.moveaxis(values, axes, tuple(range(len(axes))))
    count = math.prod(terms.shape[:len(axes)])          # 0 for an empty range
    terms = terms.reshape((count,) + terms.shape[len(axes):]).astype(np.float32)
    total = np.full(terms.shape[1:], identity, np.float32)
    step = np.add if op == "sum" else np.multiply
    for term in terms:
        total = step(total, term).astype(np.float32)
    return total.astype(values.dtype)


def _span(lo, hi, active) -> tuple[int, int]:
    """The values a reduction index takes over the points that matter."""
    lo, hi, active = np.broadcast_arrays(lo, hi, active)
    if not np.any(active):
        return 0, 0
    low, high = int(lo[active].min()), int(hi[active].max())
    return low, max(low, high)


def arithmetic(op: str, left: Pair, right: Pair, active) -> Pair:
    dtype = left.dtype
    if dtype in FLOATS:
        if op in ("/", "%") and np.any(active & (right.ex == 0)):
            raise Invalid("division by zero")
        if op == "**":
            return _power(left, right, active, dtype)
        fn = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "%": np.fmod}[op]
        return Pair(fn(left.ex, right.ex), fn(left.wd, right.wd), dtype)
    if op in ("/", "%"):
        if np.any(active & (right.ex == 0)):
            raise Invalid("integer division by zero")
        quotients = [_int_divide(op, a, b, dtype) for a, b in ((left.ex, right.ex), (left.wd, right.wd))]
        if dtype in NARROW and np.any(active & (quotients[0] != quotients[0].astype(EXACT[dtype]))):
            raise Invalid("a quotient out of its type (its smallest value by -1)")
        return Pair(*(q.astype(EXACT[dtype]) for q in quotients), dtype)
    if op == "**":
        if np.any(active & (right.ex < 0)):
            raise Invalid("negative integer power")
        # in the base's type, as np.power of that dtype wraps (an i32 exponent of a narrow base)
        return Pair(*(np.power(a, np.clip(b, 0, 62).astype(a.dtype))
                      for a, b in ((left.ex, right.ex), (left.wd, right.wd))), dtype)
    fn = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
    return Pair(fn(left.ex, right.ex), fn(left.wd, right.wd), dtype)


def _int_divide(op: str, a, b, dtype: str):
    """Signed: truncated toward zero, the remainder of the dividend's sign, computed in int64
    (a narrow type's result is cast back by the caller); unsigned: plain, in the type."""
    b = np.where(b == 0, 1, b).astype(np.asarray(a).dtype)
    if dtype in UNSIGNED:
        return a // b if op == "/" else a % b
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    quotient = np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)     # truncates toward zero
    return quotient if op == "/" else a - b * quotient               # the dividend's sign


def _power(base: Pair, exponent: Pair, active, dtype: str) -> Pair:
    if exponent.dtype in FLOATS:
        integral = exponent.ex == np.trunc(exponent.ex)     # C's pow: a negative base to these only
        if np.any(active & (((base.ex <= 0) & ~integral) | ((base.ex == 0) & (exponent.ex < 0)))):
            raise Invalid("a float power of a non-positive base")
        return Pair(np.power(base.ex, exponent.ex), np.power(base.wd, exponent.wd), dtype)
    if np.any(active & (base.ex == 0) & (exponent.ex < 0)):
        raise Invalid("zero to a negative power")
    return Pair(np.power(base.ex, exponent.ex.astype(EXACT[dtype])),
                np.power(base.wd, exponent.wd.astype(WIDE[dtype])), dtype)


MATH = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "atan": np.arctan, "expm1": np.expm1, "log1p": np.log1p, "sinh": np.sinh, "cosh": np.cosh,
    "abs": np.abs, "floor": np.floor, "ceil": np.ceil,
}
DOMAINS = {"log": lambda x: x > 0, "sqrt": lambda x: x >= 0, "log1p": lambda x: x > -1}
STEPS = ("floor", "ceil")            # discontinuous at the integers


def math_call(fn: str, args: list, active) -> Pair:
    if fn in ("min", "max"):
        pick = np.minimum if fn == "min" else np.maximum
        return Pair(pick(args[0].ex, args[1].ex), pick(args[0].wd, args[1].wd), args[0].dtype)
    (arg,) = args
    if fn in DOMAINS and np.any(active & ~DOMAINS[fn](arg.ex)):
        raise Invalid(f"{fn} outside its domain")
    if fn in STEPS:
        _near_integer(arg, active, include_zero=True)
    if fn == "erf":
        return Pair(_erf(arg.ex).astype(arg.ex.dtype), _erf(arg.wd).astype(arg.wd.dtype), arg.dtype)
    return arg.map(MATH[fn])


def _erf(x) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))


# ------------------------------------------------------------ conversions and checks


def _convert(value: Pair, dtype: str, active) -> Pair:
    if value.dtype == dtype:
        return value
    if value.dtype in FLOATS and dtype not in FLOATS:
        if dtype == "bool":
            raise AssertionError("generator bug: float to bool cast")
        _near_integer(value, active, include_zero=False)
        if np.any(active & (np.abs(value.ex) >= INT_LIMIT)):
            raise Invalid("cast to an integer out of range")
        if dtype in NARROW:       # out of the type NumPy's cast is undefined, einc's wraps
            info = np.iinfo(NARROW[dtype])
            whole = np.trunc(np.asarray(value.ex, np.float64))   # (bf16 compares with no Python int)
            if np.any(active & ((whole < float(info.min)) | (whole > float(info.max)))):
                raise Invalid(f"cast to {dtype} out of range")
        return Pair(*(np.trunc(np.where(np.isfinite(p), p, 0)).astype(np.int64).astype(EXACT[dtype])
                      for p in (value.ex, value.wd)), dtype)
    if dtype == "bool":
        return Pair(value.ex != 0, value.wd != 0, dtype)
    return Pair(value.ex.astype(EXACT[dtype]), value.wd.astype(WIDE[dtype]), dtype)


def _zeros(shape: tuple, dtype: str) -> Pair:
    return Pair(np.zeros(shape, EXACT[dtype]), np.zeros(shape, WIDE[dtype]), dtype)


def _with_lanes(grid: Grid, var: str, size: int) -> Grid:
    """`grid` with a new leading axis of `size` lanes, `var` their index."""
    values = np.arange(size).reshape((-1,) + (1,) * np.ndim(grid.active))
    return Grid({**grid.env, var: typed(values, "i32")}, grid.ndim + 1,
                np.broadcast_to(grid.active[None], (size,) + np.shape(grid.active)))


def _full(value: Pair, lanes: Grid) -> Pair:
    """`value` broadcast along the leading axis of `lanes` (_with_lanes), whatever it reads."""
    return value.map(lambda part: _full_part(part, lanes))


def _full_part(part, lanes: Grid):
    lead = np.shape(lanes.active)[0]
    return np.broadcast_to(part, np.broadcast_shapes(np.shape(part), (lead,) + (1,) * (np.ndim(lanes.active) - 1)))


def _check(value: Pair, active) -> None:
    ex = np.asarray(value.ex)
    if value.dtype in FLOATS:
        size = np.abs(ex.astype(np.float64))
        bad = ~np.isfinite(size) | (size > FLOAT_LIMIT[value.dtype]) | ((size > 0) & (size < TINY[value.dtype]))
        if np.any(active & bad):
            raise Invalid("a float value out of the well-conditioned range")
    elif value.dtype in ("i32", "i64") and np.any(active & (np.abs(ex) > INT_LIMIT)):
        raise Invalid("integer overflow")       # a narrow type's values wrap in it: always valid


def _decided(cond: Pair, active) -> None:
    if np.any(active & (cond.ex != cond.wd)):
        raise Fragile("a condition depends on rounding")


def _error(value: Pair) -> np.ndarray:
    return np.abs(value.ex.astype(np.float64) - value.wd.astype(np.float64))


def _tie(left: Pair, right: Pair, active) -> None:
    a, b = left.ex.astype(np.float64), right.ex.astype(np.float64)
    margin = np.abs(a - b)
    error = _error(left) + _error(right)
    close = margin <= 8 * error + DECISION_RTOL[left.dtype] * (np.abs(a) + np.abs(b))
    exact_tie = (margin == 0) & (error == 0)
    if np.any(active & close & ~exact_tie):
        raise Fragile("a comparison is too close to call")


def _near_ties(op: str, body: Pair, active, axes: tuple) -> None:
    """A derivative through a max or min reduction follows the point it selects (half to each of
    two that tie): where another point is too close to the selected one to call in the program's
    type (bf16 rounds tanh's values near 1 to a few numbers), einc's choice and the wide
    meaning's may differ."""
    shape = np.broadcast_shapes(np.shape(body.ex), np.shape(active))
    if not math.prod(shape):
        return
    mask = np.broadcast_to(active, shape)
    a = np.where(mask, np.broadcast_to(body.ex, shape).astype(np.float64), -np.inf if op == "max" else np.inf)
    error = np.broadcast_to(_error(body), shape)
    top = (np.max if op == "max" else np.min)(a, axis=axes, keepdims=True)
    margin = np.abs(a - top)
    near = mask & (margin <= 8 * error + DECISION_RTOL[body.dtype] * (np.abs(a) + np.abs(top)))
    loose = near & ~((margin == 0) & (error == 0))
    if np.any((near.sum(axis=axes) >= 2) & loose.any(axis=axes)):
        raise Fragile("a maximum or minimum is too close to call")


def _near_integer(value: Pair, active, include_zero: bool) -> None:
    x = value.ex.astype(np.float64)
    nearest = np.round(x)
    margin = np.abs(x - nearest)
    error = _error(value)
    close = margin <= 8 * error + DECISION_RTOL[value.dtype] * np.abs(x)
    exact = (margin == 0) & (error == 0)
    step = (nearest != 0) | include_zero
    if np.any(active & close & step & ~exact):
        raise Fragile("a value is too close to an integer step")


# ------------------------------------------------------------ derivatives by finite differences


# The meaning of each template of structure.OUTER_EXPRESSIONS, LITERAL_OUTER and INNER_EXPRESSIONS.
EXPRESSIONS = {
    "{0}": lambda v: v,
    "sin({0})": np.sin,
    "tanh({0})": np.tanh,
    "({0} * {0} * 0.5 - {0})": lambda v: v * v * 0.5 - v,
    "[[{0}, 0.5 * {0}], [{0} * {0}, -{0}]][1, 0]": lambda v: v * v,
    "({0} + {0} * {0} * {0})": lambda v: v + v * v * v,
    "(2.5 * {0} - cos({0}))": lambda v: 2.5 * v - np.cos(v),
}


def derivative(program: Program, inputs: dict, item: Derivative) -> Pair:
    """d outer(of) / d inner(wrt) by central differences of the wide evaluation, shape of ++ wrt:
    d outer(of) / d wrt divided by inner's slope at wrt (a scalar then). Two step sizes must
    agree, or a kink is too close (Fragile)."""
    base = evaluate(program, inputs, stop=item.of)
    wrt_size = base[item.wrt].ex.size
    of_shape = base[item.of].ex.shape
    columns = []
    for position in range(wrt_size):
        slopes = [_slope(program, inputs, item, position, FD_STEP * scale) for scale in (1, 4)]
        if not np.allclose(slopes[0], slopes[1], rtol=1e-4, atol=1e-6):
            raise Fragile(f"{item.of} is not smooth in {item.wrt} here")
        columns.append(slopes[0])
    wide = np.stack(columns, axis=-1).reshape(of_shape + base[item.wrt].ex.shape) if columns else \
        np.zeros(of_shape + base[item.wrt].ex.shape)
    wide = wide.astype(WIDE[item.dtype])
    if item.inner != "{0}":
        wide = wide / _slope_of(EXPRESSIONS[item.inner], base[item.wrt].wd)
    if item.scale:
        wide = wide * SCALES[item.scale]
    return Pair(wide.astype(EXACT[item.dtype]), wide, item.dtype, _drift(base[item.of]))


def _drift(value: Pair) -> float:
    """Largest |ex - wd| of a value, relative to max(1, its largest |wd|)."""
    ex, wd = np.asarray(value.ex, np.float64), np.asarray(value.wd, np.float64)
    scale = max(1.0, float(np.max(np.abs(wd), initial=0.0)))
    return float(np.max(np.abs(ex - wd), initial=0.0)) / scale


def _slope_of(f, at):
    step = FD_STEP * max(1.0, float(np.max(np.abs(at), initial=0.0)))
    return (f(at + step) - f(at - step)) / (2 * step)


def _slope(program: Program, inputs: dict, item: Derivative, position: int, step: float):
    outer = EXPRESSIONS[item.outer]
    up = outer(evaluate(program, inputs, perturb=(item.wrt, position, step), stop=item.of)[item.of].wd)
    down = outer(evaluate(program, inputs, perturb=(item.wrt, position, -step), stop=item.of)[item.of].wd)
    return (up - down) / (2 * step)
