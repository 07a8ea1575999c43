"""Parser: every construct of LANGUAGE.md becomes the expected AST, with exact spans and E001 errors."""
import random

import pytest

from einc.diagnostics import CompileError, Span
from einc.syntax import ast
from einc.syntax.parser import parse


def items(src):
    return parse(src, "t.ein").items


def value(src):
    """The value of the single `let x = ...;` in src."""
    (stmt,) = items(src)
    return stmt.value


def expr(text):
    return value(f"let x = {text};")


def syntax_error(src):
    with pytest.raises(CompileError) as info:
        parse(src, "t.ein")
    (diag,) = info.value.diagnostics
    assert diag.code == "E001"
    return diag


# ---------------------------------------------------------------- statements


def test_let_forms():
    plain, typed, inp, const, tup = items(
        "let x = 1; let y: f64 = 3.14; let A: [f32; ?, 8]; const K: i32 = 3; let (a, b) = t;")
    assert isinstance(plain, ast.Let) and plain.pattern.name == "x" and plain.value.value == 1
    assert typed.type.name == "f64" and typed.value.value == 3.14
    assert inp.value is None and inp.type.elem.name == "f32"
    assert [(d.size, d.name) for d in inp.type.dims] == [(None, None), (8, None)]
    assert const.is_const and const.pattern.name == "K"
    assert isinstance(tup.pattern, ast.TuplePat) and [p.name for p in tup.pattern.elems] == ["a", "b"]


def test_pub_const():
    (c,) = items("pub const PI = 3.14;")
    assert c.is_const and c.is_pub


def test_indexed_definitions():
    c, y0, y1, u, r = items(
        "let C[i, j] = A[i, j];"
        "let y[0] = a;"
        "let y[t in 1..T] = y[t - 1] + 1;"
        "let u[0, i in 0..=41] = 0.0;"
        "let z[..b, c] = x[..b, c];")
    assert isinstance(c, ast.IndexedLet) and [s.name for s in c.slots] == ["i", "j"]
    assert isinstance(y0.slots[0], ast.IndexLiteral) and y0.slots[0].value == 0
    rng = y1.slots[0].range
    assert y1.slots[0].name == "t" and rng.lo.value == 1 and rng.hi.name == "T" and not rng.inclusive
    assert isinstance(u.slots[0], ast.IndexLiteral) and u.slots[1].range.inclusive
    assert isinstance(r.slots[0], ast.RestIndex) and r.slots[0].name == "b"
    assert isinstance(r.value.subscripts[0], ast.RestIndex)


SLOTS = "an index name, a range `i in a..b`, an integer literal or `..rest` in a definition's brackets"


@pytest.mark.parametrize("src, found, col", [
    ("let u[t in 1..50, N - 1] = 0.0;", "'-'", 21),      # after an index name
    ("let u[t in 0..5, 2 * 3] = 0.0;", "'*'", 20),       # after a literal
    ("let u[t, (N - 1)] = 0.0;", "'('", 10),             # where a slot starts
    ("let u[f(1)] = 0.0;", "'('", 8),
    ("let u[..r + 1] = 0.0;", "'+'", 11),                # after a rest
])
def test_a_computed_point_in_a_definitions_brackets_says_what_they_hold(src, found, col):
    diag = syntax_error(src)
    assert (diag.message, diag.span.col) == (f"expected {SLOTS}, found {found}", col)
    assert "`i in N - 1..N`" in diag.hint


def test_only_a_definitions_brackets_say_what_they_hold():
    assert syntax_error("let u[t in 0..5 6] = 1;").message == "expected ',', ']' or an operator, found '6'"
    assert syntax_error("let y = [1, 2 3];").hint == ""       # not in a definition's brackets
    assert syntax_error("let y: [f32; N - 1];").hint == ""     # nor in a type's


@pytest.mark.parametrize("text, value", [
    ("1_000_000", 1000000), ("0x1F", 31), ("0xff_ff", 65535), ("0o17", 15), ("0b1010", 10), ("0x_E5", 229),
    ("1_000i64", 1000), ("1_000_u16", 1000),
])
def test_integer_literals_take_rusts_forms(text, value):
    assert expr(text).value == value


