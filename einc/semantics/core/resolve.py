"""Name resolution: every binding site and every use gets a stable DefId (thesis 3.3-3.5).

Two temporal models, as in the thesis: items (functions, consts, modules, imports) are hoisted
into their module or block, so they can be used before they are written; locals (lets, indexed
definitions, index variables, where-bindings, parameters, patterns, generators, named dims) are
source-ordered and lexically shadowed. A function body sees the items around it, not the locals
of the blocks around it, and its module's top-level bindings (lets, indexed definitions and
inputs, as module-level constants): a name there resolves to a *global* DefId whose value is the
binding of that name in effect when the function runs (the latest one before the call, as
Python's module globals), so a function may be written before the `let` it reads. A lambda
sees everything.

All clauses of one indexed definition in one scope share one DefId, and the definition is in
scope in its own clauses so recurrences read themselves: `let y[0] = a; let y[t in 1..T] =
y[t - 1];`. A plain `let y = ..` in between starts a new binding, and so a new group.
"""
from __future__ import annotations

import difflib
import itertools
from dataclasses import dataclass, field
from typing import Iterable, Optional

from einc.diagnostics import IMPORT, SHAPE, TYPE, UNDEFINED, UNSUPPORTED, CompileError, Diagnostic, Label, Span
from einc.ir.types import closest_type
from einc.semantics.core import builtins
from einc.semantics.core.modules import PYTHON, PYTHON_MATH, ModPath, Program, stdlib_modules_defining
from einc.syntax import ast


@dataclass(frozen=True)
class DefId:
    """The identity of one definition. Equality is the id; the rest is for diagnostics."""
    id: int
    name: str = field(compare=False)
    kind: str = field(compare=False)   # fn input value index param dim where pattern generator
    span: Optional[Span] = field(default=None, compare=False, repr=False)  # rest builtin module python

    def __str__(self) -> str:
        return f"{self.name}#{self.id}"


@dataclass
class Resolution:
    defs: dict[DefId, object]                 # DefId -> its binding node (None for builtins)
    module_of: dict[DefId, ModPath]           # DefId -> module it is defined in
    builtins: dict[str, DefId]                # built-in name -> DefId (kind 'builtin')
    modules: dict[ModPath, DefId]             # module path -> DefId (kind 'module')
    exports: dict[ModPath, dict[str, DefId]]  # what each module exports (pub items, re-exports)
    items: dict[ModPath, dict[str, DefId]]    # each module's item namespace (items + imports)
    globals: dict[DefId, list] = field(default_factory=dict)  # global -> its bindings, in order
    let_of: dict[DefId, object] = field(default_factory=dict)  # let-bound DefId -> its ast.Let


def resolve(program: Program) -> Resolution:
    """Resolve every name of the program; raises CompileError with all E003/E010 found."""
    try:
        return _Resolver(program).run()
    except RecursionError:
        # The walk recurses once per nesting level; only absurdly deep expressions get here.
        raise CompileError(Diagnostic(UNSUPPORTED, "program nested too deeply to resolve",
                                      program.entry.span)) from None


# Constants of Python's math module, taken as the numbers they are (its functions are std::math's)
MATH_CONSTANTS = ("pi", "e", "tau", "inf", "nan")

# Kinds that are items: visible inside function bodies nested in the scope that holds them.
# Run-time inputs and their named dims are parameters of the whole program, fixed for a run,
# so functions (`fn main` above all) see them too, once declared.
_ITEM_KINDS = frozenset({"fn", "module", "builtin", "input", "dim", "python"})
# bindings of values: a bare name of an integer one in a declaration bracket is refused (no point)
_VALUE_KINDS = frozenset({"value", "input", "dim", "param", "global"})


class _Scope:
    def __init__(self, parent: Optional["_Scope"], is_fn: bool = False):
        self.parent = parent
        self.is_fn = is_fn                      # a function body: outer locals are not visible
        self.is_module_top = False              # a module's top level
        self.names: dict[str, DefId] = {}
        self.globals: dict[str, DefId] = {}     # a module's top level: its bindings, by name
        self.indexed: set[DefId] = set()         # indexed definitions bound here (for grouping)
        # indexed definitions later in this block: readable before their statement, so that
        # definitions recurring together (x_pred[t] reads x[t - 1], x[t] reads x_pred[t]) resolve
        self.forward: dict[str, DefId] = {}

    def lookup(self, name: str, items: set[DefId]) -> Optional[DefId]:
        scope, items_only = self, False
        while scope is not None:
            if items_only and name in scope.globals:
                return scope.globals[name]      # a top-level binding read from a function
            did = scope.names.get(name)
            if did is None and not items_only:
                did = scope.forward.get(name)
            if did is not None and (not items_only or did in items or did.kind in _ITEM_KINDS):
                return did
            items_only = items_only or scope.is_fn
            scope = scope.parent
        return None

    def visible(self) -> set[str]:
        out, scope = set(), self
        while scope is not None:
            out |= scope.names.keys()
            scope = scope.parent
        return out


