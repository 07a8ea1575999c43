"""The evaluator of elaboration: the resolved AST becomes typed tensor IR.

The program is evaluated symbolically, statement by statement, the way a tracing compiler
does it: each expression yields an IR value whose dtype and shape are checked as it is built,
so type (E002), shape (E004) and bounds (E005) errors point at the source that caused them.
A function call elaborates the callee's body with the argument values, which specialises a
generic function for the argument types (monomorphization) and makes a function written
for scalars apply point by point to arrays.

The evaluator dispatches through tables of rules that the rule modules above it define and
elaborate hands to `install`: `EXPR_RULES` keyed by AST node type (expressions), `BUILTIN_RULES`
keyed by the name of a built-in function and `INTRINSIC_RULES` by the name and argument count of
an intrinsic `__name` (builtin_calls). Statements it runs itself, with definitions and
recurrences.
"""
from __future__ import annotations

import os

from einc import diagnostics as d
from einc.ir import nodes as ir
from einc.ir.types import Lin, Sym
from einc.autodiff.custom_rules import RuleTable
from einc.semantics.forms import definitions, python_calls, recurrences, types, variables
from einc.semantics.forms.derivative_rules import call_with_rule
from einc.semantics.core import tensors
from einc.semantics.core.state import State
from einc.semantics.core.values import BuiltinVal, Env, FnVal, LambdaVal, PythonVal, TupleVal, Weak, describe
from einc.syntax import ast

EXPR_RULES: dict = {}        # AST node type -> rule(el, node, env)
BUILTIN_RULES: dict = {}     # name -> rule(el, args, span)
INTRINSIC_RULES: dict = {}   # (name without `__`, argument count) -> rule(el, args, span)
MAX_CALL_DEPTH = 1000     # levels of a recursive call elaborated (einc.deep_stack gives them room)


def install(expr_rules: dict, builtin_rules: dict, intrinsic_rules: dict) -> None:
    """Enters the rule modules' tables into the ones the evaluator dispatches through."""
    EXPR_RULES.update(expr_rules)
    BUILTIN_RULES.update(builtin_rules)
    INTRINSIC_RULES.update(intrinsic_rules)


def rule_decorator(table: dict):
    """A decorator `@rule(key, ..)` that enters the decorated function into `table` under each
    key; a rule module builds its own table with it."""
    def rule(*keys):
        def register(fn):
            for key in keys:
                table[key] = fn
            return fn
        return register
    return rule