@pytest.mark.parametrize("text, value", [("1_000.5", 1000.5), ("1e1_0", 1e10), ("2_f32", 2.0), ("6.02_2e2_3", 6.022e23)])
def test_float_literals_take_underscores_between_digits(text, value):
    assert expr(text).value == value


@pytest.mark.parametrize("src", ["let a = 0x;", "let a = 0b102;", "let a = 0x_;"])
def test_a_radix_prefix_without_its_digits_is_E001(src):
    syntax_error(src)


def test_a_where_after_a_reduction_in_an_argument_says_where_it_goes():
    # Bellman-Ford's relaxation `min(d[v], min[u](d[u] + W[u, v]) where d[u] < inf)` was a bare E001.
    diag = syntax_error("let y = min(1.0, min[u](d[u]) where d[u] < 9.0);")
    assert (diag.message, diag.span.col) == ("expected ')' or ',', found 'where'", 31)
    assert "`min[u](d[u] + w[u] where d[u] < inf)`" in diag.hint


def test_a_where_after_a_reduction_inside_parentheses_is_the_reductions():
    # a Jacobi step `(b[i] - sum[j](A[i, j] * x[j]) where j != i) / A[i, i]` was an E001: the
    # clause is the reduction's (LANGUAGE.md: a `where` attaches to a reduction), as `sum[j](.. where j != i)`
    (d,) = items("let x1[i] = (b[i] - sum[j](A[i, j] * x[j]) where j != i) / A[i, i];")
    red = d.value.left.right
    assert isinstance(red, ast.Reduction) and d.wheres == [] and len(red.wheres) == 1
    assert isinstance(red.wheres[0], ast.WhereGuard) and red.wheres[0].cond.op == "!="
    red = expr("(1.0 - sum[i](x[i] * m) where m = 2.0) * 3.0").left.right
    assert [w.name for w in red.wheres] == ["m"]
    assert isinstance(expr("(a, b)"), ast.TupleLit)


@pytest.mark.parametrize("src, col", [("let y[k] = (x[k] * 2.0 where k > 0) / 2.0;", 30),
                                      ("let y = ((sum[i](x[i])) where x[0] > 0.0);", 31),
                                      ("let y[k] = (sum[i](x[i]) where k > 0) + 1.0;", 32)])
def test_a_where_inside_parentheses_following_no_reduction_it_filters_says_how_to_write_it(src, col):
    diag = syntax_error(src)
    assert diag.message == "a `where` inside parentheses must follow a reduction whose terms it filters or binds"
    assert diag.span.col == col and "`sum[j](A[i, j] * x[j] where j != i)`" in diag.hint


@pytest.mark.parametrize("src, keyword", [("lett x = 1.0;", "let"), ("let a = 1.0;\nfun f(x) { x }", "fn"),
                                          ("cnst k = 2;", "const")])
def test_a_misspelt_statement_keyword_is_named_in_the_hint(src, keyword):
    # `lett x = 1.0;` said only "expected '::', ';', 'where' or an operator, found 'x'"
    assert syntax_error(src).hint == f"a statement starts with a keyword: did you mean `{keyword}`?"
    assert syntax_error("let a = 1.0 +;").hint == ""


@pytest.mark.parametrize("src, head", [("y[i] = x[i] * 2.0;", "y[i]"), ("let a = 1.0;\nb = a * 2.0;", "b"),
                                       ("fn f(a) { b = a; b }", "b")])
def test_a_definition_without_let_says_so_in_the_hint(src, head):
    # `y[i] = x[i] * 2.0;` said only "expected ';', 'where' or an operator, found '='"
    assert syntax_error(src).hint == f"a definition starts with `let`: `let {head} = ..`"
    assert syntax_error("let a = 1.0;\nlet b = a = 2.0;").hint == ""


