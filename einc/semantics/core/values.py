"""What an Einlang expression evaluates to while the program is elaborated into IR.

Most expressions become IR values (`einc.ir.nodes.Value`). The rest exist only at compile
time: untyped literals (`Weak`, which take the type their context asks for, as in Rust),
tuples, functions and closures, strings, and partial reads of an array (`m[0]` before the
next subscript arrives).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from einc.diagnostics import Span
from einc.ir.nodes import Generic, Value
from einc.ir.types import shape_str


class Traced:
    """The IR of a build-time value that a derivative differentiates, built once per dtype.

    `let h = 1.5; let e = h * h * h; let de = @e / @h;`: h and e stay untyped literals (they
    take the type of where they are used), but each also keeps how it was computed, so that
    typing it gives an IR graph over one differentiable constant per dtype for `h` rather
    than a folded number (einc.semantics.forms.variables). `build(dtype)` makes that graph."""

    def __init__(self, build: Callable):
        self._build = build
        self.typed: dict = {}          # DType -> Value, so every use of one dtype is one node

    def at(self, dtype) -> Value:
        if dtype not in self.typed:
            self.typed[dtype] = self._build(dtype)
        return self.typed[dtype]


@dataclass(eq=False)
class Weak:
    """An unsuffixed literal (or an array of them): `kind` is "int", "float" or "bool".
    `trace` is set when a derivative needs the value's graph, not only its number."""
    value: np.ndarray              # int64 / float64 / bool array, any rank
    kind: str
    span: Optional[Span] = None
    trace: Optional[Traced] = None

    @property
    def rank(self) -> int:
        return self.value.ndim


@dataclass(eq=False)
class TupleVal:
    items: tuple
    span: Optional[Span] = None


@dataclass(eq=False)
class StrVal:
    text: str
    span: Optional[Span] = None


@dataclass(eq=False)
class ListVal:
    """A sequence that exists only at build time: an array of strings, or the elements of a
    comprehension that are not numbers of one shape (tuples of mixed types, unit values, rows
    of different lengths), as LANGUAGE.md's jagged arrays."""
    items: tuple
    span: Optional[Span] = None


@dataclass(eq=False)
class PointItems:
    """A build-time sequence read at positions known only per point (`names[j]`, `grid[i, j]`
    for indices): its items, every one a candidate, row-major over `shape`, and the positions
    (i32 scalars), one per axis of `shape`. Comparisons, `in`, `+` and `len` apply to each item
    at build time; a number result is a table read at the positions
    (einc.semantics.core.sequences)."""
    items: tuple
    shape: tuple
    positions: tuple
    span: Optional[Span] = None


@dataclass(eq=False)
class FnVal:
    """A named function; `node` is its FnDef, specialised per call by elaborating its body."""
    node: Any
    env: "Env"


@dataclass(eq=False)
class LambdaVal:
    node: Any
    env: "Env"
    name: str = ""      # the `let` that first bound it (`let f = |x| ..`), for messages


@dataclass(eq=False)
class BuiltinVal:
    name: str


@dataclass(eq=False)
class PythonVal:
    """`python::mod::f`: a Python object, called during the build (einc.semantics.forms.python_calls)."""
    name: str                      # dotted: "mod.f"


@dataclass(eq=False)
class PartialRead:
    """`base[s0, .., sk]` with fewer subscripts than `base` has axes."""
    base: Value
    subs: tuple
    span: Optional[Span] = None

    @property
    def rank(self) -> int:
        return self.base.rank - len(self.subs)

    @property
    def shape(self) -> tuple:
        return tuple(self.base.shape[len(self.subs):])

    @property
    def dtype(self):
        return self.base.dtype


@dataclass(eq=False)
class StepRow(Generic):
    """A row of a recurrence member at the step being computed (`z[t, k - 1]` in a clause of
    `z[t, k, i]`): the tensor of its points, whose read at a point is that point's element read
    (`point(subs)`), ordered in the step as one (einc.semantics.forms.recurrences.state_read)."""
    point: Optional[Callable] = None


@dataclass(eq=False)
class LazyJacobian:
    """`@y / @x` for a non-scalar y, computed when used (einc.semantics.derivatives)."""
    y: Value
    x: Value
    rules: Any                     # the program's derivative rules (custom_rules.RuleTable)
    span: Optional[Span] = None

    @property
    def shape(self) -> tuple:
        return tuple(self.y.shape) + tuple(self.x.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)


class Env:
    """DefId -> value, chained to the enclosing scope (closures keep theirs)."""

    def __init__(self, parent: Optional["Env"] = None):
        self.parent = parent
        self.vars: dict = {}

    def lookup(self, def_id):
        env = self
        while env is not None:
            if def_id in env.vars:
                return env.vars[def_id]
            env = env.parent
        raise KeyError(def_id)

    def bind(self, def_id, value) -> None:
        self.vars[def_id] = value

    def names(self, value) -> bool:
        """Whether some name in scope is bound to `value` itself."""
        env = self
        while env is not None:
            if any(v is value for v in env.vars.values()):
                return True
            env = env.parent
        return False

    def child(self) -> "Env":
        return Env(self)


CompileTimeValue = (Weak, TupleVal, StrVal, ListVal, FnVal, LambdaVal, BuiltinVal, PartialRead, LazyJacobian)


def describe(v) -> str:
    """A short type description for diagnostics."""
    if isinstance(v, Weak):
        return f"{{{v.kind} literal}}" if v.rank == 0 else f"[{{{v.kind}}}; {', '.join(map(str, v.value.shape))}]"
    if isinstance(v, Value):
        return str(v.dtype) if v.rank == 0 else f"[{v.dtype}; {shape_str(v.shape)[1:-1]}]"
    if isinstance(v, TupleVal):
        return "(" + ", ".join(describe(i) for i in v.items) + ")"
    if isinstance(v, StrVal):
        return "str"
    if isinstance(v, ListVal):
        kinds = sorted({describe(i) for i in v.items})
        return f"[{kinds[0] if len(kinds) == 1 else ' | '.join(kinds)}; {len(v.items)}]"
    if isinstance(v, (FnVal, LambdaVal, BuiltinVal, PythonVal)):
        return "function"
    if isinstance(v, PartialRead):
        return f"[{v.dtype}; {shape_str(v.shape)[1:-1]}] (a slice)"
    if isinstance(v, PointItems):
        return f"{describe(v.items[0])} (an item of {len(v.items)} picked per point)"
    if isinstance(v, LazyJacobian):
        return f"derivative [{v.y.dtype}; {shape_str(v.shape)[1:-1]}]"
    return type(v).__name__

