"""The typed tensor IR: what the front end produces and the MLIR lowering consumes.

A program is a DAG of `Value`s. Every value has a dtype and a shape (a tuple of `Lin` sizes;
rank 0 is a scalar). Values are compared by identity; a value used twice is computed once.

There are two kinds of context. At *program level* a value is a whole tensor or a scalar.
Inside the `body` of a `Generic` or `Reduce`, values are scalars computed per point of the
iteration domain: `IndexRef` gives the coordinate of an index variable and `Read` reads one
element of a program-level tensor. A body may also use program-level scalars (inputs, sizes,
or reductions with no free index), which are computed once outside the loop.

Facts the passes attach (`Read.in_bounds`) let the lowering choose between an affine indexing
map (fast, only when the read is proven to stay inside the tensor) and a clamped
`tensor.extract` (always safe).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from einc.diagnostics import Span
from einc.ir.traversal import fold
from einc.ir.types import BOOL, F32, I32, DType, Lin, Shape, Sym, dtype_of_numpy


class Value:
    dtype: DType
    shape: Shape
    span: Optional[Span] = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    def operands(self) -> tuple["Value", ...]:
        return ()


class IndexVar:
    """An iteration variable: its coordinate runs over lo, lo + 1, .., lo + extent - 1.

    `lo` and `extent` are linear in input sizes only (never in other index variables); a
    range that depends on an outer index is iterated over its hull and narrowed by a guard.
    """

    def __init__(self, name: str, lo: Lin, extent: Optional[Lin], span: Optional[Span] = None):
        self.name = name
        self.lo = lo
        self.extent = extent          # None only while the front end is still inferring it
        self.span = span

    def __repr__(self) -> str:
        return f"{self.name}∈[{self.lo!r}, +{self.extent!r})"

    @property
    def is_empty(self) -> bool:
        """Whether the range holds no value (`9..4`, `3..3`). A negative extent is not empty
        but wrong: a range of input sizes too small for it (einc.semantics.forms.definitions.extent)."""
        return self.extent is not None and self.extent.is_const and self.extent.const == 0


@dataclass(eq=False)
class Input(Value):
    """A run-time input: argument number `pos` of the compiled function."""
    name: str
    pos: int
    dtype: DType
    shape: Shape
    # per axis: int (fixed), None (`?`) or the named dim's name; None for any rank
    declared_dims: Optional[list] = None
    span: Optional[Span] = None


@dataclass(eq=False)
class Const(Value):
    """A constant known at build time (literals, `load_npy`). A `differentiable` one is a
    binding some derivative is taken with respect to (`let h = 1.5; .. @e / @h`): it is never
    folded into the values computed from it, so the derivative finds it in their graph. An
    untyped literal's constant keeps the `literal` value it was rounded from (float64), so that
    where its context asks for another float type it can be made again in that type."""
    array: np.ndarray
    span: Optional[Span] = None
    differentiable: bool = False
    literal: Optional[np.ndarray] = None

    def __post_init__(self) -> None:
        self.dtype = dtype_of_numpy(self.array.dtype)
        self.shape = tuple(Lin(n) for n in self.array.shape)


@dataclass(eq=False)
class Size(Value):
    """An i32 scalar whose value is a linear form of input sizes (`N`, `T - 1`)."""
    lin: Lin
    span: Optional[Span] = None

    def __post_init__(self) -> None:
        self.dtype, self.shape = I32, ()


@dataclass(eq=False)
class IndexRef(Value):
    """The coordinate of index variable `var` at the current point (an i32 scalar)."""
    var: IndexVar
    span: Optional[Span] = None

    def __post_init__(self) -> None:
        self.dtype, self.shape = I32, ()


# Scalar operations of `Op`, by arity.
UNARY_OPS = ("neg", "not", "abs", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "log2",
             "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
             "asinh", "acosh", "atanh", "erf", "floor", "ceil", "round", "trunc", "isnan",
             "isinf", "cast")
BINARY_OPS = ("add", "sub", "mul", "div", "rem", "pow", "min", "max", "atan2", "and", "or",
              "eq", "ne", "lt", "le", "gt", "ge")
TERNARY_OPS = ("select",)
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


@dataclass(eq=False)
class Op(Value):
    """A scalar operation. Operands are scalars with the same dtype, except:
    `select(cond: bool, a, b)`; `pow(float, i32)` (integer power); `cast(x)` whose result
    dtype is `dtype`; comparisons, `isnan`, `isinf` give bool. Integer `div` truncates toward
    zero and `rem` takes the dividend's sign (Rust semantics); `and`/`or`/`not` are on bool.
    """
    op: str
    args: tuple
    dtype: DType
    span: Optional[Span] = None

    def __post_init__(self) -> None:
        self.shape = ()

    def operands(self) -> tuple[Value, ...]:
        return tuple(self.args)


@dataclass(eq=False)
class Read(Value):
    """`tensor[subs]`: one element of a program-level tensor; one i32 subscript per axis."""
    tensor: Value
    subs: tuple
    span: Optional[Span] = None
    in_bounds: bool = False        # inside at every point of the domain: proven, or checked before each run
    strict: bool = False           # the program reads it unconditionally: it may not be clamped
    # in a range that depends on outer indices: (axis, subscript in sizes) at the extreme points
    # where the real ranges run, which a run's sizes must keep inside (passes/size_facts)
    extreme_points: tuple = ()

    def __post_init__(self) -> None:
        self.dtype, self.shape = self.tensor.dtype, ()

    def operands(self) -> tuple[Value, ...]:
        return (self.tensor,) + tuple(self.subs)


REDUCE_KINDS = ("sum", "prod", "max", "min", "all", "any")


@dataclass(eq=False)
class Reduce(Value):
    """`kind[vars](body) where guard`: a scalar; points where `guard` is false contribute the
    identity (0, 1, -inf, +inf, true, false). `vars` are fresh to this reduction."""
    kind: str
    vars: tuple
    body: Value
    guard: Optional[Value] = None
    span: Optional[Span] = None

    def __post_init__(self) -> None:
        self.dtype = BOOL if self.kind in ("all", "any") else self.body.dtype
        self.shape = ()

    def operands(self) -> tuple[Value, ...]:
        return (self.body,) + ((self.guard,) if self.guard is not None else ())


def reduced(kind: str, vars: tuple, body: Value, guard: Optional[Value] = None, span: Optional[Span] = None) -> Value:
    """`kind[vars](body) where guard`. A sum or product of f16 or bf16 terms accumulates in f32
    and is rounded once, as NumPy reduces float16 (and as the half types' other operations are
    computed): rounded at every step, a long sum stalls (5,000 terms of 0.1 summed to 256)."""
    if kind not in ("sum", "prod") or not body.dtype.is_half:
        return Reduce(kind, vars, body, guard, span=span)
    wide = body.args[0] if isinstance(body, Op) and body.op == "cast" and body.args[0].dtype == F32 \
        else Op("cast", (body,), F32, span=span)
    return Op("cast", (Reduce(kind, vars, wide, guard, span=span),), body.dtype, span=span)


@dataclass(eq=False)
class Generic(Value):
    """A tensor defined point by point: element [c0, c1, ..] (coordinates of `vars` minus their
    `lo`) is `body`, or 0 where `guard` is false. An empty `vars` gives a rank-0 tensor, which
    is how scalar work that depends on tensor data stays on the device."""
    vars: tuple
    body: Value
    guard: Optional[Value] = None
    span: Optional[Span] = None

    def __post_init__(self) -> None:
        self.dtype = self.body.dtype

    @property
    def shape(self) -> Shape:
        # read when asked: a batched definition's leading vars may get their extent later
        # (einc.semantics.forms.definitions.batch_over_outer_indices)
        return tuple(v.extent for v in self.vars)

    def operands(self) -> tuple[Value, ...]:
        return (self.body,) + ((self.guard,) if self.guard is not None else ())


@dataclass(eq=False)
class Clause:
    """One clause of a piecewise definition: `value` is written at `offsets`. `value` has the
    clause's own shape, with axes of size 1 where the clause names a literal point."""
    offsets: tuple
    value: Value