@pytest.mark.parametrize("src, said", [
    ("fn f(x) {\n  let y = x * 2.0;\n  return y;\n}", "no `return`"),
    ("let mut a = 1;", "no `mut`"), ("for i in 0..3 { i }", "no loops"),
    ("let a = 1;\nwhile a < 3 { a }", "no loops"), ("let v = [1, 2, 3];\nlet w = v[0:2];", "no `:` slices"),
])
def test_rusts_constructs_einlang_lacks_are_named_in_the_hint(src, said):
    # LANGUAGE.md section 6: no `return`, loops or mutation; section 2: no `:` slices. Each said
    # only "expected .., found .." at the token after the word
    assert said in syntax_error(src).hint
    assert syntax_error("let returned = 1;\nlet formula = returned +;").hint == ""


def test_type_parameters_of_a_function_say_that_untyped_parameters_are_generic():
    # Rust's `fn clamp_to<T>(x: T, ..)` was a bare "expected '(', found '<'".
    diag = syntax_error("fn clamp_to<T>(x: T, lo: T) -> T { x }")
    assert (diag.message, diag.span.col) == ("expected '(', found '<'", 12)
    assert "untyped parameter is generic" in diag.hint
    assert syntax_error("let a = 1 <;").hint == ""


def test_a_tuple_of_arrays_defined_by_one_recurrence_says_to_define_one_per_component():
    # `let (a, b)[t in ..] = (.., ..);` was a bare "expected ':' or '=', found '['"
    diag = syntax_error("let a[0] = 1.0;\nlet b[0] = 2.0;\nlet (a, b)[t in 1..5] = (a[t - 1] + b[t - 1], a[t - 1]);")
    assert (diag.message, diag.span.line, diag.span.col) == ("expected ':' or '=', found '['", 3, 11)
    assert diag.hint.startswith("an indexed definition names one array: define one per component")


def test_a_rest_index_in_a_reductions_brackets_parses_beside_named_indices():
    # thesis: "the same expansion machinery is used for reduction rests such as `sum[..batch](...)`"
    (_, t) = items("let x: [f32; 2, 3];\nlet t = sum[..b, k in 0..3](x[..b, k]);")
    rest, k = t.value.indices
    assert isinstance(rest, ast.RestIndex) and rest.name == "b"
    assert isinstance(k, ast.IndexVar) and k.name == "k"


def test_where_on_indexed_let_goes_to_the_definition():
    (d,) = items("let e[i in 0..N] = i * i where i % 2 == 0, z = 1;")
    assert isinstance(d.value, ast.Binary)
    guard, bind = d.wheres
    assert isinstance(guard, ast.WhereGuard) and guard.cond.op == "=="
    assert isinstance(bind, ast.WhereBind) and bind.name == "z"


def test_where_directly_after_reduction_goes_to_the_reduction():
    (d,) = items("let Y[o, oh] = sum[kh](X[ih] * W[o, kh]) where ih = oh + kh, ih < H;")
    assert d.wheres == []
    assert [type(w).__name__ for w in d.value.wheres] == ["WhereBind", "WhereGuard"]
    red = value("let m = a + max[k in 0..i + 1](x[k]) where x[k] > 0;").right
    assert isinstance(red, ast.Reduction) and len(red.wheres) == 1


def test_a_where_binding_read_outside_the_trailing_reduction_is_the_statements():
    # A softmax `exp(x[i] - m) / sum[j](exp(x[j] - m)) where m = ..` gave `m` to the sum only: E003.
    (d,) = items("let p[i] = exp(x[i] - m) / sum[j](exp(x[j] - m)) where m = max[j](x[j]);")
    assert [w.name for w in d.wheres] == ["m"] and d.value.right.wheres == []
    (d,) = items("let q[i] = sum[j](x[j] - m) where m = 2.0;")      # read only inside: the sum's
    assert d.wheres == [] and d.value.wheres[0].name == "m"


def test_a_definitions_guard_naming_nothing_its_trailing_reduction_reads_is_the_definitions():
    # One of several guarded clauses, `sum[b](f[b] * n[t - 1, b]) where a == 0`, gave its guard to
    # the sum: the clause then defined every point and overlapped the others (E004).
    (d,) = items("let n[t in 1..5, a in 0..4] = sum[b](f[b] * n[t - 1, b]) where a == 0;")
    assert len(d.wheres) == 1 and d.value.wheres == []
    (d,) = items("let H[i in 1..4, j in 0..4] = b[i + j] + sum[k in 0..i + 1](H[k, j - 1]) where j > 0;")
    assert d.wheres == [] and len(d.value.right.wheres) == 1      # j is read inside: the sum's


