"""Elaboration rules for expressions, one per AST node type (`RULES`, which elaborate installs into
the evaluator)."""
from __future__ import annotations

import dataclasses

import numpy as np

from einc import diagnostics as d
from einc.ir import affine
from einc.ir.nodes import Const, Generic, IndexRef, IndexVar, Reduce, Stack, Value, free_vars
from einc.ir.types import BOOL, Lin
from einc.semantics.forms import definitions, dynamic_length, recurrences, types, unrolled_reductions
from einc.semantics import derivatives
from einc.semantics.core import scalar_ops, sequences, tensors
from einc.semantics.forms.comprehensions import Reduced, comprehension
from einc.semantics.core.bounds import check_reads
from einc.semantics.forms.derivative_rules import differential_key
from einc.semantics.evaluator import rule_decorator
from einc.semantics.core.modules import stdlib_modules_defining
from einc.semantics.forms.membership import in_range, membership
from einc.semantics.forms.patterns import match
from einc.semantics.forms.pointwise import cast_to, elementwise, select, unary_plus
from einc.semantics.forms.printing import format_parts, interpolate, message, print_call
from einc.semantics.forms.stacking import stack
from einc.semantics.core.untaken_branches import note_reads_of_skipped, value_of_skipped
from einc.semantics.core.values import BuiltinVal, LambdaVal, PartialRead, StrVal, TupleVal, Weak, describe
from einc.syntax import ast

BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem", "**": "pow",
          "&&": "and", "||": "or", "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt",
          ">=": "ge"}

RULES: dict = {}            # AST node type -> rule(el, node, env)
expression_rule = rule_decorator(RULES)


@expression_rule(ast.IntLit, ast.FloatLit, ast.BoolLit)
def _literal(el, e, env):
    kind = {ast.IntLit: "int", ast.FloatLit: "float", ast.BoolLit: "bool"}[type(e)]
    value = Weak(np.asarray(e.value), kind, e.span)
    suffix = getattr(e, "suffix", None)
    if suffix:
        return scalar_ops.fixed(scalar_ops.materialize(value, types.BY_NAME[suffix], e.span))
    return value


@expression_rule(ast.StrLit)
def _string(el, e, env):
    parts, args = format_parts(el, e, env)
    return StrVal(interpolate(parts, args, e.span), e.span)


@expression_rule(ast.Name, ast.Path)
def _name(el, e, env):
    name = e.name if isinstance(e, ast.Name) else "::".join(e.segments)
    return el.lookup(e.def_id, name, e.span, env)


@expression_rule(ast.Unary)
def _unary(el, e, env):
    if e.op == "-" and isinstance(e.operand, (ast.IntLit, ast.FloatLit)) \
            and getattr(e.operand, "suffix", None) and not e.operand.suffix.startswith("u"):
        # `-128i8` is one literal, as in Rust: the type's minimum fits where 128i8 would not
        # (`-1u32` stays the negation of 1u32, which wraps)
        return _literal(el, dataclasses.replace(e.operand, value=-e.operand.value, span=e.span), env)
    operand = el.ev(e.operand, env)
    if e.op == "+":
        return unary_plus(operand, e.span)
    return elementwise(el, "neg" if e.op == "-" else "not", [operand], e.span)


@expression_rule(ast.Binary)
def _binary(el, e, env):
    first, chain = ast.left_chain(e)      # `a + b + .. + z` in a loop, however long
    value = el.ev(first, env)
    for binary in chain:
        value = _apply_binary(el, binary, value, env)
    return value


