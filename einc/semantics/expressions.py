"""Elaboration rules for expressions, one per AST node type (entered into the evaluator's EXPR_RULES)."""
from __future__ import annotations

import numpy as np

from einc import diagnostics as d
from einc.ir.nodes import Const, Generic, IndexRef, IndexVar, Reduce, Stack, Value, free_vars
from einc.ir.types import BOOL, Lin
from einc.semantics import definitions, derivatives, recurrences, scalar_ops, tensors, types
from einc.semantics.bounds import check_reads
from einc.semantics.derivative_rules import differential_key
from einc.semantics.evaluator import expression_rule
from einc.semantics.modules import stdlib_modules_defining
from einc.semantics.patterns import match
from einc.semantics.pointwise import cast_to, elementwise, select
from einc.semantics.printing import format_parts, print_call
from einc.semantics.values import LambdaVal, PartialRead, StrVal, TupleVal, Weak, describe
from einc.syntax import ast

BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem", "**": "pow",
          "&&": "and", "||": "or", "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt",
          ">=": "ge"}


@expression_rule(ast.IntLit, ast.FloatLit, ast.BoolLit)
def _literal(el, e, env):
    kind = {ast.IntLit: "int", ast.FloatLit: "float", ast.BoolLit: "bool"}[type(e)]
    value = Weak(np.asarray(e.value), kind, e.span)
    suffix = getattr(e, "suffix", None)
    if suffix:
        return scalar_ops.materialize(value, types.BY_NAME[suffix], e.span)
    return value


@expression_rule(ast.StrLit)
def _string(el, e, env):
    parts, args = format_parts(el, e, env)
    if args:
        raise d.error(d.UNSUPPORTED, "a string with run-time values can only be printed", e.span)
    return StrVal("".join(p["text"] for p in parts), e.span)


@expression_rule(ast.Name, ast.Path)
def _name(el, e, env):
    name = e.name if isinstance(e, ast.Name) else "::".join(e.segments)
    return el.lookup(e.def_id, name, e.span, env)


@expression_rule(ast.Unary)
def _unary(el, e, env):
    return elementwise(el, "neg" if e.op == "-" else "not", [el.ev(e.operand, env)], e.span)


@expression_rule(ast.Binary)
def _binary(el, e, env):
    left, right = el.ev(e.left, env), el.ev(e.right, env)
    if e.op == "in":
        return _membership(el, left, right, e.span)
    if e.op in ("&&", "||"):
        left = scalar_ops.materialize(left, BOOL, e.left.span) if isinstance(left, Weak) else left
    if e.op in ("==", "!=") and isinstance(left, StrVal) and isinstance(right, StrVal):
        # build-time strings (modes such as "nearest") compare at build time
        return Weak(np.asarray((left.text == right.text) == (e.op == "==")), "bool", e.span)
    return elementwise(el, BINARY[e.op], [left, right], e.span)


def _membership(el, item, arr, span):
    arr = tensors.whole(arr, span)
    if not isinstance(arr, Value) or arr.rank != 1:
        raise d.error(d.TYPE, f"`in` needs a one-dimensional array, found {describe(arr)}", span)
    var = IndexVar("m", Lin(0), arr.shape[0])
    element = tensors.read(arr, [IndexRef(var)], span, el.state, "")
    return Reduce("any", (var,), scalar_ops.apply("eq", [element, item], span), span=span)


@expression_rule(ast.Call)
def _call(el, e, env):
    fn = el.ev(e.func, env)
    if getattr(fn, "name", None) == "print":
        return print_call(el, e.args, env, e.span)
    return el.call(fn, [el.ev(a, env) for a in e.args], e.span)


@expression_rule(ast.MethodCall)
def _method(el, e, env):
    obj = el.ev(e.obj, env)
    args = [obj] + [el.ev(a, env) for a in e.args]
    if e.def_id is not None:
        return el.call(el.lookup(e.def_id, e.method, e.span, env), args, e.span)
    return el.call_intrinsic(e.method, args, e.span, hint=_method_hint(e.method))


def _method_hint(method: str) -> str:
    hint = f"`x.{method}()` calls `{method}(x)`, so a function `{method}` must be in scope"
    homes = stdlib_modules_defining(method)
    return hint + (f": `use {homes[0]}::{method};`" if homes else "")


