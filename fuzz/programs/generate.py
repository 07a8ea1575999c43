"""Random programs: inputs, indexed and piecewise definitions, recurrence groups, elementwise
statements, scalar functions and derivatives, each with inputs and its NumPy meaning.

`generate_case(seed, number)` is deterministic. A candidate that is invalid or whose decisions
are too close to call for its inputs gets new inputs, then is replaced (fuzz.programs.meaning).
Some cases with data-dependent reads get one index input value moved outside the axes it
indexes (a stray index): where a read happens with it, the case expects einc's run-time index
error instead of outputs (or, where the outputs do not depend on that read, which einc may
then drop, either the error or the outputs); where none does, the outputs as usual.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, fields, is_dataclass, replace

import numpy as np

from fuzz.programs import expressions
from fuzz.programs.expressions import (ExpressionGenerator, IndexVar, Scope, StepRead, Streams, Tensor, bound_expr,
                                       high_of, low_of, named)
from fuzz.programs.meaning import OUTPUT_TYPES, Fragile, Invalid, evaluate
from fuzz.programs.wellformed import decides, depends_on
from fuzz.programs.structure import (
    FLOATS, INNER_EXPRESSIONS, INTS, LITERAL_OUTER, NARROW_INTS, OUTER_EXPRESSIONS, UNSIGNED, Binary, Bound, Call,
    Cast, Clause, Define, Derivative, IfElse,
    Function, Group, Index, Input, Lit, Local, Prelude, Prev, PrevRow, Program, Range, Read, Recur, Reduce, RowMap, Slot,
    StepTensor, Unary, Var, Where, Whole, PARAM, ROW, SCALES, clause_exprs, program_exprs, reads_of, trailing_reduce, walk)

DIM_NAMES = ("N", "M", "T")
ATTEMPTS = 60
DRAWS = 4
INDEX_INPUT = "idx"                # the name of every index input starts so
SPARE_INPUT = INDEX_INPUT + "0"    # one drawn by `ends`: no name counter's (from 1), so the others stay
SKIP_INPUT = "sk"                  # an index input picking a row function's rows, -1 skipping one (`skips`)
GATE_INPUT = "gt"                  # an index input gating a step tensor, -1 skipping a step (`gates`)
COLUMN_NAME = "cz"                 # a 3-d input, its copy at one last-axis position, and their gather (`columns`)
STRAY_SHARE = 0.5                  # of the cases with index inputs, those given a stray index
PRELUDE_SHARE = 0.15               # programs whose leaves may be `sum(x)`, `min(x)`, `max(x)`
SAVE_SHARE = 0.15                  # programs that also write an output with `save_npy`
HALF_SHARE = 0.15                  # programs computing in f16 or bf16 (beside f32; llvm-cpu only)
BARE_WHERE_SHARE = 0.5             # bodies ending in a reduction, with a binding of their type, that read it beside
# a recurrence group's states: any axes, small fixed tensors (at most 16 points, which einc
# holds in registers: a Kalman filter's 2 x 2 covariance) or series side by side along a shared
# last axis whose steps never read across it (the CPU's lane blocks, einc/mlir/recurrences/batch.py)
STATE_LAYOUTS = {"any": 5, "held": 2, "lanes": 3}
HELD_SHAPES = ((2, 2), (2, 3), (3,), (4, 4), (1, 4))
LANE_OTHER_AXES = ((), (), (2,), (2, 2))
# the share of recurrence members drawn as bool states (the top of the integer share: IREE-80)
BOOL_STATE_DRAW = 0.95
TRIANGLE_SHARE = 0.2               # of the members with one other axis, those made triangular
SPAN_SHARE = 0.5                   # of the triangular members, those whose steps bind a read at `t - j`
ONE_IF_SHARE = 0.6                 # of the recurrence members, those whose start and steps are one `if`
EDGE_SHARE = 0.15                  # of the members with a second axis of 3 or more, those given insulated edges
STEP_ROW_SHARE = 0.5               # of the edges of members of 3 or more axes, those reading their step's row first
SHORT_CIRCUIT_SHARE = 0.5          # of the bool members, those whose start and steps are `(t < s && ..) || (t >= s && ..)`
RIM_SHARE = 0.3                    # of the others, those given a guarded rim clause beside their interior steps
RIM_COPY_SHARE = 0.5               # of the rims, those copying the interior's next point of the step
TALLY_SHARE = 0.3                  # of the groups with a float member of a second axis, those given a count member
PER_STEP_SHARE = 0.4               # of the count members, those counting their own step with no range on it
TALLY_SUFFIX = "n"                 # a count member's name: its member's and this (drawn names end in a digit)
CHAIN_SHARE = 0.5                  # of the groups with an f64 member of two axes and no count, those given a chain
CHAIN_SUFFIXES = ("en", "kn", "an", "un")   # a chain's members: its member's name and these (ending as a count's)
TAIL_SHARE = 0.5                   # of the totals of members of two axes or more, those over prefixes of the last step
PREFIX_SHARE = 0.5                 # of those, the ones whose outer index has no range of its own (tail_total)
HISTORY_SHARE = 0.25               # of the step bodies drawn, those adding an extremum over earlier steps
SHIFT_SHARE = 0.25                 # of the float step bodies over two axes or more, those adding a mean from j on
NESTING_SHARE = 0.3                # of the numeric step bodies drawn, those adding a loop run inside the step
CURRENT_SHARE = 0.5                # of those loops, the ones that may also read members computed earlier in the step
POINTS_SHARE = 0.5                 # of the loops in a step, those reading the clause's point indices
EARLIER_SHARE = 0.4                # of the loops written in the step, those whose step reads a member at t minus their own
STEPPED_SHARE = 0.4                # of the float loops drawn inside a step as a block, those reading a row times the step's index
LANES_SHARE = 0.4                  # of the loops drawn (function bodies, loops in a step), those whose state is a row
# a row loop's lengths: shorter than a vector of lanes, as long as one (f32 on AVX-512) and past it
LANE_COUNTS = (3, 5, 8, 16, 19)
# of the recurrence groups, those of more steps than a host loop's chunk (256, einc/mlir/recurrences/chunks.py)
# whose numeric steps compute a tensor and reduce a member's row read further back than their points (with_row)
LONG_SHARE = 0.1
LONG_STEPS = (257, 320)
LITERAL_SHARE = 0.3                # of the derivatives of a plain value, those of it read back from a matrix literal
PAIR_SHARE = 0.5                   # of the derivatives drawn, those followed by one of the same value by another binding
SCALE_SHARE = 0.3                  # of the derivatives drawn, those written scaled (`0.5 * @y / @x`)
PAD_SHARE = 0.3                    # of the derivatives drawn, those read again under a guard past their last axis
SPLIT_SHARE = 0.4                  # of the row functions drawn, those copying the row by two guarded clauses first
CAST_SHARE = 0.5                   # of the row functions drawn over rows read by index, those whose row is converted first
SCAN_SHARE = 0.5                   # of the other row functions drawn (not whole, split or unpacked), those folded by a recurrence
RANKED_SHARE = 0.5                 # of the scanned row folds, those stepping through a member of one more axis
PER_POINT_SHARE = 0.7              # of the row functions drawn, those given a param and a gradient by it per row
SKIP_SHARE = 0.3                   # of the row functions drawn over rows read by index, those whose rows an index input picks
GATE_SHARE = 0.5                   # of the float step tensors drawn, those computed only at the steps an index input lets
COLUMN_SHARE = 0.15                # programs given a copy at one position of an input's last axis, gathered by an index input
FIXED_SHARE = 0.2                  # programs built with their named dims fixed (`--dim`)
# fixed sizes: multiples of 16 and their neighbours, where IREE vectorizes whole rows (IREE-42
# wrote a value stored at an offset on its last axis to the aligned-down address)
FIXED_SIZES = (16, 16, 32, 32, 17, 31, 48)


@dataclass(frozen=True)
class Case:
    program: Program
    inputs: dict                   # name -> np.ndarray
    meaning: dict                  # name -> Pair
    # (index, axis size) of each read with a stray index, ("range", index) of each range read from
    # data past its axis: the run must fail naming one of them
    index_errors: frozenset = frozenset()
    index_error_optional: bool = False      # the outputs do not depend on those reads


def generate_case(seed: int, number: int) -> Case:
    rng = random.Random(f"{seed}/{number}")
    values = np.random.default_rng([seed, number])
    streams = Streams.of_case(seed, number)
    for _ in range(ATTEMPTS):
        program = ProgramGenerator(rng, streams).program()
        case = with_inputs(program, values)
        if case is not None:
            # a generator of its own, so the programs and inputs of a seed stay as they were
            return with_stray_index(case, np.random.default_rng([seed, number, 1])) or case
    raise RuntimeError(f"no valid program in {ATTEMPTS} attempts (seed {seed}, number {number})")


def with_inputs(program: Program, values: np.random.Generator, draws: int = DRAWS) -> Case | None:
    """The program with inputs for which it is valid and clear-cut, or None."""
    for _ in range(draws):
        inputs = draw_inputs(program, values)
        try:
            return Case(program, inputs, evaluate(program, inputs))
        except (Fragile, Invalid):
            continue
    return None


def with_stray_index(case: Case, values: np.random.Generator) -> Case | None:
    """`case` with one value of an index input just outside [0, its largest valid value], or
    None (no index input, not drawn, or the program is not valid with it)."""
    indices = [inp for inp in case.program.inputs if inp.name.startswith(INDEX_INPUT)]
    if not indices or values.random() >= STRAY_SHARE:
        return None
    inp = indices[values.integers(len(indices))]
    data = case.inputs[inp.name].copy()
    flat = data.reshape(-1)
    flat[values.integers(flat.size)] = int(inp.high) + 1 + values.integers(3) if values.random() < 0.5 \
        else -1 - values.integers(3)
    inputs = {**case.inputs, inp.name: data}
    strays: list = []
    try:
        meaning = evaluate(case.program, inputs, strays=strays)
        flipped = evaluate(case.program, inputs, strays=[], flip=True)
    except (Fragile, Invalid):
        return None
    matters = any(not np.array_equal(meaning[n].ex, flipped[n].ex, equal_nan=meaning[n].dtype in FLOATS)
                  for n in case.program.outputs)
    return Case(case.program, inputs, meaning, frozenset(strays), not matters)


def _reads_spare(program: Program) -> bool:
    """Whether a range of `program` has an end read from the spare index input."""
    return any(b.data is not None and b.data[0] == SPARE_INPUT for e in program_exprs(program) for n in walk(e)
               if isinstance(n, Reduce) for r in n.ranges for b in (r.lo, r.hi))


def draw_inputs(program: Program, values: np.random.Generator) -> dict:
    dims = program.dim_values()
    out = {}
    for inp in program.inputs:
        shape = tuple(b.const + (dims[b.dim] if b.dim else 0) for b in inp.shape)
        if inp.dtype in FLOATS:
            data = np.round(values.uniform(inp.low, inp.high, shape), 3)
        elif inp.dtype == "bool":
            data = values.random(shape) < 0.5
        else:
            data = values.integers(int(inp.low), int(inp.high) + 1, shape)
            if inp.name.startswith((SKIP_INPUT, GATE_INPUT)):
                data[0] = -1            # a row or step skipped: its guard matters (skipping, gated)
        out[inp.name] = np.asarray(data, OUTPUT_TYPES[inp.dtype])
    return out


class ProgramGenerator:
    def __init__(self, rng: random.Random, streams: Streams = Streams()):
        self.rng = rng
        self.history, self.triangle, self.starts = streams.history, streams.triangle, streams.starts
        self.bare, self.edges, self.nesting, self.long = streams.bare, streams.edges, streams.nesting, streams.long
        self.rims, self.tallies, self.shifted = streams.rims, streams.tallies, streams.shifted
        self.copies, self.current, self.points = streams.copies, streams.current, streams.points
        self.earlier = streams.earlier
        self.perstep = streams.perstep
        self.spans = streams.spans
        self.long_back = 0              # in a long group being drawn (group): how far back its rows are read
        self.pairs = streams.pairs
        self.literals = streams.literals
        self.stepped = streams.stepped
        self.scales, self.pieces, self.pads = streams.scales, streams.pieces, streams.pads
        self.scans, self.casts, self.ranks = streams.scans, streams.casts, streams.ranks
        self.perpoint = streams.perpoint
        self.ends = streams.ends
        self.steprows = streams.steprows
        self.chains = streams.chains
        self.tails = streams.tails
        self.prefixes = streams.prefixes
        self.tail_read = None           # a member a total reads at its last step only: not an output (total)
        self.shorts = streams.shorts
        self.skips = streams.skips
        self.gates = streams.gates
        self.columns = streams.columns
        self.lanes = streams.lanes
        self.gate_inputs: list = []     # the index inputs `gated` drew (with names of their own)
        self.float_type = rng.choices(("f32", "f64", "f16", "bf16"), (0.55, 0.3, HALF_SHARE / 2, HALF_SHARE / 2))[0]
        self.int_type = "i32" if rng.random() < 0.8 else "i64"
        if streams.widths is not None and streams.widths.random() < expressions.NARROW_SHARE:
            self.int_type = streams.widths.choice(NARROW_INTS)
        self.gen = ExpressionGenerator(rng, self.float_type, self.int_type, streams)
        # the nesting draw's expressions: its stream, and names of its own
        self.nested = ExpressionGenerator(streams.nesting, self.float_type, self.int_type, prefix="n") \
            if streams.nesting is not None else None
        self.gen.prelude = rng.random() < PRELUDE_SHARE

    def program(self) -> Program:
        rng = self.rng
        fixed = rng.random() < FIXED_SHARE
        count = rng.choice((1, 1, 2)) if fixed else rng.choice((0, 1, 1, 2))
        dims = {name: rng.choice(FIXED_SIZES) if fixed else rng.randint(2, 6)
                for name in rng.sample(DIM_NAMES, count)}
        self.scope = Scope(dims=dims)
        inputs = [self.input_(dims) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.25:
            inputs.append(self.index_input(inputs))
        elif self.ends is not None:     # one only ranges read from data may use (ExpressionGenerator._data_range)
            length = self.ends.randint(1, 5)
            self.gen.spare, self.gen.beside = Tensor(SPARE_INPUT, "i32", (Bound(length),), (length,)), inputs[0].name
        self.inputs = inputs            # per_point adds a param to them
        # a named dim exists only through the inputs that declare it
        dims = {d: v for d, v in dims.items() if any(b.dim == d for i in inputs for b in i.shape)}
        self.scope = Scope(dims=dims)
        self.scope = replace(self.scope, tensors=tuple(_tensor(i, dims) for i in inputs))
        items = []
        if rng.random() < 0.35:
            items.append(self.function())
        for _ in range(rng.randint(2, 5)):
            kind = rng.choices(("define", "piecewise", "guarded", "group", "whole", "function", "row_map"),
                               (5, 2, 1.2, 3, 1.5, 0.7, 0.8))[0]
            item = getattr(self, kind)()
            if isinstance(item, RowMap):
                items += self.per_point(item)
            elif item is not None:
                items.append(item)
        members = [m.name for item in items if isinstance(item, Group) for m in item.members
                   if m.dtype != "bool" and not m.name.endswith(TALLY_SUFFIX)]
        if members and rng.random() < 0.3:
            items.append(self.total(rng.choice(members)))
        if rng.random() < 0.35:
            item = self.derivative(items, inputs)
            if item is not None:
                items += self.padded(self.scaled([item] + self.sibling_derivative(item, inputs)))
        column = self.picked_column()
        items += column
        bindings = [n for item in items for n in _names(item)]
        outputs = tuple(bindings)
        if rng.random() < 0.3 and len(bindings) > 1:
            outputs = tuple(sorted(rng.sample(bindings, rng.randint(1, len(bindings) - 1)), key=bindings.index))
            outputs += tuple(d.name for d in column if d.name not in outputs)
        outputs = tuple(o for o in outputs if o != self.tail_read) or outputs
        saves = (rng.choice(outputs),) if rng.random() < SAVE_SHARE and outputs else ()
        program = Program(tuple(inputs), tuple(items), tuple(sorted(dims.items())), outputs, saves,
                          fixed=fixed and bool(dims))
        read = {n.name for e in program_exprs(program) for n in walk(e) if isinstance(n, Read)}
        program = replace(program, inputs=program.inputs + tuple(g for g in self.gate_inputs if g.name in read))
        if self.gen.spare_read and _reads_spare(program):      # not only in a draw left out
            spare = Input(SPARE_INPUT, "i32", self.gen.spare.shape, 0, self.gen.spare.values[1])
            program = replace(program, inputs=program.inputs + (spare,))
        return program

    # ------------------------------------------------------------ inputs

    def input_(self, dims: dict) -> Input:
        rng = self.rng
        other_float = self.other_float()
        dtype = rng.choices((self.float_type, self.int_type, other_float, "bool"), (6, 2, 1, 0.5))[0]
        shape = tuple(self.extent(dims) for _ in range(rng.choice((0, 1, 1, 2, 2))))
        low, high = (-2.0, 2.0) if dtype in FLOATS else (0 if dtype in UNSIGNED else -9, 9)
        return Input(self.gen.name("x"), dtype, shape, low, high)

    def other_float(self) -> str:
        """The float type a program uses besides its own: f64 beside f32, f32 beside the others."""
        return "f64" if self.float_type == "f32" else "f32"

    def index_input(self, inputs: list) -> Input:
        """An i32 vector whose values are valid subscripts of some axis (data-dependent reads)."""
        sizes = [b.const for i in inputs for b in i.shape if b.dim is None] or [2]
        top = self.rng.choice(sizes) - 1
        return Input(self.gen.name(INDEX_INPUT), "i32", (Bound(self.rng.randint(1, 5)),), 0, max(top, 0))

    def extent(self, dims: dict) -> Bound:
        if dims and self.rng.random() < 0.45:
            return Bound(0, self.rng.choice(sorted(dims)))
        existing = [b for t in self.scope.tensors for b in t.shape]
        if existing and self.rng.random() < 0.4:
            return self.rng.choice(existing)
        return Bound(self.rng.choices((1, 2, 3, 4, 5, 6), (1, 3, 4, 4, 3, 2))[0])

    def size(self, b: Bound) -> int:
        return b.const + (self.scope.dims[b.dim] if b.dim else 0)

    def add_tensor(self, tensor: Tensor) -> None:
        self.scope = replace(self.scope, tensors=self.scope.tensors + (tensor,))

    # ------------------------------------------------------------ definitions

    def value_type(self) -> str:
        other = self.other_float()
        return self.rng.choices((self.float_type, self.int_type, "bool", other), (7, 3, 1, 1))[0]

    def define(self) -> Define:
        dtype = self.value_type()
        shape = tuple(self.extent(self.scope.dims) for _ in range(self.rng.choice((0, 1, 1, 2))))
        name = self.gen.name("d")
        slots = tuple(Slot("ijk"[a], Bound(0), b) for a, b in enumerate(shape))
        clause = self.clause(dtype, slots, self.scope, guard=self.rng.random() < 0.15)
        if not slots:       # `let d = 0.9;` is a name carrying a literal, as a `where` binding is
            clause = replace(clause, body=named(clause.body))
        self.add_tensor(Tensor(name, dtype, shape, tuple(self.size(b) for b in shape)))
        return Define(name, dtype, (clause,), annotate=self.rng.random() < 0.1)

    def clause(self, dtype: str, slots: tuple, scope: Scope, guard: bool = False,
               depth: int | None = None, body_rule=None, guard_expr=None) -> Clause:
        """A clause over `slots`; with `guard`, a random guard, with `guard_expr` that one."""
        rng = self.rng
        scope = self.index_scope(slots, scope)
        wheres = []
        for _ in range(rng.choice((0, 0, 0, 1, 2))):
            local = self.gen.name("v")
            local_type = rng.choice((dtype, self.float_type, self.int_type)) if dtype != "bool" else self.float_type
            wheres.append(Where(local, named(self.gen.expr(local_type, scope, rng.randint(0, 2)))))
            scope = scope.with_local(local, local_type)
        if guard:
            wheres.append(Where(None, self.gen.condition(scope, 1)))
        if guard_expr is not None:
            wheres.append(Where(None, guard_expr))
        depth = rng.randint(1, 3) if depth is None else depth
        body = body_rule(scope) if body_rule else self.gen.expr(dtype, scope, depth)
        body = self.binding_beside_reduction(body, wheres, dtype)
        clause = Clause(slots, body, tuple(wheres))
        return replace(clause, slots=tuple(self._maybe_implicit(s, clause) for s in slots))

    def binding_beside_reduction(self, body, wheres: list, dtype: str):
        """Sometimes a body ending in a reduction gets a `where` binding of its type added before
        it (`v + sum[j](..) where v = ..`): read outside the reduction, the binding (and the
        `where` list) is the clause's even written bare after the reduction's `)`
        (fuzz/programs/render.py `_bare_where_stays`)."""
        bindings = [w.name for w in wheres if w.name and getattr(w.expr, "dtype", None) == dtype]
        if (self.bare is None or dtype not in FLOATS + INTS or not bindings
                or trailing_reduce(body) is None or self.bare.random() >= BARE_WHERE_SHARE):
            return body
        return Binary("+", Var(self.bare.choice(bindings), dtype), body, dtype)

    def index_scope(self, slots: tuple, scope: Scope) -> Scope:
        for slot in slots:
            if slot.var is not None:      # an end may name an earlier slot's index (`0..t + 1`)
                scope = scope.with_index(IndexVar(slot.var, low_of(slot.lo, scope), high_of(slot.hi, scope) - 1,
                                                  slot.lo, slot.hi))
        return scope

    def _maybe_implicit(self, slot: Slot, clause: Clause) -> Slot:
        """Leave `i in 0..n` implicit when a plain read `x[.., i, ..]` of an axis of n decides it."""
        if slot.var is None or slot.lo != Bound(0) or self.rng.random() < 0.5:
            return slot
        shape_of = {t.name: t.shape for t in self.scope.tensors}
        if decides(slot.var, slot.hi, clause_exprs(clause), shape_of):
            return replace(slot, explicit=False)
        return slot

    def piecewise(self) -> Define:
        """Literal points, a ranged part (maybe two adjacent ones), maybe a row of zeros in place
        of a literal one, a later range overriding part of it and an overriding point."""
        rng = self.rng
        dtype = rng.choice((self.float_type, self.float_type, self.int_type))
        first = Bound(rng.randint(3, 7)) if not self.scope.dims or rng.random() < 0.5 else \
            Bound(rng.randint(0, 1), rng.choice(sorted(self.scope.dims)))
        rest = tuple(self.extent(self.scope.dims) for _ in range(rng.choice((0, 0, 1))))
        rest_slots = tuple(Slot("jk"[a], Bound(0), b) for a, b in enumerate(rest))
        start = rng.randint(1, 2)
        clauses = []
        gap = rng.random() < 0.3
        for row in range(start - gap):
            clauses.append(self.clause(dtype, (Slot(None, Bound(row), Bound(row + 1)),) + rest_slots,
                                       self.scope, depth=1))
        clauses = self.maybe_literals_chosen(dtype, clauses + self.ranged_parts(dtype, start, first, rest_slots),
                                             self.scope)
        if gap:     # the row left out is 0 by a clause of its own: a read of a point no clause defines is E005
            zero = False if dtype == "bool" else 0.0 if dtype in FLOATS else 0
            clauses.append(Clause((Slot(None, Bound(start - 1), Bound(start)),) + rest_slots, Lit(zero, dtype)))
        if rng.random() < 0.4:
            point = rng.randrange(self.size(first))
            others = tuple(Slot(None, Bound(p), Bound(p + 1)) for p in
                           (rng.randrange(self.size(b)) for b in rest))
            clauses.append(Clause((Slot(None, Bound(point), Bound(point + 1)),) + others,
                                  self.gen.literal(dtype)))
        name = self.gen.name("p")
        shape = (first,) + rest
        self.add_tensor(Tensor(name, dtype, shape, tuple(self.size(b) for b in shape)))
        return Define(name, dtype, tuple(clauses))

    def ranged_parts(self, dtype: str, start: int, first: Bound, rest_slots: tuple) -> list:
        """The ranged part `i in start..first`: one clause, or two adjacent ones (`start..m`,
        `m..first`); then maybe a later one over a run inside it, which overrides what it covers."""
        rng = self.rng
        size = self.size(first)
        middle = rng.randint(start + 1, size - 1) if size - start >= 2 and rng.random() < 0.3 else None
        ends = [Bound(start), first] if middle is None else [Bound(start), Bound(middle), first]
        parts = [self.clause(dtype, (Slot("i", lo, hi),) + rest_slots, self.scope) for lo, hi in zip(ends, ends[1:])]
        if size - start >= 1 and rng.random() < 0.3:
            lo = rng.randint(start, size - 1)
            hi = first if first.dim and rng.random() < 0.4 else Bound(rng.randint(lo + 1, size))
            parts.append(self.clause(dtype, (Slot("i", Bound(lo), hi),) + rest_slots, self.scope))
        return parts

    def guarded(self) -> Define:
        """Clauses over one box (or two overlapping ones) whose `where` guards split it (LANGUAGE.md
        section 10), in a random order: each point takes the clause whose guard holds there."""
        rng = self.rng
        dtype = rng.choice((self.float_type, self.float_type, self.int_type))
        shape = tuple(self.extent(self.scope.dims) for _ in range(rng.choice((1, 1, 2))))
        slots = tuple(Slot("ijk"[a], Bound(0), b) for a, b in enumerate(shape))
        scope = self.index_scope(slots, self.scope)
        if self.size(shape[0]) >= 2 and rng.random() < 0.25:
            clauses = self.overlapping_boxes(dtype, slots)
        else:
            guards = self.index_split(scope) if rng.random() < 0.6 else self.data_split(scope)
            clauses = [self.clause(dtype, slots, self.scope, guard_expr=g) for g in guards]
        clauses = self.maybe_literals_chosen(dtype, clauses, self.scope)
        rng.shuffle(clauses)
        name = self.gen.name("s")
        self.add_tensor(Tensor(name, dtype, shape, tuple(self.size(b) for b in shape)))
        return Define(name, dtype, tuple(clauses))

    def maybe_literals_chosen(self, dtype: str, clauses: list, scope: Scope) -> list:
        """Sometimes one clause of a float definition becomes a choice of untyped literals by a
        run-time condition (`if x[i] > 0.5 { 0.25 } else { -2.0 }`, or of int literals, `{ 1 }
        else { -2 }`), which takes the type of the definition's other clauses (f64, f16 ..), not
        its default f32 (i32): in a recurrence, a start that its steps type."""
        if dtype not in FLOATS or not clauses or self.rng.random() >= 0.3:
            return clauses
        k = self.rng.randrange(len(clauses))
        inner = self.index_scope(clauses[k].slots, scope)
        integral = self.rng.random() < 0.4
        then, other = (Lit(self.rng.choice((0, 1, 2, -1, -3)), dtype, integral=True) if integral
                       else replace(self.gen.literal(dtype), suffix=False) for _ in range(2))
        slots = tuple(replace(s, explicit=True) for s in clauses[k].slots)   # the body decides no range
        clauses[k] = replace(clauses[k], slots=slots, body=IfElse(self.gen.condition(inner, 1), then, other, dtype))
        return clauses

    def overlapping_boxes(self, dtype: str, slots: tuple) -> list:
        """Two clauses whose ranges along the first axis overlap (`i in 0..b`, `i in a..n`, a <= m
        <= b) and whose guards (`i < m`, `i >= m`) give each point of the overlap to one of them."""
        rng = self.rng
        first, rest = slots[0], slots[1:]
        size = self.size(first.hi)
        m = rng.randint(1, size - 1)
        below = Slot("i", Bound(0), Bound(rng.randint(m, size)))
        above = Slot("i", Bound(rng.randint(0, m)), first.hi)
        i = Index("i")
        return [self.clause(dtype, (below,) + rest, self.scope, guard_expr=Binary("<", i, Lit(m, "i32"), "bool")),
                self.clause(dtype, (above,) + rest, self.scope, guard_expr=Binary(">=", i, Lit(m, "i32"), "bool"))]

    def index_split(self, scope: Scope) -> list:
        """Guards on a combination of one or two indices (`i + 2 * j`) against thresholds:
        below the first, between consecutive ones, at or above the last."""
        rng = self.rng
        chosen = rng.sample(scope.indices, min(len(scope.indices), rng.choice((1, 2))))
        combo, low, high = None, 0, 0
        for var in chosen:
            coef = rng.choice((1, 1, -1, 2))
            term = Index(var.name) if coef == 1 else Binary("*", Lit(coef, "i32"), Index(var.name), "i32")
            combo = term if combo is None else Binary("+", combo, term, "i32")
            low, high = low + min(coef * var.low, coef * var.high), high + max(coef * var.low, coef * var.high)
        if len(chosen) == 1 and rng.random() < 0.3:
            modulus = rng.randint(2, 3)
            combo = Binary("%", combo, Lit(modulus, "i32"), "i32")
            low, high = (0 if low >= 0 else 1 - modulus), (modulus - 1 if high > 0 else 0)
        # mostly thresholds that leave points on both sides, sometimes one at an end (a clause
        # whose guard never holds)
        inside = range(low + 1, high + 1) if high > low and rng.random() < 0.8 else range(low, high + 2)
        thresholds = sorted(rng.sample(inside, min(len(inside), rng.choice((1, 1, 2)))))
        lows = [None] + thresholds
        highs = thresholds + [None]
        guards = []
        for lo, hi in zip(lows, highs):
            parts = ([Binary(">=", combo, Lit(lo, "i32"), "bool")] if lo is not None else []) + \
                    ([Binary("<", combo, Lit(hi, "i32"), "bool")] if hi is not None else [])
            guards.append(parts[0] if len(parts) == 1 else Binary("&&", parts[0], parts[1], "bool"))
        return guards

    def data_split(self, scope: Scope) -> list:
        """A condition (which may read inputs) and its negation."""
        cond = self.gen.condition(scope, 1)
        return [cond, Unary("!", cond, "bool")]

    # ------------------------------------------------------------ recurrences

    def group(self) -> Group:
        rng = self.rng
        dims = self.scope.dims
        steps = Bound(0, rng.choice(sorted(dims))) if dims and rng.random() < 0.4 else Bound(rng.randint(2, 9))
        long = self.long is not None and self.long.random() < LONG_SHARE
        if long:
            steps = Bound(self.long.randint(*LONG_STEPS))
        start = rng.randint(1, min(3, self.size(steps) - 1))
        if long:         # its rows are read this far back, its points one step (with_row)
            start = self.long_back = self.long.randint(2, 3)
        names = [self.gen.name("r") for _ in range(rng.choice((1, 1, 1, 2, 2, 3)))]
        # the last member may stop a step early (v[t in 0..T] beside a[t in 1..T + 1]): the
        # others read it only at earlier steps, so every read stays inside it
        shorter = len(names) > 1 and self.size(steps) - 1 > start and rng.random() < 0.3
        tensors, triangles = [], set()
        layout = rng.choices(list(STATE_LAYOUTS), list(STATE_LAYOUTS.values()))[0]
        lanes = tuple(Bound(n) for n in rng.choice(LANE_OTHER_AXES)) + (self.extent(dims),)
        for k, name in enumerate(names):
            draw = rng.random()       # one draw: the programs without a bool state are unchanged
            dtype = self.float_type if draw < 0.75 else "bool" if draw >= BOOL_STATE_DRAW else self.int_type
            if layout == "lanes":        # lane blocks compute f32 (tanh, exp, ...) and i32 vectors
                dtype = "f32"
            extra = {"any": (self.extent(dims),) if rng.random() < 0.35 else (),
                     "held": tuple(Bound(n) for n in rng.choice(HELD_SHAPES)), "lanes": lanes}[layout]
            first = steps.plus(-1) if shorter and k == len(names) - 1 else steps
            if layout == "any" and self.triangular() and not self.long_back:
                extra = (first,)
                triangles.add(name)
            shape = (first,) + extra
            tensors.append(Tensor(name, dtype, shape, tuple(self.size(b) for b in shape)))
        lane = "jkl"[len(lanes) - 1] if layout == "lanes" else None
        members = [self.member(k, tensors, start, lane, tensors[k].name in triangles) for k in range(len(tensors))]
        tally = not (lane or self.long_back or triangles)
        self.long_back = 0
        layout = _interleave(rng, [[(m.name, c) for c in range(len(m.clauses))] for m in members])
        for tensor in tensors:
            self.add_tensor(tensor)
        if tally:
            members, names, layout = self.with_tally(members, tensors, names, layout, start)
            members, names, layout = self.with_chain(members, tensors, names, layout, start)
        return Group(tuple(members), tuple(names), tuple(layout))

    def triangular(self) -> bool:
        """Some of the time (from `triangle`, a stream of its own) a member's one other axis is
        as long as its steps and each step defines a growing part of it, `r[t in 1..T, j in
        0..t + 1]` (LANGUAGE.md section 4: the points past a step's range are 0)."""
        return self.triangle is not None and self.triangle.random() < TRIANGLE_SHARE

    def member(self, position: int, tensors: list, start: int, lane: str | None = None,
               triangle: bool = False) -> Define:
        """`lane`: the index of the last axis, which every state read keeps (no read across it);
        `triangle`: the steps define `j in 0..t + 1` of the second axis only."""
        rng = self.rng
        me = tensors[position]
        rest = tuple(Slot("jkl"[a], Bound(0), b) for a, b in enumerate(me.shape[1:]))
        # (a long group's points only one step back, its rows `long_back` steps: with_row)
        back = (1,) if self.long_back else tuple(range(1, start + 1))
        steps = tuple(StepRead(t, back + ((0,) if k < position else ()), lane) for k, t in enumerate(tensors))
        if lane:
            return self.lane_member(me, rest, steps, start)
        clauses = []
        # a function that is a recurrence is not called in another's clauses (a nested loop
        # over the step is E011 in einc)
        outer = replace(self.scope, functions=tuple(f for f in self.scope.functions if not isinstance(f.body, Recur)))
        if rng.random() < 0.85:
            if rng.random() < 0.5:
                clauses.append(self.clause(me.dtype, (Slot("t", Bound(0), Bound(start)),) + rest,
                                           outer, depth=1))
            else:
                for row in range(start):
                    clauses.append(self.clause(me.dtype, (Slot(None, Bound(row), Bound(row + 1)),) + rest,
                                               outer, depth=1))
        clauses = self.maybe_literals_chosen(me.dtype, clauses, outer)
        scope = replace(outer, steps=steps, step_var="t")
        main = (Slot("t", Bound(start), me.shape[0]),) + rest
        if triangle:
            main = main[:1] + (Slot("j", Bound(0), Bound(1, index="t")),)
        typed_by_step = not clauses
        if not clauses:          # its steps read from step 0 on, which a base clause must define (E005)
            zero = False if me.dtype == "bool" else 0.0 if me.dtype in FLOATS else 0
            clauses.append(Clause((Slot("t", Bound(0), Bound(start)),) + rest, Lit(zero, me.dtype)))
        # guarded step clauses split the step's box by the indices (a guard may not read the
        # recurrence's own values, E011)
        split = self.index_split(self.index_scope(main, self.scope)) if rng.random() < 0.15 else [None]
        for g in split:
            clauses.append(self.clause(me.dtype, main, scope, guard_expr=g,
                                       body_rule=lambda s: self.step_body(me, s, typed_by_step)))
        # a recurrence's index needs its range written out (E004 otherwise)
        clauses = [replace(c, slots=(replace(c.slots[0], explicit=True),) + c.slots[1:]) for c in clauses]
        step_at = len(clauses) - 1      # the step clause (a literal point may follow it)
        if rng.random() < 0.1 and split == [None]:
            row = rng.randrange(start, me.sizes[0])
            points = tuple(Slot(None, Bound(p), Bound(p + 1)) for p in
                           [row] + [rng.randrange(size) for size in me.sizes[1:]])
            clauses.append(Clause(points, self.gen.literal(me.dtype)))
        if triangle and split == [None]:
            clauses[step_at] = self.with_span_read(me, clauses[step_at], {t.name for t in tensors})
        if split == [None] and not triangle:
            edges = self.with_edges(me, main)
            plain_step = clauses[-1].slots[1:] == main[1:] and all(w.name is not None for w in clauses[-1].wheres)
            clauses += edges if edges or not plain_step else self.with_rim(me, main, clauses)
        one_if = self.starts is not None and self.starts.random() < ONE_IF_SHARE
        short = me.dtype == "bool" and self.shorts is not None and self.shorts.random() < SHORT_CIRCUIT_SHARE
        return Define(me.name, me.dtype, tuple(clauses), one_if=one_if, short=short)

    def with_span_read(self, me: Tensor, clause: Clause, group: set) -> Clause:
        """Some of the time (from `spans`, a stream of its own) a triangular member's step clause
        binds `w = x[t - j, 0, ..]`, x an earlier tensor of its type at least as long as its
        steps, and adds w to its body: in x at each point of the step's range `j in 0..t + 1`,
        though not over the hull of those ranges (einc checked a where-binding's reads there)."""
        if self.spans is None or me.dtype not in FLOATS + INTS or self.spans.random() >= SPAN_SHARE:
            return clause
        fits = [x for x in self.scope.tensors if x.dtype == me.dtype and x.sizes and x.sizes[0] >= me.sizes[0]
                and x.name not in group]
        if not fits:
            return clause
        x = self.spans.choice(fits)
        local = self.gen.name("w")
        subs = (Binary("-", Index("t"), Index("j"), "i32"),) + tuple(Lit(0, "i32") for _ in x.shape[1:])
        body = Binary("+", Var(local, me.dtype), clause.body, me.dtype)
        return replace(clause, body=body, wheres=(Where(local, Read(x.name, subs, x.dtype)),) + clause.wheres)

    def with_edges(self, me: Tensor, main: tuple) -> list:
        """Some of the time (from `edges`, a stream of its own) insulated edges along the second
        axis: the steps' first and last points copied from their neighbours at the same step,
        `r[t, 0, ..] = r[t, 1, ..]` and `r[t, j in N - 1..N, ..] = r[t, j - 1, ..]`, written over
        the step clause's points (LANGUAGE.md section 4: a clause reads points other clauses
        write at the step). The axis holds at least 3 points, so the edges never read each other.
        With 3 or more axes, some (from `steprows`) read the step's row first, `r[t, 1][k]`: a row
        of points of the step being computed, read at a point as that point."""
        if self.edges is None or len(main) < 2 or me.sizes[1] < 3 or self.edges.random() >= EDGE_SHARE:
            return []
        t, axis, rest = main[0], main[1], main[2:]
        others = tuple(Index(s.var) for s in rest)
        split = 2 if rest and self.steprows is not None and self.steprows.random() < STEP_ROW_SHARE else 0
        low = Read(me.name, (Index("t"), Lit(1, "i32")) + others, me.dtype, split)
        high = Read(me.name, (Index("t"), Binary("-", Index(axis.var), Lit(1, "i32"), "i32")) + others, me.dtype, split)
        return [Clause((t, Slot(None, Bound(0), Bound(1))) + rest, low),
                Clause((t, replace(axis, lo=axis.hi.plus(-1))) + rest, high)]

    def with_rim(self, me: Tensor, main: tuple, clauses: list) -> list:
        """Some of the time (from `rims`, a stream of its own) the step clause (last of
        `clauses`, replaced in place) narrowed to the inside of the second axis and a rim clause
        over the whole step box guarded by `j == 0 || j == N - 1` (a grid's boundary beside its
        interior, LANGUAGE.md section 10): the guarded clause's box meets the step clause's. Some
        rims (from `copies`) copy the interior's next point of the step instead of a literal
        (`if j == 0 { r[t, 1, ..] } else { r[t, N - 2, ..] }`, an insulated edge): the rim runs
        after the interior it reads."""
        if self.rims is None or len(main) < 2 or me.sizes[1] < 3 or self.rims.random() >= RIM_SHARE:
            return []
        axis = main[1]
        clauses[-1] = replace(clauses[-1], slots=(clauses[-1].slots[0], replace(axis, lo=axis.lo.plus(1),
                                                                                hi=axis.hi.plus(-1)))
                              + clauses[-1].slots[2:])
        j = Index(axis.var)
        rim = Binary("||", Binary("==", j, Lit(0, "i32"), "bool"),
                     Binary("==", j, Lit(me.sizes[1] - 1, "i32"), "bool"), "bool")
        value = self.rims.choice((False, True)) if me.dtype == "bool" else self.rims.choice((0, 1, 3)) \
            if me.dtype not in FLOATS else self.rims.choice((0.0, 0.5, -1.25))
        body = Lit(value, me.dtype)
        if self.copies is not None and self.copies.random() < RIM_COPY_SHARE:
            others = tuple(Index(s.var) for s in main[2:])
            nearest = [Read(me.name, (Index("t"), Lit(k, "i32")) + others, me.dtype) for k in (1, me.sizes[1] - 2)]
            body = IfElse(Binary("==", j, Lit(0, "i32"), "bool"), *nearest, me.dtype)
        step = replace(clauses[-1].slots[0], explicit=True)
        return [Clause((step,) + main[1:], body, (Where(None, rim),))]

    def with_tally(self, members: list, tensors: list, names: list, layout: list, start: int) -> tuple:
        """Some of the time (from `tallies`, a stream of its own) a count member before a float
        member x with a second axis of S points, `c[t] = sum[k in 0..S](if x[t - 1, k, ..] < v
        { 1 } else { 0 })` after a start of 0, and x, started at literals, with steps reading
        `x[t - 1, c[t] % S, ..]`: the count's int literals keep i32 while x's take the type of
        the data they meet. Nothing of it is drawn from the program's main stream, and the count
        is no binding of the program's (`_names`), so the rest of the program stays as it was."""
        floats = [k for k, m in enumerate(tensors) if m.dtype in ("f32", "f64") and len(m.shape) > 1 and m.sizes[1] > 1]
        if self.tallies is None or not floats or self.tallies.random() >= TALLY_SHARE:
            return members, names, layout
        k = self.tallies.choice(floats)
        x = tensors[k]
        name = x.name + TALLY_SUFFIX
        t, back = Index("t"), Binary("-", Index("t"), Lit(1, "i32"), "i32")
        # (from `perstep`, a stream of its own) `c[t] = ..x[t, k]..` over every step, its range
        # left to the read of x (einc took no member's read as a range: E004), x reading c[t - 1]
        per_step = self.perstep is not None and self.perstep.random() < PER_STEP_SHARE
        fixed = tuple(Lit(self.tallies.randrange(size), "i32") for size in x.sizes[2:])
        below = Binary("<", Read(x.name, (t if per_step else back, Index("k")) + fixed, x.dtype),
                       Lit(self.tallies.choice((0.0, 0.5, -0.25)), x.dtype), "bool")
        count = Reduce("sum", (Range("k", Bound(0), x.shape[1]),), IfElse(below, Lit(1, "i32"), Lit(0, "i32"), "i32"),
                       None, "i32")
        tally = Define(name, "i32", (Clause((Slot("t", Bound(0), Bound(start)),), Lit(0, "i32")),
                                     Clause((Slot("t", Bound(start), x.shape[0]),), count)))
        if per_step:
            tally = Define(name, "i32", (Clause((Slot("t", Bound(0), x.shape[0], explicit=False),), count),))
        row = Binary("%", Read(name, (back if per_step else t,), "i32"), Lit(x.sizes[1], "i32"), "i32")
        pick = Read(x.name, (back, row) + tuple(Index("jkl"[a]) for a in range(1, len(x.shape) - 1)), x.dtype)
        # x's start a choice of literals, so that only the data its steps meet types it (render
        # writes them unsuffixed where another clause is typed by data)
        first = IfElse(Binary("==", Index("j"), Lit(0, "i32"), "bool"), Lit(self.tallies.choice((0.5, 1.0)), x.dtype),
                       Lit(0.0, x.dtype), x.dtype)
        added = Binary("*", Lit(0.25, x.dtype), pick, x.dtype)
        stepped = replace(members[k], clauses=tuple(_restarted(c, start, first, added) for c in members[k].clauses))
        if per_step:        # after x, whose step it reads
            return members[:k] + [stepped, tally] + members[k + 1:], names + [name], layout + [(name, 0)]
        at = next(p for p, (member, _) in enumerate(layout) if member == x.name)
        return (members[:k] + [tally, stepped] + members[k + 1:], names[:k] + [name] + names[k:],
                layout[:at] + [(name, 0), (name, 1)] + layout[at:])

    def with_chain(self, members: list, tensors: list, names: list, layout: list, start: int) -> tuple:
        """Some of the time (from `chains`, a stream of its own) four members with no start clause
        before an f64 member x of two axes and no count member: `e[t, k] = x[t - 1, k] * 0.5`, a
        count through a cast `c[t] = sum[k](if e[t, k] < v { 1.0 } else { 0.0 }) as i32` (no int
        literal to guess its type from), `a[t] = e[t, c[t] % S]` and `u[t, j] = a[t] + x[t - 1, j]`;
        x starts at `(j as f64) * 0.25`, or at literals only, and its steps add `0.25 * u[t, j]`.
        x's start types x (or, taken as f64, the data its steps meet), and through it the four in
        turn (guessed one type for all, f32, then f64, the cast failed them: E002 until the
        hold-out programs adaboost_stumps and svm_smo_rbf). Nothing of it is drawn from the main
        stream, and the chain's members are no bindings of the program's (their names end as a
        count's)."""
        floats = [m for m in tensors if m.dtype == "f64" and len(m.shape) == 2 and m.sizes[1] > 1
                  and m.name + TALLY_SUFFIX not in names]
        if self.chains is None or not floats or self.chains.random() >= CHAIN_SHARE:
            return members, names, layout
        x = self.chains.choice(floats)
        k = next(p for p, m in enumerate(members) if m.name == x.name)
        e, c, a, u = (x.name + suffix for suffix in CHAIN_SUFFIXES)
        t, back = Index("t"), Binary("-", Index("t"), Lit(1, "i32"), "i32")
        steps, across = Slot("t", Bound(start), x.shape[0]), x.shape[1]
        below = Binary("<", Read(e, (t, Index("k")), x.dtype), Lit(self.chains.choice((0.0, 0.25, -0.25)), x.dtype), "bool")
        count = Cast(Reduce("sum", (Range("k", Bound(0), across),),
                            IfElse(below, Lit(1.0, x.dtype), Lit(0.0, x.dtype), x.dtype), None, x.dtype), "i32")
        chain = [
            Define(e, x.dtype, (Clause((steps, Slot("k", Bound(0), across)),
                                       Binary("*", Read(x.name, (back, Index("k")), x.dtype), Lit(0.5, x.dtype), x.dtype)),)),
            Define(c, "i32", (Clause((steps,), count),)),
            Define(a, x.dtype, (Clause((steps,), Read(e, (t, Binary("%", Read(c, (t,), "i32"), Lit(x.sizes[1], "i32"), "i32")),
                                                      x.dtype)),)),
            Define(u, x.dtype, (Clause((steps, Slot("j", Bound(0), across)),
                                       Binary("+", Read(a, (t,), x.dtype), Read(x.name, (back, Index("j")), x.dtype), x.dtype)),))]
        # x's start typed by a cast, or by literals only (then only the data its steps meet types it)
        first = Binary("*", Cast(Index("j"), x.dtype), Lit(0.25, x.dtype), x.dtype) if self.chains.random() < 0.5 \
            else IfElse(Binary("==", Index("j"), Lit(0, "i32"), "bool"), Lit(0.5, x.dtype), Lit(0.0, x.dtype), x.dtype)
        added = Binary("*", Lit(0.25, x.dtype), Read(u, (t, Index("j")), x.dtype), x.dtype)
        stepped = replace(members[k], clauses=tuple(_restarted(c, start, first, added) for c in members[k].clauses))
        at = next(p for p, (member, _) in enumerate(layout) if member == x.name)
        at_name = names.index(x.name)
        return (members[:k] + chain + [stepped] + members[k + 1:], names[:at_name] + [e, c, a, u] + names[at_name:],
                layout[:at] + [(e, 0), (c, 0), (a, 0), (u, 0)] + layout[at:])

    def lane_member(self, me: Tensor, rest: tuple, steps: tuple, start: int) -> Define:
        """A member of independent series along its last axis (`rest[-1]`): a literal start, then
        each step a sum of scaled reads of the members at this lane, one or more steps back (or
        this step, for an earlier member), at this point of the other axes or a fixed one, maybe
        through tanh: the f32 arithmetic the CPU's lane blocks compute, with no read across lanes."""
        rng, t = self.rng, Index("t")
        total = Lit(rng.choice((0.25, -0.5, 1.0)), me.dtype)
        for step in steps:
            back = rng.choice(step.lookbacks)
            others = tuple(Index(s.var) if rng.random() < 0.7 else Lit(rng.randrange(size), "i32")
                           for s, size in zip(rest[:-1], step.tensor.sizes[1:-1]))
            at = Binary("-", t, Lit(back, "i32"), "i32") if back else t
            read = Read(step.tensor.name, (at,) + others + (Index(rest[-1].var),), me.dtype)
            total = Binary("+", total, Binary("*", Lit(rng.choice((0.3, -0.3, 0.25)), me.dtype), read, me.dtype),
                           me.dtype)
        body = Call("tanh", (total,), me.dtype) if rng.random() < 0.5 else total
        first = (Slot("t", Bound(0), Bound(start), explicit=True),) + rest
        main = (Slot("t", Bound(start), me.shape[0], explicit=True),) + rest
        return Define(me.name, me.dtype, (Clause(first, self.gen.literal(me.dtype)), Clause(main, body)))

    def step_body(self, me: Tensor, scope: Scope, typed_by_step: bool = False):
        """A step that reads the member itself one or more steps back, kept bounded. A member
        with no other clause gets `t as T` in its step, so that its type is not the default."""
        rng = self.rng
        gen = self.gen
        own = StepRead(me, tuple(c for c in next(s for s in scope.steps if s.tensor is me).lookbacks if c))
        previous = gen.step_read(own, scope)
        if me.dtype == "bool":         # a cellular automaton's cell, a running any or all
            return Binary(rng.choice(("||", "&&", "!=", "==")), previous, gen.expr("bool", scope, rng.randint(1, 2)),
                          "bool")
        drive = gen.expr(me.dtype, scope, rng.randint(1, 2))
        if rng.random() < 0.3 or self.long_back:
            drive = self.gated(me, self.step_tensor(me, own, scope), scope)
        drive = self.with_history(me, scope, drive)
        drive = self.with_shifted(me, scope, drive)
        drive = self.with_nesting(me, scope, drive)
        drive = self.with_row(me, scope, drive)
        if typed_by_step:
            drive = Binary("+", drive, Cast(Index(scope.step_var), me.dtype), me.dtype)
        if me.dtype in INTS:
            modulus = Lit(rng.randint(5, 40), me.dtype)
            return Binary("%", Binary("+", previous, drive, me.dtype), modulus, me.dtype)
        shape = rng.random()
        if shape < 0.4:
            coef = Lit(rng.choice((0.5, 0.9, -0.5, 0.25, 0.75)), me.dtype)
            return Binary("+", Binary("*", coef, previous, me.dtype), drive, me.dtype)
        if shape < 0.6:
            return Call("tanh", (Binary("+", previous, drive, me.dtype),), me.dtype)
        if shape < 0.75:
            return Call(rng.choice(("min", "max")), (previous, drive), me.dtype)
        body = gen.expr(me.dtype, scope, 2)
        if typed_by_step or not any(isinstance(n, Read) and n.name == me.name for n in walk(body)):
            body = Binary("+", Binary("*", Lit(0.5, me.dtype), previous, me.dtype),
                          Binary("+", body, drive, me.dtype) if typed_by_step else body, me.dtype)
        return Call("tanh", (body,), me.dtype) if rng.random() < 0.5 else body

    def with_history(self, me: Tensor, scope: Scope, drive):
        """Some of the time (from `history`, a stream of its own) `drive` plus the member's
        extremum (or a float's mean) over every earlier step at this point, `0.25 * max[k in
        0..t](r[k, j])`: a reduction whose range grows with the step, reading rows a fixed
        lookback does not reach (a host loop of parallel kernels, vulkan-spirv's and that of a
        group whose steps compute a tensor, keeps the member whole for it)."""
        if self.history is None or self.history.random() >= HISTORY_SHARE or self.long_back:
            return drive
        t, k = scope.step_var, self.gen.index_name(scope)
        rest = tuple(Index("jkl"[a]) for a in range(len(me.shape) - 1))
        read = Read(me.name, (Index(k),) + rest, me.dtype)
        op = self.history.choice(("max", "min", "mean") if me.dtype in FLOATS else ("max", "min"))
        over = Reduce("sum" if op == "mean" else op, (Range(k, Bound(0), Bound(0, index=t)),), read, None, me.dtype)
        if op == "mean":
            over = Binary("/", over, Cast(Index(t), me.dtype), me.dtype)
        if me.dtype in FLOATS:
            over = Binary("*", Lit(0.25, me.dtype), over, me.dtype)
        return Binary("+", drive, over, me.dtype)

    def with_shifted(self, me: Tensor, scope: Scope, drive):
        """Some of the time (from `shifted`, a stream of its own) a float `drive` plus a quarter
        of the member's mean over its steps from the second index j on, read backward over a
        range that starts at j: `0.25 * sum[q in j..t](r[t - 1 - q + j, j, ..]) / t` (empty where
        j >= t). The read's step stays before t only through both q and j: q's bound names j,
        which cancels (an interval DP's `C[r - i, i]`, r in i..i + l)."""
        if self.shifted is None or me.dtype not in FLOATS or len(me.shape) < 2 or self.long_back \
                or self.shifted.random() >= SHIFT_SHARE:
            return drive
        t, q = scope.step_var, self.gen.index_name(scope)
        back = Binary("-", Binary("-", Index(t), Lit(1, "i32"), "i32"), Index(q), "i32")
        rest = tuple(Index("jkl"[a]) for a in range(len(me.shape) - 1))
        read = Read(me.name, (Binary("+", back, Index("j"), "i32"),) + rest, me.dtype)
        over = Reduce("sum", (Range(q, Bound(0, index="j"), Bound(0, index=t)),), read, None, me.dtype)
        mean = Binary("/", over, Cast(Index(t), me.dtype), me.dtype)
        return Binary("+", drive, Binary("*", Lit(0.25, me.dtype), mean, me.dtype), me.dtype)

    def with_nesting(self, me: Tensor, scope: Scope, drive):
        """Some of the time (from `nesting`, a stream of its own, with names of its own) `drive`
        plus the last value of a loop that runs whole inside the step, started from a member one
        or more steps back at a fixed point: a block holding a scalar recurrence (`{ let s[0] =
        r[t - 1, 2] + ..; let s[m in 1..5] = 0.5 * s[m - 1] + ..; s[4] }`) or a call of the
        program's function whose body is one. The loop sees the step's index, the program's
        tensors and the members at earlier steps, not the clause's other indices, its `where`
        bindings or the member itself at this step: one reading the step being computed is E011
        (docs/DECISIONS.md, Recurrences). Some loops (from `current`, a stream of its own) also
        read members computed earlier in the step (`solve(S[t], ..)`); some (from `points`, a
        stream of its own) read the clause's other indices too, one loop per point, which einc
        runs for every point at once."""
        if self.nesting is None or me.dtype not in FLOATS + INTS or self.nesting.random() >= NESTING_SHARE:
            return drive
        gen = self.nested
        now = self.current is not None and self.current.random() < CURRENT_SHARE
        per_point = self.points is not None and self.points.random() < POINTS_SHARE
        inner = _nesting_scope(scope, self.scope.functions, now, per_point)
        start = gen.step_read(self.nesting.choice([s for s in inner.steps if s.tensor.dtype == me.dtype]), inner)
        calls = [f for f in self.scope.functions if isinstance(f.body, Recur) and f.dtype == me.dtype]
        if calls and self.nesting.random() < 0.5:
            fn = self.nesting.choice(calls)
            (_, first), *rest = fn.params
            first_arg = start if start.dtype == first else Cast(start, first)
            args = (first_arg,) + tuple(named(gen.expr(t, inner, 1)) for _, t in rest)
            return Binary("+", drive, Call(fn.name, args, me.dtype), me.dtype)
        var = gen.index_name(inner)
        loop = self.recurrence(me.dtype, replace(inner, hidden=inner.hidden + (var,)), gen, var)
        loop = replace(loop, init=Binary("+", start, self.by_step(me, inner, loop.init), me.dtype))
        return Binary("+", drive, self.reading_earlier_steps(me, inner, loop), me.dtype)

    def reading_earlier_steps(self, me: Tensor, inner: Scope, loop: Recur) -> Recur:
        """Sometimes (from `earlier`, a stream of its own) the loop's step also reads a member at
        the outer step minus its own, `x[t - k, ..]` under `k <= t`: a step its range puts before
        the outer one, read from the member's history (Arnoldi's Gram-Schmidt over the earlier
        basis vectors; E011 before)."""
        steps = [s for s in inner.steps if s.tensor.dtype == me.dtype and not s.lane]
        if self.earlier is None or not steps or self.earlier.random() >= EARLIER_SHARE:
            return loop
        read = self.nested.earlier_read(self.earlier.choice(steps), inner, loop.var)
        if me.dtype in FLOATS:
            read = Binary("*", Lit(0.25, me.dtype), read, me.dtype)
        return replace(loop, step=Binary("+", loop.step, read, me.dtype))

    def by_step(self, me: Tensor, inner: Scope, init):
        """Sometimes (from `stepped`, a stream of its own) `init` plus the sum of a member's row
        at an earlier step times the step's index, `0.25 / n * sum(r[t - 1] * (t as f32))`: a
        tensor the step computes from its index, which the inner loop reads."""
        rows = [s for s in inner.steps if s.tensor.dtype == me.dtype and len(s.tensor.shape) > 1]
        if self.stepped is None or me.dtype not in FLOATS or not rows or self.stepped.random() >= STEPPED_SHARE:
            return init
        row = self.stepped.choice(rows)
        read = Prelude("sum", row.tensor.name, me.dtype, self.stepped.choice(row.lookbacks), by_step=True)
        scale = Lit(0.25 / int(np.prod(row.tensor.sizes[1:])), me.dtype)
        return Binary("+", init, Binary("*", scale, read, me.dtype), me.dtype)

    def with_row(self, me: Tensor, scope: Scope, drive):
        """In a long group (`group`), `drive` plus the sum, max or min of a member's whole row at
        the group's first step, `0.25 * max(r[t - 3])`: the step reads the row as a tensor, which
        the host loop's chunks of steps must carry past their boundaries, further back than its
        point reads (sums scaled by the row's size, so the state stays bounded)."""
        rows = [s for s in scope.steps if s.tensor.dtype == me.dtype and len(s.tensor.shape) > 1
                and any(s.lookbacks)]
        if not self.long_back or not rows:
            return drive
        step = self.long.choice(rows)
        op = self.long.choice(("sum", "max", "min"))
        read = Prelude(op, step.tensor.name, me.dtype, self.long_back)
        if me.dtype in FLOATS:
            size = int(np.prod(step.tensor.sizes[1:])) if op == "sum" else 1
            read = Binary("*", Lit(0.25 / size, me.dtype), read, me.dtype)
        return Binary("+", drive, read, me.dtype)

    def step_tensor(self, me: Tensor, own: StepRead, scope: Scope) -> StepTensor:
        """An indexed `let` in the step, `let h[q in 0..n] = ..;` over the state one step back
        (or at step q, before t) and q (kept bounded), read back by a reduction over it or at a
        fixed point."""
        rng, gen = self.rng, self.gen
        name, var, size = gen.name("h"), gen.index_name(scope), rng.randint(1, 4)
        # the members at earlier steps, and the earlier members of the step at this one too
        # (scope.steps: computed before the tensor, once they are written in the step)
        inner = scope.with_index(IndexVar(var, 0, size - 1, Bound(0), Bound(size)))
        # or every earlier step by q under `q < t` (the member is then stored whole)
        # (not in a long group, whose rows its chunks of steps carry: the history keeps it whole)
        history = not own.lane and size <= me.sizes[0] and rng.random() < 0.3 and not self.long_back
        read = gen.history_read(own, inner, var) if history else gen.step_read(own, inner)
        body = Binary("+", read, gen.expr(me.dtype, inner, 1), me.dtype)
        if me.dtype in INTS:
            body = Binary("%", body, Lit(rng.randint(5, 40), me.dtype), me.dtype)
        else:
            body = Call("tanh", (body,), me.dtype)
        if rng.random() < 0.5:
            return StepTensor(name, var, size, body, Local(name, Lit(rng.randrange(size), "i32"), me.dtype), me.dtype)
        at = gen.index_name(inner)
        op = rng.choice(("sum", "max", "min"))
        result = Reduce(op, (Range(at, Bound(0), Bound(size)),), Local(name, Index(at), me.dtype), None, me.dtype)
        return StepTensor(name, var, size, body, result, me.dtype)

    def gated(self, me: Tensor, tensor: StepTensor, scope: Scope):
        """Some of the time (from `gates`, a stream of its own, with names of its own) a float step
        tensor is computed only at the steps a new index input gt of 2 to 5 values in -1..n - 1
        (the first -1) lets it, its body also reading a 1-d input of n floats there:
        `if gt[t % 3] >= 0 { { let h[q in 0..2] = .. + 0.25 * x[gt[t % 3]]; .. } } else { 0.0 }`
        (the read is checked only at the steps that take the branch); else the tensor as drawn."""
        draw = self.gates
        arrays = [i for i in self.inputs if i.dtype == me.dtype and len(i.shape) == 1]
        if draw is None or me.dtype not in FLOATS or not arrays or draw.random() >= GATE_SHARE:
            return tensor
        x = draw.choice(arrays)
        gate = Input(f"{GATE_INPUT}{len(self.gate_inputs)}", "i32", (Bound(draw.randint(2, 5)),), -1,
                     _tensor(x, self.scope.dims).sizes[0] - 1)
        self.gate_inputs.append(gate)   # declared only where the program keeps the draw (program)
        at = Read(gate.name, (Binary("%", Index(scope.step_var), Lit(gate.shape[0].const, "i32"), "i32"),), "i32")
        read = Binary("*", Lit(0.25, me.dtype), Read(x.name, (at,), me.dtype), me.dtype)
        return IfElse(Binary(">=", at, Lit(0, "i32"), "bool"), replace(tensor, body=Binary("+", tensor.body, read, me.dtype)),
                      Lit(0.0, me.dtype), me.dtype)

    # ------------------------------------------------------------ elementwise, functions, derivatives

    def whole(self) -> Whole | None:
        arrays = [t for t in self.scope.tensors if t.shape and t.dtype != "bool"]
        if not arrays:
            return None
        pick = self.rng.choice(arrays)
        same = [t for t in self.scope.tensors if t.shape == pick.shape and t.sizes == pick.sizes]
        scalars = [t for t in self.scope.tensors if not t.shape]
        operands = tuple(Tensor(t.name, t.dtype, (), ()) for t in same + scalars)
        scope = Scope(tensors=operands, functions=self.scope.functions, dims=self.scope.dims, whole=True,
                      arrays=True)
        dtype = pick.dtype
        expr = self.gen.expr(dtype, scope, self.rng.randint(1, 3))
        functions = {f.name: f for f in self.scope.functions}
        if not depends_on(expr, {t.name for t in same}, functions):
            expr = Binary("+", expr, Read(pick.name, (), dtype), dtype)
        name = self.gen.name("w")
        self.add_tensor(Tensor(name, dtype, pick.shape, pick.sizes))
        return Whole(name, dtype, pick.shape, expr)

    def row_map(self) -> RowMap | None:
        """A function of a row applied to each row of a 2-d float array in a comprehension."""
        arrays = [t for t in self.scope.tensors if len(t.shape) == 2 and t.dtype in FLOATS]
        if not arrays:
            return None
        pick = self.rng.choice(arrays)
        scope = Scope(tensors=(Tensor(ROW, pick.dtype, (), ()),), functions=self.scope.functions, dims={},
                      whole=True, arrays=True)
        expr = self.gen.expr(pick.dtype, scope, self.rng.randint(1, 3))
        if not depends_on(expr, {ROW}, {f.name: f for f in self.scope.functions}):
            expr = Binary("+", expr, Read(ROW, (), pick.dtype), pick.dtype)
        name = self.gen.name("r")
        op, local = self.rng.choice(("sum", "max", "min")), self.rng.random() < 0.5
        fixed = pick.shape[1].dim is None and 2 <= pick.shape[1].const <= 4
        unpacked, whole = fixed and self.rng.random() < 0.5, self.rng.random() < 0.5
        split = not whole and self.pieces is not None and self.pieces.random() < SPLIT_SHARE
        scanned = not (whole or split or unpacked) and self.scans is not None and self.scans.random() < SCAN_SHARE
        ranked = scanned and self.ranks is not None and self.ranks.random() < RANKED_SHARE
        converted = not unpacked and self.casts is not None and self.casts.random() < CAST_SHARE
        through = self.skipping(pick) if not (unpacked or scanned) else None
        shape = (through.shape if through else pick.shape[:1])
        self.add_tensor(Tensor(name, pick.dtype, shape, (through.shape[0].const,) if through else pick.sizes[:1]))
        return RowMap(name, pick.name, pick.dtype, pick.shape, expr, op, local, unpacked, whole, split, scanned, converted,
                      through=through.name if through else None, ranked=ranked)

    def skipping(self, pick: Tensor) -> Input | None:
        """Some of the time (from `skips`, a stream of its own, with names of its own) a new index
        input of 2 to 5 values in -1..rows - 1 (the first -1) picks the rows the row function is applied to, -1
        skipping one (`[if s[i] >= 0 { f(x[s[i]]) } else { 0.0 } | i in 0..4]`: the row's whole
        arithmetic is read only under the guard, RowMap.through); else None."""
        draw = self.skips
        if draw is None or draw.random() >= SKIP_SHARE:
            return None
        picker = Input(f"{SKIP_INPUT}{len(self.inputs)}", "i32", (Bound(draw.randint(2, 5)),), -1, pick.sizes[0] - 1)
        self.inputs.append(picker)
        self.add_tensor(_tensor(picker, self.scope.dims))
        return picker

    def picked_column(self) -> list:
        """Some of the time (from `columns`, a stream of its own, with names of its own) a 3-d
        float input, its copy at one position of its last axis, and a sum over an index input's
        picks of the copy's columns, row by row: `let czc[i, j] = czx[i, j, 2]; let czg[i] =
        sum[k in 0..L](czc[i, czp[k]]);`. IREE loads such a copy with strides inside the gathering
        kernel (IREE-105, einc/mlir/strided_gathers.py); else []."""
        draw = self.columns
        if draw is None or draw.random() >= COLUMN_SHARE:
            return []
        rows, cols, depth, picks = draw.randint(2, 5), draw.randint(2, 5), draw.randint(2, 4), draw.randint(2, 5)
        dtype = self.float_type
        source = Input(f"{COLUMN_NAME}x", dtype, (Bound(rows), Bound(cols), Bound(depth)))
        picker = Input(f"{COLUMN_NAME}p", "i32", (Bound(picks),), 0, cols - 1)
        self.inputs += [source, picker]
        i, j = Slot("i", Bound(0), Bound(rows)), Slot("j", Bound(0), Bound(cols))
        copy = Define(f"{COLUMN_NAME}c", dtype, (Clause((i, j), Read(source.name, (Index("i"), Index("j"),
                                                                                      Lit(draw.randrange(depth), "i32")), dtype)),))
        picked = Read(copy.name, (Index("i"), Read(picker.name, (Index("k"),), "i32")), dtype)
        gather = Define(f"{COLUMN_NAME}g", dtype, (Clause((i,), Reduce("sum", (Range("k", Bound(0), Bound(picks)),),
                                                                        picked, None, dtype)),))
        return [copy, gather]

    def per_point(self, row_map: RowMap) -> list:
        """Some of the time (from `perpoint`, a stream of its own, with names of its own) the row
        function also reads a new float input p, a scalar or a short vector at literal indices,
        passed beside each row, and its gradient by p is asked per row (`jax.vmap(jax.grad(..))`,
        Derivative.per_point), or summed over the rows; else the row map as drawn."""
        draw = self.perpoint
        if draw is None or draw.random() >= PER_POINT_SHARE or row_map.through:
            return [row_map]
        dtype, length = row_map.dtype, draw.choice((0, 0, 2, 3, 4))
        param = Input(f"{row_map.name}_p", dtype, (Bound(length),) if length else ())
        self.inputs.append(param)
        self.add_tensor(_tensor(param, self.scope.dims))

        def read():
            return Read(PARAM, (Lit(draw.randrange(length), "i32"),) if length else (), dtype)
        expr = row_map.expr
        for _ in range(draw.randint(1, 2)):
            form = draw.randrange(3)
            if form == 0:
                expr = Binary("*", expr, read(), dtype)
            elif form == 1:
                expr = Binary("+", expr, Binary("*", read(), Read(ROW, (), dtype), dtype), dtype)
            else:
                expr = Call("tanh", (Binary("+", expr, read(), dtype),), dtype)
        row_map = replace(row_map, expr=expr, param=param.name, param_length=length)
        gradient = Derivative(f"{row_map.name}_g", row_map.name, param.name, dtype,
                              per_point=draw.choice(("each", "each", "sum")), called=draw.random() < 0.4)
        return [row_map, gradient]

    def total(self, member: str) -> Define:
        """`let s = sum[i, j](r[i, j]);` of a recurrence member: a scalar that a derivative can
        reach through the group in reverse mode (an adjoint loop), not only as a Jacobian."""
        tensor = next(t for t in self.scope.tensors if t.name == member)
        ranges = tuple(Range("ijkl"[a], Bound(0), b) for a, b in enumerate(tensor.shape))
        body = Read(member, tuple(Index(r.var) for r in ranges), tensor.dtype)
        name = self.gen.name("s")
        self.add_tensor(Tensor(name, tensor.dtype, (), ()))
        if self.tails is not None and len(tensor.shape) > 1 and self.tails.random() < TAIL_SHARE:
            return self.tail_total(name, tensor)
        return Define(name, tensor.dtype, (Clause((), Reduce("sum", ranges, body, None, tensor.dtype)),))

    def tail_total(self, name: str, tensor: Tensor) -> Define:
        """`let s = sum[j](sum[k in 0..j + 1](r[T - 1, k, 0, ..]));`: the member read at its last
        step only, over a range that grows with j, and left out of the outputs, so that it keeps
        a window of steps. The read's far end along the steps was once checked against the
        window's slots (index T - 1 of an axis of 2: every run failed; the hold-out program
        isotonic_pava). Some write `sum[j](..)`: j's range comes through k's alone."""
        self.tail_read = tensor.name
        last = bound_expr(tensor.shape[0].plus(-1))
        read = Read(tensor.name, (last, Index("k")) + (Lit(0, "i32"),) * (len(tensor.shape) - 2), tensor.dtype)
        prefix = Reduce("sum", (Range("k", Bound(0), Bound(1, index="j")),), read, None, tensor.dtype)
        inferred = self.prefixes is not None and self.prefixes.random() < PREFIX_SHARE
        body = Reduce("sum", (Range("j", Bound(0), tensor.shape[1], explicit=not inferred),), prefix, None,
                      tensor.dtype)
        return Define(name, tensor.dtype, (Clause((), body),))

    def function(self) -> Function:
        rng = self.rng
        params = tuple((p, rng.choice((self.float_type, self.float_type, self.int_type)))
                       for p in ("a", "b", "c")[:rng.randint(1, 3)])
        dtype = rng.choice((self.float_type, self.float_type, self.int_type))
        scope = Scope(locals=params, functions=self.scope.functions, dims={}, whole=True)
        if rng.random() < 0.3:
            body = self.recurrence(dtype, scope)
        else:
            body = named(self.gen.expr(dtype, scope, rng.randint(1, 3)))
        fn = Function(self.gen.name("f"), params, rng.random() < 0.5, body, dtype)
        self.scope = replace(self.scope, functions=self.scope.functions + (fn,))
        return fn

    def recurrence(self, dtype: str, scope: Scope, gen: ExpressionGenerator | None = None,
                   var: str = "k") -> Recur:
        """A scalar recurrence over `var` (a function body's over its parameters, or one in a
        step, drawn by `gen`), kept bounded as the groups' steps are (a contraction, tanh, or a
        modulus for integers)."""
        gen = gen or self.gen
        rng = gen.rng
        prev = Prev(gen.name("s"), dtype, var)
        drive = gen.expr(dtype, scope, rng.randint(1, 2))
        if dtype in INTS:
            step = Binary("%", Binary("+", prev, drive, dtype), Lit(rng.randint(5, 40), dtype), dtype)
        else:
            coef = Lit(rng.choice((0.5, 0.9, -0.5, 0.25, 0.75)), dtype)
            step = Binary("+", Binary("*", coef, prev, dtype), drive, dtype)
            step = Call("tanh", (step,), dtype) if rng.random() < 0.4 else step
        return self.with_lanes(Recur(prev.name, named(gen.expr(dtype, scope, 1)), step, rng.randint(2, 9), dtype, var),
                               scope)

    def with_lanes(self, loop: Recur, scope: Scope) -> Recur:
        """Sometimes (from `lanes`, a stream of its own) the loop's state is a row, `let s[k in
        1..n, j in 0..w] = ..`: its step reads the row one step back at its lane, at the next
        (`s[k - 1, (j + 1) % w]`) and reduced whole (`max(s[k - 1])`), its start reads the lane's
        index, its value is one lane of the last step. In a recurrence step the loop's rows run
        inside the step's dispatch, in vector lanes; called per point, they are batched over the
        points (a clause's range may start past 0)."""
        rng, dtype = self.lanes, loop.dtype
        if rng is None or dtype not in FLOATS + INTS or rng.random() >= LANES_SHARE:
            return loop
        taken = {v.name for v in scope.indices} | {n for n, _ in scope.locals} | set(scope.hidden) | {loop.var}
        lane = Index(next(c for c in expressions.INDEX_NAMES if c not in taken))
        width = rng.choice(LANE_COUNTS)
        following = Prev(loop.name, dtype, loop.var, Binary("%", Binary("+", lane, Lit(1, "i32"), "i32"),
                                                               Lit(width, "i32"), "i32"))
        op = rng.choice(("sum", "max", "min") if dtype in FLOATS else ("max", "min"))
        whole = PrevRow(loop.name, op, dtype, loop.var)
        if dtype in FLOATS:     # the row's terms add at most a quarter of its size a step
            scale = Lit(0.125 / width if op == "sum" else 0.125, dtype)
            extra = Binary("+", Binary("*", Lit(0.125, dtype), following, dtype), Binary("*", scale, whole, dtype), dtype)
            start = Binary("*", Lit(0.25, dtype), Cast(lane, dtype), dtype)
        else:
            extra, start = Binary("+", following, whole, dtype), Cast(lane, dtype)
        return replace(loop, init=Binary("+", loop.init, start, dtype), step=_in_lanes(loop.step, loop.name, lane, extra),
                       lanes=width, lane=lane.name, pick=rng.randrange(width))

    def derivative(self, items: list, inputs: list) -> Derivative | None:
        rng = self.rng
        # (not of a per-point derivative: it is not in scope)
        order = [i.name for i in inputs] + [n for item in items if not isinstance(item, Derivative)
                                            for n in _names(item)]
        tensors = {t.name: t for t in self.scope.tensors}
        recurrent = {m.name for item in items if isinstance(item, Group) for m in item.members}
        wrts = [n for n in order if tensors[n].dtype in FLOATS and n not in recurrent
                and int(np.prod(tensors[n].sizes)) <= 6]
        if not wrts:
            return None
        wrt = rng.choice(wrts)
        depends = _dependents(items, wrt)
        inputs_ = {i.name for i in inputs}
        ofs = [n for n in order[order.index(wrt) + 1:] if n not in inputs_ and tensors[n].dtype == tensors[wrt].dtype
               and int(np.prod(tensors[n].sizes)) <= 12]
        preferred = [n for n in ofs if n in depends] or ofs
        if not preferred:
            return None
        outer = rng.choice(OUTER_EXPRESSIONS) if rng.random() < 0.25 else "{0}"
        if outer == "{0}" and self.literals is not None and self.literals.random() < LITERAL_SHARE:
            outer = LITERAL_OUTER
        inner = rng.choice(INNER_EXPRESSIONS) if not tensors[wrt].sizes and rng.random() < 0.5 else "{0}"
        return Derivative(self.gen.name("g"), rng.choice(preferred), wrt, tensors[wrt].dtype, outer, inner)

    def scaled(self, derivatives: list) -> list:
        """Some of the time (from `scales`, a stream of its own) each derivative written with a
        factor before it and no parentheses, `0.5 * @y / @x`, which is `0.5 * (@y / @x)`."""
        if self.scales is None:
            return derivatives
        return [replace(d, scale=self.scales.choice(list(SCALES))) if self.scales.random() < SCALE_SHARE else d
                for d in derivatives]

    def padded(self, derivatives: list) -> list:
        """Some of the time (from `pads`, a stream of its own) a derivative of rank 1 or more is
        bound first and read under a guard over one point more along its last axis (a read of a
        derivative past its axis where the guard is false, Derivative.padded)."""
        if self.pads is None:
            return derivatives
        tensors = {t.name: t for t in self.scope.tensors}
        out = []
        for d in derivatives:
            shape = tuple(tensors[d.of].shape) + tuple(tensors[d.wrt].shape)
            if self.pads.random() < PAD_SHARE and shape:
                d = replace(d, padded=(len(shape), shape[-1]))
            out.append(d)
        return out

    def sibling_derivative(self, first: Derivative, inputs: list) -> list:
        """Maybe `@of / @other` beside `first`, of the same value by another input (`@L / @W1`,
        `@L / @W2`): through a recurrence both reach the same adjoint loop, which einc builds
        once (einc.passes.shared_values)."""
        if self.pairs is None or self.pairs.random() >= PAIR_SHARE:
            return []
        tensors = {t.name: t for t in self.scope.tensors}
        others = [i.name for i in inputs if i.name != first.wrt and i.dtype == tensors[first.of].dtype
                  and int(np.prod(tensors[i.name].sizes)) <= 6]
        if not others:
            return []
        wrt = self.pairs.choice(others)
        return [Derivative(self.gen.name("g"), first.of, wrt, tensors[wrt].dtype, first.outer)]


def _nesting_scope(step: Scope, functions: tuple, now: bool = False, points: bool = False) -> Scope:
    """What a loop run inside a step of `step` may read: the step's index (with `points`, the
    clause's other indices too), the members at earlier steps (with `now`, those computed earlier
    in the step at this one too), the tensors but index inputs (an inner loop's data-dependent
    subscripts are clamped, not checked, so a stray one would not fail the run), the functions
    that are not recurrences; the step's other names hidden."""
    steps = (replace(s, lookbacks=tuple(c for c in s.lookbacks if c or now)) for s in step.steps)
    return Scope(tensors=tuple(t for t in step.tensors if not (t.values and t.values[0] >= 0)),
                 indices=tuple(v for v in step.indices if v.name == step.step_var or points),
                 functions=tuple(f for f in functions if not isinstance(f.body, Recur)),
                 steps=tuple(s for s in steps if s.lookbacks), step_var=step.step_var, dims=step.dims,
                 hidden=step.hidden + tuple(v.name for v in step.indices) + tuple(n for n, _ in step.locals))


def _in_lanes(node, name: str, lane: Index, extra):
    """`node` with each read of the loop `name` one step back taken at `lane`, plus `extra`."""
    if isinstance(node, Prev) and node.name == name:
        return Binary("+", replace(node, lane=lane), extra, node.dtype)
    if isinstance(node, tuple):
        return tuple(_in_lanes(n, name, lane, extra) for n in node)
    if not is_dataclass(node) or isinstance(node, (Range, Bound)):
        return node
    return replace(node, **{f.name: _in_lanes(getattr(node, f.name), name, lane, extra) for f in fields(node)})


def _tensor(inp: Input, dims: dict) -> Tensor:
    sizes = tuple(b.const + (dims[b.dim] if b.dim else 0) for b in inp.shape)
    values = (int(inp.low), int(inp.high)) if inp.dtype in INTS else None
    return Tensor(inp.name, inp.dtype, inp.shape, sizes, values)


def _names(item) -> list[str]:
    if isinstance(item, Group):
        return [m.name for m in item.members if not m.name.endswith(TALLY_SUFFIX)]
    if isinstance(item, Function):
        return []
    return [item.name]


def _dependents(items: list, name: str) -> set:
    """Bindings that read `name`, directly or through others."""
    found = {name}
    for item in items:
        if reads_of(item) & found:
            found |= set(_names(item))
    return found


def _interleave(rng: random.Random, sequences: list) -> list:
    """A random merge of sequences that keeps each one's order."""
    pending = [list(s) for s in sequences if s]
    out = []
    while pending:
        seq = rng.choice(pending)
        out.append(seq.pop(0))
        pending = [s for s in pending if s]
    return out


def _restarted(clause: Clause, start: int, first, added) -> Clause:
    """A member's clause with its start (a clause before step `start`) made `first`, and with
    `added` added to it if it is a plain step clause (a rim's, under a guard, stays as with_rim
    drew it)."""
    if clause.slots[0].lo.dim is None and clause.slots[0].lo.const < start:
        return replace(clause, body=first)
    if clause.slots[0].lo != Bound(start) or any(s.var is None for s in clause.slots) or \
            any(w.name is None for w in clause.wheres) or isinstance(clause.body, Lit):
        return clause
    return replace(clause, body=Binary("+", clause.body, added, added.dtype))