class _Resolver:
    def __init__(self, program: Program):
        self.program = program
        self._ids = itertools.count()
        self.defs: dict[DefId, object] = {}
        self.module_of: dict[DefId, ModPath] = {}
        self.items: set[DefId] = set()            # hoisted item DefIds (incl. consts)
        self.diagnostics: list[Diagnostic] = []
        self.unimported: set[str] = set()     # names of a `use` that failed (E010 said so once)
        self.builtin_scope = _Scope(None)
        self.builtins = {name: self._new(name, "builtin", None, None, ())
                         for name in builtins.ALL}
        self.builtin_scope.names.update(self.builtins)
        self.module_ids: dict[ModPath, DefId] = {}
        self.module_paths: dict[DefId, ModPath] = {}
        self.module_scopes: dict[ModPath, _Scope] = {}
        self.exports: dict[ModPath, dict[str, DefId]] = {}
        self._exporting: set[ModPath] = set()      # guards cycles of `pub use` re-exports
        self.current: ModPath = ()
        self.let_of: dict[DefId, ast.Let] = {}

    def run(self) -> Resolution:
        for mod_path, module in self.program.modules.items():
            self.module_ids[mod_path] = self._new(mod_path[-1] if mod_path else "crate", "module",
                                                  module, module.span, mod_path)
        self.module_paths = {did: path for path, did in self.module_ids.items()}
        for mod_path, module in self.program.modules.items():
            self.current = mod_path
            self.module_scopes[mod_path] = scope = _Scope(self.builtin_scope)
            self._hoist(module.items, scope)
        # All items of all modules exist now, so imports (and re-exports) can see them.
        for mod_path, module in self.program.modules.items():
            self.current = mod_path
            self._uses(module.items, self.module_scopes[mod_path])
        globals_ = {}
        for mod_path, module in self.program.modules.items():
            self.current = mod_path
            top = _Scope(self.module_scopes[mod_path])
            top.is_module_top = True
            top.globals = {name: self._new(name, "global", None, None)
                           for name in dict.fromkeys(_top_level_names(module.items))}
            self._stmts(module.items, top)
            for name, did in _top_level_bindings(module.items):
                globals_.setdefault(top.globals[name], []).append(did)
        if self.diagnostics:
            raise CompileError(self.diagnostics)
        return Resolution(self.defs, self.module_of, self.builtins, self.module_ids,
                          {p: self._exports(p) for p in self.program.modules},
                          {p: dict(s.names) for p, s in self.module_scopes.items()},
                          {g: list(dict.fromkeys(dids)) for g, dids in globals_.items()}, self.let_of)

    # ------------------------------------------------ DefIds and diagnostics

    def _new(self, name: str, kind: str, node, span: Optional[Span], mod_path=None) -> DefId:
        did = DefId(next(self._ids), name, kind, span)
        self.defs[did] = node
        self.module_of[did] = self.current if mod_path is None else mod_path
        return did

    def _bind(self, scope: _Scope, name: str, kind: str, node) -> DefId:
        did = self._new(name, kind, node, node.span)
        scope.names[name] = did
        return did

    def _undefined(self, name: str, span: Span, scope: _Scope, what: str = "") -> None:
        if name in self.unimported:
            return
        close = _closest(name, scope.visible())
        hint = f"a name in scope is `{close}`; did you mean it?" if close else ""
        homes = stdlib_modules_defining(name)
        if homes:
            hint = f"the standard library has it: `use {homes[0]}::{name};`"
        message = f"cannot find {what or 'name'} `{name}` in this scope"
        if _bound_later(scope, name):
            message = f"`{name}` is read before it is defined"
            hint = (f"`{name}` is bound by this statement or a later one, and statements run top to bottom; "
                    f"a definition reads itself only at earlier points (`{name}[t - 1]`)")
        self.diagnostics.append(Diagnostic(UNDEFINED, message, span, hint))

    def _import_error(self, message: str, span: Span, name: str, candidates: Iterable[str]) -> None:
        close = _closest(name, candidates)
        hint = f"did you mean `{close}`?" if close else ""
        self.diagnostics.append(Diagnostic(IMPORT, message, span, hint))

    # ------------------------------------------------ items

    def _hoist(self, stmts: list, scope: _Scope) -> None:
        """Give functions, consts and child modules their DefIds before any body is resolved."""
        fns: dict[str, ast.FnDef] = {}
        for stmt in stmts:
            if isinstance(stmt, ast.FnDef):
                self._refuse_redefinition(fns.get(stmt.name), stmt)
                fns[stmt.name] = stmt
                stmt.def_id = self._bind(scope, stmt.name, "fn", stmt)
                self.items.add(stmt.def_id)
            elif isinstance(stmt, ast.Let) and stmt.is_const:
                self._bind_pattern(stmt.pattern, scope, "value", items=True)
                self.let_of.update({did: stmt for did in _pattern_defs(stmt.pattern).values()})
            elif isinstance(stmt, ast.ModDecl):
                child = self.module_ids.get(self.current + (stmt.name,))
                if child is not None:
                    scope.names[stmt.name] = child

    def _refuse_redefinition(self, first: Optional[ast.FnDef], again: ast.FnDef) -> None:
        """Two functions of one name in one scope (Rust's E0428): the later would silently
        replace the earlier for every call, those above it included."""
        if first is not None:
            self.diagnostics.append(Diagnostic(
                UNDEFINED, f"the function `{again.name}` is defined twice in this scope", again.span,
                "rename one of them, or remove the one not meant", [Label(first.span, "first defined here")],
                label="defined again here"))

    def _refuse_second_input(self, first: Optional[DefId], again: ast.Let) -> None:
        """Inputs are bound by name, so two of one name would leave the caller one name for two."""
        if first is not None and first.kind == "input":
            self.diagnostics.append(Diagnostic(
                UNDEFINED, f"the input `{first.name}` is declared twice", again.span,
                "remove one declaration, or rename one input", [Label(first.span, "first declared here")],
                label="declared again here"))

    def _exports(self, mod_path: ModPath) -> dict[str, DefId]:
        """Public items of a module plus its `pub use` re-exports (computed once, on demand)."""
        if mod_path in self.exports:
            return self.exports[mod_path]
        if mod_path in self._exporting:
            return {}   # a re-export cycle adds nothing new along the cycle
        self._exporting.add(mod_path)
        scope = self.module_scopes[mod_path]
        out: dict[str, DefId] = {}
        for item in self.program.modules[mod_path].items:
            if isinstance(item, (ast.FnDef, ast.ModDecl)) and item.is_pub and item.name in scope.names:
                out[item.name] = scope.names[item.name]
            elif isinstance(item, ast.Let) and item.is_const and item.is_pub:
                out.update(_pattern_defs(item.pattern))
            elif isinstance(item, ast.Use) and item.is_pub:
                out.update(self._imported(item, mod_path, report=False))
        self._exporting.discard(mod_path)
        self.exports[mod_path] = out
        return out

    def _uses(self, stmts: list, scope: _Scope) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.Use):
                self._use(stmt, scope)

    def _use(self, use: ast.Use, scope: _Scope) -> None:
        glob = use.items is not None and all(item.name == "*" for item in use.items)
        imported = self._imported(use, self.current, report=True)
        meant = [use.alias or use.path[-1]] if use.items is None else \
            [item.alias or item.name for item in use.items if item.name != "*"]
        self.unimported.update(name for name in meant if name not in imported)
        for name, did in imported.items():
            existing = scope.names.get(name)
            if existing is None or existing == did:
                scope.names[name] = did
            elif self.module_of.get(existing) != self.current and existing in self.items:
                # Imported before: a glob keeps that name (`use std::math::*; use std::ml::*;`
                # both bring `sqrt`), an explicit import replaces it.
                if not glob:
                    scope.names[name] = did
            elif existing in self.items and not glob:     # a glob never hides a local item (Rust)
                self.diagnostics.append(Diagnostic(
                    IMPORT, f"`{name}` is imported here but also defined in this module", use.span,
                    f"import it under another name: `use ...::{name} as other_{name};`"))
            elif existing not in self.items:
                scope.names[name] = did

    def _imported(self, use: ast.Use, mod_path: ModPath, report: bool) -> dict[str, DefId]:
        """Names a `use` brings into scope. Explicit names win over names from a glob."""
        if use.path[0] == PYTHON:
            return self._python_import(use, report)
        if use.items is None:
            found = self._lookup_path(use.path, mod_path, use.span if report else None)
            return {use.alias or use.path[-1]: found} if found is not None else {}
        target = self.program.module_path(mod_path, use.path)
        if target is None:
            return {}   # the loader has already reported an unknown module
        out: dict[str, DefId] = {}
        for item in use.items:
            if item.name == "*":
                for name, did in self._exports(target).items():
                    out.setdefault(name, did)
        for item in use.items:
            if item.name != "*":
                did = self._member(target, item.name, item.span if report else None, mod_path)
                if did is not None:
                    out[item.alias or item.name] = did
        return out

    def _python_import(self, use: ast.Use, report: bool) -> dict[str, DefId]:
        if use.items is None:
            return {use.alias or use.path[-1]: self._python(use.path[1:], use.span, report)}
        out: dict[str, DefId] = {}
        for item in use.items:
            if item.name == "*":
                if report:
                    self.diagnostics.append(Diagnostic(IMPORT, "a Python module cannot be imported "
                                                       "with `*`", item.span, "name what you use"))
                continue
            out[item.alias or item.name] = self._python(use.path[1:] + [item.name], item.span, report)
        return out

    def _python(self, dotted: list[str], span: Span, report: bool = True) -> Optional[DefId]:
        """What `python::a::b` names: std::math for `math` (its functions are Einlang's own),
        `load_npy` for `numpy::load`, else a Python object to call during the build."""
        if not dotted:
            if report:
                self.diagnostics.append(Diagnostic(IMPORT, "`python` needs a module name", span,
                                                   "e.g. `use python::math;`"))
            return None
        if dotted[0] == "math" and len(dotted) == 2 and dotted[1] not in MATH_CONSTANTS:
            return self._member(PYTHON_MATH, dotted[1], span if report else None, self.current)
        if dotted == ["numpy", "load"]:
            return self.builtins["load_npy"]
        return self._new(".".join(dotted), "python", None, span)

    def _lookup_path(self, segments: list[str], mod_path: ModPath,
                     span: Optional[Span]) -> Optional[DefId]:
        """`a::b::c` as a module or as an item of a module; None (after reporting) if neither."""
        whole = self.program.module_path(mod_path, segments)
        if whole is not None:
            # `use std::math::exp;` names both the module exp.ein and the function std::math
            # re-exports from it: the function wins, as it does in `use std::math::{exp};`.
            parent = self.program.module_path(mod_path, segments[:-1]) if len(segments) > 1 else None
            item = self._exports(parent).get(segments[-1]) if parent is not None else None
            return item if item is not None else self.module_ids[whole]
        target = self.program.module_path(mod_path, segments[:-1])
        if target is None:
            if span is not None:
                self.diagnostics.append(Diagnostic(
                    IMPORT, f"unresolved module `{'::'.join(segments[:-1])}`", span))
            return None
        return self._member(target, segments[-1], span, mod_path)

    def _path_module(self, segments: list[str], mod_path: ModPath,
                     scope: Optional[_Scope]) -> Optional[ModPath]:
        """The module a path prefix names: a module path, or an alias / `mod` name in scope."""
        found = self.program.module_path(mod_path, segments)
        if found is not None or scope is None:
            return found
        head = scope.lookup(segments[0], self.items)
        if head is None or head.kind != "module":
            return None
        return self.program.module_path(self.module_paths[head], ["self"] + segments[1:])

    def _member(self, target: ModPath, name: str, span: Optional[Span],
                from_module: ModPath) -> Optional[DefId]:
        """Item `name` of module `target` as seen from `from_module` (privacy as in Rust: a module
        sees everything of itself and its ancestors, and only the exports of others)."""
        if from_module[:len(target)] == target:
            # a module's own scope sees the built-ins, so `pub use load_npy;` re-exports one
            names = {**self.builtins, **self.module_scopes[target].names}
        else:
            names = self._exports(target)
        child = target + (name,)
        if name not in names and child in self.module_ids:
            return self.module_ids[child]   # a module file found by path, declared or not
        if name in names:
            return names[name]
        if span is not None:
            where = "::".join(target) or "crate"
            private = name in self.module_scopes[target].names
            message = (f"`{name}` is private to module `{where}`" if private
                       else f"module `{where}` has no item `{name}`")
            self._import_error(message, span, name, names)
        return None

    # ------------------------------------------------ statements

    def _stmts(self, stmts: list, scope: _Scope) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.IndexedLet) and stmt.name not in scope.forward:
                scope.forward[stmt.name] = self._new(stmt.name, "value", stmt, stmt.span)
        for stmt in stmts:
            self._stmt(stmt, scope)

    def _stmt(self, stmt, scope: _Scope) -> None:
        if isinstance(stmt, ast.Let):
            self._let(stmt, scope)
        elif isinstance(stmt, ast.IndexedLet):
            self._indexed_let(stmt, scope)
        elif isinstance(stmt, ast.FnDef):
            # a function inside a block closes over the block's locals, as a lambda does
            self._function(stmt.params, stmt.body, scope, stmt.ret, is_fn=scope.is_module_top)
        elif isinstance(stmt, ast.DiffRule):
            self._diff_rule(stmt, scope)
        elif isinstance(stmt, ast.ExprStmt):
            self._expr(stmt.expr, scope)
        # Use and ModDecl were handled with the items, before any statement.

    def _let(self, let: ast.Let, scope: _Scope) -> None:
        if let.type is not None:     # an input's type is checked with the input (forms.types)
            self._type(let.type, scope, named=let.value is None)
        if let.value is not None:
            self._expr(let.value, scope)
        if let.is_const:
            return   # bound when hoisted
        if let.value is None:
            self._refuse_second_input(scope.names.get(getattr(let.pattern, "name", None)), let)
        self._bind_pattern(let.pattern, scope, "value" if let.value is not None else "input")
        self.let_of.update({did: let for did in _pattern_defs(let.pattern).values()})

    def _bind_pattern(self, pattern, scope: _Scope, kind: str, items: bool = False) -> None:
        if isinstance(pattern, ast.BindPat):
            pattern.def_id = self._bind(scope, pattern.name, kind, pattern)
            if items:
                self.items.add(pattern.def_id)
        elif isinstance(pattern, ast.TuplePat):
            for elem in pattern.elems:
                self._bind_pattern(elem, scope, kind, items)

    def _bind_match_pattern(self, pattern, scope: _Scope) -> None:
        """The names a `match` arm's pattern binds; every alternative of an or-pattern binds the
        same names (one DefId each, whichever alternative matched)."""
        if isinstance(pattern, ast.OrPat):
            first = _Scope(scope)
            self._bind_match_pattern(pattern.alts[0], first)
            for alt in pattern.alts[1:]:
                binds = _bind_pats(alt)
                missing = set(first.names) ^ {b.name for b in binds}
                if missing:
                    name = sorted(missing)[0]
                    self.diagnostics.append(Diagnostic(
                        UNDEFINED, f"`{name}` is bound in some alternatives of this pattern but not in all",
                        alt.span, "bind the same names in every alternative"))
                for bind in binds:
                    bind.def_id = first.names.get(bind.name)
            scope.names.update(first.names)
            return
        if isinstance(pattern, ast.BindPat):
            pattern.def_id = self._bind(scope, pattern.name, "pattern", pattern)
        for child in _sub_patterns(pattern):
            self._bind_match_pattern(child, scope)

    def _indexed_let(self, let: ast.IndexedLet, scope: _Scope) -> None:
        current = scope.names.get(let.name)
        if current is not None and current in scope.indexed:
            let.def_id = current   # another clause of the same piecewise definition
        else:
            let.def_id = scope.forward.pop(let.name, None) or self._new(let.name, "value", let, let.span)
            scope.names[let.name] = let.def_id
            scope.indexed.add(let.def_id)
        if let.type is not None:
            self._type(let.type, scope)
        inner = _Scope(scope)
        for slot in let.slots:
            if isinstance(slot, ast.IndexVar):
                self._note_a_shadowed_value(slot, scope)
                self._index_var(slot, inner, inner)
            elif isinstance(slot, ast.RestIndex):
                slot.def_id = self._bind(inner, slot.name, "rest", slot)
        self._wheres(let.wheres, inner)
        self._expr(let.value, inner)

    def _note_a_shadowed_value(self, slot: ast.IndexVar, scope: _Scope) -> None:
        """A bare name in a declaration bracket that names a value in scope: the elaboration
        refuses it where that value is an integer scalar (definitions.clause)."""
        bound = scope.lookup(slot.name, self.items)
        if slot.range is None and bound is not None and bound.kind in _VALUE_KINDS:
            slot.shadows = bound

    def _index_var(self, var: ast.IndexVar, range_scope: _Scope, scope: _Scope) -> None:
        if var.range is not None:
            self._expr(var.range, range_scope)
        var.def_id = self._bind(scope, var.name, "index", var)

    def _wheres(self, clauses: list, scope: _Scope) -> None:
        for clause in clauses:
            if isinstance(clause, ast.WhereBind):
                self._expr(clause.value, scope)
                clause.def_id = self._bind(scope, clause.name, "where", clause)
            elif not self._range_in_where(clause.cond, scope):
                self._expr(clause.cond, scope)

    def _range_in_where(self, cond, scope: _Scope) -> bool:
        """`where i in 0..3` with `i` an index (or no name at all) reads as a range, and the thesis
        (2.1.1) rejects ranges in where clauses: it hides which construct owns the index."""
        if not (isinstance(cond, ast.Binary) and cond.op == "in" and isinstance(cond.left, ast.Name)
                and isinstance(cond.right, ast.Range)):
            return False
        did = scope.lookup(cond.left.name, self.items)
        if did is not None and did.kind != "index":
            return False                   # a value's membership in a range is a guard
        name = cond.left.name
        self.diagnostics.append(Diagnostic(
            SHAPE, f"a `where` clause cannot give `{name}` a range", cond.span,
            f"give the range in the brackets that introduce `{name}` (`y[{name} in a..b]`, `sum[{name} in a..b]`), "
            f"or keep points with a comparison (`where a <= {name} && {name} < b`)"))
        return True

    def _function(self, params: list, body, outer: _Scope, ret=None, is_fn: bool = True) -> _Scope:
        scope = _Scope(outer, is_fn=is_fn)
        for param in params:
            if param.type is not None:
                self._type(param.type, scope)
            param.def_id = self._bind(scope, param.name, "param", param)
        if ret is not None:
            self._type(ret, scope)
        self._expr(body, scope)
        return scope

    def _diff_rule(self, rule: ast.DiffRule, scope: _Scope) -> None:
        target = scope.lookup(rule.name, self.items)
        if target is None or target.kind != "fn":
            self._undefined(rule.name, rule.span, scope, "function")
        else:
            rule.def_id = target
        self._function(rule.params, rule.body, scope)

    # ------------------------------------------------ types

    def _type(self, type_, scope: _Scope, named: bool = False) -> None:
        """Resolve the dims a type names; a type name that is no type is E002 unless `named`."""
        if isinstance(type_, ast.ArrayType):
            self._type(type_.elem, scope, named)
            for dim in type_.dims or []:
                if dim.name is not None:
                    self._dim(dim, scope)
        elif isinstance(type_, ast.TupleType):
            for elem in type_.elems:
                self._type(elem, scope, named)
        elif isinstance(type_, ast.NamedType) and not named:
            self.diagnostics.append(_unknown_type(type_))

    def _dim(self, dim: ast.DimSpec, scope: _Scope) -> None:
        # A named dim binds on first appearance; later ones (other inputs, `0..N`) read it.
        found = scope.lookup(dim.name, self.items)
        dim.def_id = found if found is not None else self._bind(scope, dim.name, "dim", dim)

    # ------------------------------------------------ expressions

    def _expr(self, node, scope: _Scope) -> None:
        method = getattr(self, "_e_" + type(node).__name__, None)
        if method is not None:
            method(node, scope)
        else:
            self._children(node, scope)

    def _children(self, node, scope: _Scope) -> None:
        """Resolve the sub-expressions of a node that binds nothing itself."""
        for value in vars(node).values():
            if isinstance(value, ast.Node):
                self._expr(value, scope)
            elif isinstance(value, list):
                for elem in value:
                    if isinstance(elem, ast.Node):
                        self._expr(elem, scope)

    def _e_Binary(self, node: ast.Binary, scope: _Scope) -> None:
        first, chain = ast.left_chain(node)
        self._expr(first, scope)
        for binary in chain:
            self._expr(binary.right, scope)

    def _e_Name(self, node: ast.Name, scope: _Scope) -> None:
        node.def_id = scope.lookup(node.name, self.items)
        if node.def_id is None:
            self._undefined(node.name, node.span, scope)

    def _e_RestIndex(self, node: ast.RestIndex, scope: _Scope) -> None:
        node.def_id = scope.lookup(node.name, self.items)
        if node.def_id is None:
            self._undefined(node.name, node.span, scope, "rest index")

    def _e_Path(self, node: ast.Path, scope: _Scope) -> None:
        head = scope.lookup(node.segments[0], self.items)
        if node.segments[0] == PYTHON and head is None:
            node.def_id = self._python(node.segments[1:], node.span)
            return
        if head is not None and head.kind == "python":     # `use python::numpy as np; np::load`
            node.def_id = self._python(head.name.split(".") + node.segments[1:], node.span)
            return
        target = self._path_module(node.segments[:-1], self.current, scope)
        if target is None:
            self.diagnostics.append(Diagnostic(
                IMPORT, f"unresolved module `{'::'.join(node.segments[:-1])}`", node.span,
                "import it with `use` or declare it with `mod`"))
            return
        node.def_id = self._member(target, node.segments[-1], node.span, self.current)

    def _e_MethodCall(self, node: ast.MethodCall, scope: _Scope) -> None:
        self._expr(node.obj, scope)
        for arg in node.args:
            self._expr(arg, scope)
        found = scope.lookup(node.method, self.items)
        # Only functions make method sugar; otherwise the elaborator treats it as a built-in op.
        if found is not None and found.kind in ("fn", "builtin"):
            node.def_id = found

    def _e_Member(self, node: ast.Member, scope: _Scope) -> None:
        self._expr(node.obj, scope)

    def _e_Cast(self, node: ast.Cast, scope: _Scope) -> None:
        self._expr(node.expr, scope)
        self._type(node.to, scope)

    def _e_Block(self, node: ast.Block, scope: _Scope) -> None:
        inner = _Scope(scope)
        self._hoist(node.stmts, inner)
        self._uses(node.stmts, inner)
        self._stmts(node.stmts, inner)
        if node.result is not None:
            self._expr(node.result, inner)

    def _e_Lambda(self, node: ast.Lambda, scope: _Scope) -> None:
        self._function(node.params, node.body, scope, is_fn=False)

    def _e_Match(self, node: ast.Match, scope: _Scope) -> None:
        self._expr(node.scrutinee, scope)
        for arm in node.arms:
            inner = _Scope(scope)
            self._bind_match_pattern(arm.pattern, inner)
            if arm.guard is not None:
                self._expr(arm.guard, inner)
            self._expr(arm.body, inner)

    def _e_Reduction(self, node: ast.Reduction, scope: _Scope) -> None:
        _nest_at_a_sibling_range(node)
        inner = _Scope(scope)
        for var in node.indices:
            if isinstance(var, ast.RestIndex):
                var.def_id = self._bind(inner, var.name, "rest", var)
            else:
                self._index_var(var, scope, inner)   # ranges read outer indices (siblings: nested above)
        self._wheres(node.wheres, inner)
        self._expr(node.body, inner)

    def _e_Where(self, node: ast.Where, scope: _Scope) -> None:
        inner = _Scope(scope)
        self._wheres(node.clauses, inner)
        self._expr(node.body, inner)

    def _e_Comprehension(self, node: ast.Comprehension, scope: _Scope) -> None:
        """Clauses in order; `v in coll` whose `v` an earlier clause of the same comprehension
        binds (a generator or a local `v = ..`) is a membership filter (`[v | v in 0..10, v in
        3..6]`, `[k | k in 0..4, c = cols[k], c in wanted]`), not a new generator."""
        inner = _Scope(scope)
        bound = set()
        for k, clause in enumerate(node.clauses):
            if isinstance(clause, ast.Generator) and clause.name in bound:
                name = ast.Name(clause.name, span=clause.span)
                clause = node.clauses[k] = ast.Binary("in", name, clause.iterable, span=clause.span)
            if isinstance(clause, ast.Generator):
                self._expr(clause.iterable, inner)
                clause.def_id = self._bind(inner, clause.name, "generator", clause)
                bound.add(clause.name)
                if clause.pattern is not None:
                    self._bind_pattern(clause.pattern, inner, "generator")
                    bound.update(b.name for b in _bind_pats(clause.pattern))
            elif isinstance(clause, ast.CompBinding):
                self._expr(clause.value, inner)
                clause.def_id = self._bind(inner, clause.name, "value", clause)
                bound.add(clause.name)
            else:
                self._expr(clause, inner)
        self._expr(node.body, inner)