@expression_rule(ast.Member)
def _member(el, e, env):
    obj = el.ev(e.obj, env)
    if e.name.isdigit():
        if not isinstance(obj, TupleVal) or int(e.name) >= len(obj.items):
            raise d.error(d.TYPE, f"no field `{e.name}` on {describe(obj)}", e.span)
        return obj.items[int(e.name)]
    if e.name in ("shape", "length", "size"):
        return el.call_builtin({"length": "len", "size": "__size"}.get(e.name, e.name), [obj], e.span)
    raise d.error(d.UNDEFINED, f"no property `{e.name}` on {describe(obj)}", e.span,
                  hint="arrays have .shape, .length and .size")


@expression_rule(ast.Index)
def _index(el, e, env):
    base = el.ev(e.base, env)
    subs = []
    for s in e.subscripts:
        if isinstance(s, ast.RestIndex):
            subs += [env.lookup(v.def_id) for v in el.rest_slots.get(s.def_id, [])]
        elif isinstance(s, ast.FullSlice):
            subs.append(None)      # `:`, which only a derivative accepts (tensors.read)
        else:
            subs.append(el.ev(s, env))
    if isinstance(base, recurrences.RecState):
        return recurrences.state_read(el, base, [tensors.subscript(x, e.span) for x in subs], e.span)
    result = tensors.read(base, subs, e.span, el.state, _source_text(el, e))
    if isinstance(result, Value) and not el.state.frames and not free_vars(result):
        check_reads(result, None, el.state, e.span)
    return result


def _source_text(el, e) -> str:
    """The read as written, for diagnostics that name it."""
    line = el.program.sources.line(e.span.file, e.span.line)
    if line is None or e.span.end_line != e.span.line:
        return "this read"
    return f"`{line[e.span.col - 1:e.span.end_col - 1]}`"


@expression_rule(ast.Cast)
def _cast(el, e, env):
    value = el.ev(e.expr, env)
    if isinstance(e.to, ast.ArrayType):
        dtype = types.scalar_dtype(e.to.elem)
        value = tensors.whole(value, e.span)
        if isinstance(value, Value) and value.dtype != dtype:
            value = cast_to(el, value, dtype, e.span)
        return types.annotate(value, e.to, el, e.span)
    if not isinstance(e.to, ast.ScalarType):
        raise d.error(d.TYPE, "`as` converts to a number type", e.to.span)
    return cast_to(el, value, types.scalar_dtype(e.to), e.span)


@expression_rule(ast.If)
def _if(el, e, env):
    cond = el.ev(e.cond, env)
    constant = _constant_bool(cond)
    if constant is not None:
        branch = e.then if constant else e.orelse
        return el.ev(branch, env) if branch is not None else TupleVal(())
    if e.orelse is None:
        raise d.error(d.TYPE, "an `if` used as a value needs an `else`", e.span)
    el.state.guard_depth += 1
    try:
        a, b = el.ev(e.then, env), el.ev(e.orelse, env)
    finally:
        el.state.guard_depth -= 1
    return select(el, cond, a, b, e.span)


def _constant_bool(v):
    if isinstance(v, Weak) and v.kind == "bool" and v.rank == 0:
        return bool(v.value)
    if isinstance(v, Const) and v.array.ndim == 0 and v.array.dtype == np.bool_:
        return bool(v.array)
    return None


@expression_rule(ast.Match)
def _match(el, e, env):
    scrutinee = el.ev(e.scrutinee, env)
    return match(el, scrutinee, e, env)


@expression_rule(ast.Block)
def _block(el, e, env):
    scope = env.child()
    el.exec_block(e.stmts, scope)
    return el.ev(e.result, scope) if e.result is not None else TupleVal(())


@expression_rule(ast.Lambda)
def _lambda(el, e, env):
    return LambdaVal(e, env)


@expression_rule(ast.TupleLit)
def _tuple(el, e, env):
    return TupleVal(tuple(el.ev(x, env) for x in e.elems), e.span)