@dataclass(eq=False)
class Piecewise(Value):
    """A tensor of `shape` built from clauses in order (later clauses win where they overlap);
    points no clause covers are 0. `name`: the definition's, for one the program writes (its
    reads of such points are E005, einc.semantics.core.coverage). `lead`: indices of an
    enclosing definition it is batched over (einc.semantics.core.tensors.
    batch_piecewise_over_outer_indices), whose extents come first in `shape`."""
    dtype: DType
    clause_shape: Shape            # the shape after the `lead` axes
    clauses: tuple
    span: Optional[Span] = None
    name: str = ""
    lead: tuple = ()

    @property
    def shape(self) -> Shape:
        # read when asked: the `lead` indices may get their extent later, as a batched Generic's
        return tuple(v.extent for v in self.lead) + tuple(self.clause_shape)

    def operands(self) -> tuple[Value, ...]:
        return tuple(c.value for c in self.clauses)


@dataclass(eq=False)
class Stack(Value):
    """`[e0, e1, ..]` of values that are not all constants: a new leading axis."""
    elems: tuple
    span: Optional[Span] = None

    def __post_init__(self) -> None:
        first = self.elems[0]
        self.dtype = first.dtype
        self.shape = (Lin(len(self.elems)),) + tuple(first.shape)

    def operands(self) -> tuple[Value, ...]:
        return tuple(self.elems)