def _bound_later(scope: _Scope, name: str) -> bool:
    """`name` is a top-level binding of this module not bound yet (`let a = b; let b = ..`)."""
    while scope is not None and not scope.is_module_top:
        if scope.is_fn:
            return False               # a function reads the binding in effect when it is called
        scope = scope.parent
    return scope is not None and name in scope.globals and name not in scope.names


def _top_level_names(stmts: list) -> list[str]:
    """Names a module's top-level lets, indexed definitions and inputs bind (before resolving)."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, ast.Let) and not stmt.is_const:
            out += [n.name for n in ast.iter_nodes(stmt.pattern) if isinstance(n, ast.BindPat)]
        elif isinstance(stmt, ast.IndexedLet):
            out.append(stmt.name)
    return out


def _top_level_bindings(stmts: list) -> list:
    """(name, DefId) of a module's top-level lets, indexed definitions and inputs, in order
    (consts are items, not among them)."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, ast.Let) and not stmt.is_const:
            out += list(_pattern_defs(stmt.pattern).items())
        elif isinstance(stmt, ast.IndexedLet) and stmt.def_id is not None:
            out.append((stmt.name, stmt.def_id))
    return out


def _pattern_defs(pattern) -> dict[str, DefId]:
    if isinstance(pattern, ast.BindPat) and pattern.def_id is not None:
        return {pattern.name: pattern.def_id}
    if isinstance(pattern, ast.TuplePat):
        out: dict[str, DefId] = {}
        for elem in pattern.elems:
            out.update(_pattern_defs(elem))
        return out
    return {}


