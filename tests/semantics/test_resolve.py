"""Name resolution: DefIds for bindings and uses, scopes, hoisting, grouping, imports, errors."""
import pytest

from einc.diagnostics import CompileError
from einc.semantics.core.builtins import ALL
from einc.semantics.core.modules import load_program, load_source
from einc.semantics.core.resolve import resolve
from einc.syntax import ast


def resolved(src, stdlib=None, root=None):
    program = load_source(src, "main.ein", root=root, stdlib=stdlib)
    return program.entry.items, resolve(program)


def diagnostics(src, stdlib=None):
    with pytest.raises(CompileError) as info:
        resolved(src, stdlib)
    return info.value.diagnostics


def names(node, name):
    """Every Name node called `name` under node, in source order."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and n.name == name:
            out.append(n)
        for v in vars(n).values():
            for c in (v if isinstance(v, list) else [v]):
                if isinstance(c, ast.Node):
                    stack.append(c)
    return sorted(out, key=lambda n: (n.span.line, n.span.col))


@pytest.fixture
def std(tmp_path):
    root = tmp_path / "fakestd"
    (root / "math").mkdir(parents=True)
    (root / "math" / "mod.ein").write_text(
        "pub use basic::*;\npub use basic::sqrt as root;\npub fn pi() { 3.14 }\nfn secret() { 0 }")
    (root / "math" / "basic.ein").write_text("pub fn sqrt(x) { __sqrt(x) }\npub fn abs(x) { x }")
    return root


def test_shadowing_gives_two_defids_and_the_second_reads_the_first():
    (first, second), _ = resolved("let x = 1; let x = x + 1;")
    assert first.pattern.def_id != second.pattern.def_id
    assert second.value.left.def_id == first.pattern.def_id
    assert first.pattern.def_id.kind == "value"


def test_locals_are_source_ordered():
    (d,) = diagnostics("let a = b; let b = 1;")
    assert d.code == "E003" and "`b`" in d.message and (d.span.line, d.span.col) == (1, 9)


def test_functions_are_hoisted():
    (call, f, g), res = resolved("let y = f(2); fn f(x) { g(x) } fn g(x) { x }")
    assert call.value.func.def_id == f.def_id and f.def_id.kind == "fn"
    assert f.body.result.func.def_id == g.def_id
    assert res.defs[f.def_id] is f
    assert f.body.result.args[0].def_id == f.params[0].def_id
    assert f.params[0].def_id.kind == "param"


def test_two_functions_of_one_name_in_one_scope_are_E003_at_the_second():
    """Rust's E0428: the later `fn add` silently replaced the earlier for every call."""
    (d,) = diagnostics("fn add(a, b) { a + b }\nfn add(a, b) { a - b }\nlet r = add(5, 3);")
    assert d.code == "E003" and "`add` is defined twice" in d.message and (d.span.line, d.span.col) == (2, 1)
    assert [n.span.line for n in d.notes] == [1]
    resolved("fn add(a, b) { a + b }\nfn f(x) { fn add(a, b) { a - b } add(x, 1) }")   # a nested scope may


def test_functions_read_top_level_bindings_through_one_global_per_name():
    (k1, f, k2), res = resolved("let k = 2; fn f(x) { x * k } let k = 3;")
    use = f.body.result.right.def_id
    assert use.kind == "global" and res.globals[use] == [k1.pattern.def_id, k2.pattern.def_id]


def test_functions_nested_in_a_block_see_its_locals():
    (r,), _ = resolved("let r = { let k = 2; fn f(x) { x * k } f(1) };")
    k, f = r.value.stmts
    assert f.body.result.right.def_id == k.pattern.def_id


def test_consts_are_hoisted_and_visible_in_functions():
    (f, c), _ = resolved("fn f(x) { x * K } const K = 2;")
    assert f.body.result.right.def_id == c.pattern.def_id


def test_lambdas_capture_locals():
    (k, l), _ = resolved("let k = 2; let l = |x| x * k;")
    lam = l.value
    assert lam.body.left.def_id == lam.params[0].def_id and lam.body.right.def_id == k.pattern.def_id


def test_clauses_of_one_indexed_definition_share_a_defid():
    items, _ = resolved("let T = 5; let a = 1.0; let y[0] = a; let y[t in 1..T] = y[t - 1] + 1.0;")
    y0, y1 = items[2], items[3]
    assert y0.def_id == y1.def_id and y0.def_id.kind == "value"
    assert y1.value.left.base.def_id == y0.def_id
    assert y1.slots[0].range.hi.def_id == items[0].pattern.def_id


