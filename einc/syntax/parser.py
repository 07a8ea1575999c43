"""Source text -> einc.syntax.ast, with a Span on every node and E001 diagnostics for bad syntax.

The Lark LALR parser is built once per process (`_lark`), from tables Lark keeps in einc's user
cache (building them takes ~0.5 s, loading them ~30 ms: `einc check` runs on save). Interpolated strings are parsed a second
time here: each `{expr}` field goes back through the same parser (start symbol `expr`) with its
positions shifted to where the field sits in the file, so its spans are exact too.
"""
from __future__ import annotations

import difflib
import functools
import math
import hashlib
import re
from pathlib import Path as FsPath
from typing import Optional

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken,
                             VisitError)
from lark.lexer import PatternStr

from einc.diagnostics import SYNTAX, VALUE, CompileError, Span, error
from einc.syntax import ast
from einc.user_cache import cache_folder

_GRAMMAR = FsPath(__file__).with_name("grammar.lark")

INT_SUFFIXES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
SCALAR_TYPES = frozenset(INT_SUFFIXES + FLOAT_TYPES + ("bool", "str"))


@functools.lru_cache(maxsize=None)
def _lark() -> Lark:
    grammar = _GRAMMAR.read_text()
    return Lark(grammar, parser="lalr", lexer="contextual", start=["start", "expr"],
                propagate_positions=True, maybe_placeholders=True, cache=_tables_file(grammar))


def _tables_file(grammar: str) -> str | bool:
    """A cache file per grammar (Lark also checks its options and version inside the file);
    False (build every time) when there is no cache folder."""
    folder = cache_folder("parser")
    if folder is None:
        return False
    return str(folder / f"lark-{hashlib.sha256(grammar.encode()).hexdigest()[:16]}.pickle")


def parse(text: str, filename: str) -> ast.Module:
    """Parse one source file into a Module; raises CompileError (E001) on a syntax error."""
    tree = _parse_tree(text, "start", filename, _Origin(1, 1))
    module = _build(tree, filename, _Origin(1, 1))
    module.span = _whole_text_span(text, filename)
    return module


# ---------------------------------------------------------------- driving Lark


class _Origin:
    """Where the parsed text starts in its file: (1, 1) for a file, elsewhere for a string field."""

    def __init__(self, line: int, col: int):
        self.line, self.col = line, col

    def shift(self, line: int, col: int) -> tuple[int, int]:
        # Columns only move on the text's first line; later lines start at column 1 anyway.
        return self.line + line - 1, (col + self.col - 1 if line == 1 else col)


def _parse_tree(text: str, start: str, filename: str, origin: _Origin) -> Tree:
    try:
        return _lark().parse(text, start=start)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text, filename, origin) from None


def _build(tree: Tree, filename: str, origin: _Origin):
    try:
        return _AstBuilder(filename, origin).transform(tree)
    except VisitError as exc:
        # Errors found while building (bad escapes, string fields) come wrapped by Lark.
        if isinstance(exc.orig_exc, CompileError):
            raise exc.orig_exc from None
        raise


def _whole_text_span(text: str, filename: str) -> Span:
    lines = text.split("\n")
    return Span(filename, 1, 1, len(lines), len(lines[-1]) + 1)


# ---------------------------------------------------------------- syntax errors

# Terminals whose pattern is a regex, described the way a user would think of them.
_TERMINAL_WORDS = {
    "NAME": "a name", "INT": "a number", "FLOAT": "a number", "STRING": "a string",
    "REDUCE_OP": "a reduction", "CRATE": "'crate'", "SELF": "'self'", "SUPER": "'super'",
    "$END": "end of input",
}
# Tokens that continue an expression; when several are possible we say "an operator".
_OPERATORS = frozenset({"+", "-", "*", "/", "%", "**", "==", "!=", "<", ">", "<=", ">=", "&&", "||",
                        "|>", "as", "in", "..", "..=", ".", "[", "("})
# Tokens that can start an expression; when a name and a number are both possible we say
# "an expression" instead of listing them all.
_EXPR_STARTS = frozenset({"a name", "a number", "a string", "a reduction", "'true'", "'false'",
                          "'('", "'['", "'{'", "'if'", "'match'", "'|'", "'||'", "'-'", "'!'",
                          "'@'", "'..'", "'..='", "'crate'", "'self'", "'super'"})


def _syntax_error(exc: UnexpectedInput, text: str, filename: str, origin: _Origin) -> CompileError:
    if isinstance(exc, UnexpectedCharacters):
        return _bad_character(exc, text, filename, origin)
    hint = ""
    if isinstance(exc, UnexpectedToken):
        token = exc.token
        if token.type != "$END" and text.startswith("/*", token.start_pos):
            return _unterminated_comment(token.line, token.column, filename, origin)
        if token.type == "$END":
            line, col = _end_position(text)
            found = "end of input"
        else:
            line, col = token.line, token.column
            found = _quote(str(token))
        acceptable = _acceptable(exc)
        expected = _describe_expected(acceptable)
        width = len(str(token)) if token.type != "$END" else 1
        if ("an operator" not in expected and token.type != "$END"      # not inside a range's bound
                and _in_a_definitions_bracket(text, token.start_pos)):
            expected, hint = _SLOTS_HOLD, _COMPUTED_SLOT_HINT
        if str(token) == "where" and token.type != "$END":
            hint = _WHERE_HINT
        if str(token) == "<" and _FN_NAME_BEFORE.search(text, 0, token.start_pos):
            hint = _GENERIC_HINT
        if str(token) == "[" and _TUPLE_DEFINITION.search(text, 0, token.start_pos):
            hint = _TUPLE_DEFINITION_HINT
        hint = _absent_construct(text, token) or _misspelt_keyword(text, token.start_pos) \
            or _missing_let(text, token) or hint
        after = _end_of_an_earlier_line(text, token.start_pos) if token.type != "$END" else None
        if "SEMICOLON" in acceptable and after is not None:
            (line, col), width = after, 1          # where the `;` was forgotten, as rustc points
            hint = "a statement ends with `;`"
    elif isinstance(exc, UnexpectedEOF):
        line, col = _end_position(text)
        found, width = "end of input", 1
        expected = _describe_expected(exc.expected)
    else:  # pragma: no cover - Lark has no other UnexpectedInput kinds for LALR
        line, col, found, width, expected = exc.line, exc.column, "input", 1, ""
    line, col = origin.shift(line, col)
    message = f"expected {expected}, found {found}" if expected else f"unexpected {found}"
    return error(SYNTAX, message, Span(filename, line, col, line, col + max(width, 1)), hint)