def _apply_binary(el, e, left, env):
    """`left <op> e.right`, with `left` already elaborated."""
    if e.op == "in" and isinstance(e.right, ast.Range):
        return in_range(el, left, e.right, env, e.span)
    # the right side of `&&` / `||` counts only where the left lets it, as an `if`'s branch:
    # `j > 0 && r[j - 1]` reads r[-1] nowhere that matters (its read is clamped, never E005)
    conditional = e.op in ("&&", "||")
    el.state.guard_depth += conditional
    try:
        right = _right_side(el, e, left, env) if conditional else el.ev(e.right, env)
    finally:
        el.state.guard_depth -= conditional
    if any(sequences.is_sequence(v) or sequences.is_picked(v) for v in (left, right)):
        # strings and lists are build-time values: modes such as "nearest" compare at build time
        return sequences.noted(sequences.binary(e.op, left, right, e.span), el.state)
    if e.op == "in":
        return membership(el, left, right, e.span)
    if e.op in ("&&", "||"):
        left = scalar_ops.materialize(left, BOOL, e.left.span) if isinstance(left, Weak) else left
    return elementwise(el, BINARY[e.op], [left, right], e.span)


def _right_side(el, e, left, env):
    """The right side of `&&` / `||`, elaborated as an `if`'s branch taken where the left is
    true / false: its run-time checks (a data range's) apply only there."""
    if not (isinstance(left, Value) and left.rank == 0 and left.dtype == BOOL):
        return el.ev(e.right, env)
    return _in_branch(el, (left, e.op == "&&"), e.right, env)


@expression_rule(ast.Call)
def _call(el, e, env):
    fn = el.ev(e.func, env)
    if getattr(fn, "name", None) == "print":
        return print_call(el, e.args, env, e.span)
    if isinstance(fn, BuiltinVal) and fn.name == "assert" and len(e.args) == 2 and isinstance(e.args[1], ast.StrLit):
        return el.call(fn, [el.ev(e.args[0], env), message(el, e.args[1], env)], e.span)
    if isinstance(fn, BuiltinVal) and fn.name in ("len", "sum", "max", "min") and len(e.args) == 1 and \
            isinstance(e.args[0], ast.Comprehension):
        return _reduced_comprehension(el, fn.name, e.args[0], env, lambda v: el.call(fn, [v], e.span))
    return el.call(fn, [el.ev(a, env) for a in e.args], e.span)


def _reduced_comprehension(el, name: str, comp: ast.Comprehension, env, whole):
    """`len([..])`, `sum([..])`, `max([..])`, `min([..])` and `[..].length`, reduced at once: a
    filter over run-time data may keep a different number of elements per point of an enclosing
    definition, or per step of a recurrence. `whole` reduces the elements where they are one array."""
    elements = comprehension(el, comp, env, reduced_by=name)
    return elements.value if isinstance(elements, Reduced) else whole(elements)


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
    if e.name == "length" and isinstance(e.obj, ast.Comprehension):
        return _reduced_comprehension(el, "len", e.obj, env, lambda v: el.call_builtin("len", [v], e.span))
    obj = el.ev(e.obj, env)
    if e.name.isdigit() and tensors.is_array(obj):
        # `t.0` of a row of a tuple array, [(r, c) | ..], which stores tuples as rows
        return tensors.read(obj, [Weak(np.asarray(int(e.name)), "int", e.span)], e.span, el.state, "")
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
    point = _point_of_current_row(el, e, env)
    if point is not None:
        return point
    base = el.ev(e.base, env)
    subs = _subscripts(el, e, env)
    if sequences.is_sequence(base) or sequences.is_picked(base):
        return sequences.index(base, subs, e.span)
    if isinstance(base, recurrences.RecState):
        return recurrences.state_read(el, base, [tensors.subscript(x, e.span) for x in subs], e.span)
    result = tensors.read(base, subs, e.span, el.state, _source_text(el, e))
    if isinstance(result, Value) and not el.state.frames and not free_vars(result):
        check_reads(result, None, el.state, e.span)
        dynamic_length.check_fixed_read(el, result, _source_text(el, e))
    return result


def _subscripts(el, e: ast.Index, env) -> list:
    subs = []
    for s in e.subscripts:
        if isinstance(s, ast.RestIndex):
            subs += [env.lookup(v.def_id) for v in el.rest_slots.get(s.def_id, [])]
        elif isinstance(s, ast.FullSlice):
            subs.append(None)      # `:`, which only a derivative accepts (tensors.read)
        else:
            subs.append(el.ev(s, env))
    return subs


