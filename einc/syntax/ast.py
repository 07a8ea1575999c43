"""The source-located AST of Einlang.

Every node carries `span`. Nodes that bind or use names carry `def_id`, filled in by name
resolution (einc.semantics.core.resolve); it is None straight out of the parser. The parser
normalises surface sugar that has one meaning (pipelines, method calls on known built-ins are
kept as `MethodCall` because `x.sqrt()` needs resolution) and keeps everything else as written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from einc.diagnostics import Span


@dataclass(eq=False)
class Node:
    span: Span = field(repr=False, kw_only=True)


# ---------------------------------------------------------------- types

@dataclass(eq=False)
class ScalarType(Node):
    name: str                      # "i8" .. "i64", "u8" .. "u64", "f32", "f64", "bool", "str"


@dataclass(eq=False)
class DimSpec(Node):
    """One dimension of an array type: a fixed size, `?`, or a named dim (a symbol)."""
    size: Optional[int] = None     # fixed
    name: Optional[str] = None     # named dim such as N
    def_id: Any = None             # DefId of the named dim, set by resolution
    # size None and name None means `?`


@dataclass(eq=False)
class ArrayType(Node):
    """`[f32]` (rank 1, any length: dims has one `?`), `[f32; 2, N, ?]`, `[f32; *]` (dims None).
    `elem_only` marks `[f32]` written without dims, which `as` reads as "any rank"."""
    elem: "TypeExpr"
    dims: Optional[list[DimSpec]]
    elem_only: bool = False


@dataclass(eq=False)
class TupleType(Node):
    elems: list["TypeExpr"]


@dataclass(eq=False)
class NamedType(Node):
    """A type named by an identifier, e.g. a generic parameter `T`."""
    name: str


TypeExpr = Union[ScalarType, ArrayType, TupleType, NamedType]


# ---------------------------------------------------------------- expressions

@dataclass(eq=False)
class IntLit(Node):
    value: int
    suffix: Optional[str] = None   # "i64", "u8", .. when written `3i64`, else None


@dataclass(eq=False)
class FloatLit(Node):
    value: float
    suffix: Optional[str] = None


@dataclass(eq=False)
class BoolLit(Node):
    value: bool


@dataclass(eq=False)
class FormatField(Node):
    """`{expr}` or `{expr:.4f}` inside an interpolated string."""
    expr: "Expr"
    spec: str = ""


@dataclass(eq=False)
class StrLit(Node):
    """A string; `parts` alternates literal text (str, escapes already applied) and FormatField."""
    parts: list[Union[str, FormatField]]


@dataclass(eq=False)
class Name(Node):
    name: str
    def_id: Any = None


@dataclass(eq=False)
class Path(Node):
    """`a::b::c`, including `std::..`, `crate::..`, `self::..`, `super::..`."""
    segments: list[str]
    def_id: Any = None


@dataclass(eq=False)
class Unary(Node):
    op: str                        # "-" | "+" | "!"
    operand: "Expr"


@dataclass(eq=False)
class Binary(Node):
    op: str                        # "||" "&&" "==" "!=" "<" ">" "<=" ">=" "+" "-" "*" "/" "%" "**" "in"
    left: "Expr"
    right: "Expr"


@dataclass(eq=False)
class Call(Node):
    func: "Expr"
    args: list["Expr"]


@dataclass(eq=False)
class MethodCall(Node):
    """`x.sqrt()`: sugar for `sqrt(x)` resolved against the scope of the call."""
    obj: "Expr"
    method: str
    args: list["Expr"]
    def_id: Any = None             # the function the method name resolves to


@dataclass(eq=False)
class Member(Node):
    """`x.shape`, `x.length`, `x.size`, and tuple fields `t.0` (name is "0")."""
    obj: "Expr"
    name: str


@dataclass(eq=False)
class RestIndex(Node):
    """`..name` in a subscript or a declaration bracket."""
    name: str
    def_id: Any = None


@dataclass(eq=False)
class FullSlice(Node):
    """`:` in a subscript: every point of that axis (only derivatives accept it)."""


@dataclass(eq=False)
class Index(Node):
    """`base[s0, s1, ..]`; a subscript is an expression, a RestIndex or a FullSlice."""
    base: "Expr"
    subscripts: list[Union["Expr", RestIndex, FullSlice]]


@dataclass(eq=False)
class Cast(Node):
    expr: "Expr"
    to: TypeExpr


@dataclass(eq=False)
class If(Node):
    cond: "Expr"
    then: "Expr"                   # usually a Block
    orelse: Optional["Expr"]       # Block, If (else if) or None


@dataclass(eq=False)
class LitPat(Node):
    value: Union[int, float, bool, str]    # signed: `-1` is stored as -1


@dataclass(eq=False)
class WildPat(Node):
    pass


@dataclass(eq=False)
class BindPat(Node):
    name: str
    def_id: Any = None
    sub: Optional["Pattern"] = None        # `name @ sub`


@dataclass(eq=False)
class TuplePat(Node):
    elems: list["Pattern"]


@dataclass(eq=False)
class RangePat(Node):
    """`lo..hi`, `lo..=hi`, `lo..`, `..=hi` of number literals (an open end is None)."""
    lo: Optional[Union[int, float]]
    hi: Optional[Union[int, float]]
    inclusive: bool


@dataclass(eq=False)
class OrPat(Node):
    alts: list["Pattern"]


@dataclass(eq=False)
class RestPat(Node):
    """`..` or `..name` inside an array pattern: the elements between its neighbours."""
    bind: Optional[BindPat] = None


@dataclass(eq=False)
class ArrayPat(Node):
    elems: list["Pattern"]                 # at most one RestPat among them


Pattern = Union[LitPat, WildPat, BindPat, TuplePat, RangePat, OrPat, ArrayPat]


@dataclass(eq=False)
class MatchArm(Node):
    pattern: Pattern
    guard: Optional["Expr"]
    body: "Expr"


@dataclass(eq=False)
class Match(Node):
    scrutinee: "Expr"
    arms: list[MatchArm]


@dataclass(eq=False)
class Block(Node):
    stmts: list["Stmt"]
    result: Optional["Expr"]       # the final expression, None when the block ends in `;`


@dataclass(eq=False)
class Param(Node):
    name: str
    type: Optional[TypeExpr] = None
    def_id: Any = None


@dataclass(eq=False)
class Lambda(Node):
    params: list[Param]
    body: "Expr"


@dataclass(eq=False)
class ArrayLit(Node):
    elems: list["Expr"]


@dataclass(eq=False)
class TupleLit(Node):
    elems: list["Expr"]


@dataclass(eq=False)
class Range(Node):
    """`lo..hi` or `lo..=hi`; either end may be omitted where the grammar allows."""
    lo: Optional["Expr"]
    hi: Optional["Expr"]
    inclusive: bool = False


@dataclass(eq=False)
class IndexVar(Node):
    """An index bound by a declaration bracket or a reduction: `i` or `i in 0..N`."""
    name: str
    range: Optional[Range] = None
    def_id: Any = None
    shadows: Any = None            # a declaration bracket's bare name: the value binding of that name in scope


@dataclass(eq=False)
class IndexLiteral(Node):
    """A literal point in a declaration bracket: the `0` of `let y[0] = ..`."""
    value: int


DeclSlot = Union[IndexVar, IndexLiteral, RestIndex]


@dataclass(eq=False)
class WhereGuard(Node):
    cond: "Expr"


@dataclass(eq=False)
class WhereBind(Node):
    """`name = expr` in a where clause: a local binding or index algebra (`ih = oh + kh`)."""
    name: str
    value: "Expr"
    def_id: Any = None


WhereClause = Union[WhereGuard, WhereBind]


@dataclass(eq=False)
class Reduction(Node):
    op: str                        # "sum" | "prod" | "max" | "min" | "all" | "any"
    indices: list[Union[IndexVar, RestIndex]]
    body: "Expr"
    wheres: list[WhereClause] = field(default_factory=list)


@dataclass(eq=False)
class Where(Node):
    """`expr where clauses` around anything other than a reduction."""
    body: "Expr"
    clauses: list[WhereClause]


@dataclass(eq=False)
class Generator(Node):
    """`x in iterable` inside a comprehension; `(x, y) in pairs` destructures each element
    (a tuple, or a row whose length the pattern gives) into the names of `pattern`."""
    name: str
    iterable: "Expr"               # a Range or an array expression
    def_id: Any = None
    pattern: Any = None            # a TuplePat, or None for a plain name


@dataclass(eq=False)
class CompBinding(Node):
    """`y = x * 2` inside a comprehension: a local the later clauses and the body see."""
    name: str
    value: "Expr"
    def_id: Any = None


@dataclass(eq=False)
class Comprehension(Node):
    """`[expr | x in xs, y = x * 2, y > 1]`: `clauses` in source order, each a Generator, a
    CompBinding or a filter (a bool expression)."""
    body: "Expr"
    clauses: list

    @property
    def generators(self) -> list[Generator]:
        return [c for c in self.clauses if isinstance(c, Generator)]

    @property
    def bindings(self) -> list[CompBinding]:
        return [c for c in self.clauses if isinstance(c, CompBinding)]

    @property
    def filters(self) -> list:
        return [c for c in self.clauses if not isinstance(c, (Generator, CompBinding))]


@dataclass(eq=False)
class Diff(Node):
    """`@target`: the differential of a binding (a Name or an Index of one) or of an expression
    (`@log10(x)`, `@(x + x * x)`)."""
    target: "Expr"


@dataclass(eq=False)
class Derivative(Node):
    """`@y / @x`."""
    numerator: "Expr"              # the expression after `@` on the left
    denominator: "Expr"


Expr = Union[IntLit, FloatLit, BoolLit, StrLit, Name, Path, Unary, Binary, Call, MethodCall,
             Member, Index, Cast, If, Match, Block, Lambda, ArrayLit, TupleLit, Range, Reduction,
             Where, Comprehension, Diff, Derivative]


# ---------------------------------------------------------------- statements and items

@dataclass(eq=False)
class Let(Node):
    """`let pat [: type] [= value];` A top-level `let name: type;` (no value) is a run-time input."""
    pattern: Pattern               # BindPat or TuplePat
    type: Optional[TypeExpr]
    value: Optional[Expr]
    is_const: bool = False
    is_pub: bool = False           # `pub const`: exported from its module


@dataclass(eq=False)
class IndexedLet(Node):
    """One clause of an indexed definition: `let name[slots] = value [where ..];`."""
    name: str
    slots: list[DeclSlot]
    value: Expr
    wheres: list[WhereClause] = field(default_factory=list)
    type: Optional[TypeExpr] = None
    def_id: Any = None             # shared by every clause of one piecewise definition


@dataclass(eq=False)
class ExprStmt(Node):
    expr: Expr


@dataclass(eq=False)
class FnDef(Node):
    name: str
    params: list[Param]
    ret: Optional[TypeExpr]
    body: Block
    is_pub: bool = False
    def_id: Any = None


@dataclass(eq=False)
class DiffRule(Node):
    """`@fn name(x, ..) { body }`: a custom derivative rule for function `name`."""
    name: str
    params: list[Param]
    body: Block
    def_id: Any = None             # DefId of the function the rule belongs to


@dataclass(eq=False)
class UseItem(Node):
    name: str                      # "*" for a glob
    alias: Optional[str] = None


@dataclass(eq=False)
class Use(Node):
    """`use a::b::c;` `use a::b as m;` `use a::b::{x, y as z};` `use a::b::*;` (`pub use` re-exports).

    `path` is the module path; `items` is None for a plain `use a::b::c` / `use a::b as m`,
    in which case the last segment of `path` is the imported name and `alias` renames it.
    """
    path: list[str]
    items: Optional[list[UseItem]] = None
    alias: Optional[str] = None
    is_pub: bool = False


@dataclass(eq=False)
class ModDecl(Node):
    """`mod name;` (file module) or `mod name { items }` (inline module, body not None)."""
    name: str
    body: Optional[list["Stmt"]] = None
    is_pub: bool = False


Stmt = Union[Let, IndexedLet, ExprStmt, FnDef, DiffRule, Use, ModDecl]


@dataclass(eq=False)
class Module(Node):
    """One parsed file."""
    path: str                      # file path as given to the parser
    items: list[Stmt]


def left_chain(node: "Binary") -> tuple:
    """(first operand, [the Binary nodes applied to it, innermost first]) along the left operands
    of `node`: `a + b - c` is (a, [a + b, (a + b) - c]). The parser builds left-associative
    chains (a sum of thousands of terms) as trees that deep; walks go along them in a loop."""
    chain = []
    while isinstance(node, Binary):
        chain.append(node)
        node = node.left
    return node, chain[::-1]


def iter_nodes(node):
    """Every AST node under `node` (itself included); `node` may also be a list of nodes."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(n)
            continue
        if not isinstance(n, Node):
            continue
        yield n
        stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "span")