def _end_of_an_earlier_line(text: str, pos: int):
    """(line, column) just after the last code before `pos` when that code ends an earlier line
    (blank and comment-only lines between are skipped), else None."""
    lines = text[:pos].split("\n")
    if len(lines) == 1 or lines[-1].strip():
        return None
    for number in range(len(lines) - 2, -1, -1):
        code = lines[number] if '"' in lines[number] else lines[number].split("//", 1)[0]
        if code.strip():
            return number + 1, len(code.rstrip()) + 1
    return None


# What a definition's bracket may hold, said in place of the tokens the parser expected there
# (`let u[t, N - 1] = ..` is no definition: a computed point is a range of one).
_SLOTS_HOLD = "an index name, a range `i in a..b`, an integer literal or `..rest` in a definition's brackets"
_COMPUTED_SLOT_HINT = "write a computed point as a range of one, `i in N - 1..N`"
_DEFINITION_HEAD = re.compile(r"\blet\s+[A-Za-z_]\w*\s*$")


def _in_a_definitions_bracket(text: str, pos: int) -> bool:
    """Whether `pos` lies inside the bracket of `let name[..]` (nested brackets not closed)."""
    k = _unclosed_opener(text, pos)
    return k is not None and text[k] == "[" and _DEFINITION_HEAD.search(text, 0, k) is not None


def _unclosed_opener(text: str, pos: int):
    """Where the innermost `(`, `[` or `{` of the statement `pos` is in still open at `pos` is,
    or None."""
    depth = 0
    for k in range(pos - 1, -1, -1):
        c = text[k]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                return k
            depth -= 1
        elif c == ";" and depth == 0:
            return None
    return None
_FN_NAME_BEFORE = re.compile(r"\bfn\s+[A-Za-z_]\w*\s*$")
# `let (a, b)[t in 1..T] = (.., ..);`: an indexed definition names one array
_TUPLE_DEFINITION = re.compile(r"\blet\s*\(\s*[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)+\s*\)\s*$")
_TUPLE_DEFINITION_HINT = ("an indexed definition names one array: define one per component, `let a[t in 1..T] = ..; "
                          "let b[t in 1..T] = ..;` (each may read the other at the same step or an earlier one)")
_WORD_OPENING_A_LINE = re.compile(r"(?:^|[;}\n])\s*([A-Za-z_]\w*)\s+$")
_STATEMENT_KEYWORDS = ("let", "const", "fn", "use", "mod", "pub")


def _misspelt_keyword(text: str, at: int) -> str:
    """`lett x = 1.0;`: a hint naming the keyword a statement's first word is close to."""
    found = _WORD_OPENING_A_LINE.search(text, 0, at)
    if found is None or found.group(1) in _STATEMENT_KEYWORDS:
        return ""
    close = difflib.get_close_matches(found.group(1), _STATEMENT_KEYWORDS, n=1, cutoff=0.6)
    return f"a statement starts with a keyword: did you mean `{close[0]}`?" if close else ""
_ASSIGNED_STATEMENT = re.compile(r"(?:^|[;{}])\s*([A-Za-z_]\w*(?:\[[^\[\];]*\])?)\s*$")


def _missing_let(text: str, token) -> str:
    """`y[i] = x[i] * 2.0;` at a statement's start: a definition without its `let`."""
    found = _ASSIGNED_STATEMENT.search(text, 0, token.start_pos) if str(token) == "=" else None
    return f"a definition starts with `let`: `let {found.group(1)} = ..`" if found else ""


# Rust's words for what Einlang does not have (LANGUAGE.md section 6): the parser read the word
# as a name and stopped at the token after it.
_ABSENT_WORD = re.compile(r"(?:^|[^\w.:])(return|mut|for|while|loop)\s*$")
_LOOP_HINT = ("Einlang has no loops: define values point by point (`let y[i] = ..;`), reduce them "
              "(`sum[i](..)`) or write a recurrence (`let s[t in 1..T] = s[t - 1] + x[t];`)")
_ABSENT_HINTS = {
    "return": "Einlang has no `return`: a function's value is its body's last expression, without `;`",
    "mut": "Einlang has no `mut`: values are immutable; a new `let` of the same name shadows the old one",
    "for": _LOOP_HINT, "while": _LOOP_HINT, "loop": _LOOP_HINT,
}
_SLICE_HINT = ("Einlang has no `:` slices: fewer subscripts give a sub-array (`m[0]` is a row); define a "
               "part point by point, `let part[i in 0..2] = a[i + 1];`")


