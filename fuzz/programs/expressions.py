"""Random well-typed expressions over what a scope can see.

Reads are kept in bounds by construction from the concrete ranges of the indices in scope
(the NumPy meaning checks it again): a subscript is a plain index, an index plus a constant, a
multiple, a quotient, a sum of two indices, a constant or a data-dependent `idx[i]`; one that
could leave the array is wrapped in an `if` whose condition is exactly the bounds check.
Divisors and the arguments of log and sqrt are built to stay in their domains.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field, fields, is_dataclass, replace

from fuzz.programs.wellformed import decides
from fuzz.programs.structure import (
    FLOATS, INTS, UNSIGNED, Arm, Binary, Block, Bound, Call, Cast, DimRef, IfElse, Index, Lit, Match, Pattern,
    Local, Prelude, Prev, PrevRow, Range, Read, Recur, Reduce, RestRead, RowMatch, StepTensor, Unary, Var, children,
    walk)

FLOAT_LITERALS = (0.5, 0.25, 1.5, 2.0, 0.1, 0.3, 0.75, 3.0, 1.25, 0.125, 0.9, 1.0, 0.01, 2.5)
SMOOTH = ("exp", "sin", "cos", "tanh", "atan", "sinh")
REDUCTIONS = {"float": ("sum", "sum", "prod", "max", "min"), "int": ("sum", "sum", "max", "min"),
              "bool": ("all", "any")}
INDEX_NAMES = "ijklmnopqrsuvw"
COUNT_SHARE = 0.8              # of the guarded i32 sums over one plain range, those counting as a comprehension's length
FILTER_SHARE = 0.5             # of the other guarded sums, max and min over one plain range, those reducing a filtered comprehension
WINDOW_SHARE = 0.4             # of the ranges `0..i + 1` drawn, those made a clamped window
SIBLING_SHARE = 0.5            # of second reduction indices over the first's range, those made `0..j + 1`
EXTREMUM_GUARD_SHARE = 0.3     # of the max, min and prod reductions drawn, those given a guard
WRAP_SHARE = 0.06              # of the subscripts drawn in an axis of a plain size, those wrapped around it
SIGNED_SHARE = 0.04            # of the subscripts drawn, those made `(i - c) / k + d` or `(i - c) % k + d`
WIDE_POWER_SHARE = 1.0         # of the i64 powers drawn, those written (E002 before branch hdp; 0 in tests: none)
NARROW_SHARE = 0.15            # of the programs, those whose integer type is one of NARROW_INTS
INDEX_POWER_SHARE = 0.5        # of the integer powers drawn, those with an index exponent `b ** (i % 3)`
ROW_READ_SHARE = 0.5           # of the reads of an earlier step of a member of 3+ axes, those written `x[t - 1, j][k]`
FOLD_SHARE = 0.5               # of the integer sums drawn, those whose body folds to a constant (_folding)
DATA_RANGE_SHARE = 0.6         # of the float reductions drawn beside an index input, those over a range read from it


# what a reduction drawn from `ends` draws from it in their place (the streams, then the names)
ISOLATED = ("rng", "windows", "siblings", "guards", "signed", "widths", "counts", "wide", "folds", "rows",
            "prefix", "fresh")


@dataclass(frozen=True)
class Streams:
    """Random streams apart from a program's main one, each drawing one later construct, so that
    adding a construct leaves every other program of a seed as it was."""

    windows: random.Random | None = None    # clamped windows (ExpressionGenerator._clamped_window)
    siblings: random.Random | None = None   # ranges over an earlier index of the reduction (_after_a_sibling)
    guards: random.Random | None = None     # guards of max, min and prod (_extremum_guard)
    signed: random.Random | None = None     # integer / and % of negative operands in subscripts (_signed_quotient)
    history: random.Random | None = None    # a step's extremum over every earlier step (ProgramGenerator.with_history)
    triangle: random.Random | None = None   # a state whose second axis grows with the step (ProgramGenerator.triangle)
    starts: random.Random | None = None     # a start clause and the steps' written as one `if` (ProgramGenerator.member)
    bare: random.Random | None = None       # a `where` binding read beside a trailing reduction (ProgramGenerator.clause)
    edges: random.Random | None = None      # insulated edges copying the step's next point (ProgramGenerator.with_edges)
    nesting: random.Random | None = None    # a loop run whole inside a recurrence step (ProgramGenerator.with_nesting)
    long: random.Random | None = None       # a group of more steps than a chunk, computing rows (ProgramGenerator.group)
    pairs: random.Random | None = None      # a second derivative of one value (ProgramGenerator.sibling_derivative)
    wide: random.Random | None = None       # an i64 base to an i32 exponent (ExpressionGenerator.power)
    literals: random.Random | None = None   # a derivative of a value read back from a matrix literal (ProgramGenerator.derivative)
    stepped: random.Random | None = None    # a loop in a step reading a row times the step's index (ProgramGenerator.with_nesting)
    widths: random.Random | None = None     # a narrow integer type (ProgramGenerator), index powers (_index_power)
    scales: random.Random | None = None     # a factor before a derivative, `0.5 * @y / @x` (ProgramGenerator.scaled)
    pieces: random.Random | None = None     # a row function's row copied by two guarded clauses (ProgramGenerator.row_map)
    pads: random.Random | None = None       # a derivative read under a guard past its last axis (ProgramGenerator.padded)
    counts: random.Random | None = None     # a count as a filtered comprehension's length (ExpressionGenerator._counted)
    folds: random.Random | None = None      # an integer sum's body that folds to a constant (ExpressionGenerator._folding)
    rims: random.Random | None = None       # a guarded rim clause beside a step's interior (ProgramGenerator.with_rim)
    copies: random.Random | None = None     # a rim copying the interior's points of its step (ProgramGenerator.with_rim)
    current: random.Random | None = None    # a loop in a step reading members of that step (ProgramGenerator.with_nesting)
    scans: random.Random | None = None      # a row function's reduction as a recurrence over its rows (ProgramGenerator.row_map)
    tallies: random.Random | None = None    # a count member indexing a float member's row (ProgramGenerator.with_tally)
    points: random.Random | None = None     # a loop in a step reading the clause's point indices (ProgramGenerator.with_nesting)
    shifted: random.Random | None = None    # a step's mean over steps from another index on (ProgramGenerator.with_shifted)
    casts: random.Random | None = None      # a row converted by `as [T]` before its row function (ProgramGenerator.row_map)
    rows: random.Random | None = None       # a member's earlier step read as a row, then its element (ExpressionGenerator.step_read)
    earlier: random.Random | None = None    # a loop in a step reading a member at the step minus its own (ProgramGenerator.with_nesting)
    perpoint: random.Random | None = None   # a row function's gradient by a param per row (ProgramGenerator.per_point)
    ends: random.Random | None = None       # a reduction's range with an end read from data (ExpressionGenerator._data_range)
    steprows: random.Random | None = None   # an edge's read of its step written as a row first (ProgramGenerator.with_edges)
    shorts: random.Random | None = None     # a bool member's start and steps as one `||` of `&&`s (ProgramGenerator.member)
    skips: random.Random | None = None      # rows picked by an index input, -1 skipping one (ProgramGenerator.row_map)
    chains: random.Random | None = None     # start-less members typed through a member's start (ProgramGenerator.with_chain)
    tails: random.Random | None = None      # a member's last step summed over growing prefixes (ProgramGenerator.total)
    filtered: random.Random | None = None   # a guarded sum, max or min as `max([..| k in lo..hi, guard])` (ExpressionGenerator._filtered)
    gates: random.Random | None = None      # a step tensor computed only at steps an index input lets, -1 skipping (ProgramGenerator.gated)
    perstep: random.Random | None = None    # a count member of no range reading its step (ProgramGenerator.with_tally)
    wraps: random.Random | None = None      # a subscript wrapped around its axis, `(i + 1 + N) % N` (ExpressionGenerator._wrapped)
    columns: random.Random | None = None    # a copy at one position of an input's last axis, gathered by an index input (ProgramGenerator.picked_column)
    spans: random.Random | None = None      # a triangle's step binding `w = x[t - j]` (ProgramGenerator.with_span_read)
    ranks: random.Random | None = None      # a scanned row fold stepping through a member of one more axis (ProgramGenerator.row_map)
    lanes: random.Random | None = None      # a loop whose state is a row of lanes (ProgramGenerator.with_lanes)
    prefixes: random.Random | None = None   # a prefix total's outer index ranged only through `k in 0..j + 1` (ProgramGenerator.tail_total)

    @classmethod
    def of_case(cls, seed: int, number: int) -> "Streams":
        return cls(*(random.Random(f"{seed}/{number}/{name}") for name in
                     ("windows", "siblings", "guards", "signed", "history", "triangle", "starts", "bare",
                      "edges", "nesting", "long", "pairs", "wide", "literals", "stepped", "widths", "scales",
                      "pieces", "pads", "counts", "folds", "rims", "copies", "current", "scans", "tallies",
                      "points", "shifted", "casts", "rows", "earlier", "perpoint", "ends", "steprows", "shorts",
                      "skips", "chains", "tails", "filtered", "gates", "perstep", "wraps", "columns",
                      "spans", "ranks", "lanes", "prefixes")))


@dataclass(frozen=True)
class Tensor:
    """A binding an expression may read: its type, symbolic and concrete shape, and for integer
    inputs the range of their values (so they can serve as subscripts)."""

    name: str
    dtype: str
    shape: tuple                   # Bound
    sizes: tuple                   # int
    values: tuple | None = None    # (low, high) inclusive, integer inputs only


@dataclass(frozen=True)
class IndexVar:
    name: str
    low: int                       # smallest value it takes anywhere
    high: int                      # largest value it takes anywhere
    lo: Bound
    hi: Bound


@dataclass(frozen=True)
class StepRead:
    """A recurrence member readable at `t - c` for c in `lookbacks` (0: the same step)."""

    tensor: Tensor
    lookbacks: tuple
    lane: str | None = None        # the index every read subscripts the last axis with, if any


@dataclass(frozen=True)
class Scope:
    tensors: tuple = ()            # Tensor
    indices: tuple = ()            # IndexVar, innermost last
    locals: tuple = ()             # (name, dtype)
    functions: tuple = ()          # Function
    steps: tuple = ()              # StepRead
    step_var: str | None = None    # the recurrence index of the clause being generated
    dims: dict = field(default_factory=dict)
    whole: bool = False            # elementwise over whole arrays (or a function body): no indices
    arrays: bool = False           # whole arrays: an `if` whose condition einc folds at build time
                                   # has the shape of the branch taken, so none is generated here
    hidden: tuple = ()             # names of an enclosing scope this one may not read, nor reuse

    def with_index(self, var: IndexVar) -> "Scope":
        return replace(self, indices=self.indices + (var,))

    def with_local(self, name: str, dtype: str) -> "Scope":
        return replace(self, locals=self.locals + ((name, dtype),))


class ExpressionGenerator:
    def __init__(self, rng: random.Random, float_type: str, int_type: str, streams: Streams = Streams(),
                 prefix: str = ""):
        self.rng = rng
        self.prefix = prefix       # of every name it makes: another generator's names never clash
        self.windows, self.siblings, self.guards = streams.windows, streams.siblings, streams.guards
        self.signed, self.widths, self.counts = streams.signed, streams.widths, streams.counts
        self.wraps = streams.wraps
        self.wide, self.folds, self.rows = streams.wide, streams.folds, streams.rows
        self.ends, self.filtered = streams.ends, streams.filtered
        # an index input only ranges read from data use (_data_range), and a binding every scope
        # that sees the program's inputs holds; the program declares it once it is read
        self.spare, self.beside, self.spare_read = None, None, False
        self.ends_fresh = 0         # the name counter of what `ends` draws (_data_reduction)
        self.float_type = float_type
        self.int_type = int_type
        self.fresh = 0
        self.prelude = False       # whether leaves may reduce a whole array with the prelude

    def name(self, stem: str) -> str:
        self.fresh += 1
        return f"{self.prefix}{stem}{self.fresh}"

    def index_name(self, scope: Scope) -> str:
        taken = {v.name for v in scope.indices} | {n for n, _ in scope.locals} | set(scope.hidden)
        return next(c for c in INDEX_NAMES if c not in taken)

    # ------------------------------------------------------------ entry points

    def expr(self, dtype: str, scope: Scope, depth: int):
        return typed_constants(self._expr(dtype, scope, depth))

    def _expr(self, dtype: str, scope: Scope, depth: int):
        if dtype == "bool":
            return self.condition(scope, depth)
        kind = "float" if dtype in FLOATS else "int"
        if depth <= 0:
            return self.leaf(dtype, scope)
        choices = [(self.leaf, 3), (self.arith, 6), (self.negate, 1), (self.choose, 2),
                   (self.cast_from, 2), (self.reduction, 2), (self.call_function, 2),
                   (self.block, 1), (self.match, 1), (self.row_match, 0.5)]
        choices.append((self.math, 3) if kind == "float" else (self.int_math, 2))
        choices.append((self.power, 1))
        choices.append((self.chain, 0.5))
        rule = self._pick(choices)
        node = rule(dtype, scope, depth)
        return node if node is not None else self.leaf(dtype, scope)

    def condition(self, scope: Scope, depth: int):
        choices = [(self.compare, 6), (self.logic, 2 if depth > 0 else 0), (self.bool_leaf, 1),
                   (self.bool_reduction, 1 if depth > 0 and not scope.whole else 0)]
        return self._pick(choices)(scope, depth)

    def _pick(self, weighted):
        rules = [r for r, w in weighted if w > 0]
        return self.rng.choices(rules, [w for _, w in weighted if w > 0])[0]

    # ------------------------------------------------------------ leaves

    def leaf(self, dtype: str, scope: Scope, depth: int = 0):
        options = []
        readable = [t for t in scope.tensors if t.dtype == dtype]
        if readable:
            options.append((lambda: self.read(self.rng.choice(readable), scope), 6))
        arrays = [t for t in readable if t.sizes and dtype != "bool"]
        if arrays and self.prelude:
            options.append((lambda: Prelude(self.rng.choice(("sum", "min", "max")), self.rng.choice(arrays).name,
                                            dtype), 3))
        steps = [s for s in scope.steps if s.tensor.dtype == dtype]
        if steps:
            options.append((lambda: self.step_read(self.rng.choice(steps), scope), 8))
        locals_ = [n for n, t in scope.locals if t == dtype]
        if locals_:
            options.append((lambda: Var(self.rng.choice(locals_), dtype), 5))
        if scope.indices and dtype != "bool":
            options.append((lambda: self.index_value(dtype, scope), 3))
        if scope.dims and dtype in INTS:
            options.append((lambda: self._as(DimRef(self.rng.choice(sorted(scope.dims))), dtype), 1))
        options.append((lambda: self.literal(dtype), 2))
        return self._pick(options)()

    def literal(self, dtype: str, positive: bool = False):
        rng = self.rng
        if dtype == "bool":
            return Lit(rng.random() < 0.5, "bool")
        if dtype in FLOATS:
            value = rng.choice(FLOAT_LITERALS)
        else:
            value = rng.randint(1, 9)
        if not positive and rng.random() < 0.25 and dtype not in UNSIGNED:
            value = -value
        return Lit(value, dtype, suffix=rng.random() < 0.15)

    def index_value(self, dtype: str, scope: Scope):
        var = self.rng.choice(scope.indices)
        return self._as(Index(var.name), dtype)

    def _as(self, node, dtype: str):
        return node if node.dtype == dtype else Cast(node, dtype)

    # ------------------------------------------------------------ reads

    def read(self, tensor: Tensor, scope: Scope):
        subs, guards = [], []
        for size, extent in zip(tensor.sizes, tensor.shape):
            sub, guard = self.subscript(size, extent, scope)
            subs.append(sub)
            guards += guard
        node = Read(tensor.name, tuple(subs), tensor.dtype)
        return self._guarded(node, guards, scope)

    def _guarded(self, node, guards: list, scope: Scope):
        if not guards:
            return node
        cond = guards[0]
        for g in guards[1:]:
            cond = Binary("&&", cond, g, "bool")
        other = self.leaf(node.dtype, replace(scope, steps=()))
        if node.dtype == "bool":      # the read counts only where `&&` lets it run, as in an `if`
            return Binary("||", Binary("&&", cond, node, "bool"),
                          Binary("&&", Unary("!", cond, "bool"), other, "bool"), "bool")
        return IfElse(cond, node, other, node.dtype)

    def step_read(self, step: StepRead, scope: Scope):
        """A recurrence member at `t - c` (or this step) along its first axis."""
        lookback = self.rng.choice(step.lookbacks)
        t = Index(scope.step_var)
        first = Binary("-", t, Lit(lookback, "i32"), "i32") if lookback else t
        subs, guards = [first], []
        rest = list(zip(step.tensor.sizes[1:], step.tensor.shape[1:]))
        for axis, (size, extent) in enumerate(rest):
            if step.lane and axis == len(rest) - 1:      # independent series: no read across lanes
                subs.append(Index(step.lane))
                continue
            sub, guard = self.subscript(size, extent, scope, avoid=scope.step_var)
            subs.append(sub)
            guards += guard
        # an earlier step of a member of three or more axes, some of the time read as a row
        # first, `x[t - 1, j][k]`: the same element
        split = len(subs) - 1 if lookback and len(subs) >= 3 and self.rows is not None \
            and self.rows.random() < ROW_READ_SHARE else 0
        return self._guarded(Read(step.tensor.name, tuple(subs), step.tensor.dtype, split), guards, scope)

    def history_read(self, step: StepRead, scope: Scope, var: str):
        """A recurrence member at the step a step tensor's own index `var` names, kept before
        the current step by a guard: `if q < t { x[q, ..] } else { .. }`."""
        subs = [Index(var)]
        guards = [Binary("<", Index(var), Index(scope.step_var), "bool")]
        for size, extent in zip(step.tensor.sizes[1:], step.tensor.shape[1:]):
            sub, guard = self.subscript(size, extent, scope, avoid=scope.step_var)
            subs.append(sub)
            guards += guard
        return self._guarded(Read(step.tensor.name, tuple(subs), step.tensor.dtype), guards, scope)

    def earlier_read(self, step: StepRead, scope: Scope, var: str):
        """A recurrence member at the step minus an inner loop's own step `var` (from 1), kept at
        or after the first step by a guard: `if k <= t { x[t - k, ..] } else { .. }`."""
        t = Index(scope.step_var)
        subs = [Binary("-", t, Index(var), "i32")]
        guards = [Binary("<=", Index(var), t, "bool")]
        for size, extent in zip(step.tensor.sizes[1:], step.tensor.shape[1:]):
            sub, guard = self.subscript(size, extent, scope, avoid=scope.step_var)
            subs.append(sub)
            guards += guard
        return self._guarded(Read(step.tensor.name, tuple(subs), step.tensor.dtype), guards, scope)

    def subscript(self, size: int, extent: Bound, scope: Scope, avoid: str | None = None):
        """(subscript, guards) for an axis of `size` elements."""
        rng = self.rng
        options = [(Lit(rng.randrange(size) if extent.dim is None else 0, "i32"), [], 1)]
        if extent.dim is not None and rng.random() < 0.2:
            options.append((Binary("-", DimRef(extent.dim), Lit(1, "i32"), "i32"), [], 1))
        for var in scope.indices:
            if var.name == avoid:
                continue
            weight = 4 if var is scope.indices[-1] else 2
            options += [(sub, [], weight) for sub in self._affine(var, size, scope)]
            guarded = self._guarded_affine(var, size, extent)
            if guarded is not None:
                options.append((*guarded, 1))
        options += [(sub, [], 1) for sub in self._window(size, scope, avoid)]
        options += [(sub, [], 1) for sub in self._data_dependent(size, scope)]
        sub, guards, _ = rng.choices(options, [w for *_, w in options])[0]
        signed = None if guards else self._signed_quotient(size, scope, avoid)   # a guard's `else` draws from rng
        return (sub if guards else self._wrapped(sub, extent), guards) if signed is None else (signed, [])

    def _wrapped(self, sub, extent: Bound):
        """Some of the time (from `wraps`, a stream of its own) a subscript in an axis of a plain
        size n written as a cyclic stencil's wrap, `(sub + n) % n`, its value unchanged: einc
        keys a wrap's point by its value mod n (einc/ir/affine.py `periodic_of`)."""
        if self.wraps is None or extent.index is not None or extent.clamp or extent.data or \
                extent.const != 0 and extent.dim is not None or self.wraps.random() >= WRAP_SHARE:
            return sub
        n = DimRef(extent.dim) if extent.dim is not None else Lit(extent.const, "i32")
        return Binary("%", Binary("+", sub, n, "i32"), n, "i32")

    def _signed_quotient(self, size: int, scope: Scope, avoid: str | None):
        """Some of the time (from `signed`, a stream of its own) an index shifted below 0 and
        then divided or reduced by a constant, `(i - 3) / 2 + 1` or `(i - 2) % 3 + 2`: integer `/`
        truncates toward zero and `%` takes the dividend's sign (LANGUAGE.md section 2), so
        negative operands round up and leave negative remainders. The offset keeps it inside the
        axis; None where no such subscript fits."""
        if self.signed is None or self.signed.random() >= SIGNED_SHARE:
            return None
        rng = self.signed
        vars_ = [v for v in scope.indices if v.name != avoid and v.high >= v.low]
        if not vars_:
            return None
        var, shift, k, op = rng.choice(vars_), rng.randint(1, 4), rng.randint(2, 3), rng.choice("/%")
        values = [_truncated(v - shift, k, op) for v in range(var.low, var.high + 1)]
        if var.low - shift >= 0 or max(values) - min(values) >= size:
            return None
        offset = rng.randint(-min(values), size - 1 - max(values))
        node = Binary(op, Binary("-", Index(var.name), Lit(shift, "i32"), "i32"), Lit(k, "i32"), "i32")
        if offset:
            node = Binary("+" if offset > 0 else "-", node, Lit(abs(offset), "i32"), "i32")
        return node

    def _affine(self, var: IndexVar, size: int, scope: Scope) -> list:
        i = Index(var.name)
        found = []
        if var.low >= 0 and var.high < size:
            found += [i, i]
        for c in (-3, -2, -1, 1, 2, 3):
            if var.low + c >= 0 and var.high + c < size:
                found.append(Binary("+", i, Lit(c, "i32"), "i32") if c > 0 else
                             Binary("-", i, Lit(-c, "i32"), "i32"))
        if var.low >= 0:
            for k in (2, 3):
                if var.high * k + 1 < size:
                    found.append(Binary("+", Binary("*", Lit(k, "i32"), i, "i32"), Lit(1, "i32"), "i32"))
                if var.high * k < size:
                    found.append(Binary("*", Lit(k, "i32"), i, "i32"))
                if var.high // k < size:
                    found.append(Binary("/", i, Lit(k, "i32"), "i32"))
            if size >= 2:
                m = self.rng.randint(2, size)
                found.append(Binary("%", i, Lit(m, "i32"), "i32"))
        if var.low >= 0 and var.high < size:
            # reversed: (high + low) - i stays in [low, high]
            found.append(Binary("-", Lit(var.high + var.low, "i32"), i, "i32"))
        return found

    def _guarded_affine(self, var: IndexVar, size: int, extent: Bound):
        """`i + c` that leaves [0, size) for some i, with the guard that keeps it inside."""
        c = self.rng.choice((-2, -1, 1, 2))
        if var.low + c >= 0 and var.high + c < size:
            return None
        i = Index(var.name)
        sub = Binary("+", i, Lit(c, "i32"), "i32") if c > 0 else Binary("-", i, Lit(-c, "i32"), "i32")
        guards = []
        if var.low + c < 0:
            guards.append(Binary(">=", i, Lit(-c, "i32"), "bool"))
        if var.high + c >= size:
            limit = bound_expr(extent.plus(-c)) if extent.dim else Lit(size - c, "i32")
            guards.append(Binary("<", i, limit, "bool"))
        if var.high + c < 0 or var.low + c >= size:
            return None                # never inside: nothing to read
        return sub, guards

    def _window(self, size: int, scope: Scope, avoid: str | None) -> list:
        """`i + j` for two indices whose largest sum stays inside (a convolution's window)."""
        vars_ = [v for v in scope.indices if v.name != avoid and v.low >= 0]
        found = []
        for a in vars_:
            for b in vars_:
                if a.name < b.name and a.high + b.high < size:
                    found.append(Binary("+", Index(a.name), Index(b.name), "i32"))
        return found

    def _data_dependent(self, size: int, scope: Scope) -> list:
        found = []
        for t in scope.tensors:
            if t.values is not None and t.values[0] >= 0 and t.values[1] < size and len(t.shape) == 1:
                inner = [s for s in self._affine_all(t.sizes[0], scope)]
                if inner:
                    found.append(Read(t.name, (self.rng.choice(inner),), t.dtype))
        return found

    def _affine_all(self, size: int, scope: Scope) -> list:
        return [s for v in scope.indices for s in self._affine(v, size, scope)] or \
            [Lit(self.rng.randrange(size), "i32")]

    # ------------------------------------------------------------ operators

    def arith(self, dtype: str, scope: Scope, depth: int):
        op = self.rng.choice(("+", "+", "-", "*", "*", "/", "%") if dtype in INTS else
                             ("+", "+", "-", "*", "*", "/"))
        left = self.expr(dtype, scope, depth - 1)
        if op in ("/", "%"):
            return Binary(op, left, self.divisor(dtype, scope, depth - 1), dtype)
        right = self.expr(dtype, scope, depth - 1)
        if isinstance(left, Lit) and isinstance(right, Lit):
            right = self.leaf(dtype, scope)
        return Binary(op, left, right, dtype)

    def chain(self, dtype: str, scope: Scope, depth: int):
        """A long left-associative run of `+` and `-` over leaves (`a + b - c + ..`): einc builds
        and walks such chains in a loop, however long (tests/e2e/test_long_programs.py)."""
        node = self.leaf(dtype, scope)
        for _ in range(self.rng.choice((8, 20, 60, 150)) - 1):
            node = Binary(self.rng.choice(("+", "-")), node, self.leaf(dtype, scope), dtype)
        return node

    def divisor(self, dtype: str, scope: Scope, depth: int):
        """An expression that is never 0 (floats: kept away from 0)."""
        if dtype in INTS:
            if scope.indices and self.rng.random() < 0.4:
                var = self.rng.choice(scope.indices)
                if var.low >= 0:
                    return Binary("+", self._as(Index(var.name), dtype), Lit(1, dtype), dtype)
            return self.literal(dtype, positive=self.rng.random() < 0.5)
        if self.rng.random() < 0.5:
            return self.literal(dtype, positive=True)
        inner = self.expr(dtype, scope, depth - 1)
        return Binary("+", Binary("*", inner, inner, dtype), Lit(1.0, dtype), dtype)

    def negate(self, dtype: str, scope: Scope, depth: int):
        return Unary("-", self.expr(dtype, scope, depth - 1), dtype)

    def choose(self, dtype: str, scope: Scope, depth: int):
        if scope.arrays:
            return None
        return IfElse(self.condition(scope, depth - 1), self.expr(dtype, scope, depth - 1),
                      self.expr(dtype, scope, depth - 1), dtype)

    def cast_from(self, dtype: str, scope: Scope, depth: int):
        if dtype in FLOATS:
            source = self.rng.choice((self.int_type, "f32" if dtype == "f64" else self.float_type))
        else:
            source = self.rng.choice((self.float_type, "i32" if dtype != "i32" else self.int_type))
        if source == dtype:
            return None
        inner = self.expr(source, scope, depth - 1)
        if isinstance(inner, Lit):
            # `0.1 as f64`: whether the cast types the literal is einc's call; say it outright
            inner = replace(inner, suffix=True)
        if source in FLOATS and dtype in INTS:
            inner = Binary("*", inner, Lit(4.0, source), source)     # spread values over integers
            if dtype in UNSIGNED:      # a negative float has no unsigned value (NumPy's is undefined)
                inner = Call("abs", (inner,), source)
        return Cast(inner, dtype)

    def math(self, dtype: str, scope: Scope, depth: int):
        rng = self.rng
        arg = self.expr(dtype, scope, depth - 1)
        kind = rng.choice(("smooth", "smooth", "log", "sqrt", "abs", "minmax", "floor"))
        if kind == "smooth":
            fn = rng.choice(SMOOTH)
            if fn in ("exp", "sinh"):
                arg = Call("tanh", (arg,), dtype)                    # keep it small
            return Call(fn, (arg,), dtype)
        if kind == "log":
            positive = Binary("+", Call("abs", (arg,), dtype), Lit(0.5, dtype), dtype)
            return Call(rng.choice(("log", "log1p")), (positive,), dtype)
        if kind == "sqrt":
            return Call("sqrt", (Binary("+", Binary("*", arg, arg, dtype), Lit(0.25, dtype), dtype),), dtype)
        if kind == "abs":
            return Call("abs", (arg,), dtype)
        if kind == "floor":
            return Call(rng.choice(("floor", "ceil")), (Binary("*", arg, Lit(2.0, dtype), dtype),), dtype)
        return Call(rng.choice(("min", "max")), (arg, self.expr(dtype, scope, depth - 1)), dtype)

    def int_math(self, dtype: str, scope: Scope, depth: int):
        arg = self.expr(dtype, scope, depth - 1)
        fn = self.rng.choice(("abs", "min", "max"))
        if fn == "abs":
            return Call("abs", (arg,), dtype)
        return Call(fn, (arg, self.expr(dtype, scope, depth - 1)), dtype)

    def power(self, dtype: str, scope: Scope, depth: int):
        """`i32 ** i32`, `f ** i32` or `f ** f` (LANGUAGE.md 2), and from `wide` (a stream of its
        own) `i64 ** 2i32`, integers of two widths, on a leaf. A float's integer exponent is a
        literal or an index known at run time (`x ** (i % 4)`, IREE-73), also as a float
        (`x ** ((i % 4) as f32)`, IREE-74), its base of any sign. Another integer type's power has
        an i32 exponent: `_index_power`'s form (from `widths`; for i64 only without a `wide` stream)."""
        if dtype == "i64" and self.wide is not None:
            if self.wide.random() >= WIDE_POWER_SHARE:
                return None
            # the leaf the caller would draw in its place, raised: the main stream stays as it was
            return Binary("**", self.leaf(dtype, scope), Lit(self.wide.randint(0, 3), "i32", suffix=True), dtype)
        if dtype in INTS and dtype != "i32":
            return self._index_power(dtype, scope, None)
        base = self.expr(dtype, scope, depth - 1)
        if dtype in FLOATS and scope.indices and self.rng.random() < 0.3:
            index = Index(self.rng.choice(scope.indices).name)
            exponent = Binary("%", index, Lit(4, "i32"), "i32")
            if self.rng.random() < 0.5:         # an integral float exponent (IREE-74)
                exponent = Cast(exponent, dtype)
            return Binary("**", base, exponent, dtype)
        if dtype in INTS:
            indexed = self._index_power(dtype, scope, base)
            if indexed is not None:
                return indexed
        if dtype in INTS or self.rng.random() < 0.6:
            return Binary("**", base, Lit(self.rng.randint(0, 3), "i32"), dtype)
        positive = Binary("+", Call("abs", (base,), dtype), Lit(0.5, dtype), dtype)
        return Binary("**", positive, self.literal(dtype, positive=True), dtype)

    def _index_power(self, dtype: str, scope: Scope, base):
        """Some of the time (from `widths`, a stream of its own) an integer power whose exponent
        is an index, `base ** (i % 3)`: an i32 one of `base`; in another integer type a literal
        base that takes the type of a leaf beside it, `x[k] / 10 ** (i % 3)` (an i8 power of
        the i32 index). Its value is at least 1 and at most 100, which every type holds, so it
        divides too. None where no index is in scope, or not drawn."""
        vars_ = [v for v in scope.indices if v.low >= 0]
        if self.widths is None or not vars_ or self.widths.random() >= INDEX_POWER_SHARE:
            return None
        rng = self.widths
        exponent = Binary("%", Index(rng.choice(vars_).name), Lit(3, "i32"), "i32")
        if base is not None:
            return Binary("**", base, exponent, dtype)
        power = Binary("**", Lit(rng.randint(2, 10), dtype), exponent, dtype)
        main, self.rng = self.rng, rng
        try:
            leaf = self.leaf(dtype, scope)
        finally:
            self.rng = main
        if isinstance(leaf, Lit):      # it must type the base: unsuffixed, both would be i32
            leaf = replace(leaf, suffix=True)
        return Binary(rng.choice(("/", "%", "*", "+", "-")), leaf, power, dtype)

    def block(self, dtype: str, scope: Scope, depth: int):
        name = self.name("v")
        value_type = self.rng.choice((dtype, dtype, self.int_type, self.float_type))
        value = named(self.expr(value_type, scope, depth - 1))
        inner = scope.with_local(name, value_type)
        result = self.expr(dtype, inner, depth - 1)
        if not any(isinstance(n, Var) and n.name == name for n in walk(result)):
            result = Binary("+", result, self._as(Var(name, value_type), dtype), dtype) \
                if dtype != "bool" else result
        style = self.rng.choice(("let", "let", "nested", "pipe"))
        if style == "pipe" and scope.arrays:     # a typed closure maps over a piped array's elements,
            style = "let"                        # and an array its body reads is no element (E002)
        return Block(((name, value),), result, dtype, style)

    def match(self, dtype: str, scope: Scope, depth: int):
        """`match` on an integer (literals, or-patterns, ranges, `n @ range`, guards, a catch-all
        or ranges that cover every value) or on a bool (`true` / `false`)."""
        if scope.arrays:
            return None
        if self.rng.random() < 0.25:
            scrutinee = self.condition(scope, depth - 1)
            arms = [Arm(Pattern("lit", (True,)), None, self.expr(dtype, scope, depth - 1)),
                    Arm(Pattern("lit", (False,)), None, self.expr(dtype, scope, depth - 1))]
            self.rng.shuffle(arms)
            return Match(scrutinee, tuple(arms), dtype)
        scrutinee = self.expr(self.int_type, scope, depth - 1)
        arms = [self._int_arm(dtype, scope, depth) for _ in range(self.rng.randint(1, 3))]
        if self.rng.random() < 0.3:         # exhaustive by ranges, no catch-all
            cut = self.rng.randint(self._least_pattern(), 6)
            arms.append(Arm(Pattern("range", (None, cut, True)), None, self.expr(dtype, scope, depth - 1)))
            arms.append(Arm(Pattern("range", (cut + 1, None, False)), None, self.expr(dtype, scope, depth - 1)))
        else:
            name = self.name("m") if self.rng.random() < 0.5 else None
            inner = scope.with_local(name, self.int_type) if name else scope
            arms.append(Arm(Pattern("wild", (), name), None, self.expr(dtype, inner, depth - 1)))
        return Match(scrutinee, tuple(arms), dtype)

    def row_match(self, dtype: str, scope: Scope, depth: int):
        """`match x[s] { [a, _, ..r, b] => .. a .. r[1] .. }` on a row of fixed length: up to two
        elements named or skipped at each end, the rest named (read at an offset) or not."""
        rng = self.rng
        rows = [t for t in scope.tensors if len(t.sizes) >= 2 and t.dtype != "bool"
                and t.shape[-1].dim is None and t.shape[-1].index is None]
        if scope.arrays or scope.whole or not rows:
            return None
        tensor = rng.choice(rows)
        subs, guards = [], []
        for size, extent in zip(tensor.sizes[:-1], tensor.shape[:-1]):
            sub, guard = self.subscript(size, extent, scope)
            subs.append(sub)
            guards += guard
        if guards:
            return None
        length = tensor.sizes[-1]
        before = rng.randint(0, min(2, length))
        ends = [self.name("e") if rng.random() < 0.7 else None
                for _ in range(before + rng.randint(0, min(2, length - before)))]
        inner = scope
        for name in filter(None, ends):
            inner = inner.with_local(name, tensor.dtype)
        rest = self.name("r") if rng.random() < 0.7 else None
        body = self.expr(dtype, inner, depth - 1)
        named = [n for n in ends if n]
        if named and not any(isinstance(n, Var) and n.name in named for n in walk(body)):
            body = Binary("+", body, self._as(Var(rng.choice(named), tensor.dtype), dtype), dtype)
        middle = length - len(ends)
        if rest and middle and rng.random() < 0.7:
            body = Binary("+", body, self._as(RestRead(rest, rng.randrange(middle), tensor.dtype), dtype), dtype)
        return RowMatch(Read(tensor.name, tuple(subs), tensor.dtype), length, tuple(ends[:before]), rest,
                        tuple(ends[before:]), body, dtype)

    def _int_arm(self, dtype: str, scope: Scope, depth: int) -> Arm:
        rng, least = self.rng, self._least_pattern()
        kind = rng.choice(("lit", "or", "range", "range"))
        if kind == "lit":
            values = (rng.randint(least, 9),)
        elif kind == "or":
            values = tuple(sorted(set(rng.randint(least, 9) for _ in range(rng.randint(2, 3)))))
        else:
            lo, inclusive = rng.randint(least, 6), rng.random() < 0.5
            hi = lo + rng.randint(1, 5)
            values = rng.choice(((lo, hi, inclusive), (lo, None, False), (None, hi, True)))
        name = self.name("m") if kind != "lit" and rng.random() < 0.4 else None
        inner = scope.with_local(name, self.int_type) if name else scope
        guard = self.condition(inner, depth - 1) if rng.random() < 0.25 else None
        return Arm(Pattern(kind, values, name), guard, self.expr(dtype, inner, depth - 1))

    def _least_pattern(self) -> int:
        """The smallest integer a pattern names: an unsigned scrutinee's none below 0 (E006)."""
        return 0 if self.int_type in UNSIGNED else -3

    def call_function(self, dtype: str, scope: Scope, depth: int):
        # a typed function given whole arrays maps over their elements (LANGUAGE.md section 6);
        # a generic one passes them whole, so its recurrence body would get arrays, not scalars
        fns = [f for f in scope.functions if f.dtype == dtype
               and not (scope.arrays and any(isinstance(n, IfElse) for n in walk(f.body)))
               and not (isinstance(f.body, Recur) and scope.whole and not f.typed)]
        if not fns:
            return None
        fn = self.rng.choice(fns)
        args = tuple(named(self.expr(t, scope, depth - 1)) for _, t in fn.params)
        return Call(fn.name, args, dtype, piped=len(args) == 1 and self.rng.random() < 0.4)

    # ------------------------------------------------------------ reductions

    def reduction(self, dtype: str, scope: Scope, depth: int):
        if scope.whole:
            return None
        kind = "float" if dtype in FLOATS else "int"
        op = self.rng.choice(REDUCTIONS[kind])
        inner, ranges = self.reduction_ranges(scope, op)
        body = self.expr(dtype, inner, depth - 1)
        if op == "prod":
            body = _bounded(body, dtype)
        body = self._folding(body, dtype, inner) if op == "sum" else body
        guard = self.condition(inner, depth - 1) if self.rng.random() < 0.3 and op == "sum" else None
        guard = guard if op == "sum" else self._extremum_guard(inner)
        node = self._filtered(self._counted(Reduce(op, self._maybe_implicit(ranges, (body, guard), inner), body, guard,
                                                   dtype)))
        return self._data_reduction(op, dtype, scope, depth) or node

    def _data_reduction(self, op: str, dtype: str, scope: Scope, depth: int):
        """Some of the time, in place of the reduction just drawn, one over a range with an end
        read from data (_data_range), drawn wholly from `ends` and with names of its own: the
        main stream, the other streams and the names go on as they would."""
        data = self._data_range(dtype, scope, op)
        if data is None:
            return None
        inner, ranges, read = data
        kept = {name: getattr(self, name) for name in ISOLATED}
        for name in ISOLATED[:-2]:
            setattr(self, name, self.ends)
        self.prefix, self.fresh = "q" + kept["prefix"], self.ends_fresh
        try:        # k's range is the axis `read` gives it
            body = Binary(self.rng.choice("*+"), read, self.expr(dtype, inner, depth - 1), dtype)
            guard = self.condition(inner, depth - 1) if op == "sum" and self.rng.random() < 0.3 else None
        finally:
            self.ends_fresh = max(self.ends_fresh, self.fresh)
            for name, value in kept.items():
                setattr(self, name, value)
        if not _reads_decide(ranges[0], (body, guard), inner):
            body, guard = read, None
        return Reduce(op, ranges, _bounded(body, dtype) if op == "prod" else body, guard, dtype)

    def _data_range(self, dtype: str, scope: Scope, op: str):
        """Some of the time (from `ends`, a stream of its own) a float reduction's one index k
        over a range with an end read from an index input at constants or indices in scope,
        `k in idx[i]..idx[i + 1]`, `0..idx[2]` or `idx[j]..n` (a max's or min's never empty:
        `0..idx[j] + 1`, `idx[j]..n`), and a plain read `a[.., k, ..]` of a float array whose
        axis n is past every value the input takes, so the range stays inside k's range, that
        axis (docs/LANGUAGE.md section 3). (scope with k, its range, the read) or None."""
        inputs = [t for t in scope.tensors if t.values and t.values[0] >= 0 and len(t.sizes) == 1]
        if not inputs and self.spare is not None and any(t.name == self.beside for t in scope.tensors):
            inputs = [self.spare]
        if self.ends is None or dtype not in FLOATS or not inputs or self.ends.random() >= DATA_RANGE_SHARE:
            return None
        rng = self.ends
        idx = rng.choice(inputs)
        empty = op in ("sum", "prod")       # may be empty: its ends may reach the axis's size
        axes = [(t, a) for t in scope.tensors if t.dtype == dtype and t.values is None
                for a, size in enumerate(t.sizes) if idx.values is None or size + empty > idx.values[1]]
        if not axes:
            return None
        tensor, axis = rng.choice(axes)
        if idx.values is None:              # the spare input's first use sets its values
            idx = self.spare = replace(idx, values=(0, tensor.sizes[axis] - 1 + empty))
            self.spare_read = True
        within = tensor.shape[axis]
        length = idx.sizes[0]
        at = [Bound(c) for c in range(length)] + [Bound(c, index=v.name) for v in scope.indices for c in (0, 1)
                                                 if v.low + c >= 0 and v.high + c < length]
        first = rng.choice(at)
        second = first.plus(1) if first.plus(1) in at else rng.choice(at)
        end = lambda sub: Bound(0, data=(idx.name, sub))      # noqa: E731
        if op in ("max", "min"):
            lo, hi = rng.choice(((Bound(0), end(first).plus(1)), (end(first), within)))
        else:
            lo, hi = rng.choice(((end(first), end(second)), (Bound(0), end(first)), (end(first), within)))
        name = self.index_name(scope)
        var = IndexVar(name, 0, tensor.sizes[axis] - 1, Bound(0), within)
        subs = []
        for a, (size, extent) in enumerate(zip(tensor.sizes, tensor.shape)):
            others = [Index(v.name) for v in scope.indices if v.low >= 0 and v.high < size]
            subs.append(Index(name) if a == axis else
                        rng.choice(others + [Lit(rng.randrange(size) if extent.dim is None else 0, "i32")]))
        return scope.with_index(var), (Range(name, lo, hi, within=within),), Read(tensor.name, tuple(subs), dtype)

    def _folding(self, body, dtype: str, scope: Scope):
        """Some of the time (from `folds`, a stream of its own) an integer sum's body that reads
        every element but that MLIR's folders reduce to a constant: `e * 0 + c`, `e - e + c` or
        `(e + c) - e`, `e` a read of an array where one is in scope, else the body drawn
        (IREE-264: llvm-cpu summed such a body once; a max or min of a constant is that
        constant, however many times it is taken)."""
        if dtype not in INTS or self.folds is None or self.folds.random() >= FOLD_SHARE:
            return body
        arrays = [t for t in scope.tensors if t.dtype == dtype and t.sizes]
        if arrays:      # its subscripts drawn from `folds` too: the main stream goes on as it would
            main, self.rng = self.rng, self.folds
            try:
                body = self.read(self.folds.choice(arrays), scope)
            finally:
                self.rng = main
        c = Lit(self.folds.randint(1, 9), dtype)
        form = self.folds.randrange(3)
        if form == 0:
            return Binary("+", Binary("*", body, Lit(0, dtype), dtype), c, dtype)
        if form == 1:
            return Binary("+", Binary("-", body, body, dtype), c, dtype)
        return Binary("-", Binary("+", body, c, dtype), body, dtype)

    def _counted(self, node: Reduce) -> Reduce:
        """Some of the time (from `counts`, a stream of its own) a guarded i32 sum over one
        explicit range of no index counts the points its guard keeps instead, written as the
        length of a filtered comprehension, `[k | k in 0..N, guard].length`."""
        one = node.op == "sum" and node.guard is not None and node.dtype == "i32" and len(node.ranges) == 1
        r = node.ranges[0] if one else None
        plain = one and r.explicit and all(b.index is None and not b.clamp for b in (r.lo, r.hi))
        if not plain or self.counts is None or self.counts.random() >= COUNT_SHARE:
            return node
        return replace(node, body=Lit(1, "i32"), counted=True)

    def _filtered(self, node: Reduce) -> Reduce:
        """Some of the time (from `filtered`, a stream of its own) a guarded sum, max or min over
        one explicit range of no index, not a count, is written as that reduction of a filtered
        comprehension, `max([x[k] | k in 0..N, guard])`: the kept elements differ per point of an
        enclosing definition or per step, so they are reduced where written."""
        one = node.op in ("sum", "max", "min") and node.guard is not None and not node.counted and len(node.ranges) == 1
        r = node.ranges[0] if one else None
        plain = one and r.explicit and all(b.index is None and not b.clamp for b in (r.lo, r.hi))
        if not plain or self.filtered is None or self.filtered.random() >= FILTER_SHARE:
            return node
        return replace(node, filtered=True)

    def _extremum_guard(self, scope: Scope):
        """Some of the time (drawn from `guards`, a stream of its own, so that the rest of every
        program stays as it was) a guard of a max, min or prod reduction: a comparison of leaves
        (`max[k](x[k]) where x[k] > 0.5` reads as `max[k](if x[k] > 0.5 ..)` over the points
        that pass; one that leaves a max or min empty is redrawn by the meaning)."""
        if self.guards is None or self.guards.random() >= EXTREMUM_GUARD_SHARE:
            return None
        main, self.rng = self.rng, self.guards
        try:
            return self.condition(scope, 0)
        finally:
            self.rng = main

    def _maybe_implicit(self, ranges: tuple, exprs: tuple, scope: Scope) -> tuple:
        """Leave `k in 0..n` out when a plain read `x[.., k, ..]` of an axis of n decides it."""
        shape_of = {t.name: t.shape for t in scope.tensors}
        exprs = tuple(e for e in exprs if e is not None)
        # a clamped window draws here as the `0..i + 1` it replaces, and stays explicit
        return tuple(replace(r, explicit=False) if (r.lo == Bound(0) or r.lo.clamp) and self.rng.random() < 0.5
                     and not r.lo.clamp and decides(r.var, r.hi, exprs, shape_of) else r for r in ranges)

    def bool_reduction(self, scope: Scope, depth: int):
        op = self.rng.choice(REDUCTIONS["bool"])
        inner, ranges = self.reduction_ranges(scope, op)
        body = self.condition(inner, depth - 1)
        return Reduce(op, self._maybe_implicit(ranges, (body,), inner), body, None, "bool")

    def reduction_ranges(self, scope: Scope, op: str):
        """One or two fresh indices: a constant range, an axis of a tensor in scope, or a range
        that depends on an outer index (`k in 0..i + 1`)."""
        ranges, outer = [], scope
        for _ in range(1 if self.rng.random() < 0.8 else 2):
            name = self.index_name(scope)
            lo, hi = self._after_a_sibling(ranges, *self._reduction_bounds(outer, op))
            var = IndexVar(name, low_of(lo, scope), high_of(hi, scope) - 1, lo, hi)
            scope = scope.with_index(var)
            ranges.append(Range(name, lo, hi))
        return scope, tuple(ranges)

    def _reduction_bounds(self, scope: Scope, op: str):
        rng = self.rng
        outer = [v for v in scope.indices if v.low >= 0]
        choice = rng.random()
        if outer and choice < 0.25:
            var = rng.choice(outer)
            if rng.random() < 0.5:
                return self._clamped_window(var) or (Bound(0), Bound(1, index=var.name))    # 0..i + 1, never empty
            if op in ("sum", "prod", "all", "any"):
                return Bound(0, index=var.name), var.hi               # i..n, may be empty
        axes = [(t.shape[a], t.sizes[a]) for t in scope.tensors for a in range(len(t.shape))]
        if axes and choice < 0.7:
            extent, _ = rng.choice(axes)
            return Bound(0), extent
        return Bound(0), Bound(rng.randint(1, 5))

    def _after_a_sibling(self, ranges: list, lo, hi):
        """Some of the time (from `siblings`, a stream of its own) a second index drawn over the
        same range `0..n` as the first, j, runs over `0..j + 1` instead (a triangle): it spans
        the same values, so what is generated after it is unchanged."""
        if self.siblings is None or not ranges or lo != Bound(0) or hi.clamp:
            return lo, hi
        first = ranges[-1]
        if first.lo != Bound(0) or first.hi != hi or self.siblings.random() >= SIBLING_SHARE:
            return lo, hi
        return Bound(0), Bound(1, index=first.var)

    def _clamped_window(self, var: IndexVar):
        """Some of the time (drawn from `windows`, a stream of its own, so that the rest of
        every program stays as it was) a window around i cut at the edges of i's range
        instead of 0..i + 1: `max(0, i - a)..min(n, i + 1 + b)`. It spans the same values
        over i's range (0 up to i's largest, i starting at 0), so what is generated after it is
        unchanged."""
        if self.windows is None or var.low != 0 or self.windows.random() >= WINDOW_SHARE:
            return None
        before, after = self.windows.randint(0, 3), self.windows.randint(0, 2)
        lo = Bound(-before, index=var.name, clamp=(("max", Bound(0)),))
        hi = Bound(1 + after, index=var.name, clamp=(("min", var.hi),))
        return lo, hi

    # ------------------------------------------------------------ conditions

    def compare(self, scope: Scope, depth: int):
        dtype = self.rng.choice((self.float_type, self.float_type, self.int_type))
        op = self.rng.choice(("<", "<=", ">", ">=", "==", "!=") if dtype in INTS else ("<", "<=", ">", ">="))
        left = self.expr(dtype, scope, max(depth - 1, 0))
        right = self.expr(dtype, scope, max(depth - 2, 0)) if self.rng.random() < 0.5 else self.literal(dtype)
        return Binary(op, left, right, "bool")

    def logic(self, scope: Scope, depth: int):
        if self.rng.random() < 0.2:
            return Unary("!", self.condition(scope, depth - 1), "bool")
        return Binary(self.rng.choice(("&&", "||")), self.condition(scope, depth - 1),
                      self.condition(scope, depth - 1), "bool")

    def bool_leaf(self, scope: Scope, depth: int):
        readable = [t for t in scope.tensors if t.dtype == "bool"]
        if readable:
            return self.read(self.rng.choice(readable), scope)
        if scope.indices:
            var = self.rng.choice(scope.indices)
            return Binary(self.rng.choice(("<", ">=", "==", "!=")), Index(var.name),
                          Lit(self.rng.randint(var.low, max(var.low, var.high)), "i32"), "bool")
        return self.literal("bool")