def test_where_after_other_expression_in_plain_let_is_a_where_node():
    v = value("let a = x * 2 where x = 3;")
    assert isinstance(v, ast.Where) and v.clauses[0].name == "x"
    # parentheses hide the reduction: the where is the definition's
    (d,) = items("let s[i] = (sum[k](x[k])) where i > 0;")
    assert d.value.wheres == [] and len(d.wheres) == 1


def test_functions_and_diff_rules():
    f, g, rule = items("fn f(a, b: f32) -> f32 { a + b } pub fn g() { 1 } @fn f(x) { @x * 2.0 }")
    assert isinstance(f, ast.FnDef) and [p.name for p in f.params] == ["a", "b"]
    assert f.params[1].type.name == "f32" and f.ret.name == "f32" and not f.is_pub
    assert f.body.result.op == "+" and g.is_pub and g.params == []
    assert isinstance(rule, ast.DiffRule) and rule.name == "f"
    assert isinstance(rule.body.result.left, ast.Diff)


def test_use_forms():
    u1, u2, u3, u4, u5 = items(
        "use a::b::c; use a::b as m; use a::b::{x, y as z}; use a::b::*; pub use basic::*;")
    assert u1.path == ["a", "b", "c"] and u1.items is None and u1.alias is None
    assert u2.path == ["a", "b"] and u2.alias == "m"
    assert [(i.name, i.alias) for i in u3.items] == [("x", None), ("y", "z")]
    assert u4.items[0].name == "*" and u5.is_pub and u5.path == ["basic"]


def test_use_relative_paths():
    (u,) = items("use super::m::{f};")
    assert u.path == ["super", "m"]


def test_modules():
    m1, m2, m3 = items("mod a; mod b { fn f() { 1 } } pub mod c;")
    assert m1.body is None and m1.name == "a"
    assert isinstance(m2.body[0], ast.FnDef) and m3.is_pub


def test_block_statements_and_result():
    blk = value("let x = { let a = 1; fn h() { 2 } a + h() };")
    assert isinstance(blk, ast.Block) and len(blk.stmts) == 2 and blk.result.op == "+"
    assert value("let x = { print(1); };").result is None


# ---------------------------------------------------------------- expressions


@pytest.mark.parametrize("text, shape", [
    ("a || b && c", ("||", "a", ("&&", "b", "c"))),
    ("a == b < c", ("==", "a", ("<", "b", "c"))),
    ("a + b * c", ("+", "a", ("*", "b", "c"))),
    ("a - b - c", ("-", ("-", "a", "b"), "c")),
    ("a ** b ** c", ("**", "a", ("**", "b", "c"))),
    ("-x ** 2", ("**", ("-", "x"), 2)),          # LANGUAGE.md 2: prefix binds tighter
    ("-(x ** 2)", ("-", ("**", "x", 2))),
    ("-x ** -y ** 2", ("**", ("-", "x"), ("**", ("-", "y"), 2))),
    ("!a ** b", ("**", ("!", "a"), "b")),
    ("2 ** -x", ("**", 2, ("-", "x"))),
    ("--x", ("-", ("-", "x"))),                 # a prefix takes a prefixed operand, spaced or not
    ("- -x + 1", ("+", ("-", ("-", "x")), 1)),
    ("a - -x", ("-", "a", ("-", "x"))),
    ("!a && b", ("&&", ("!", "a"), "b")),
    ("v in arr && ok", ("&&", ("in", "v", "arr"), "ok")),
    ("a % b / c", ("/", ("%", "a", "b"), "c")),
])
def test_operator_precedence(text, shape):
    assert _shape(expr(text)) == shape


def _shape(node):
    if isinstance(node, ast.Binary):
        return (node.op, _shape(node.left), _shape(node.right))
    if isinstance(node, ast.Unary):
        return (node.op, _shape(node.operand))
    if isinstance(node, ast.Name):
        return node.name
    return node.value