def test_a_plain_let_between_clauses_starts_a_new_binding():
    items, _ = resolved("let y[0] = 1; let y = 2; let y[1] = 3;")
    assert items[0].def_id != items[2].def_id
    assert items[1].pattern.def_id not in (items[0].def_id, items[2].def_id)


def test_clauses_may_be_separated_by_other_statements():
    items, _ = resolved("let y[0] = 1; let z = 2; let y[1] = z;")
    assert items[0].def_id == items[2].def_id


def test_index_variables_are_scoped_to_their_definition():
    items, _ = resolved("let A: [f32; 3]; let B[i] = A[i]; let C[i] = A[i] * 2.0;")
    b, c = items[1], items[2]
    assert b.slots[0].def_id.kind == "index" and b.slots[0].def_id != c.slots[0].def_id
    assert b.value.subscripts[0].def_id == b.slots[0].def_id
    assert c.value.left.subscripts[0].def_id == c.slots[0].def_id


def test_index_variable_is_not_visible_after_its_definition():
    (d,) = diagnostics("let A: [f32; 3]; let B[i] = A[i]; let c = i;")
    assert d.code == "E003"


def test_reduction_indices_and_wheres():
    items, _ = resolved(
        "let X: [f32; N, H]; let W: [f32; N, K];"
        "let Y[n, oh] = sum[kh](X[n, ih] * W[n, kh]) where ih = oh + kh, ih < H;")
    y = items[2]
    red = y.value
    kh = red.indices[0].def_id
    ih_bind, guard = red.wheres
    assert ih_bind.def_id.kind == "where"
    assert ih_bind.value.right.def_id == kh and ih_bind.value.left.def_id == y.slots[1].def_id
    assert red.body.left.subscripts[1].def_id == ih_bind.def_id
    assert guard.cond.left.def_id == ih_bind.def_id
    assert guard.cond.right.def_id.kind == "dim"


def test_reduction_range_reads_outer_index():
    (_, s), _ = resolved("let x: [f32; 4]; let s[i] = sum[k in 0..i + 1](x[k]);")
    assert s.value.indices[0].range.hi.left.def_id == s.slots[0].def_id


def test_definition_wheres_are_in_scope_in_later_clauses_and_body():
    (d,), _ = resolved("let e[i in 0..4] = z * 2 where z = i + 1, z > 2;")
    z = d.wheres[0].def_id
    assert d.value.left.def_id == z and d.wheres[1].cond.left.def_id == z


def test_rest_indices():
    items, _ = resolved("let x: [f32; *]; let w: [f32; 4, 2]; let y[..b, c] = sum[i](x[..b, i] * w[i, c]);")
    y = items[2]
    rest = y.slots[0].def_id
    assert rest.kind == "rest"
    assert y.value.body.left.subscripts[0].def_id == rest


def test_named_dims_bind_once_and_read_as_values():
    items, _ = resolved("let X: [f32; N, K]; let W: [f32; K, M]; let r = 0..N;")
    x_dims, w_dims = items[0].type.dims, items[1].type.dims
    assert x_dims[1].def_id == w_dims[0].def_id and x_dims[1].def_id.kind == "dim"
    assert items[2].value.hi.def_id == x_dims[0].def_id
    assert items[0].pattern.def_id.kind == "input"


def test_match_patterns_comprehensions_tuples():
    items, _ = resolved(
        "let n = 3; let m = match n { 0 => 1, x if x > 3 => x, _ => 2 };"
        "let c = [i * 2 | i in 0..n, i > 1]; let (a, b) = (1, 2); let s = a + b;")
    arm = items[1].value.arms[1]
    assert arm.pattern.def_id.kind == "pattern" and arm.guard.left.def_id == arm.pattern.def_id
    assert arm.body.def_id == arm.pattern.def_id
    comp = items[2].value
    gen = comp.generators[0].def_id
    assert gen.kind == "generator" and comp.body.left.def_id == gen and comp.filters[0].left.def_id == gen
    a, b = items[3].pattern.elems
    assert items[4].value.left.def_id == a.def_id and items[4].value.right.def_id == b.def_id