@dataclass(eq=False)
class Compact(Value):
    """The rows of `source` (along axis 0) where the bool vector `mask` holds, in order. `kept`
    is the running count of kept rows (i32, one more than `source` has rows: kept[p] is how many
    of rows 0..p are kept, the output position of row p) and `count` the number kept (an i32
    scalar), the run-time size `length`: the lowering reads it back once, before anything uses
    it."""
    source: Value
    mask: Value
    kept: Value
    count: Value
    length: "Sym"
    span: Optional[Span] = None

    def __post_init__(self) -> None:
        self.dtype = self.source.dtype
        self.shape = (Lin.of(self.length),) + tuple(self.source.shape[1:])

    def operands(self) -> tuple[Value, ...]:
        return (self.source, self.mask, self.kept, self.count)


# ---------------------------------------------------------------- recurrences

class RecurrenceGroup:
    """Definitions that recur together along their first axis, run as one loop.

    Step `t` runs over `t_var` (coordinate 0 .. extent - 1). At each step the members are
    computed in `members` order (the order same-step reads require), each member's clauses in
    the order of its `clauses` (einc.ir.clause_order: after the clauses whose points they read
    at this step, else in source order), each clause over its other axes in lexicographic
    order, point by point: so any read of an earlier step, of an earlier member at this step,
    of another clause's points at this step or of an earlier point of the same clause at this
    step sees its final value. Points no clause covers are 0.
    """

    def __init__(self, t_var: IndexVar, members: list):
        self.t_var = t_var
        self.members = members
        self.step_work: list = []       # tensors each step computes whole (passes.step_work)
        self.enclosing = None           # the group in each of whose steps this one runs (ditto)
        self.written_axis = 0           # the step's axis in the source (stored first: forms.step_axis)

    def code(self) -> list:
        """The bodies and guards of its members' clauses: what each step runs."""
        return [x for m in self.members for c in m.clauses for x in (c.body, c.guard) if x is not None]


@dataclass(eq=False)
class RecClause:
    """One clause of a member: at steps t in [t_lo, t_hi) it writes `body` (0 where `guard` is
    false) at [t, v1, v2, ..] for the points of `vars` (one per remaining axis; a literal point
    is a var of extent 1). `t_lo`/`t_hi` are Lins in sizes."""
    t_lo: Lin
    t_hi: Lin
    vars: tuple
    body: Value
    guard: Optional[Value] = None
    span: Optional[Span] = None         # the source clause, for messages
    # a rim reading its own step (einc.semantics.forms.guarded_clauses): it runs after the step's
    # other clauses and writes back what they wrote where its guard (in `body`) fails, so its
    # reads of its own box are of those values
    keeps: bool = False


class RecMember:
    """One definition of a group. `window` is None when the whole tensor is kept, else the
    number of steps kept: step t lives in slot t mod window (the storage plan). `batch`: the
    indices of an enclosing definition the group is computed for every value of, as axes right
    after the step (einc.semantics.forms.recurrences.batch_over_outer_indices); their extents may be
    inferred later, so the shape is read when asked."""

    def __init__(self, name: str, dtype: DType, shape: Shape, clauses: list, span=None):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.batch: tuple = ()
        self.clauses = clauses
        self.span = span
        self.window: Optional[int] = None
        self.plan: dict = {}            # lookback, tail, reason: what --explain prints
        self.adjoint_of: Optional["RecMember"] = None   # reverse mode: the member this is the adjoint of

    @property
    def shape(self) -> Shape:
        batch = tuple(None if v.extent is None else v.lo + v.extent for v in self.batch)
        return self._shape[:1] + batch + self._shape[1:]

    @shape.setter
    def shape(self, shape: Shape) -> None:
        self._shape = tuple(shape)

    def __repr__(self) -> str:
        return f"RecMember({self.name})"