class Elaborator:
    def __init__(self, program, resolution, fixed_dims: dict[str, int] | None = None,
                 allow_python: bool = False, ranks: dict[str, int] | None = None):
        self.program = program
        self.ranks = dict(ranks or {})           # any-rank input name -> its rank in this build
        self.res = resolution
        self.allow_python = allow_python         # may `python::mod::f(..)` run during the build
        self.state = State()
        self.ir = ir.Program(source=program.entry.path, fixed_dims=dict(fixed_dims or {}))
        self.globals = Env()
        self.rest_slots: dict = {}
        self.value_axes: dict = {}               # recurrence DefId -> extents its base clauses' values add
        self.named_dims: dict[str, Lin] = {}      # a Sym, or the size `--dim` fixed it to
        self._module_values: dict = {}
        self.derivative_rules = RuleTable()      # anchors of calls of functions with a rule
        self._rule_defs: dict = {}               # function DefId -> its `@fn` rule (as FnVal)
        self.rules_running: set = set()          # DefIds of the functions whose rule body is being evaluated
        self.differentiated = variables.differentiated_bindings(program.modules.values())

    # ------------------------------------------------------------ expressions

    def ev(self, expr, env: Env):
        rule = EXPR_RULES.get(type(expr))
        if rule is None:
            raise d.error(d.UNSUPPORTED, f"{type(expr).__name__} is not supported here", expr.span)
        return rule(self, expr, env)

    def lookup(self, def_id, name: str, span, env: Env):
        if def_id is None:
            raise d.error(d.UNDEFINED, f"cannot find `{name}` in this scope", span)
        try:
            return env.lookup(def_id)
        except KeyError:
            pass
        kind = getattr(def_id, "kind", None)
        if kind == "builtin":
            return BuiltinVal(def_id.name)
        if kind == "global":
            return self._global_value(def_id, name, span)
        if kind == "python":
            return python_calls.python_value(def_id.name, span) if def_id.name.startswith("math.") \
                else PythonVal(def_id.name)
        node = self.res.defs.get(def_id)
        if isinstance(node, ast.FnDef):
            return FnVal(node, self.globals)
        if def_id in self._module_values:
            return self._module_values[def_id]
        if isinstance(node, (ast.BindPat, ast.Let)):
            return self._module_level_value(def_id, node, span)
        raise d.error(d.UNDEFINED, f"`{name}` is used before it is defined", span)

    def _global_value(self, def_id, name: str, span):
        """A top-level binding read from a function body: of the entry program, the binding of
        that name in effect now (the latest that has run); of another module, its last one."""
        bindings = self.res.globals[def_id]
        if self.res.module_of[def_id] != ():
            return self.lookup(bindings[-1], name, span, self.globals)
        for binding in reversed(bindings):
            try:
                return self.globals.lookup(binding)
            except KeyError:
                continue
        raise d.error(d.UNDEFINED, f"`{name}` is read here before the top-level `let {name}` runs",
                      span, hint="functions read top-level bindings as they are when the function "
                      "is called: call it after the `let`")

    def _module_level_value(self, def_id, node, span):
        """A `let`/`const` of another module, evaluated on first use."""
        let = self.res.let_of.get(def_id)
        if let is None or let.value is None:
            raise d.error(d.UNDEFINED, f"`{def_id.name}` has no value here", span)
        env = self.globals.child()
        self.bind_pattern(let.pattern, types.annotate(self.ev(let.value, env), let.type, self), env)
        value = env.lookup(def_id)
        self._module_values[def_id] = value
        return value

    # ------------------------------------------------------------ calls

    def call(self, fn, args: list, span):
        if isinstance(fn, BuiltinVal):
            return self.call_builtin(fn.name, args, span)
        if isinstance(fn, PythonVal):
            folder = os.path.dirname(os.path.abspath(self.program.entry.path))
            result = python_calls.call(fn.name, args, span, self.allow_python, folder)
            self.ir.python_results.append(python_calls.digest(fn.name, result))
            return result
        if isinstance(fn, FnVal) and fn.node.def_id in self._rule_defs and fn.node.def_id not in self.rules_running:
            return call_with_rule(self, fn, self._rule_defs[fn.node.def_id], args, span)
        return self.call_body(fn, args, span)

    def call_builtin(self, name: str, args: list, span):
        rule = BUILTIN_RULES.get(name)     # looked up first: `x.size` is the rule `__size`
        if rule is None and name.startswith("__"):
            return self.call_intrinsic(name[2:], args, span)
        if rule is None:
            raise d.error(d.UNSUPPORTED, f"`{name}` has no meaning in a compiled program", span)
        return rule(self, args, span)

    def call_intrinsic(self, name: str, args: list, span, hint: str = ""):
        """`__name(args)`, the primitive the standard library wraps."""
        rule = INTRINSIC_RULES.get((name, len(args)))
        if rule is None:
            count = f"{len(args)} argument" + ("" if len(args) == 1 else "s")
            raise d.error(d.UNDEFINED, f"no function `{name}` taking {count}", span, hint=hint)
        return rule(self, args, span)

    def call_body(self, fn, args: list, span):
        """Elaborate the callee's body with `args` (its derivative rule aside)."""
        if isinstance(fn, FnVal):
            node, env = fn.node, fn.env
        elif hasattr(fn, "node") and isinstance(fn.node, ast.Lambda):
            node, env = fn.node, fn.env
        else:
            raise d.error(d.TYPE, "this value is not a function", span)
        name = _callee_name(fn)
        if len(args) != len(node.params):
            raise d.error(d.TYPE, f"`{name}` takes {_count(len(node.params), 'argument')} but "
                          f"{len(args)} {'was' if len(args) == 1 else 'were'} given", span,
                          notes=[d.Label(node.span, f"`{name}` is defined here")])
        if self.state.call_depth >= MAX_CALL_DEPTH:
            raise d.error(d.UNSUPPORTED, "recursion that does not end at compile time", span,
                          hint="recursive functions must reach a base case on constant arguments")
        mapped = types.mapped_over(node.params, args)
        if mapped:
            return self._call_point_by_point(fn, node, args, mapped, span)
        scope, sizes = env.child(), {}
        for p, a in zip(node.params, args):
            value = types.annotate(a, p.type, self, span)
            types.bind_dims(value, p.type, scope, sizes)
            self.bind(scope, p.def_id, value)
        self.state.call_depth += 1
        self.state.calls.append((span, name))
        self._note_call_chain(node.span)
        try:       # a result of the wrong type is shown at `-> T`, its body in a note
            return types.annotate(self.ev(node.body, scope), getattr(node, "ret", None), self)
        except d.CompileError as err:
            raise err.called_from(span, name) from None
        finally:
            self.state.call_depth -= 1
            self.state.calls.pop()

    def _note_call_chain(self, body) -> None:
        """Record the calls that reached a function's body, for errors later stages find in it
        (a few distinct chains, each its outermost calls, as CompileError.called_from keeps)."""
        if body is None or self.state.calls[-1][0] is None:
            return
        chain = tuple(reversed(self.state.calls[:d.MAX_CALL_NOTES]))
        chains = self.ir.call_chains.setdefault(body, [])
        if chain not in chains and len(chains) < d.MAX_CALL_NOTES:
            chains.append(chain)

    def _call_point_by_point(self, fn, node, args: list, mapped: list, span):
        """A function whose parameters at `mapped` are typed as scalars, given arrays there, is
        applied to their elements point by point (as one with untyped parameters is); its other
        arguments are passed whole."""
        name = _callee_name(fn)

        def at_point(*elements):
            point = list(args)
            for k, element in zip(mapped, elements):
                point[k] = element
            result = self.call_body(fn, point, span)
            if not isinstance(result, (ir.Value, Weak)) or result.rank:
                raise d.error(d.UNSUPPORTED, f"`{name}` applied to each element of an array returns "
                              f"{describe(result)}; only a number per element is supported", span)
            return result
        arrays = [types.elements_for(args[k], node.params[k], name, span) for k in mapped]
        return tensors.lift(at_point, arrays, span, self.state, hint_dtypes=False)

    # ------------------------------------------------------------ statements

    def exec_block(self, stmts: list, env: Env, top_level: bool = False) -> list:
        """Run statements in order; return the top-level bindings (for outputs)."""
        for s in stmts:
            if isinstance(s, ast.FnDef):
                env.bind(s.def_id, FnVal(s, env))
            elif isinstance(s, ast.DiffRule) and s.def_id is not None:
                self._rule_defs[s.def_id] = FnVal(s, env)
        reads = recurrences.read_graph(stmts)
        groups = recurrences.find_groups(reads, recurrences.step_aligned_reads(stmts),
                                         recurrences.read_before_defined(stmts))
        last = {}
        for k, s in enumerate(stmts):
            if isinstance(s, ast.IndexedLet):
                last[groups.get(s.def_id, frozenset([s.def_id]))] = k
        bindings, waiting, done, above = [], [], set(), set()
        clauses = _clauses_by_definition(stmts)
        for k, s in enumerate(stmts):
            if isinstance(s, (ast.Let, ast.ExprStmt)):
                _check_no_read_of_waiting(s, k, stmts, groups, last, reads, above, done)
            if isinstance(s, ast.Let):
                bindings += self._let(s, env, top_level)
            elif isinstance(s, ast.IndexedLet):
                above.add(s.def_id)
                unit = groups.get(s.def_id, frozenset([s.def_id]))
                if last[unit] == k:
                    waiting.append(unit)
                    bindings += self._define_ready(clauses, waiting, reads, done, env)
            elif isinstance(s, ast.ExprStmt):
                self.ev(s.expr, env)
        return bindings

    def _define_ready(self, clauses: dict, waiting: list, reads: dict, done: set, env: Env) -> list:
        """Define every waiting unit whose reads are defined (a definition may read one that
        appears later in the block; it is defined once that one is)."""
        bindings, progress = [], True
        while progress:
            progress = False
            for unit in list(waiting):
                needs = set().union(*(reads[d] for d in unit)) - unit
                if needs <= done:
                    waiting.remove(unit)
                    bindings += self._indexed(clauses, unit, env)
                    done |= unit
                    progress = True
        return bindings

    def _indexed(self, block_clauses: dict, unit: frozenset, env: Env) -> list:
        """Define one indexed definition, or a whole recurrence group (`block_clauses`: the
        position of each definition's first clause in the block, and its clauses)."""
        members = sorted(unit, key=lambda did: block_clauses[did][0])
        clauses = {did: block_clauses[did][1] for did in members}
        recurrent = len(unit) > 1 or any(did in self._reads_self(clauses[did]) for did in unit)
        if recurrent:
            values = recurrences.define_group(self, clauses, env)
        else:
            values = {members[0]: definitions.define(self, clauses[members[0]], env)}
        for did, value in values.items():
            env.bind(did, value)
        return [(clauses[did][0].name, did, False) for did in members]

    @staticmethod
    def _reads_self(clauses: list) -> set:
        return {n.def_id for c in clauses for n in ast.iter_nodes([c.value, c.wheres])
                if isinstance(n, ast.Name)}

    def _let(self, s: ast.Let, env: Env, top_level: bool) -> list:
        if s.value is None:
            if not top_level or not isinstance(s.pattern, ast.BindPat) or s.type is None:
                raise d.error(d.TYPE, "a `let` without a value declares a run-time input: it "
                              "needs a name and a type and must be at the top level", s.span)
            env.bind(s.pattern.def_id, self._input(s, env))
            return []
        value = types.annotate(self.ev(s.value, env), s.type, self, s.span)
        self.bind_pattern(s.pattern, value, env)
        return [(n, did, s.is_const) for n, did in _pattern_names(s.pattern)]

    def bind(self, env: Env, def_id, value) -> None:
        """Bind a name; one that a derivative differentiates becomes a variable (variables)."""
        if def_id in self.differentiated:
            value = variables.as_variable(value, named_already=env.names(value))
        env.bind(def_id, value)

    def bind_pattern(self, pat, value, env: Env) -> None:
        if isinstance(pat, ast.BindPat):
            if isinstance(value, LambdaVal) and not value.name:
                value.name = pat.name
            self.bind(env, pat.def_id, value)
        elif isinstance(pat, ast.TuplePat):
            if not isinstance(value, TupleVal) or len(value.items) != len(pat.elems):
                raise d.error(d.TYPE, f"cannot destructure this value into {len(pat.elems)} parts", pat.span)
            for p, v in zip(pat.elems, value.items):
                self.bind_pattern(p, v, env)
        elif not isinstance(pat, ast.WildPat):
            raise d.error(d.UNSUPPORTED, "this pattern cannot appear in a `let`", pat.span)

    def _input(self, s: ast.Let, env: Env) -> ir.Input:
        name, pos = s.pattern.name, len(self.ir.inputs)
        dtype, dims = types.input_type(s.type, name, self.ranks.get(name))
        shape, declared = [], []
        for axis, dim in enumerate(dims):
            shape.append(self._dim_size(dim, name, pos, axis, env))
            declared.append(dim.size if dim.size is not None else dim.name)
        value = ir.Input(name, pos, dtype, tuple(shape), declared, span=s.span)
        self.ir.inputs.append(value)
        return value

    def _dim_size(self, dim: ast.DimSpec, input_name: str, pos: int, axis: int, env: Env) -> Lin:
        if dim.size is not None:
            return Lin(dim.size)
        if dim.name is None:
            sym = Sym(f"{input_name}.{axis}", pos, axis)
            self.ir.syms.append(sym)
            return Lin.of(sym)
        if dim.name not in self.named_dims:
            self.named_dims[dim.name] = self._named_dim_size(dim.name, pos, axis)
            if dim.def_id is not None:
                env.bind(dim.def_id, ir.size_value(self.named_dims[dim.name], span=dim.span))
        return self.named_dims[dim.name]

    def _named_dim_size(self, name: str, pos: int, axis: int) -> Lin:
        """A fixed dim is a constant from here on, so IREE sees static shapes."""
        if name in self.ir.fixed_dims:
            return Lin(self.ir.fixed_dims[name])
        sym = Sym(name, pos, axis)
        self.ir.syms.append(sym)
        return Lin.of(sym)

    # ------------------------------------------------------------ rest indices

    def rest_rank(self, slot: ast.RestIndex, value, env: Env) -> int:
        """How many axes `..name` stands for, from the first read that uses it and whose other
        rest indices (`x[..a, ..b]`) already stand for a known number of axes."""
        for node in ast.iter_nodes(value):
            rests = [s for s in node.subscripts if isinstance(s, ast.RestIndex)] if isinstance(node, ast.Index) else []
            others = [s for s in rests if s.def_id != slot.def_id]
            if len(others) == len(rests) or any(s.def_id not in self.rest_slots for s in others):
                continue
            base = self.ev(node.base, env) if isinstance(node.base, (ast.Name, ast.Path)) else None
            rank = getattr(base, "rank", None)
            if rank is not None:
                return rank - (len(node.subscripts) - 1) - sum(len(self.rest_slots[s.def_id]) - 1 for s in others)
        raise d.error(d.SHAPE, f"cannot tell how many axes `..{slot.name}` stands for", slot.span,
                      hint="read an array with it directly, e.g. `x[..b, i]`")