def _sub_patterns(pattern) -> list:
    if isinstance(pattern, ast.BindPat):
        return [pattern.sub] if pattern.sub is not None else []
    if isinstance(pattern, (ast.TuplePat, ast.ArrayPat)):
        return pattern.elems
    if isinstance(pattern, ast.OrPat):
        return pattern.alts
    if isinstance(pattern, ast.RestPat):
        return [pattern.bind] if pattern.bind is not None else []
    return []


def _bind_pats(pattern) -> list:
    """Every BindPat of a pattern, in all alternatives of the or-patterns inside it."""
    own = [pattern] if isinstance(pattern, ast.BindPat) else []
    return own + [b for child in _sub_patterns(pattern) for b in _bind_pats(child)]


def _unknown_type(type_: ast.NamedType) -> Diagnostic:
    """A type name that is neither a number type, bool nor str: Einlang has no type parameters
    (an untyped parameter is the generic one), so `fn f(x: [flaot32; N])` is a misspelling."""
    close = closest_type(type_.name)
    guess = f"did you mean `{close}`? " if close else ""
    return Diagnostic(TYPE, f"unknown type `{type_.name}`", type_.span,
                      f"{guess}a type is a number type (f32, i64, u8, ..), bool, str, or an array or tuple of "
                      "them; there are no type parameters: an untyped function parameter is generic")


def _closest(name: str, candidates: Iterable[str]) -> Optional[str]:
    """The candidate most like `name`, for a hint; never an intrinsic (`__floor`), which users
    cannot call and which would only mislead."""
    public = sorted(c for c in candidates if not c.startswith("__"))
    close = difflib.get_close_matches(name, public, n=1)
    return close[0] if close else None


def _nest_at_a_sibling_range(node: ast.Reduction) -> None:
    """`sum[i in 0..N, j in 0..i](b)` as `sum[i in 0..N](sum[j in 0..i](b))`: an index whose range
    reads an earlier index of the same reduction starts an inner reduction, which takes the
    where clauses (every reduction's operation is associative and commutative, so the value is
    the same)."""
    earlier = set()
    for k, var in enumerate(node.indices):
        reads = {n.name for n in ast.iter_nodes(var.range) if isinstance(n, ast.Name)} if getattr(var, "range", None) else set()
        if reads & earlier:
            inner = ast.Reduction(node.op, node.indices[k:], node.body, node.wheres, span=node.span)
            node.indices, node.body, node.wheres = node.indices[:k], inner, []
            return
        earlier.add(var.name)