def _point_of_current_row(el, e: ast.Index, env):
    """`x[t - c][i]` (c >= 0) inside x's recurrence: the point `x[t - c, i]`. Read as a row
    first it was a tensor of the step: at the current step one that reads x before its points
    exist, and beside a same-step point read (`x[t, i - 1]`) a form no target lowers (both
    E011); None for any other read."""
    inner = e.base
    if not (isinstance(inner, ast.Index) and isinstance(inner.base, ast.Name) and len(inner.subscripts) == 1):
        return None
    if any(isinstance(s, (ast.RestIndex, ast.FullSlice)) for s in [*inner.subscripts, *e.subscripts]):
        return None
    state = el.ev(inner.base, env)
    if not isinstance(state, recurrences.RecState):
        return None
    step = tensors.subscript(el.ev(inner.subscripts[0], env), inner.span)
    lin = affine.affine_of(step)
    if lin is None or lin.terms != {state.step: 1} or lin.const > 0:
        return None
    rest = [tensors.subscript(x, e.span) for x in _subscripts(el, e, env)]
    return recurrences.state_read(el, state, [step] + rest, e.span)


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
        if isinstance(value, PartialRead):
            # a row of an enclosing definition (`x[i] as [f64]` inside `let y[i, j] = ..`) is
            # converted point by point, as arithmetic on it is, not read whole
            if value.dtype != dtype:
                value = tensors.lift(lambda x: cast_to(el, x, dtype, e.span), [value], e.span, el.state,
                                     hint_dtypes=False)
        else:
            value = tensors.whole(value, e.span)
            if isinstance(value, Value) and value.dtype != dtype:
                value = cast_to(el, value, dtype, e.span)
        # `as [f32]` converts the elements of an array of any rank; written dims are checked
        target = ast.ArrayType(e.to.elem, None, span=e.to.span) if e.to.elem_only else e.to
        return types.annotate(value, target, el, e.span)
    if not isinstance(e.to, ast.ScalarType):
        raise d.error(d.TYPE, "`as` converts to a number type", e.to.span)
    return cast_to(el, value, types.scalar_dtype(e.to), e.span)


@expression_rule(ast.If)
def _if(el, e, env):
    cond = el.ev(e.cond, env)
    constant = _constant_bool(cond)
    if constant is not None:
        branch, skipped = (e.then, e.orelse) if constant else (e.orelse, e.then)
        tried = note_reads_of_skipped(el, skipped, env)
        value = el.ev(branch, env) if branch is not None else TupleVal(())
        if e.orelse is None and (_plainly_a_value(e.then) or not _is_unit(value)):
            raise d.error(d.TYPE, "an `if` without `else` has no value, but its block gives one",
                          _tail(e.then).span, hint="add an `else` branch, or end the block with `;`")
        if isinstance(value, Weak) and value.rank == 0 and not isinstance(cond, (Weak, Const)):
            value = _typed_as_skipped(el, value, skipped, env, tried)
        return value
    if e.orelse is None:
        raise d.error(d.TYPE, "an `if` used as a value needs an `else`", e.span)
    test = scalar_ops.materialize(cond, BOOL, e.cond.span)
    el.state.guard_depth += 1
    try:
        a = _in_branch(el, (test, True), e.then, env)
        b = _in_branch(el, (test, False), e.orelse, env)
    finally:
        el.state.guard_depth -= 1
    return select(el, test, a, b, e.span)


def _in_branch(el, taken: tuple, branch, env):
    """`branch` elaborated where its `if`'s test is as `taken` says (test, value): the run-time
    checks made in it apply only there."""
    el.state.branch_conditions.append(taken)
    try:
        return el.ev(branch, env)
    finally:
        el.state.branch_conditions.pop()