def _pattern_names(pat) -> list:
    if isinstance(pat, ast.BindPat):
        return [(pat.name, pat.def_id)]
    if isinstance(pat, ast.TuplePat):
        return [x for p in pat.elems for x in _pattern_names(p)]
    return []


def _clauses_by_definition(stmts: list) -> dict:
    """def_id -> (position of its first clause, its clauses in order), for the indexed
    definitions of a block: looked up per definition, not rescanned."""
    out: dict = {}
    for k, s in enumerate(stmts):
        if isinstance(s, ast.IndexedLet):
            out.setdefault(s.def_id, (k, []))[1].append(s)
    return out


def _check_no_read_of_waiting(stmt, k: int, stmts: list, groups: dict, last: dict, reads: dict,
                              above: set, done: set) -> None:
    """E003 that says why for a statement reading an indexed definition above it (`above`)
    that has no value yet: it recurs with definitions below (a group is computed where its last
    member stands), or it reads a definition below and is computed once that one is."""
    for node in ast.iter_nodes([stmt]):
        if not isinstance(node, ast.Name) or node.def_id not in above or node.def_id in done:
            continue
        unit = groups.get(node.def_id, frozenset([node.def_id]))
        if last[unit] > k:
            line = stmts[last[unit]].span.line
            why = f"`{node.name}` recurs with definitions below it, computed together at line {line}"
        else:
            later = next(s for s in stmts if isinstance(s, ast.IndexedLet)
                         and s.def_id in set().union(*(reads[did] for did in unit)) - unit - done)
            line = later.span.line
            why = f"`{node.name}` reads `{later.name}`, defined at line {line}"
        raise d.error(d.UNDEFINED, f"{why}: it has no value yet here", node.span,
                      hint=f"move this statement below line {line}")


def _callee_name(fn) -> str:
    """A function's name, or the name a lambda was bound to (`closure` for one never bound)."""
    if isinstance(fn, FnVal):
        return fn.node.name
    return getattr(fn, "name", "") or "closure"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