def _absent_construct(text: str, token) -> str:
    """A hint for `return x`, `let mut a`, `for i in ..` and `a[0:2]`, which Einlang lacks."""
    found = _ABSENT_WORD.search(text, 0, token.start_pos)
    if found is not None:
        return _ABSENT_HINTS[found.group(1)]
    return _SLICE_HINT if str(token) == ":" and _inside_brackets(text, token.start_pos) else ""


def _inside_brackets(text: str, pos: int) -> bool:
    """Whether `pos` lies inside an unclosed `[` of the statement it is in."""
    k = _unclosed_opener(text, pos)
    return k is not None and text[k] == "["


_GENERIC_HINT = ("a function has no type parameters: an untyped parameter is generic and specialised "
                 "per call (`fn clamp(x, lo, hi) { .. }`)")
_PAREN_WHERE_HINT = ("put the clauses inside the reduction's parentheses, `sum[j](A[i, j] * x[j] where j != i)`, "
                     "or after the statement's whole value")
_WHERE_HINT = ("`where` follows a statement's value, a block's result or a reduction's body inside its "
               "parentheses: `min[u](d[u] + w[u] where d[u] < inf)`")


def _names_read(reduction) -> set:
    """The names a reduction's indices, ranges and body use."""
    return {n.name for n in ast.iter_nodes(reduction) if isinstance(n, (ast.Name, ast.IndexVar))}


def _names_any(clauses, names: set) -> bool:
    """Whether `where` clauses read or bind one of `names`."""
    return any(isinstance(n, (ast.Name, ast.WhereBind)) and n.name in names for n in ast.iter_nodes(list(clauses)))


def _bound_for_the_rest(clauses: list, body, reduction) -> bool:
    """Whether a `where` binding is read in `body` outside its trailing `reduction`
    (`exp(x[i] - m) / sum[j](exp(x[j] - m)) where m = ..`): then the clauses are the statement's."""
    bound = {c.name for c in clauses if isinstance(c, ast.WhereBind)}
    reads = lambda node: [n.name for n in ast.iter_nodes(node) if isinstance(n, ast.Name) and n.name in bound]
    return len(reads(body)) > len(reads(reduction))


def _plain_name(node, otherwise: str) -> str:
    """A name as written (`x`, `h[..]` for an element of h), or `otherwise` for an expression."""
    if isinstance(node, ast.Name):
        return node.name
    if isinstance(node, ast.Index) and isinstance(node.base, ast.Name):
        return f"{node.base.name}[..]"
    return otherwise


def _bad_character(exc: UnexpectedCharacters, text: str, filename: str,
                   origin: _Origin) -> CompileError:
    line, col = origin.shift(exc.line, exc.column)
    span = Span(filename, line, col, line, col + 1)
    rest = text[exc.pos_in_stream:]
    if rest.startswith('"'):
        return error(SYNTAX, "unterminated string literal", span, "close the string with '\"'")
    if rest.startswith("/*"):
        return _unterminated_comment(exc.line, exc.column, filename, origin)
    hint = ""
    if exc.char.isalpha() and not exc.char.isascii():
        hint = "a name is ASCII letters, digits and `_` (`alpha`, not `α`)"
    return error(SYNTAX, f"unexpected character {_quote(exc.char)}", span, hint)


def _unterminated_comment(line: int, col: int, filename: str, origin: _Origin) -> CompileError:
    line, col = origin.shift(line, col)
    return error(SYNTAX, "unterminated block comment", Span(filename, line, col, line, col + 2),
                 "close the comment with '*/'")


def _acceptable(exc: UnexpectedToken) -> set[str]:
    """The terminals that could really come next. LALR merges lookahead sets across contexts, so
    `exc.expected` can list tokens that are wrong here; replaying each one on a copy of the
    parser state gives the exact set."""
    parser = getattr(exc, "interactive_parser", None)
    if parser is None:
        return set(exc.expected)
    return set(parser.accepts()) or set(exc.expected)


def _end_position(text: str) -> tuple[int, int]:
    """Line and column just after the last non-blank character (where the missing token goes)."""
    body = text.rstrip()
    lines = body.split("\n")
    return len(lines), len(lines[-1]) + 1


def _describe_expected(names) -> str:
    words = {_terminal_word(n) for n in names}
    # Where a whole expression may start, say so instead of listing every way to start one
    # (this must come first: '(' '[' '-' '..' both start expressions and continue them).
    if {"a name", "a number", "'('"} <= words:
        words = {w for w in words if w not in _EXPR_STARTS} | {"an expression"}
    ops = {w for w in words if w.strip("'") in _OPERATORS}
    if len(ops) >= 2:
        words = (words - ops) | {"an operator"}
    ordered = sorted(words, key=lambda w: (not w.startswith("'"), w))[:6]
    if len(ordered) <= 1:
        return "".join(ordered)
    return ", ".join(ordered[:-1]) + " or " + ordered[-1]