def _bounded(body, dtype: str):
    """A prod's body, `1 + 0.5 * tanh(body)`: in [0.5, 1.5]."""
    return Binary("+", Lit(1.0, dtype), Binary("*", Lit(0.5, dtype), Call("tanh", (body,), dtype), dtype), dtype)


def _reads_decide(r: Range, exprs, scope: Scope) -> bool:
    """Whether every read subscripting the axis `r.var` on its own is of an axis of `r.within`
    (einc's index runs over the axes its reads give it, which must agree)."""
    shape_of = {t.name: t.shape for t in scope.tensors + tuple(s.tensor for s in scope.steps)}
    reads = [n for e in exprs if e is not None for n in walk(e) if isinstance(n, Read) and Index(r.var) in n.subs]
    return all(n.name in shape_of and all(shape_of[n.name][a] == r.within for a, s in enumerate(n.subs)
                                         if s == Index(r.var)) for n in reads)


def named(node):
    """A value a name carries (a `let`, a `where`, a parameter, a function's result): a bare
    literal there is written with its type. einc keeps a name bound to an untyped literal untyped
    until a use types it, and `as` is such a use (docs/DECISIONS.md, Numbers), so
    `{ let v = 0.3; v } as f64` is the f64 0.3, where the meaning types a literal where it is
    written (f32 0.3, widened)."""
    return replace(node, suffix=True) if isinstance(node, Lit) and node.dtype != "bool" else node