def test_cast_binds_tighter_than_binary_operators():
    e = expr("x as f32 * 2")
    assert e.op == "*" and isinstance(e.left, ast.Cast) and e.left.to.name == "f32"
    c = expr("load_npy(p) as [f32; 8, 1]")
    assert [d.size for d in c.to.dims] == [8, 1]


def test_membership_with_range():
    e = expr("i in 0..n + 1")
    assert e.op == "in" and isinstance(e.right, ast.Range) and e.right.hi.op == "+"


def test_pipelines_desugar_to_calls():
    e = expr("x |> f |> g(a)")
    assert isinstance(e, ast.Call) and e.func.name == "g"
    assert e.args[0].func.name == "f" and e.args[0].args[0].name == "x" and e.args[1].name == "a"


def test_calls_methods_members_paths():
    call, meth, mem, tup, path = (expr(t) for t in ("f(1, 2)", "x.sqrt()", "x.shape", "t.0",
                                                     "m::sqrt(4.0)"))
    assert isinstance(call, ast.Call) and len(call.args) == 2
    assert isinstance(meth, ast.MethodCall) and meth.method == "sqrt" and meth.obj.name == "x"
    assert isinstance(mem, ast.Member) and mem.name == "shape"
    assert isinstance(tup, ast.Member) and tup.name == "0"
    assert isinstance(path.func, ast.Path) and path.func.segments == ["m", "sqrt"]
    assert expr("crate::x").segments == ["crate", "x"]
    assert expr("super::x").segments == ["super", "x"]
    assert expr("self::x").segments == ["self", "x"]


def test_indexing():
    e = expr("x[2 * i + 1, j]")
    assert isinstance(e, ast.Index) and e.subscripts[0].op == "+" and e.subscripts[1].name == "j"
    assert isinstance(expr("x[..b, i]").subscripts[0], ast.RestIndex)


def test_literals():
    assert isinstance(expr("1"), ast.IntLit) and expr("1").suffix is None
    assert expr("3i64").suffix == "i64" and expr("3i64").value == 3
    assert isinstance(expr("1.0"), ast.FloatLit)
    assert expr("1e6").value == 1e6 and expr("1.0e-3").value == 1e-3
    f = expr("2.5f64")
    assert f.value == 2.5 and f.suffix == "f64"
    assert expr("true").value is True and expr("false").value is False


def test_arrays_tuples_parens_comprehensions():
    assert len(expr("[[1.0, 2.0], [3.0, 4.0]]").elems) == 2
    assert expr("[]").elems == []
    assert len(expr("(a, b)").elems) == 2 and len(expr("(a,)").elems) == 1
    assert isinstance(expr("(a)"), ast.Name)
    c = expr("[f(i) | i in 0..N]")
    assert isinstance(c, ast.Comprehension) and c.generators[0].name == "i"
    assert isinstance(c.generators[0].iterable, ast.Range) and c.filters == []
    c2 = expr("[x | x in xs, x > 0]")
    assert c2.generators[0].iterable.name == "xs" and c2.filters[0].op == ">"


def test_comprehension_clauses_keep_their_order():
    c = expr("[v | v in xs, v > 0, w in ys, v < w]")
    kinds = [type(x).__name__ for x in c.clauses]
    assert kinds == ["Generator", "Binary", "Generator", "Binary"]


def test_unary_plus_string_patterns_and_integer_suffixes():
    plus = expr("+4")
    assert isinstance(plus, ast.Unary) and plus.op == "+" and plus.operand.value == 4
    assert [expr(f"3{s}").suffix for s in ("i8", "i16", "u8", "u16", "u32", "u64")] == \
        ["i8", "i16", "u8", "u16", "u32", "u64"]
    m = expr('match k { "relu" => 1, -2 => 2, _ => 3 }')
    assert m.arms[0].pattern.value == "relu" and m.arms[1].pattern.value == -2


def test_if_else_chain():
    e = expr("if c { 1 } else if d { 2 } else { 3 }")
    assert isinstance(e, ast.If) and isinstance(e.orelse, ast.If)
    assert isinstance(e.orelse.orelse, ast.Block)
    assert expr("if c { 1 }").orelse is None