def _terminal_word(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    try:
        pattern = _lark().get_terminal(name).pattern
    except KeyError:
        return name.lower()
    return _quote(pattern.value) if isinstance(pattern, PatternStr) else name.lower()


def _quote(s: str) -> str:
    s = s if len(s) <= 20 else s[:17] + "..."
    return "'" + s.replace("\n", "\\n") + "'"


# ---------------------------------------------------------------- tree -> AST

_BINARY_RULES = {"or_": "||", "and_": "&&", "eq": "==", "ne": "!=", "lt": "<", "gt": ">",
                 "le": "<=", "ge": ">=", "member_in": "in", "add": "+", "sub": "-", "mul": "*",
                 "mod": "%", "pow": "**"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'",
            "{": "{", "}": "}"}


# How deeply expressions may nest. The later stages walk an expression recursively, a few
# Python frames per level (elaborating `x + (x + (..))` reaches Python's limit near 320 levels,
# a kernel reading `x[x[..]]` near 190 reads of two levels each), except along left-associative
# operator chains (`a + b + .. + z`, `a * b / c`), which they walk in a loop and which
# therefore do not count here, however long they are.
MAX_NESTING = 128
# Rules whose first child continues a left-associative chain (`pow` is right-associative).
_LEFT_CHAINS = frozenset(_BINARY_RULES) - {"pow"} | {"div"}


@v_args(meta=True)
class _AstBuilder(Transformer):
    """Builds AST nodes bottom-up. Every method receives the rule's meta (for the span)."""

    def transform(self, tree: Tree):
        """Lark's `transform`, children first, with an explicit stack instead of a recursion per
        tree level (a sum of thousands of terms is a tree that deep); E001 where an expression
        nests more than MAX_NESTING levels deep (_nesting)."""
        done: dict[int, object] = {}          # id(tree) -> its result
        level = {id(tree): 0}                  # id(tree) -> how deep it nests (_nesting)
        stack = [tree]
        while stack:
            node = stack[-1]
            pending = [c for c in node.children if isinstance(c, Tree) and id(c) not in done]
            if pending:
                for child in pending:
                    level[id(child)] = level[id(node)] + _nesting(node, child is node.children[0])
                    if level[id(child)] > MAX_NESTING:
                        raise error(SYNTAX, f"expression nested more than {MAX_NESTING} levels deep",
                                    self._span(child.meta), hint="name some of the inner expressions with `let`")
                stack.extend(reversed(pending))
                continue
            stack.pop()
            children = [done.pop(id(c)) if isinstance(c, Tree) else c for c in node.children]
            done[id(node)] = self._call_userfunc(node, children)
        return done[id(tree)]

    def __init__(self, filename: str, origin: _Origin):
        super().__init__()
        self.filename = filename
        self.origin = origin
        # Parenthesized expressions keep their inner node; we remember them because `(f)(x)`,
        # `x |> (g(a))` and `(sum[i](..)) where ..` must not be read as method, pipe-call or
        # reduction sugar.
        self._parenthesized: set[int] = set()

    # ------------------------------------------------ spans

    def _span(self, meta) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.filename, self.origin.line, self.origin.col,
                        self.origin.line, self.origin.col)
        line, col = self.origin.shift(meta.line, meta.column)
        end_line, end_col = self.origin.shift(meta.end_line, meta.end_column)
        return Span(self.filename, line, col, end_line, end_col)

    def _tok_span(self, tok: Token) -> Span:
        line, col = self.origin.shift(tok.line, tok.column)
        end_line, end_col = self.origin.shift(tok.end_line, tok.end_column)
        return Span(self.filename, line, col, end_line, end_col)

    # ------------------------------------------------ module and statements

    def start(self, meta, items):
        return ast.Module(self.filename, list(items), span=self._span(meta))

    def pub_item(self, meta, children):
        item = children[0]
        item.is_pub = True
        item.span = self._span(meta)
        return item

    def let_stmt(self, meta, children):
        pattern, type_, value = children
        return ast.Let(pattern, type_, self._settle_where(value), span=self._span(meta))

    def input_stmt(self, meta, children):
        pattern, type_ = children
        return ast.Let(pattern, type_, None, span=self._span(meta))

    def const_stmt(self, meta, children):
        name, type_, value = children
        pattern = ast.BindPat(str(name), span=self._tok_span(name))
        return ast.Let(pattern, type_, self._settle_where(value), is_const=True,
                       span=self._span(meta))

    def indexed_let(self, meta, children):
        name, slots, type_, value = children
        wheres: list = []
        if isinstance(value, ast.Where):
            value, wheres = self._split_where(value, definition=True)
        return ast.IndexedLet(str(name), slots, value, wheres, type_, span=self._span(meta))

    def expr_stmt(self, meta, children):
        return ast.ExprStmt(self._settle_where(children[0]), span=self._span(meta))

    def decl_slots(self, meta, slots):
        return list(slots)

    def slot_name(self, meta, children):
        return ast.IndexVar(str(children[0]), span=self._span(meta))

    def slot_ranged(self, meta, children):
        name, range_ = children
        return ast.IndexVar(str(name), range_, span=self._span(meta))

    def slot_literal(self, meta, children):
        digits, _ = _split_suffix(str(children[0]), INT_SUFFIXES)
        span = self._span(meta)
        return ast.IndexLiteral(_checked(_integer(digits), EXTENT_LIMIT, "an index", span), span=span)

    def slot_rest(self, meta, children):
        return ast.RestIndex(str(children[0]), span=self._span(meta))

    # ------------------------------------------------ where clauses

    def where_expr(self, meta, children):
        body, *clauses = children
        return ast.Where(body, list(clauses), span=self._span(meta))

    def where_bind(self, meta, children):
        name, value = children
        return ast.WhereBind(str(name), value, span=self._span(meta))

    def where_guard(self, meta, children):
        return ast.WhereGuard(children[0], span=self._span(meta))

    def _split_where(self, where: ast.Where, definition: bool = False):
        """Give the clauses to the reduction they directly follow, if any; else return them. A
        definition keeps clauses that name nothing the reduction reads, which cannot filter its
        terms (`let n[t, a] = sum[b](f[b] * n[t - 1, b]) where a == 0;`, one of several guarded
        clauses)."""
        target = self._trailing_reduction(where.body)
        if definition and target is not None and not _names_any(where.clauses, _names_read(target)):
            target = None
        if target is not None and not _bound_for_the_rest(where.clauses, where.body, target):
            target.wheres = where.clauses
            target.span = _join(target.span, where.span)
            return where.body, []
        return where.body, where.clauses

    def _settle_where(self, value):
        """For a statement without a where list of its own: attach to a reduction or keep Where."""
        if not isinstance(value, ast.Where):
            return value
        body, clauses = self._split_where(value)
        return value if clauses else body

    def _trailing_reduction(self, node) -> Optional[ast.Reduction]:
        """The reduction whose closing `)` ends `node` (so a following `where` belongs to it)."""
        while id(node) not in self._parenthesized:
            if isinstance(node, ast.Reduction):
                return node if not node.wheres else None
            if isinstance(node, ast.Binary):
                node = node.right
            elif isinstance(node, ast.Unary):
                node = node.operand
            elif isinstance(node, ast.Range):
                node = node.hi
            elif isinstance(node, ast.Lambda):
                node = node.body
            else:
                return None
        return None

    # ------------------------------------------------ functions, uses, modules

    def fn_def(self, meta, children):
        name, params, ret, body = children
        return ast.FnDef(str(name), params or [], ret, body, span=self._span(meta))

    def diff_rule(self, meta, children):
        name, params, body = children
        return ast.DiffRule(str(name), params or [], body, span=self._span(meta))

    def params(self, meta, params):
        return list(params)

    lambda_params = params

    def param(self, meta, children):
        name, type_ = children
        return ast.Param(str(name), type_, span=self._span(meta))

    def use_simple(self, meta, children):
        return ast.Use(children[0], span=self._span(meta))

    def use_alias(self, meta, children):
        path, alias = children
        return ast.Use(path, alias=str(alias), span=self._span(meta))

    def use_group(self, meta, children):
        path, items = children
        return ast.Use(path, items=items, span=self._span(meta))

    def use_glob(self, meta, children):
        span = self._span(meta)
        return ast.Use(children[0], items=[ast.UseItem("*", span=span)], span=span)

    def use_path(self, meta, children):
        if len(children) == 1:
            return [children[0]]
        head, seg = children
        return head + [seg]

    def use_items(self, meta, items):
        return list(items)

    def use_item(self, meta, children):
        name, alias = children
        return ast.UseItem(str(name), str(alias) if alias is not None else None,
                           span=self._span(meta))

    def mod_file(self, meta, children):
        return ast.ModDecl(str(children[0]), span=self._span(meta))

    def mod_inline(self, meta, children):
        name, *items = children
        return ast.ModDecl(str(name), list(items), span=self._span(meta))

    # ------------------------------------------------ operators

    def pipe(self, meta, children):
        # `x |> f(a)` is `f(x, a)`; `x |> f` is `f(x)`.
        lhs, rhs = children
        span = self._span(meta)
        if isinstance(rhs, ast.Call) and id(rhs) not in self._parenthesized:
            return ast.Call(rhs.func, [lhs] + rhs.args, span=span)
        return ast.Call(rhs, [lhs], span=span)

    def div(self, meta, children):
        left, right = children
        span = self._span(meta)
        if isinstance(left, ast.Diff) and isinstance(right, ast.Diff):
            return ast.Derivative(left.target, right.target, span=span)
        scaled = self._scaled_derivative(left, right, span)
        if scaled is not None:
            return scaled
        if self._forgot_second_at(left, right):
            y, x = _plain_name(left.target, "y"), _plain_name(right, "x")
            raise error(SYNTAX, f"`@{y} / {x}` divides the tangent `@{y}` by the value `{x}`: a "
                        "derivative is missing its second `@`?", span,
                        f"write `@{y} / @{x}` for the derivative of {y} with respect to {x}, or "
                        f"`(@{y}) / {x}` for the tangent divided by {x}")
        return ast.Binary("/", left, right, span=span)

    def _scaled_derivative(self, left, right, span):
        """`a * @y / @x` and `-@y / @x` parse, by precedence, as `(a * @y) / @x`: the derivative
        scaled, `a * (@y / @x)` (differentials are linear), as in `w - lr * @L / @w`. None when
        `left` is no unparenthesized product or negation ending in an unparenthesized `@y`."""
        if not isinstance(right, ast.Diff) or id(left) in self._parenthesized:
            return None
        if isinstance(left, ast.Binary) and left.op == "*":
            last = left.right
        elif isinstance(left, ast.Unary) and left.op == "-":
            last = left.operand
        else:
            return None
        if id(last) in self._parenthesized:
            return None
        inner = last if isinstance(last, ast.Diff) else self._scaled_derivative(last, right, span)
        if inner is None:
            return None
        if isinstance(inner, ast.Diff):
            start = inner.span
            inner = ast.Derivative(inner.target, right.target, span=Span(
                span.file, start.line, start.col, span.end_line, span.end_col))
        if isinstance(left, ast.Binary):
            return ast.Binary("*", left.left, inner, span=span)
        return ast.Unary("-", inner, span=span)

    def _forgot_second_at(self, left, right) -> bool:
        """`@y / x` (right a name or an element of one), unless either side is parenthesized."""
        named = isinstance(right, ast.Name) or (isinstance(right, ast.Index) and isinstance(right.base, ast.Name))
        return (isinstance(left, ast.Diff) and named and id(left) not in self._parenthesized
                and id(right) not in self._parenthesized)

    def neg(self, meta, children):
        return ast.Unary("-", children[0], span=self._span(meta))

    def plus(self, meta, children):
        return ast.Unary("+", children[0], span=self._span(meta))

    def not_(self, meta, children):
        return ast.Unary("!", children[0], span=self._span(meta))

    def diff(self, meta, children):
        return ast.Diff(children[0], span=self._span(meta))

    def cast(self, meta, children):
        expr, type_ = children
        return ast.Cast(expr, type_, span=self._span(meta))

    def range_excl(self, meta, children):
        lo, hi = children
        return ast.Range(lo, hi, False, span=self._span(meta))

    def range_incl(self, meta, children):
        lo, hi = children
        return ast.Range(lo, hi, True, span=self._span(meta))

    def lambda_(self, meta, children):
        params = (children[0] or []) if len(children) == 2 else []
        return ast.Lambda(params, children[-1], span=self._span(meta))

    def typed_lambda(self, meta, children):
        """`|x: f64| -> f64 { .. }` (Rust's closure with a result type): the block's value bound
        by a `let` of that type, which checks it and types its literals as a function's result."""
        *params, type_, body = children
        span = self._span(meta)
        result = "closure result"      # no program can name it: a name has no spaces
        let = ast.Let(ast.BindPat(result, span=body.span), type_, body, span=body.span)
        block = ast.Block([let], ast.Name(result, span=body.span), span=body.span)
        return ast.Lambda((params[0] or []) if params else [], block, span=span)

    # ------------------------------------------------ postfix

    def index(self, meta, children):
        base, subscripts = children
        return ast.Index(base, subscripts, span=self._span(meta))

    def subscripts(self, meta, items):
        # No range slices exist, so `..b` in a subscript is always a rest index, never a range.
        return [_as_rest_index(item) for item in items]

    def full_slice(self, meta, children):
        return ast.FullSlice(span=self._span(meta))

    def call(self, meta, children):
        func, args = children
        args = args or []
        span = self._span(meta)
        if (isinstance(func, ast.Member) and id(func) not in self._parenthesized
                and not func.name.isdigit()):
            return ast.MethodCall(func.obj, func.name, args, span=span)
        return ast.Call(func, args, span=span)

    def args(self, meta, items):
        return list(items)

    def member(self, meta, children):
        obj, name = children
        return ast.Member(obj, str(name), span=self._span(meta))

    # ------------------------------------------------ atoms

    def int_lit(self, meta, children):
        digits, suffix = _split_suffix(str(children[0]), INT_SUFFIXES)
        span = self._span(meta)
        return ast.IntLit(_checked(_integer(digits), INT_LIMIT, "an integer literal", span), suffix, span=span)

    def float_lit(self, meta, children):
        digits, suffix = _split_suffix(str(children[0]), ("f32", "f64"))
        span = self._span(meta)
        value = float(digits.replace("_", ""))
        if math.isinf(value):
            raise error(VALUE, f"a float literal of {digits} is too large: even f64 makes it infinite", span)
        return ast.FloatLit(value, suffix, span=span)

    def true_lit(self, meta, children):
        return ast.BoolLit(True, span=self._span(meta))

    def false_lit(self, meta, children):
        return ast.BoolLit(False, span=self._span(meta))

    def str_lit(self, meta, children):
        return ast.StrLit(self._string_parts(children[0]), span=self._span(meta))

    def name(self, meta, children):
        return ast.Name(str(children[0]), span=self._span(meta))

    def path(self, meta, segments):
        return ast.Path(list(segments), span=self._span(meta))

    def path_seg(self, meta, children):
        return str(children[0])

    def paren(self, meta, children):
        inner = children[0]
        if isinstance(inner, ast.Where):
            inner = self._reduction_with_where(inner)
        self._parenthesized.add(id(inner))
        return inner

    def _reduction_with_where(self, where: ast.Where):
        """`(b[i] - sum[j](A[i, j] * x[j]) where j != i)`: clauses inside parentheses belong to
        the reduction they follow (LANGUAGE.md: a `where` attaches to a definition or a
        reduction), as if written inside its own parentheses; with no such reduction, E001."""
        target = self._trailing_reduction(where.body)
        if target is not None and _names_any(where.clauses, _names_read(target)):
            body, clauses = self._split_where(where)
            if not clauses:
                return body
        first = where.clauses[0].span
        raise error(SYNTAX, "a `where` inside parentheses must follow a reduction whose terms it "
                    "filters or binds", _join(first, where.clauses[-1].span), _PAREN_WHERE_HINT)

    def tuple(self, meta, elems):
        return ast.TupleLit(list(elems), span=self._span(meta))

    def array(self, meta, elems):
        return ast.ArrayLit(list(elems), span=self._span(meta))

    def comprehension(self, meta, children):
        body, *items = children
        clauses = []
        for item in items:
            generated = isinstance(item, ast.Binary) and item.op == "in" and id(item) not in self._parenthesized
            pattern = _tuple_pattern(item.left) if generated else None
            if generated and isinstance(item.left, ast.Name):
                clauses.append(ast.Generator(item.left.name, item.right, span=item.span))
            elif pattern is not None:
                name = f"({', '.join(n.name for n in ast.iter_nodes(pattern) if isinstance(n, ast.BindPat))})"
                clauses.append(ast.Generator(name, item.right, pattern=pattern, span=item.span))
            else:
                clauses.append(item)
        return ast.Comprehension(body, clauses, span=self._span(meta))

    def comp_binding(self, meta, children):
        name, value = children
        return ast.CompBinding(str(name), value, span=self._span(meta))

    def block(self, meta, children):
        *stmts, result = children
        result = self._settle_where(result) if result is not None else None
        return ast.Block(list(stmts), result, span=self._span(meta))

    def if_expr(self, meta, children):
        cond, then, orelse = children
        return ast.If(cond, then, orelse, span=self._span(meta))

    def match_expr(self, meta, children):
        scrutinee, *arms = children
        return ast.Match(scrutinee, list(arms), span=self._span(meta))

    def match_arm(self, meta, children):
        pattern, guard, body = children
        return ast.MatchArm(pattern, guard, body, span=self._span(meta))

    def reduction(self, meta, children):
        op, *indices, body = children
        wheres = []
        if isinstance(body, ast.Where):
            body, wheres = body.body, body.clauses
        return ast.Reduction(str(op), list(indices), body, wheres, span=self._span(meta))

    def index_var(self, meta, children):
        name, range_ = children
        return ast.IndexVar(str(name), range_, span=self._span(meta))

    def index_rest(self, meta, children):
        return ast.RestIndex(str(children[0]), span=self._span(meta))

    # ------------------------------------------------ patterns

    def bind_pat(self, meta, children):
        name = str(children[0])
        if name == "_":
            return ast.WildPat(span=self._span(meta))
        return ast.BindPat(name, span=self._span(meta))

    def pat_number(self, meta, children):
        return _checked(_number(str(children[0])), INT_LIMIT, "a pattern", self._span(meta))

    def neg_pat_number(self, meta, children):
        return -_checked(_number(str(children[0])), INT_LIMIT, "a pattern", self._span(meta))

    def lit_pat(self, meta, children):
        return ast.LitPat(children[0], span=self._span(meta))

    def range_pat_excl(self, meta, children):
        return self._range_pat(meta, children[0], children[1], False)

    def range_pat_incl(self, meta, children):
        return self._range_pat(meta, children[0], children[1], True)

    def range_pat_from(self, meta, children):
        return self._range_pat(meta, children[0], None, False)

    def range_pat_upto(self, meta, children):
        return self._range_pat(meta, None, children[0], True)

    def range_pat_below(self, meta, children):
        return self._range_pat(meta, None, children[0], False)

    def _range_pat(self, meta, lo, hi, inclusive: bool):
        span = self._span(meta)
        if lo is not None and hi is not None and (hi < lo or (hi == lo and not inclusive)):
            raise error(SYNTAX, f"the range pattern {lo}..{'=' if inclusive else ''}{hi} matches nothing",
                        span, "write the smaller end first")
        return ast.RangePat(lo, hi, inclusive, span=span)

    def at_pat(self, meta, children):
        name, sub = children
        return ast.BindPat(str(name), sub=sub, span=self._span(meta))

    def or_pat(self, meta, alts):
        return ast.OrPat(list(alts), span=self._span(meta))

    def rest_pat(self, meta, children):
        name = children[0]
        bind = None if name is None or str(name) == "_" else ast.BindPat(str(name), span=self._tok_span(name))
        return ast.RestPat(bind, span=self._span(meta))

    def array_pat(self, meta, elems):
        elems = [e for e in elems if e is not None]
        span = self._span(meta)
        if sum(isinstance(e, ast.RestPat) for e in elems) > 1:
            raise error(SYNTAX, "an array pattern may hold one `..` at most", span)
        return ast.ArrayPat(elems, span=span)

    def str_pat(self, meta, children):
        parts = self._string_parts(children[0])
        if not all(isinstance(p, str) for p in parts):
            raise error(SYNTAX, "a string pattern cannot interpolate values", self._span(meta),
                        "write '{{' for a literal brace")
        return ast.LitPat("".join(parts), span=self._span(meta))

    def true_pat(self, meta, children):
        return ast.LitPat(True, span=self._span(meta))

    def false_pat(self, meta, children):
        return ast.LitPat(False, span=self._span(meta))

    def tuple_pat(self, meta, elems):
        return ast.TuplePat(list(elems), span=self._span(meta))

    # ------------------------------------------------ types

    def named_type(self, meta, children):
        name = str(children[0])
        span = self._span(meta)
        return ast.ScalarType(name, span=span) if name in SCALAR_TYPES else ast.NamedType(name, span=span)

    def array_type_rank1(self, meta, children):
        span = self._span(meta)
        return ast.ArrayType(children[0], [ast.DimSpec(span=span)], elem_only=True, span=span)

    def array_type(self, meta, children):
        elem, *dims = children
        return ast.ArrayType(elem, list(dims), span=self._span(meta))

    def array_type_any_rank(self, meta, children):
        return ast.ArrayType(children[0], None, span=self._span(meta))

    def tuple_type(self, meta, elems):
        return ast.TupleType(list(elems), span=self._span(meta))

    def dim_fixed(self, meta, children):
        digits, _ = _split_suffix(str(children[0]), INT_SUFFIXES)
        span = self._span(meta)
        return ast.DimSpec(size=_checked(int(digits), EXTENT_LIMIT, "a dimension", span), span=span)

    def dim_named(self, meta, children):
        return ast.DimSpec(name=str(children[0]), span=self._span(meta))

    def dim_any(self, meta, children):
        return ast.DimSpec(span=self._span(meta))

    # ------------------------------------------------ strings

    def _string_parts(self, tok: Token) -> list:
        """Split a string token into text and FormatField parts, applying escapes."""
        raw = str(tok)[1:-1]
        positions = _char_positions(str(tok), tok.line, tok.column)[1:]
        parts: list = []
        text: list[str] = []
        i = 0
        while i < len(raw):
            c = raw[i]
            if c == "\\":
                text.append(self._escape(raw[i + 1], positions[i]))
                i += 2
            elif c in "{}" and raw[i + 1:i + 2] == c:
                text.append(c)
                i += 2
            elif c == "}":
                raise self._string_error("unmatched '}' in string", positions[i],
                                         "write '}}' for a literal brace")
            elif c == "{":
                end = _closing_brace(raw, i)
                if end is None:
                    raise self._string_error("unclosed '{' in string", positions[i],
                                             "close the field with '}' or write '{{' for a literal brace")
                if text:
                    parts.append("".join(text))
                    text = []
                parts.append(self._format_field(raw[i + 1:end], positions[i], positions[end]))
                i = end + 1
            else:
                text.append(c)
                i += 1
        if text or not parts:
            parts.append("".join(text))
        return parts

    def _escape(self, c: str, pos: tuple[int, int]) -> str:
        if c not in _ESCAPES:
            raise self._string_error(f"unknown escape '\\{c}'", pos,
                                     "known escapes: \\n \\t \\r \\0 \\\\ \\\" \\' \\{ \\}")
        return _ESCAPES[c]

    def _format_field(self, inner: str, open_pos, close_pos) -> ast.FormatField:
        span = self._abs_span(open_pos, (close_pos[0], close_pos[1] + 1))
        expr_text, spec = _split_format_spec(inner)
        if not expr_text.strip():
            raise error(SYNTAX, "empty '{}' in string", span,
                        "put an expression inside, or write '{{}}' for literal braces")
        line, col = self.origin.shift(open_pos[0], open_pos[1] + 1)
        origin = _Origin(line, col)
        tree = _parse_tree(expr_text, "expr", self.filename, origin)
        return ast.FormatField(_build(tree, self.filename, origin), spec, span=span)

    def _abs_span(self, start, end) -> Span:
        line, col = self.origin.shift(*start)
        end_line, end_col = self.origin.shift(*end)
        return Span(self.filename, line, col, end_line, end_col)

    def _string_error(self, message: str, pos, hint: str) -> CompileError:
        return error(SYNTAX, message, self._abs_span(pos, (pos[0], pos[1] + 1)), hint)