def test_a_clause_on_a_bound_generator_name_is_a_membership_filter():
    items, _ = resolved("let c = [v | v in 0..10, v in 3..6];")
    first, second = items[0].value.clauses
    assert isinstance(first, ast.Generator)
    assert isinstance(second, ast.Binary) and second.op == "in" and second.left.def_id == first.def_id


def test_python_paths_resolve_to_std_math_load_npy_or_python_objects():
    items, _ = resolved("use python::math; use python::numpy as np;"
                        "let a = math::cos(0.0); let b = np::load(\"w.npy\"); let c = python::mod::f(1);")
    assert items[2].value.func.def_id.kind == "fn"                   # std::math::cos
    assert items[3].value.func.def_id.name == "load_npy"
    assert items[4].value.func.def_id.kind == "python" and items[4].value.func.def_id.name == "mod.f"


def test_blocks_scope_their_locals_and_hoist_functions():
    (v,), _ = resolved("let v = { let a = h(1); fn h(x) { x } a };")
    block = v.value
    fn = block.stmts[1]
    assert block.stmts[0].value.func.def_id == fn.def_id
    assert block.result.def_id == block.stmts[0].pattern.def_id


def test_builtins_resolve_to_builtin_defids():
    (stmt,), res = resolved("print(len([1]));")
    assert stmt.expr.func.def_id is res.builtins["print"] and stmt.expr.func.def_id.kind == "builtin"
    assert set(res.builtins) == set(ALL)


def test_builtins_can_be_shadowed():
    (f, call), _ = resolved("fn print(x) { x } print(1);")
    assert call.expr.func.def_id == f.def_id


def test_a_local_function_hides_a_name_a_glob_imports_but_not_one_named(std):
    """As in Rust, `use std::math::*;` beside `fn sqrt` calls the local sqrt (it was E010, "imported
    here but also defined"); importing `sqrt` by name beside it stays E010."""
    (use, f, call), _ = resolved("use std::math::*;\nfn sqrt(x) { x }\nlet y = sqrt(4.0);", stdlib=std)
    assert call.value.func.def_id == f.def_id
    (d,) = diagnostics("use std::math::sqrt;\nfn sqrt(x) { x }\nlet y = sqrt(4.0);", stdlib=std)
    assert d.code == "E010" and "`sqrt` is imported here but also defined" in d.message


def test_method_calls_resolve_when_the_name_is_a_function(std):
    items, _ = resolved("use std::math::sqrt; let a = 2.0; let b = a.sqrt(); let c = a.exp();",
                        stdlib=std)
    assert items[2].value.def_id.name == "sqrt" and items[2].value.def_id.kind == "fn"
    assert items[3].value.def_id is None


def test_diff_rules_belong_to_their_function():
    (f, rule), _ = resolved("fn f(x) { x * x } @fn f(x) { 2.0 * x * @x }")
    assert rule.def_id == f.def_id
    assert rule.body.result.right.target.def_id == rule.params[0].def_id


def test_derivative_names_resolve():
    items, _ = resolved("let W: [f32; 3]; let loss = sum[i](W[i]); let g = @loss / @W;")
    d = items[2].value
    assert d.numerator.def_id == items[1].pattern.def_id and d.denominator.def_id == items[0].pattern.def_id


def test_std_imports(std):
    items, res = resolved(
        "use std::math::{sqrt, pi as PI};\nuse std::math as m;\nuse std::math::root;\n"
        "let a = sqrt(PI()) + m::abs(1.0) + root(4.0) + std::math::pi();", stdlib=std)
    sqrt = res.exports[("std", "math", "basic")]["sqrt"]
    value = items[3].value
    assert value.left.left.left.func.def_id == sqrt
    assert value.left.left.left.args[0].func.def_id.name == "pi"
    assert res.module_of[value.left.left.right.func.def_id] == ("std", "math", "basic")
    assert value.left.right.func.def_id == sqrt
    assert value.right.func.def_id.name == "pi"


def test_importing_a_name_that_is_also_a_submodule_takes_the_function(std):
    (std / "math" / "mod.ein").write_text("pub use exp::*;")
    (std / "math" / "exp.ein").write_text("pub fn exp(x) { __exp(x) }")
    items, res = resolved("use std::math::exp;\nuse std::math::exp as e;\nlet a = exp(1.0) + e(2.0);",
                          stdlib=std)
    value = items[2].value
    assert value.left.func.def_id == value.right.func.def_id == res.exports[("std", "math")]["exp"]
    assert value.left.func.def_id.kind == "fn"