def typed_constants(node):
    """`node` with every literal of a constant subexpression (`0.25 * 0.01`, `abs(2.5)`) written
    with its type: einc folds untyped literal arithmetic in f64 and rounds once where a context
    types it (which `as` may or may not be), the meaning rounds each operation; typed, both
    compute in the type."""
    if isinstance(node, Lit):
        return node
    if _constant(node):
        return _suffixed(node)
    if not is_dataclass(node):
        return node
    changes = {f.name: _map_children(getattr(node, f.name)) for f in fields(node)}
    return replace(node, **changes)


def _map_children(value):
    if isinstance(value, tuple):
        return tuple(_map_children(v) for v in value)
    return typed_constants(value) if is_dataclass(value) and not isinstance(value, (Range, Bound)) else value


def _constant(node) -> bool:
    """Built from literals only, with at least one operation."""
    return bool(children(node)) and not any(
        isinstance(n, (Read, Index, Var, DimRef, Reduce, Block, Prev, PrevRow, Recur, Prelude, StepTensor, Local))
        for n in walk(node))


def _suffixed(node):
    if isinstance(node, Lit):
        return replace(node, suffix=node.dtype != "bool")
    if not is_dataclass(node):
        return node
    return replace(node, **{f.name: _suffixed_value(getattr(node, f.name)) for f in fields(node)})