@expression_rule(ast.ArrayLit)
def _array(el, e, env):
    if not e.elems:
        raise d.error(d.SHAPE, "an empty array literal has no type", e.span)
    elems = [el.ev(x, env) for x in e.elems]
    shapes = {_literal_shape(x) for x in elems}
    if len(shapes) != 1:
        raise d.error(d.SHAPE, "array literal is not rectangular: its elements have shapes "
                      + ", ".join(sorted(map(str, shapes))), e.span)
    if all(isinstance(x, Weak) for x in elems):
        kinds = {x.kind for x in elems}
        if len(kinds) > 1:
            raise d.error(d.TYPE, "array literal mixes " + " and ".join(sorted(kinds)), e.span)
        return Weak(np.stack([x.value for x in elems]), kinds.pop(), e.span)
    # Literal rows stay untyped until unify gives them the typed rows' dtype.
    typed = scalar_ops.unify([x if isinstance(x, Weak) else tensors.whole(x, e.span) for x in elems], e.span)
    if any(isinstance(x, Weak) for x in typed):
        typed = [scalar_ops.materialize(x, None, e.span) for x in typed]
    if all(isinstance(x, Const) for x in typed):
        return Const(np.stack([x.array for x in typed]), span=e.span)
    return Stack(tuple(typed), span=e.span)


def _literal_shape(x):
    """Shapes as strings, so a literal row `[0.0, 1.0]` matches a typed row `[1.0, dt]`."""
    if isinstance(x, Weak):
        return tuple(repr(s) for s in x.value.shape)
    if isinstance(x, Value):
        return tuple(repr(s) for s in x.shape)
    if isinstance(x, PartialRead):
        return tuple(repr(s) for s in x.base.shape[len(x.subs):])
    return (describe(x),)


@expression_rule(ast.Range)
def _range(el, e, env):
    lo, hi = definitions.range_bounds(el, e, env)
    var = IndexVar("r", lo.lin, hi.lin - lo.lin, span=e.span)
    return Generic((var,), IndexRef(var), span=e.span)


@expression_rule(ast.Reduction)
def _reduction(el, e, env):
    return definitions.reduction(el, e, env)


@expression_rule(ast.Where)
def _where(el, e, env):
    scope = env.child()
    guard = definitions.where_clauses(el, e.clauses, scope)
    body = el.ev(e.body, scope)
    if guard is None:
        return body
    zero = Weak(np.asarray(0), "int") if _kind(body) == "int" else Weak(np.asarray(0.0), "float")
    return select(el, guard, body, zero, e.span)


def _kind(v) -> str:
    if isinstance(v, Weak):
        return v.kind
    return scalar_ops.kind_of(v.dtype) if isinstance(v, Value) else "float"


@expression_rule(ast.Comprehension)
def _comprehension(el, e, env):
    if e.filters:
        raise d.error(d.UNSUPPORTED, "a comprehension filter makes the length data-dependent, "
                      "which compiled programs do not support yet", e.filters[0].span)
    scope, vars_ = env.child(), []
    for g in e.generators:
        var, element = _generator(el, g, env)
        vars_.append(var)
        scope.bind(g.def_id, element)
    body = scalar_ops.materialize(el.ev(e.body, scope), None, e.body.span)
    if not isinstance(body, Value) or body.rank:
        raise d.error(d.SHAPE, "a comprehension element must be a scalar", e.body.span)
    return Generic(tuple(vars_), body, span=e.span)


def _generator(el, g: ast.Generator, env):
    if isinstance(g.iterable, ast.Range):
        lo, hi = definitions.range_bounds(el, g.iterable, env)
        var = IndexVar(g.name, lo.lin, hi.lin - lo.lin, span=g.span)
        return var, IndexRef(var, span=g.span)
    arr = tensors.whole(el.ev(g.iterable, env), g.span)
    if not isinstance(arr, Value) or arr.rank == 0:
        raise d.error(d.TYPE, f"cannot iterate over {describe(arr)}", g.iterable.span)
    var = IndexVar(g.name, Lin(0), arr.shape[0], span=g.span)
    return var, tensors.read(arr, [IndexRef(var)], g.span, el.state, "")


@expression_rule(ast.Derivative)
def _derivative(el, e, env):
    return derivatives.request(el, e, env)


@expression_rule(ast.Diff)
def _differential(el, e, env):
    try:
        return env.lookup(differential_key(getattr(e.target, "def_id", None)))
    except KeyError:
        raise d.error(d.UNSUPPORTED, "a bare differential `@x` outside a derivative rule `@fn`",
                      e.span, hint="write the derivative as a quotient, e.g. `@loss / @w`") from None
