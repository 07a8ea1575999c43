"""The generator's own description of a program: what it means is computed from this structure
(fuzz.programs.meaning), never from einc's IR; fuzz.programs.render writes it as Einlang.

Every expression node carries its Einlang type. Index variables and named dims are i32.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

FLOATS = ("f32", "f64", "f16", "bf16")
HALF_TYPES = ("f16", "bf16")
NARROW_INTS = ("i8", "i16", "u8", "u16", "u32", "u64")     # a program's integer type some of the time
UNSIGNED = ("u8", "u16", "u32", "u64")
INTS = ("i32", "i64") + NARROW_INTS
NUMERIC = FLOATS + INTS
WIDE_TYPES = ("f64", "i64")
# vulkan-spirv refuses them (E011): no 64-bit types, and 16-bit integers are not in its profile
NOT_ON_VULKAN = WIDE_TYPES + HALF_TYPES + ("u64", "i16", "u16")
COARSEST_FIRST = ("bf16", "f16", "f32", "f64")


@dataclass(frozen=True)
class Bound:
    """`const + dim + index`: a range end such as `N - 1`, `i + 1` or `4`; `clamp` takes the min
    or max of that with other bounds in turn, (("max", Bound(0)),) making `max(0, i - 1)`; `data`
    adds a read of a 1-D integer input, `idx[i + 1] + const` (a reduction's range only)."""

    const: int
    dim: str | None = None
    index: str | None = None
    clamp: tuple = ()              # ("min" | "max", Bound) pairs
    data: tuple | None = None      # (input name, subscript Bound)

    def plus(self, k: int) -> "Bound":
        return replace(self, const=self.const + k)


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Lit:
    value: float | int | bool
    dtype: str
    suffix: bool = False           # written `2.5f64` / `3i64` rather than typed by its context
    integral: bool = False         # a float written as an int literal (`2`) where its context types it


@dataclass(frozen=True)
class Index:
    name: str
    dtype: str = "i32"


@dataclass(frozen=True)
class DimRef:
    name: str
    dtype: str = "i32"


@dataclass(frozen=True)
class Var:
    """A where-binding, a block `let` or a function parameter."""

    name: str
    dtype: str


@dataclass(frozen=True)
class Read:
    """`name[subs]`; with no subscripts a scalar binding, or a whole array in an elementwise
    statement (`Whole`). `split`: written `name[subs[:split]][subs[split:]]`, a row first, the
    same element."""

    name: str
    subs: tuple
    dtype: str
    split: int = 0


@dataclass(frozen=True)
class Unary:
    op: str                        # "-" or "!"
    arg: object
    dtype: str


@dataclass(frozen=True)
class Binary:
    op: str                        # + - * / % ** < <= > >= == != && ||
    left: object
    right: object
    dtype: str


@dataclass(frozen=True)
class IfElse:
    cond: object
    then: object
    other: object
    dtype: str


@dataclass(frozen=True)
class Cast:
    arg: object
    dtype: str


@dataclass(frozen=True)
class Block:
    """`{ let a = ..; let b = ..; result }`. `style` only changes how it is written:
    "nested" reads the lets from a function nested in the block (`{ let a = ..; fn g() { a + 1 }
    g() }`), "pipe" sends its one let's value into a lambda (`(.. |> |a| a + 1)`)."""

    lets: tuple                    # (name, expr) pairs
    result: object
    dtype: str
    style: str = "let"


@dataclass(frozen=True)
class Call:
    fn: str                        # a std::math function or a user function of the program
    args: tuple
    dtype: str
    piped: bool = False            # written `arg |> fn` (one argument)


@dataclass(frozen=True)
class Pattern:
    """A `match` arm's pattern over an integer or a bool: "lit" (values[0]), "or" (any of
    values), "range" (values = (lo or None, hi or None, inclusive)) or "wild"; `bind` names
    the matched value (`n @ 1..=5`, or a plain `n` for a wild one)."""

    kind: str
    values: tuple = ()
    bind: str | None = None


@dataclass(frozen=True)
class Arm:
    pattern: Pattern
    guard: object | None
    body: object


@dataclass(frozen=True)
class Match:
    scrutinee: object
    arms: tuple                    # Arm
    dtype: str


@dataclass(frozen=True)
class RowMatch:
    """`match x[s] { [a, _, ..r, b] => body }`: an array pattern on a row of fixed length (the
    last axis of `row.name`, which `row.subs` leaves unsubscripted). `before` and `after` name the
    row's first and last elements (None for `_`); `rest` names the elements between (None for a
    bare `..`), which `body` reads as `RestRead`s."""

    row: Read
    length: int
    before: tuple
    rest: str | None
    after: tuple
    body: object
    dtype: str


@dataclass(frozen=True)
class RestRead:
    """`r[offset]` of a `RowMatch`'s rest."""

    rest: str
    offset: int
    dtype: str


@dataclass(frozen=True)
class Prelude:
    """`sum(x)`, `min(x)` or `max(x)` of an array binding: the prelude's reduction of every
    element, written without `use` (the module then imports std::math by name, not `*`)."""

    op: str                        # sum min max
    name: str
    dtype: str
    back: int = 0                  # c >= 1: the row of a recurrence member at step `t - c`, inside its step
    # that row times the step's index, `sum(r[t - c] * (t as f32))` (back 0: the row `r[t]`)
    by_step: bool = False


@dataclass(frozen=True)
class Recur:
    """`{ let s[0] = init; let s[k in 1..steps] = step; s[steps - 1] }`: a scalar recurrence in a
    function body, which a call per point of an indexed definition computes for every point, or
    in a recurrence step, where it runs whole inside each step (ProgramGenerator.with_nesting).
    With `lanes`, its state is a row, `let s[k in 1..steps, j in 0..lanes] = step;` (init and
    step read `lane`), and its value the row's element `pick` at the last step."""

    name: str
    init: object
    step: object                   # reads the state one step back through `Prev` (and `PrevRow`)
    steps: int
    dtype: str
    var: str = "k"                 # its index, another where the enclosing clause names a `k`
    lanes: int = 0
    lane: str = "j"
    pick: int = 0


@dataclass(frozen=True)
class Prev:
    """`s[k - 1]` in the step of the `Recur` named `name` (`var`: that Recur's index)."""

    name: str
    dtype: str
    var: str = "k"
    lane: object = None            # `s[k - 1, lane]` where the Recur holds a row


@dataclass(frozen=True)
class PrevRow:
    """`op(s[k - 1])`: the whole row one step back of the Recur named `name`, reduced."""

    name: str
    op: str
    dtype: str
    var: str = "k"


@dataclass(frozen=True)
class StepTensor:
    """`{ let name[var in 0..size] = body; result }` in a recurrence step: a vector the step
    computes once (its body reads the state one step back), which `result` reads through `Local`."""

    name: str
    var: str
    size: int
    body: object
    result: object
    dtype: str


@dataclass(frozen=True)
class Local:
    """`name[sub]`: an element of the StepTensor `name` (sub stays in 0..size by construction)."""

    name: str
    sub: object
    dtype: str


@dataclass(frozen=True)
class Range:
    var: str
    lo: Bound
    hi: Bound
    explicit: bool = True          # `k in lo..hi`; otherwise inferred from a plain read `x[k]`
    within: Bound | None = None    # an end read from data: the axis the body's plain reads give k


@dataclass(frozen=True)
class Reduce:
    op: str                        # sum prod max min all any
    ranges: tuple                  # Range
    body: object
    guard: object | None
    dtype: str
    counted: bool = False          # a count (body 1) written `[k | k in lo..hi, guard].length`
    filtered: bool = False         # a sum, max or min written `max([body | k in lo..hi, guard])`


# ---------------------------------------------------------------- statements


@dataclass(frozen=True)
class Slot:
    """One position of a definition's left side: a ranged index, or a literal point (var None)."""

    var: str | None
    lo: Bound
    hi: Bound
    explicit: bool = True


@dataclass(frozen=True)
class Where:
    name: str | None               # None: a guard
    expr: object


@dataclass(frozen=True)
class Clause:
    slots: tuple
    body: object
    wheres: tuple = ()


@dataclass(frozen=True)
class Define:
    """`let name[slots] = body where ..;` clause by clause (one clause and no slots: a scalar)."""

    name: str
    dtype: str
    clauses: tuple
    annotate: bool = False         # `let y[i]: f64 = ..`
    one_if: bool = False           # a recurrence's start and step clauses written as one (render `_one_if`)
    short: bool = False            # a bool one written `(t < s && start) || (t >= s && steps)` (render)


@dataclass(frozen=True)
class Group:
    """Recurrences that run together along their first axis; `order` is a valid order inside a
    step (a member reads members before it at the same step)."""

    members: tuple                 # Define
    order: tuple                   # names
    layout: tuple                  # (member name, clause number) in source order


@dataclass(frozen=True)
class Whole:
    """`let name = expr;` over whole same-shape arrays (reads without subscripts), elementwise."""

    name: str
    dtype: str
    shape: tuple                   # Bound
    expr: object


@dataclass(frozen=True)
class RowMap:
    """A function of a row applied to the rows of a 2-d array in a comprehension:
    `fn name_row(row: [T; n]) -> T { let w = expr; op[k](w[k]) }` and
    `let name = [name_row(source[i]) | i in 0..m];`, `expr` elementwise over the whole row
    (`Read("row", ())`), so each row's reduction runs batched over the rows. `local`: the call
    is bound by the comprehension first (`[v | i in 0..m, v = name_row(source[i])]`).
    `unpacked`: a row of fixed length 2 to 4 is taken apart by a tuple pattern and built again
    (`[name_row([c0, c1]) | (c0, c1) in source]`), the same rows. `whole`: the reduction is the
    prelude's of the whole row expression, `op(expr)`, the same value. `split`: the row is first
    copied by two clauses guarded by the parity of k (`let u[k] = w[k] where k % 2 == 0; let
    u[k] = w[k] where k % 2 == 1;`), a piecewise definition computed per row, the same value.
    `scanned`: the row function returns the row expression and a function of the whole matrix of
    rows folds each row as a recurrence whose row index has no range (`let a[i, 0] = m[i, 0];
    let a[i, k in 1..n] = a[i, k - 1] + m[i, k];`, its extent from m's rows), the same value.
    `ranked` (scanned only): the step reads its previous one through a member of one more axis,
    `let d[i, k in 1..n, c in 0..2] = a[i, k - 1];` read as `d[i, k, 1]`: a group of members of
    different ranks stepping along their second axis (E007 before), the same value.
    `converted`: the row is converted by `as` before the call, to f32 and back for a half type
    (`name_row((source[i] as [f32]) as [f16])`), to its own type otherwise: the same row.
    `through`: an index input s of values in -1..m - 1 picks the rows, -1 giving 0
    (`[if s[i] >= 0 { name_row(source[s[i]]) } else { 0.0 } | i in 0..len]`): the row function's
    whole-row work reads its row only under the guard."""

    name: str
    source: str
    dtype: str
    shape: tuple                   # the source's Bounds: rows, row length
    expr: object
    op: str                        # "sum", "max" or "min"
    local: bool = False
    unpacked: bool = False
    whole: bool = False
    split: bool = False
    scanned: bool = False
    converted: bool = False
    param: str | None = None
    param_length: int = 0          # the param's one axis; 0 for a scalar
    through: str | None = None     # an index input picking the rows, -1 skipping one (a 0), one value per pick
    ranked: bool = False           # scanned, the fold's step reading its previous one through a member of 3 axes


ROW = "row"                        # the function's parameter
PARAM = "prm"                      # its second, RowMap.param passed whole


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple                  # (name, dtype)
    typed: bool
    body: object
    dtype: str


@dataclass(frozen=True)
class Derivative:
    """`@of / @wrt`; `outer` and `inner` (templates of OUTER_EXPRESSIONS and INNER_EXPRESSIONS,
    "{0}" for none) make either side an expression: `@sin(of) / @(wrt + wrt * wrt * wrt)`."""
    name: str
    of: str
    wrt: str
    dtype: str
    outer: str = "{0}"
    inner: str = "{0}"
    scale: str = ""                # a prefix of SCALES: `0.5 * @of / @wrt`, the derivative scaled
    # (rank, Bound of the last axis): the derivative bound first (`let g_j = @of / @wrt;`) and read
    # under a guard over one point more along its last axis, which is 0 there (`let g[pj0, pj1 in
    # 0..n + 1] = if pj1 < n { g_j[pj0, pj1] } else { 0.0 };`)
    padded: tuple = ()
    # "each" or "sum": the derivative of the row map `of` by its param asked per row, in a block
    # binding each row's value first (`let g[i in 0..m] = { let l = of_row(x[i], p); @l / @p };`,
    # a vector param's entries read `(@l / @p)[j]`), or that summed over the rows (`sum[i in
    # 0..m](..)`); `called`: in a function of the row returning the gradient (`fn g_grad(x, q) {
    # let l = of_row(x, q); @l / @q }`), called per row. Its value: the Jacobian of `of` by the
    # param (each row's value depends on the param and its own row only), summed over rows for "sum".
    per_point: str = ""
    called: bool = False


# Factors written unparenthesized before a derivative (`lr * @L / @w` is `lr * (@L / @w)`), and
# what each multiplies it by.
SCALES = {"0.5 * ": 0.5, "-": -1.0, "2.0 * -": -2.0}


# Expressions differentiated (`@sin(y) / @x`), elementwise in y.
OUTER_EXPRESSIONS = ("sin({0})", "tanh({0})", "({0} * {0} * 0.5 - {0})")
# y read back from a matrix literal of its values (y * y): the literal's rows are tensors even for
# a scalar y, each with an adjoint of its own (drawn from Streams.literals).
LITERAL_OUTER = "[[{0}, 0.5 * {0}], [{0} * {0}, -{0}]][1, 0]"
# Expressions of a scalar x differentiated with respect to (`@y / @(x + x * x * x)`): their
# slope is at least 1 everywhere, so dividing by it never amplifies rounding.
INNER_EXPRESSIONS = ("({0} + {0} * {0} * {0})", "(2.5 * {0} - cos({0}))")


@dataclass(frozen=True)
class Input:
    name: str
    dtype: str
    shape: tuple                   # Bound without index
    low: float = -2.0              # values drawn from [low, high]; ints inclusive
    high: float = 2.0


@dataclass(frozen=True)
class Program:
    inputs: tuple
    items: tuple                   # Define | Group | Whole | RowMap | Function | Derivative
    dims: tuple                    # (name, value) of the named dims
    outputs: tuple                 # the bindings the module returns
    saves: tuple = ()              # outputs also written by `save_npy("<name>.npy", name)`
    fixed: bool = False            # the named dims are fixed at build time (`--dim`), not run-time

    def dim_values(self) -> dict:
        return dict(self.dims)

    def bindings(self) -> dict:
        """Every value binding by name: inputs, definitions (group members too), derivatives."""
        out = {inp.name: inp for inp in self.inputs}
        for item in self.items:
            if isinstance(item, Group):
                out.update({m.name: m for m in item.members})
            elif not isinstance(item, Function):
                out[item.name] = item
        return out

    def functions(self) -> dict:
        return {f.name: f for f in self.items if isinstance(f, Function)}


def is_literal(expr) -> bool:
    return isinstance(expr, Lit) or (isinstance(expr, Unary) and isinstance(expr.arg, Lit))


def weak_literals(expr) -> bool:
    """Whether `expr` is made of unsuffixed literals alone, maybe chosen by a run-time condition
    (`if x > 0.0 { 0.5 } else { -2.0 }`): einc gives it the type of its context (the other
    clauses of its definition), its default type where nothing else types it."""
    if isinstance(expr, Lit):
        return not expr.suffix
    if isinstance(expr, Unary):
        return expr.op == "-" and weak_literals(expr.arg)
    if isinstance(expr, IfElse):
        return weak_literals(expr.then) and weak_literals(expr.other)
    return False


def children(expr) -> tuple:
    """The direct subexpressions of `expr`, in source order."""
    if isinstance(expr, Read):
        return expr.subs
    if isinstance(expr, (Unary, Cast)):
        return (expr.arg,)
    if isinstance(expr, Binary):
        return (expr.left, expr.right)
    if isinstance(expr, IfElse):
        return (expr.cond, expr.then, expr.other)
    if isinstance(expr, Call):
        return expr.args
    if isinstance(expr, Block):
        return tuple(e for _, e in expr.lets) + (expr.result,)
    if isinstance(expr, Recur):
        return (expr.init, expr.step)
    if isinstance(expr, Prev):
        return () if expr.lane is None else (expr.lane,)
    if isinstance(expr, StepTensor):
        return (expr.body, expr.result)
    if isinstance(expr, Local):
        return (expr.sub,)
    if isinstance(expr, Reduce):
        return (expr.body,) + ((expr.guard,) if expr.guard is not None else ())
    if isinstance(expr, Match):
        return (expr.scrutinee,) + tuple(x for arm in expr.arms for x in (arm.guard, arm.body) if x is not None)
    if isinstance(expr, RowMatch):
        return (expr.row, expr.body)
    return ()


def trailing_reduce(node):
    """The reduction whose closing `)` ends the text of `node`, or None."""
    while isinstance(node, (Binary, Unary)):
        node = node.right if isinstance(node, Binary) else node.arg
    return node if isinstance(node, Reduce) else None


def walk(expr):
    """`expr` and every node below it."""
    yield expr
    for child in children(expr):
        yield from walk(child)


def clause_exprs(clause: Clause) -> tuple:
    return tuple(w.expr for w in clause.wheres) + (clause.body,)


def item_exprs(item) -> tuple:
    if isinstance(item, Define):
        return tuple(e for c in item.clauses for e in clause_exprs(c))
    if isinstance(item, Group):
        return tuple(e for m in item.members for e in item_exprs(m))
    if isinstance(item, (Whole,)):
        return (item.expr,)
    if isinstance(item, RowMap):      # `expr` reads only the row and the param
        return (Read(item.source, (), item.dtype),) + ((Read(item.param, (), item.dtype),) if item.param else ()) \
            + ((Read(item.through, (), "i32"),) if item.through else ())
    if isinstance(item, Function):
        return (item.body,)
    return ()


def reads_of(item) -> set:
    """Names of bindings and functions that `item` reads."""
    names = set()
    for expr in item_exprs(item):
        for node in walk(expr):
            if isinstance(node, (Read, Prelude)):
                names.add(node.name)
            elif isinstance(node, Call):
                names.add(node.fn)
    if isinstance(item, Derivative):
        names |= {item.of, item.wrt}
    return names


def types_used(program: Program) -> set:
    """Every type a value of the program has (vulkan-spirv takes no f64 or i64)."""
    found = {i.dtype for i in program.inputs}
    for item in program.items:
        if isinstance(item, Function):
            found |= {t for _, t in item.params}
        if isinstance(item, Group):
            found |= {m.dtype for m in item.members}
        if isinstance(item, RowMap):
            found |= {node.dtype for node in walk(item.expr) if hasattr(node, "dtype")}
        elif hasattr(item, "dtype"):
            found.add(item.dtype)
        for expr in item_exprs(item):
            found |= {node.dtype for node in walk(expr) if hasattr(node, "dtype")}
    return found


def reads_earlier_steps(program: Program) -> bool:
    """A recurrence member read over a range of steps (`max[k in 0..t](r[k])`), not at `t` or
    `t - c`, outside a tensor the step computes (a step tensor's read of every earlier step,
    `h[q] = if q < t { r[q] } ..`, is not counted)."""
    return any(isinstance(item, Group) and group_reads_earlier_steps(item) for item in program.items)


def group_reads_earlier_steps(group: Group) -> bool:
    """Such a read in `group`; derivatives follow it in both modes (reverse mode's adjoint loop
    sums what every later step sends back)."""
    return any(_history_read(expr, {m.name for m in group.members}) for expr in item_exprs(group))


def runs_loops_in_steps(program: Program) -> bool:
    """A recurrence step that runs a loop whole inside it: a `Recur` in a group's clause, or a
    call there of a function whose body is one (ProgramGenerator.with_nesting)."""
    loops = loop_functions(program.items)
    return any(isinstance(item, Group) and group_runs_loops(item, loops) for item in program.items)


def loop_functions(items) -> set:
    """Names of the functions among `items` whose body is a scalar recurrence."""
    return {f.name for f in items if isinstance(f, Function) and isinstance(f.body, Recur)}


def group_runs_loops(group: Group, loops: set) -> bool:
    """Whether a step of `group` runs a loop: a `Recur`, or a call of one of `loops`."""
    return any(isinstance(n, Recur) or (isinstance(n, Call) and n.fn in loops)
               for expr in item_exprs(group) for n in walk(expr))


def _history_read(node, members: set) -> bool:
    if isinstance(node, StepTensor):
        return False
    if isinstance(node, Read) and node.name in members and isinstance(node.subs[0], Index) and node.subs[0].name != "t":
        return True
    return any(_history_read(child, members) for child in children(node))


def program_exprs(program: Program) -> tuple:
    """Every expression the program writes, a row function's elementwise work included."""
    found = tuple(e for item in program.items for e in item_exprs(item))
    return found + tuple(item.expr for item in program.items if isinstance(item, RowMap))


def calls_prelude(program: Program) -> bool:
    """A call of the prelude's `sum(x)`, `min(x)` or `max(x)`: a Prelude node, or a row
    function that reduces its row whole."""
    return any(isinstance(item, RowMap) and item.whole for item in program.items) \
        or any(isinstance(node, Prelude) for expr in program_exprs(program) for node in walk(expr))


# Results no two libraries round alike: NumPy's and IREE's f32 cos(2) differ by an ulp, and
# neither is the correctly rounded value. Exact functions (sqrt, abs, floor, ...) are not here.
APPROXIMATED = frozenset({"exp", "log", "sin", "cos", "tanh", "atan", "expm1", "log1p", "sinh", "cosh", "erf"})


def widens_an_approximation(program: Program) -> str | None:
    """The coarsest float type whose result of an approximated function (or of a user function,
    which may hold one) is cast to a wider float, or None: the values after it are only as close
    as two libraries of that type agree (f32 exp cast to f64, f16 tanh cast to f32)."""
    users = {item.name for item in program.items if isinstance(item, Function)}
    through = _computed_through_approximations(program, users)
    found = []
    for item in program.items:
        for expr in item_exprs(item):
            for node in walk(expr):
                if isinstance(node, Cast) and node.dtype in FLOATS:
                    found += [n.dtype for n in walk(node.arg)
                              if (_approximated(n, users) or (isinstance(n, Read) and n.name in through))
                              and n.dtype in FLOATS and _coarser(n.dtype, node.dtype)]
    return min(found, key=COARSEST_FIRST.index, default=None)


def _computed_through_approximations(program: Program, users: set) -> set:
    """The names of the bindings whose values pass through an approximated function, in their
    own definition or in a binding they read (`r[t] = tanh(..)` read as `r[t, k] as f64`)."""
    found: set = set()
    while True:
        more = {name for item in program.items if not isinstance(item, Function)
                for name in _bound_names(item) if name not in found
                and any(_approximated(n, users) or (isinstance(n, Read) and n.name in found)
                        for expr in item_exprs(item) for n in walk(expr))}
        if not more:
            return found
        found |= more


def _bound_names(item) -> list:
    if isinstance(item, Group):
        return [m.name for m in item.members]
    return [item.name] if hasattr(item, "name") else []


def _approximated(node, users: set) -> bool:
    """An approximated function's call, a user function's, or a power to a float exponent."""
    if isinstance(node, Call):
        return node.fn in APPROXIMATED or node.fn in users
    return isinstance(node, Binary) and node.op == "**" and node.right.dtype in FLOATS


def _coarser(a: str, b: str) -> bool:
    return COARSEST_FIRST.index(a) < COARSEST_FIRST.index(b)