def _typed_as_skipped(el, literal: Weak, skipped, env, tried):
    """A literal an index condition picks (`if k > 0 { x[k] } else { 0.0 }` where k is always 0)
    is typed as under a run-time condition, beside the skipped branch (`tried`: its value if it
    was elaborated already): which branch the ranges pick must not change a program's types."""
    other = value_of_skipped(el, skipped, env, tried)
    if other is None:
        return literal
    try:
        return scalar_ops.typed_beside(literal, other, literal.span)
    except d.CompileError:
        return literal                # the branches disagree: the skipped one is not the program's


def _is_unit(value) -> bool:
    return isinstance(value, TupleVal) and not value.items


def _tail(branch):
    return branch.result if isinstance(branch, ast.Block) and branch.result is not None else branch


def _plainly_a_value(branch) -> bool:
    """Whether a block ends in an expression that is a value whatever it computes (a literal,
    a name, arithmetic): a skipped branch is not evaluated, so calls and nested control flow,
    which may give `()`, are left to the branch taken."""
    tail = branch.result if isinstance(branch, ast.Block) else branch
    return tail is not None and not isinstance(tail, (ast.Call, ast.MethodCall, ast.If, ast.Match, ast.Block))


def _constant_bool(v):
    """A condition known at build time: a constant, or an index comparison that every point of
    the ranges decides alike (`i < len(a)` for i in 0..1 with `a` empty: the read `a[i]` it
    guards never runs, so it is not built, nor checked against a's size)."""
    if isinstance(v, Weak) and v.kind == "bool" and v.rank == 0:
        return bool(v.value)
    if isinstance(v, Const) and v.array.ndim == 0 and v.array.dtype == np.bool_:
        return bool(v.array)
    return affine.decided(v) if isinstance(v, Value) else None


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
    return stack([el.ev(x, env) for x in e.elems], e.span, jagged_ok=True)


@expression_rule(ast.Range)
def _range(el, e, env):
    lo, hi = definitions.range_bounds(el, e, env)
    var = IndexVar("r", lo.lin, definitions.extent(lo, hi), span=e.span)
    return Generic((var,), IndexRef(var), span=e.span)


@expression_rule(ast.Reduction)
def _reduction(el, e, env):
    effects = len(el.ir.effects)
    try:
        return definitions.reduction(el, e, env)
    except d.CompileError as err:
        if err.diagnostics[0].code != d.UNSUPPORTED:
            raise
        del el.ir.effects[effects:]
        result = _unrolled_reduction(el, e, env)
        if result is None:
            raise
        return result


def _unrolled_reduction(el, e, env):
    """The reduction point by point at build time (a body that reads a string at its index);
    None when that fails too, and the kernel's error stands."""
    effects = len(el.ir.effects)
    try:
        return unrolled_reductions.unrolled(el, e, env)
    except d.CompileError:
        del el.ir.effects[effects:]
        return None


@expression_rule(ast.Where)
def _where(el, e, env):
    scope = env.child()
    guard = definitions.where_clauses(el, e.clauses, scope)
    body = el.ev(e.body, scope)
    if guard is None:
        return body
    return select(el, guard, body, _zero(_kind(body)), e.span)


def _zero(kind: str) -> Weak:
    """What a point a guard filters out holds: 0, 0.0 or false."""
    return Weak(np.asarray({"int": 0, "float": 0.0, "bool": False}[kind]), kind)


def _kind(v) -> str:
    if isinstance(v, Weak):
        return v.kind
    return scalar_ops.kind_of(v.dtype) if isinstance(v, Value) else "float"


@expression_rule(ast.Comprehension)
def _comprehension(el, e, env):
    return comprehension(el, e, env)


@expression_rule(ast.Derivative)
def _derivative(el, e, env):
    return derivatives.request(el, e, env)


@expression_rule(ast.Diff)
def _differential(el, e, env):
    """In a derivative rule `@fn`, an argument's differential; elsewhere the tangent `@y`."""
    try:
        return env.lookup(differential_key(getattr(e.target, "def_id", None)))
    except KeyError:
        return derivatives.tangent(el, e, env)