# ---------------------------------------------------------------- helpers


def _join(a: Span, b: Span) -> Span:
    return Span(a.file, a.line, a.col, b.end_line, b.end_col)


def _tuple_pattern(expr):
    """`(x, (y, _))` on the left of a generator's `in` as a TuplePat; None when it is not a tuple
    of names."""
    if isinstance(expr, ast.Name):
        return ast.WildPat(span=expr.span) if expr.name == "_" else ast.BindPat(expr.name, span=expr.span)
    if not isinstance(expr, ast.TupleLit):
        return None
    elems = [_tuple_pattern(x) for x in expr.elems]
    return None if None in elems else ast.TuplePat(elems, span=expr.span)


def _as_rest_index(item):
    if (isinstance(item, ast.Range) and item.lo is None and not item.inclusive
            and isinstance(item.hi, ast.Name)):
        return ast.RestIndex(item.hi.name, span=item.span)
    return item


def _split_suffix(text: str, suffixes: tuple[str, ...]) -> tuple[str, Optional[str]]:
    for suffix in suffixes:
        if text.endswith(suffix):
            return text[:-len(suffix)], suffix
    return text, None


# No integer type holds more than u64; sizes and literal positions must be reachable by the i32
# index variables.
INT_LIMIT = 2 ** 64 - 1
EXTENT_LIMIT = 2 ** 31 - 1