def test_match():
    m = expr("match n { 0 => a, -1 => b, x if x > 3 => c, (p, _) => e, _ => d, }")
    pats = [arm.pattern for arm in m.arms]
    assert pats[0].value == 0 and pats[1].value == -1
    assert isinstance(pats[2], ast.BindPat) and m.arms[2].guard.op == ">"
    assert isinstance(pats[3], ast.TuplePat) and isinstance(pats[3].elems[1], ast.WildPat)
    assert isinstance(pats[4], ast.WildPat)


def test_rust_patterns():
    m = expr("match v { 1 | 2 => a, n @ 3..=9 => b, 0..10 => c, ..=-1 => d, 5.. => e, "
             "[h, ..t] => f, [x, .., y] => g, [] => h, k where k > 3 => i }")
    pats = [arm.pattern for arm in m.arms]
    assert isinstance(pats[0], ast.OrPat) and [p.value for p in pats[0].alts] == [1, 2]
    assert isinstance(pats[1], ast.BindPat) and pats[1].name == "n" and pats[1].sub.inclusive
    assert (pats[2].lo, pats[2].hi, pats[2].inclusive) == (0, 10, False)
    assert (pats[3].lo, pats[3].hi) == (None, -1) and (pats[4].lo, pats[4].hi) == (5, None)
    assert isinstance(pats[5].elems[1], ast.RestPat) and pats[5].elems[1].bind.name == "t"
    assert pats[6].elems[1].bind is None and pats[7].elems == []
    assert m.arms[8].guard.op == ">"


def test_a_range_pattern_that_matches_nothing_is_refused():
    with pytest.raises(CompileError) as info:
        expr("match v { 5..2 => a, _ => b }")
    assert info.value.diagnostics[0].code == "E001"


def test_lambdas():
    one = expr("|x| x * k")
    assert isinstance(one, ast.Lambda) and one.params[0].name == "x" and one.body.op == "*"
    two = expr("|x, y: f32| { x + y }")
    assert len(two.params) == 2 and two.params[1].type.name == "f32"
    assert expr("|| 1").params == []


def test_ranges():
    r = expr("0..N")
    assert not r.inclusive and r.lo.value == 0
    assert expr("0..=N").inclusive


def test_reductions_and_names_that_look_like_them():
    r = expr("sum[i, j](x[i, j])")
    assert isinstance(r, ast.Reduction) and r.op == "sum" and [i.name for i in r.indices] == ["i", "j"]
    for op in ("prod", "max", "min", "all", "any"):
        assert expr(f"{op}[k in 0..i + 1](x[k])").op == op
    assert isinstance(expr("max(a, b)"), ast.Call) and expr("sum(arr)").func.name == "sum"
    (u,) = items("use std::math::{min, max};")
    assert [i.name for i in u.items] == ["min", "max"]
    (f,) = items("fn max(a, b) { a }")
    assert f.name == "max"


def test_strings_and_interpolation():
    s = expr(r'"x = {x}, pi = {pi:.4f} {{ok}} \"q\"\n"')
    assert s.parts[0] == "x = " and s.parts[1].expr.name == "x" and s.parts[1].spec == ""
    assert s.parts[3].expr.name == "pi" and s.parts[3].spec == ".4f"
    assert s.parts[4] == ' {ok} "q"\n'
    assert expr('"plain"').parts == ["plain"]
    assert expr('""').parts == [""]
    field = expr('"{m::f(a, b)}"').parts[0]
    assert isinstance(field.expr, ast.Call) and field.spec == ""


def test_derivatives():
    d = expr("@loss / @W")
    assert isinstance(d, ast.Derivative) and d.numerator.name == "loss" and d.denominator.name == "W"
    di = expr("@y[t, j] / @x")
    assert isinstance(di.numerator, ast.Index)
    single = expr("@y[t, j]")
    assert isinstance(single, ast.Diff) and isinstance(single.target, ast.Index)
    assert isinstance(expr("a / @x"), ast.Binary)
    by_sum = expr("@x / @(x + x * x)")
    assert isinstance(by_sum, ast.Derivative) and isinstance(by_sum.denominator, ast.Binary)
    of_call = expr("@log10(x) / @x")
    assert isinstance(of_call.numerator, ast.Call) and of_call.denominator.name == "x"