def test_glob_import(std):
    items, _ = resolved("use std::math::*; let a = abs(sqrt(2.0));", stdlib=std)
    assert items[1].value.func.def_id.name == "abs"


def test_module_alias_is_a_module_defid(std):
    items, res = resolved("use std::math as m; let a = m::sqrt(1.0);", stdlib=std)
    assert res.modules[("std", "math")].kind == "module"


def test_importing_a_missing_name_is_e010_with_a_hint(std):
    (d,) = diagnostics("use std::math::{sqrtt};", stdlib=std)
    assert d.code == "E010" and "sqrtt" in d.message and "sqrt" in d.hint


def test_importing_a_private_name_is_e010(std):
    (d,) = diagnostics("use std::math::secret;", stdlib=std)
    assert d.code == "E010" and "private" in d.message


def test_path_to_missing_item_is_e010(std):
    (d,) = diagnostics("let a = std::math::nope(1.0);", stdlib=std)
    assert d.code == "E010" and "nope" in d.message


def test_undefined_name_is_e003_with_closest_name():
    (d,) = diagnostics("let alpha = 1.0;\nlet y = alpah * 2.0;")
    assert d.code == "E003" and (d.span.line, d.span.col, d.span.end_col) == (2, 9, 14)
    assert "alpha" in d.hint


def test_all_undefined_names_are_reported():
    ds = diagnostics("let a = b + c;")
    assert [d.code for d in ds] == ["E003", "E003"]


def test_project_modules_and_privacy(tmp_path):
    (tmp_path / "util.ein").write_text("pub fn helper(x) { inner(x) }\nfn inner(x) { x }")
    (tmp_path / "main.ein").write_text(
        "mod util;\nmod local { pub fn f() { super::util::helper(1) } }\n"
        "let a = util::helper(1) + local::f() + crate::util::helper(2);")
    program = load_program(tmp_path / "main.ein")
    res = resolve(program)
    value = program.entry.items[2].value
    helper = value.left.left.func.def_id
    assert helper.kind == "fn" and res.module_of[helper] == ("util",)
    assert value.right.func.def_id == helper
    assert value.left.right.func.def_id.name == "f"
    inner_call = program.modules[("local",)].items[0].body.result
    assert inner_call.func.def_id == helper


def test_private_item_through_path_is_e010(tmp_path):
    (tmp_path / "util.ein").write_text("fn inner(x) { x }")
    (tmp_path / "main.ein").write_text("mod util;\nlet a = util::inner(1);")
    with pytest.raises(CompileError) as info:
        resolve(load_program(tmp_path / "main.ein"))
    assert info.value.diagnostics[0].code == "E010"


def test_real_stdlib_resolves():
    items, res = resolved("use std::math::{sin, sqrt, clip, pi, deg_to_rad};\n"
                          "let a = clip(sin(pi()) + sqrt(2.0) + deg_to_rad(90.0), 0.0, 1.0);")
    assert items[1].value.func.def_id.name == "clamp"
    assert res.exports[("std", "math")]["gcd"].kind == "fn"


def test_an_input_declared_twice_is_E003_at_the_second(diagnose):
    # the signature listed `x, x` and the caller could bind only one of them
    diag, text = diagnose("let x: f32;\nlet x: f32;\nlet y = x * 2.0;\n")
    assert diag.code == "E003" and (diag.span.line, diag.span.col) == (2, 1)
    assert "declared twice" in diag.message and diag.notes[0].span.line == 1


def test_a_value_may_shadow_an_input(tmp_path):
    from einc.driver import front_end
    path = tmp_path / "prog.ein"
    path.write_text("let x: f32;\nlet x = x * 2.0;\n")
    assert front_end(str(path))


@pytest.mark.parametrize("source", ["let a = b + 1.0;\nlet b = 2.0;\n", "let a = a + 1.0;\n"])
def test_a_name_read_before_its_let_is_E003_saying_so(diagnose, source):
    # it said only "cannot find name", as for a name defined nowhere
    diag, _ = diagnose(source)
    assert diag.code == "E003" and (diag.span.line, diag.span.col) == (1, 9)
    assert "read before it is defined" in diag.message and "top to bottom" in diag.hint