def _checked(value, limit: int, what: str, span: Span):
    if isinstance(value, int) and value > limit:
        raise error(VALUE, f"{what} of {value} is too large: at most {limit}", span)
    return value


def _number(text: str):
    for suffix in INT_SUFFIXES + ("f32", "f64"):
        if text.endswith(suffix):
            text = text[:-len(suffix)]
            return float(text.replace("_", "")) if suffix[0] == "f" else _integer(text)
    if text[:2] not in _RADIX_PREFIXES and any(c in text for c in ".eE"):
        return float(text.replace("_", ""))
    return _integer(text)


_RADIX_PREFIXES = ("0x", "0o", "0b")


def _integer(digits: str) -> int:
    """An integer literal's value: decimal or 0x / 0o / 0b, `_` anywhere after the first digit."""
    digits = digits.replace("_", "")
    return int(digits, 0) if digits[:2] in _RADIX_PREFIXES else int(digits)


def _char_positions(text: str, line: int, col: int) -> list[tuple[int, int]]:
    """(line, col) of every character of `text`, which starts at (line, col)."""
    out = []
    for c in text:
        out.append((line, col))
        if c == "\n":
            line, col = line + 1, 1
        else:
            col += 1
    return out


def _closing_brace(raw: str, start: int) -> Optional[int]:
    """Index of the `}` closing the field opened at `start` (nested braces allowed)."""
    depth = 0
    for i in range(start, len(raw)):
        if raw[i] == "{":
            depth += 1
        elif raw[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _split_format_spec(inner: str) -> tuple[str, str]:
    """`pi:.4f` -> ("pi", ".4f"). A `::` path separator or a nested `:` is not the split point."""
    depth = 0
    i = 0
    while i < len(inner):
        c = inner[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ":" and depth == 0:
            if inner[i + 1:i + 2] == ":":
                i += 2
                continue
            return inner[:i], inner[i + 1:]
        i += 1
    return inner, ""


def _nesting(node: Tree, first: bool) -> int:
    """How many levels a subtree of `node` nests below it: one, except the first operand of a
    left-associative chain (the chain goes on at the same level) and what parentheses hold
    (they leave no node)."""
    return 0 if (first and node.data in _LEFT_CHAINS) or node.data == "paren" else 1


def _install_binary_rules() -> None:
    def make(op: str):
        def rule(self, meta, children):
            left, right = children
            return ast.Binary(op, left, right, span=self._span(meta))
        return v_args(meta=True)(rule)

    for rule_name, op in _BINARY_RULES.items():
        setattr(_AstBuilder, rule_name, make(op))


_install_binary_rules()