def _suffixed_value(value):
    if isinstance(value, tuple):
        return tuple(_suffixed_value(v) for v in value)
    return _suffixed(value) if is_dataclass(value) else value


def bound_expr(b: Bound):
    """A Bound as an i32 expression."""
    terms = [Index(b.index)] if b.index else []
    terms += [DimRef(b.dim)] if b.dim else []
    node = terms[0] if terms else Lit(b.const, "i32")
    for term in terms[1:]:
        node = Binary("+", node, term, "i32")
    if terms and b.const:
        node = Binary("+" if b.const > 0 else "-", node, Lit(abs(b.const), "i32"), "i32")
    return node


def _truncated(a: int, k: int, op: str) -> int:
    """C's `a / k` (toward zero) or `a % k` (the dividend's sign), for k > 0."""
    quotient = abs(a) // k * (1 if a >= 0 else -1)
    return quotient if op == "/" else a - k * quotient


def low_of(b: Bound, scope: Scope) -> int:
    value = b.const + (scope.dims[b.dim] if b.dim else 0)
    if b.index:
        value += next(v.low for v in scope.indices if v.name == b.index)
    return _clamped(value, b, scope, low_of)


def high_of(b: Bound, scope: Scope) -> int:
    value = b.const + (scope.dims[b.dim] if b.dim else 0)
    if b.index:
        value += next(v.high for v in scope.indices if v.name == b.index)
    return _clamped(value, b, scope, high_of)


def _clamped(value: int, b: Bound, scope: Scope, end) -> int:
    """min and max are monotone: the extreme of a clamp is the clamp of the extremes."""
    for op, other in b.clamp:
        value = (max if op == "max" else min)(value, end(other, scope))
    return value