def test_a_scaled_derivative_groups_the_quotient():
    # `lr * @L / @w` is `lr * (@L / @w)` (differentials are linear); parentheses keep the old reading
    scaled = expr("lr * @L / @w[e - 1]")
    assert scaled.op == "*" and isinstance(scaled.right, ast.Derivative) and scaled.left.name == "lr"
    assert (scaled.right.span.col, scaled.right.span.end_col) == (14, 28)
    neg = expr("a * b * -@y / @x")
    assert neg.op == "*" and neg.right.op == "-" and isinstance(neg.right.operand, ast.Derivative)
    assert isinstance(expr("(a * @y) / @x"), ast.Binary) and expr("(a * @y) / @x").op == "/"


@pytest.mark.parametrize("text, y, x", [("@y / x", "y", "x"), ("@h[t] / w[k]", "h[..]", "w[..]"),
                                         ("@(a * b) / a", "y", "a")])
def test_a_derivative_missing_its_second_at_is_E001(text, y, x):
    # `@y / x` built and divided the tangent by x silently; the thesis's quotient is `@y / @x`.
    diag = syntax_error(f"let g = {text};")
    assert f"`@{y} / @{x}`" in diag.hint and f"`(@{y}) / {x}`" in diag.hint
    assert diag.span.col == 9


def test_a_tangent_divided_by_a_value_is_written_with_parentheses_or_a_literal():
    for text in ("(@y) / x", "@y / (x)", "@y / 2.0", "@y / (x + 1.0)"):
        assert isinstance(expr(text), ast.Binary)


def test_types():
    t = items("let a: [f32]; let b: [f32; 2, N, ?]; let c: [f32; *]; let d: (f32, i32); let e: T;")
    assert len(t[0].type.dims) == 1 and t[0].type.dims[0].size is None
    assert [(d.size, d.name) for d in t[1].type.dims] == [(2, None), (None, "N"), (None, None)]
    assert t[2].type.dims is None
    assert [e.name for e in t[3].type.elems] == ["f32", "i32"]
    assert isinstance(t[4].type, ast.NamedType)


def test_comments():
    stmts = items("// line\nlet x = 1; /* block\n comment */ let y = 2; // end")
    assert len(stmts) == 2


# ---------------------------------------------------------------- spans


def test_spans_are_exact():
    src = "let s = (a + b) * c;\nlet q = \"a {x + 1:>3} b\";\nlet A: [f32; ?, 8];"
    s, q, a = items(src)
    assert s.span == Span("t.ein", 1, 1, 1, 21)
    assert s.value.span == Span("t.ein", 1, 9, 1, 20)
    assert s.value.left.span == Span("t.ein", 1, 10, 1, 15)
    assert s.pattern.span == Span("t.ein", 1, 5, 1, 6)
    field = q.value.parts[1]
    assert field.span == Span("t.ein", 2, 12, 2, 22)
    assert field.expr.span == Span("t.ein", 2, 13, 2, 18)
    assert field.expr.right.span == Span("t.ein", 2, 17, 2, 18)
    assert a.type.dims[0].span == Span("t.ein", 3, 14, 3, 15)


def test_every_node_has_a_span():
    src = ("let C[i, j] = sum[k](A[i, k] * B[k, j]) where k > 0; fn f(x) { match x { 0 => 1, _ => 2 } }"
           "let s = \"{a}\"; let l = |x| x; let c = [i | i in 0..3]; let t = (true, [1.0]);")
    module = parse(src, "t.ein")
    for node in _walk(module):
        assert isinstance(node.span, Span), node
        assert (node.span.line, node.span.col) <= (node.span.end_line, node.span.end_col)


def _walk(node):
    yield node
    for v in vars(node).values():
        for child in (v if isinstance(v, list) else [v]):
            if isinstance(child, ast.Node):
                yield from _walk(child)


# ---------------------------------------------------------------- errors