@dataclass(eq=False)
class StateRead(Value):
    """Inside a recurrence step: element `subs` (one per axis, full coordinates) of `member`.
    The lowering maps subs[0] to its slot (subs[0] mod window)."""
    member: RecMember
    subs: tuple
    span: Optional[Span] = None

    def __post_init__(self) -> None:
        self.dtype, self.shape = self.member.dtype, ()

    def operands(self) -> tuple[Value, ...]:
        return tuple(self.subs)


@dataclass(eq=False)
class RecValue(Value):
    """The storage of `member` after its group's loop: the whole tensor, or with a window only
    `window` slots along axis 0 (reads of it are rewritten to slot indices by the planner)."""
    group: RecurrenceGroup
    member: RecMember
    span: Optional[Span] = None

    def __post_init__(self) -> None:
        self.dtype = self.member.dtype

    @property
    def shape(self) -> Shape:
        m = self.member
        return m.shape if m.window is None else (Lin(m.window),) + tuple(m.shape[1:])

    def operands(self) -> tuple[Value, ...]:
        # the whole group runs as one loop, so every member's clauses feed every member
        return tuple(self.group.code())


# ---------------------------------------------------------------- effects and programs

@dataclass(eq=False)
class Print:
    """`print(..)`: `parts` is a list of {"text": s} and {"arg": k, "spec": s} (runner format)."""
    parts: list
    args: tuple
    span: Optional[Span] = None


@dataclass(eq=False)
class Assert:
    """A run-time check; `message` is the full text shown when `cond` is false. `values`: the
    message's run-time fields (`"got {f[4]}"`), a Print traced only when `cond` is false, whose
    text the runner shows instead of the message's. `point_parts`: how many of its last parts
    name the point where it fails (an assert in a body over points, semantics.forms.point_asserts)."""
    cond: Value
    message: str
    span: Optional[Span] = None
    values: Optional[Print] = None
    point_parts: int = 0

    def printed(self) -> tuple:
        """The values its message shows."""
        return () if self.values is None else tuple(self.values.args)


@dataclass
class Program:
    source: str                                   # entry file name
    inputs: list = field(default_factory=list)    # list[Input], in argument order
    outputs: list = field(default_factory=list)   # list[(name, Value)]
    effects: list = field(default_factory=list)   # list[Print | Assert], in program order
    syms: list = field(default_factory=list)      # list[Sym], every run-time size of an input
    recurrences: list = field(default_factory=list)  # list[RecurrenceGroup]
    compactions: list = field(default_factory=list)  # list[Compact]: each defines a DataSize
    fixed_dims: dict = field(default_factory=dict)   # named dim -> size fixed at build time
    data_files: list = field(default_factory=list)   # paths load_npy read (the build cache's key)
    python_results: list = field(default_factory=list)   # digests of what Python calls returned (too)
    size_facts: list = field(default_factory=list)   # list[SizeFact] (passes.size_facts)
    index_checks: list = field(default_factory=list)  # list[IndexCheck] (passes.index_checks)
    # a function body's span -> the chains of calls that ran it, each [(call span, callee)],
    # innermost first: notes for an error a later stage finds inside the body (diagnostics.note_calls)
    call_chains: dict = field(default_factory=dict)

    def roots(self) -> list:
        """The values that leave the program (outputs, printed values, asserted conditions,
        index checks' statuses) and the filtered sequences whose lengths sizes may name."""
        roots = [v for _, v in self.outputs]
        for e in self.effects:
            roots += list(e.args) if isinstance(e, Print) else [e.cond, *e.printed()]
        return roots + list(self.compactions) + [check.status for check in self.index_checks]


def fresh_index_vars(shape, prefix: str = "e") -> tuple:
    """New variables spanning `shape` (lo 0), for a definition over a whole tensor."""
    return tuple(IndexVar(f"{prefix}{k}", Lin(0), extent) for k, extent in enumerate(shape))