def test_missing_semicolon_points_where_it_goes():
    d = syntax_error("let x = 1 + 2\nlet y = 3;")
    assert d.message == "expected ';', 'where' or an operator, found 'let'"
    assert (d.span.line, d.span.col, d.span.end_col) == (1, 14, 15)
    assert d.hint == "a statement ends with `;`"
    # past blank and comment lines; on one line, at the token that follows
    d = syntax_error("let x = 1 + 2   // two\n\n// next\nlet y = 3;")
    assert (d.span.line, d.span.col) == (1, 14)
    d = syntax_error("let x = 1 + 2 let y = 3;")
    assert (d.span.line, d.span.col, d.hint) == (1, 15, "")


def test_missing_operand():
    d = syntax_error("let x = ;")
    assert "expected" in d.message and "an expression" in d.message and "found ';'" in d.message
    assert (d.span.line, d.span.col) == (1, 9)


def test_end_of_input():
    d = syntax_error("let x = (1, 2")
    assert d.message == "expected ')' or ',', found end of input"
    assert (d.span.line, d.span.col) == (1, 14)


def test_bad_character_and_unterminated_things():
    assert syntax_error("let x = 1 # 2;").span.col == 11
    assert syntax_error('let x = "abc').message == "unterminated string literal"
    assert syntax_error("/* never closed").message == "unterminated block comment"


@pytest.mark.parametrize("src, message, col", [
    ('let s = "{x";', "unclosed '{' in string", 10),
    ('let s = "a}";', "unmatched '}' in string", 11),
    ('let s = "{}";', "empty '{}' in string", 10),
    ('let s = "\\q";', "unknown escape '\\q'", 10),
])
def test_string_errors(src, message, col):
    d = syntax_error(src)
    assert d.message == message and d.span.col == col


def test_error_inside_string_field_points_into_the_string():
    d = syntax_error('let s = "ab {1 + ;}";')
    assert d.span.line == 1 and d.span.col == 18


def test_decl_bracket_holds_only_names_literals_and_rests():
    d = syntax_error("let y[i + 1] = 0;")
    assert "found '+'" in d.message


FUZZ_SOURCE = '''
use std::math::{sin, cos as c};
use std::math as m;
mod helpers { pub fn h(x) { x } }
let A: [f32; ?, 8];
let X: [f32; N, K];
const K2: i32 = 3;
let (a, b) = (1, 2.5f64);
let C[i, j] = sum[k](A[i, k] * X[k, j]) where k < 4;
let y[0] = a;
let y[t in 1..T] = y[t - 1] + 1;
let z[..b, c] = max[i in 0..=3](x[..b, i] * w[i, c]);
let s = "x = {x}, pi = {pi:.4f} {{lit}}\\n";
let t = match n { 0 => a, -1 => b, x if x > 3 => c, _ => d };
let l = |x, y| { x * y } ;
let cm = [x | x in xs, x > 0];
let g = @loss / @W;
let h = x.sqrt() + x.shape + t.0 + m::sqrt(4.0) - -x ** 2 as f32;
let v = if c { 1 } else if d { 2 } else { 3 } |> f(2);
fn f(a, b: f32) -> [f32; 2] { let q = 1; a + q } // comment
@fn f(x) { @x * 2.0 }
/* block */ print(x, 0..N, 1e6, true && !false);
'''


def test_fuzz_truncations_only_raise_compile_errors():
    assert parse(FUZZ_SOURCE, "t.ein").items
    rng = random.Random(0)
    cuts = sorted({rng.randrange(len(FUZZ_SOURCE)) for _ in range(400)})
    for cut in cuts:
        _parse_or_compile_error(FUZZ_SOURCE[:cut])


def test_fuzz_random_deletions_only_raise_compile_errors():
    rng = random.Random(1)
    for _ in range(300):
        i = rng.randrange(len(FUZZ_SOURCE))
        j = min(len(FUZZ_SOURCE), i + rng.randrange(1, 8))
        _parse_or_compile_error(FUZZ_SOURCE[:i] + FUZZ_SOURCE[j:])


def _parse_or_compile_error(src):
    try:
        parse(src, "t.ein")
    except CompileError as exc:
        assert exc.diagnostics[0].code == "E001"
        assert exc.diagnostics[0].span is not None