def postorder(roots, children) -> list[Value]:
    """Every value reachable from `roots` through `children(v)`, each once, children before the
    values that reach them; iterative, so a chain of any depth is fine."""
    seen: set[int] = set()
    order: list[Value] = []
    stack = [(r, False) for r in reversed(list(roots))]
    while stack:
        v, done = stack.pop()
        if done:
            order.append(v)
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        stack.append((v, True))
        stack.extend((c, False) for c in reversed(list(children(v))) if id(c) not in seen)
    return order


def walk(roots, opaque: tuple = ()) -> list[Value]:
    """Every value reachable from `roots` (bodies included), operands before users. Values of
    the types in `opaque` are listed but not entered."""
    return postorder(roots, lambda v: () if isinstance(v, opaque) else v.operands())


def is_stored_tensor(v: Value) -> bool:
    """Whether `v` is a program-level tensor that kernels compute and store (a rank-0 one may
    also stand directly in a scalar expression, as a library function's `let s[..lead] = ..`
    over no axes does)."""
    return isinstance(v, (Generic, Piecewise, Stack, RecValue))


def is_folding_constant(v: Value) -> bool:
    """Whether `v` is a constant that operations on it may fold (a differentiable one is not)."""
    return isinstance(v, Const) and not v.differentiable


def decided_by_a_constant(op: str, args: list):
    """A select whose condition, or an and/or one of whose sides, is known at build time is the
    side it picks (`x > 0 && false` is false); None otherwise. IREE-35: left to IREE, such a
    select can become a fill whose Vulkan reduction needs unbounded workgroup memory."""
    known = [bool(a.array) if is_folding_constant(a) and a.array.ndim == 0 else None for a in args]
    if op == "select" and known[0] is not None:
        return args[1] if known[0] else args[2]
    if op in ("and", "or"):
        absorbing = op == "or"            # true absorbs an or, false an and
        for k, value in enumerate(known):
            if value is absorbing:
                return args[k]
            if value is not None:
                return args[1 - k]
    return None


def size_value(lin: Lin, span: Optional[Span] = None) -> Value:
    """An i32 value for a linear form of sizes: a constant when it is one."""
    if lin.is_const:
        return Const(np.asarray(lin.const, dtype=np.int32), span=span)
    return Size(lin, span=span)


def step_code(roots) -> list:
    """The values of a recurrence step's code under `roots`: its scalars and the Stacks of
    per-point scalars it builds, not the program-level tensors it reads."""
    out, seen, stack = [], set(), [r for r in roots if r is not None]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        out.append(v)
        if v.rank == 0 or isinstance(v, Stack):
            stack.extend(v.operands())
    return out


def step_state_reads(roots) -> list:
    """The StateReads in a recurrence step's code under `roots`."""
    return [v for v in step_code(roots) if isinstance(v, StateRead)]


def is_program_level(v: Value) -> bool:
    """Whether `v` can be computed outside any loop (it uses no index variable)."""
    return not free_vars(v)


def free_vars(v: Value, _memo: Optional[dict] = None) -> frozenset:
    """Index variables `v` depends on that it does not bind itself."""
    return fold(v, _free_var_parts, _free_vars_of, {} if _memo is None else _memo)


def body_vars(g: "Generic") -> frozenset:
    """Index variables a Generic's body and guard read, its own among them."""
    return free_vars(g.body) | (free_vars(g.guard) if g.guard is not None else frozenset())


# program-level tensors close over their own variables
_CLOSED = (Generic, Piecewise, Input, Const, Size, RecValue, Compact)


def _free_var_parts(v: Value) -> tuple:
    return () if isinstance(v, _CLOSED) else v.operands()


def _free_vars_of(v: Value, below: list) -> frozenset:
    if isinstance(v, IndexRef):
        return frozenset([v.var])
    out = frozenset().union(*below)
    return out - frozenset(v.vars) if isinstance(v, Reduce) else out


__all__ = ["Value", "IndexVar", "fresh_index_vars", "Input", "Const", "Size", "IndexRef", "Op", "Read", "Reduce",
           "Generic", "Clause", "Piecewise", "Stack", "Compact", "RecurrenceGroup", "RecClause", "RecMember",
           "StateRead", "RecValue", "Print", "Assert", "Program", "walk", "size_value",
           "is_folding_constant", "decided_by_a_constant", "is_stored_tensor", "step_state_reads",
           "free_vars", "body_vars", "is_program_level", "Sym", "Lin", "UNARY_OPS", "BINARY_OPS",
           "TERNARY_OPS", "COMPARISONS", "REDUCE_KINDS"]
