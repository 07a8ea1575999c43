"""Constructs real programs use (LANGUAGE.md section 9): unary plus, `as [T]` at any rank,
array_append, typeof, empty array literals, row membership, assert on arrays, empty ranges."""
import io

import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from einc.runtime import RunError
from tests.tiers import VULKAN_FULL

PROGRAM = """
let x: [f32; 3];
let tbl: [i32; 3, 2];
let plus = +4;
let minus_plus = -(+2.5);
let m = [[1, 2], [3, 4]] as [f32];
let m3 = [[[1, 2]], [[3, 4]]] as [f64];
let t_as = tbl as [f32];
let appended = array_append([1, 2], 3);
let appended_f = array_append([1.0, 2.0], 3.5);
let from_empty = array_append([], 3);
let appended_row = array_append([[1, 2]], [3, 4]);
let appended_x = array_append(x, 9.5);
let empty = [];
let empty_len = len(empty);
let empty_rows = [[], [], []];
let typed_empty: [i32] = [];
let row_in = [5, 6] in tbl;
let row_out = [6, 5] in tbl;
let literal_row_in = [5, 6] in [[1, 2], [5, 6]];
let scalar_in = 2.0 in x;
let range_in = 4 in 3..6;
let none_summed = sum[i in 5..2](i);
let squares = [0, 1, 4];
let sq = [i * i | i in 0..3];
assert(sq == squares, "squares");
assert(x > 0.0, "positive");
print(typeof(7), typeof(7.0), typeof(true), typeof([1, 2]), typeof((1, 2)), typeof(x[0]), typeof(x));
"""


@pytest.fixture(scope="module")
def program():
    return einc.load(einc.compile(PROGRAM).vmfb)


X = np.array([1.0, 2.0, 3.0], np.float32)
TBL = np.array([[1, 2], [5, 6], [7, 8]], np.int32)


@pytest.fixture(scope="module")
def result(program):
    buf = io.StringIO()
    return program.run({"x": X, "tbl": TBL}, stdout=buf), buf.getvalue()


@pytest.mark.parametrize("name, expected, dtype", [
    ("plus", 4, np.int32), ("minus_plus", -2.5, np.float32),
    ("m", [[1, 2], [3, 4]], np.float32), ("m3", [[[1, 2]], [[3, 4]]], np.float64),
    ("t_as", TBL, np.float32),
    ("appended", [1, 2, 3], np.int32), ("appended_f", [1, 2, 3.5], np.float32),
    ("from_empty", [3], np.int32), ("appended_row", [[1, 2], [3, 4]], np.int32),
    ("appended_x", [1, 2, 3, 9.5], np.float32),
    ("row_in", True, np.bool_), ("row_out", False, np.bool_), ("literal_row_in", True, np.bool_),
    ("scalar_in", True, np.bool_), ("range_in", True, np.bool_), ("none_summed", 0, np.int32),
    ("empty_len", 0, np.int32),
])
def test_values(result, name, expected, dtype):
    value = result[0][name]
    assert value.dtype == dtype
    np.testing.assert_array_equal(value, expected)


def test_empty_literals_are_f32_unless_their_context_says(result):
    out = result[0]
    assert out["empty"].shape == (0,) and out["empty"].dtype == np.float32
    assert out["empty_rows"].shape == (3, 0)
    assert out["typed_empty"].shape == (0,) and out["typed_empty"].dtype == np.int32


def test_typeof_names_the_default_type_of_literals(result):
    assert result[1] == "i32 f32 bool rectangular tuple f32 rectangular\n"


def test_assert_on_an_array_passes_iff_every_element_holds(program):
    with pytest.raises(RunError, match="positive"):
        program(x=np.array([1.0, -2.0, 3.0], np.float32), tbl=TBL)


def test_an_array_assert_known_to_fail_is_a_build_error():
    with pytest.raises(CompileError) as info:
        einc.compile('let sq = [i * i | i in 0..3];\nassert(sq == [0, 1, 5], "squares");\n')
    diag = info.value.diagnostics[0]
    assert diag.code == "E006" and diag.span.line == 2 and "squares" in diag.message


@pytest.mark.parametrize("source, code, words", [
    ("let b = +true;\n", "E002", "unary `+`"),
    ("let a = array_append([1, 2], [3, 4]);\n", "E004", "shape of the others"),
    ("let tbl = [[1, 2], [5, 6]];\nlet a = [5, 6, 7] in tbl;\n", "E004", "rows of"),
])
def test_errors(source, code, words):
    with pytest.raises(CompileError) as info:
        einc.compile(source)
    assert info.value.diagnostics[0].code == code and words in info.value.diagnostics[0].message


@pytest.mark.parametrize("source, col", [("let r = if true { [1, 2, 3] };\n", 19),
                                         ("let r = if false { 2.5 };\n", 20)])
def test_an_if_without_else_whose_block_gives_a_value_is_E002_at_that_value(diagnose, source, col):
    """Its value was the block's when the condition held (Rust: E0317)."""
    diag, text = diagnose(source)
    assert diag.code == "E002" and (diag.span.line, diag.span.col) == (1, col)
    assert "without `else` has no value" in diag.message and "else" in diag.hint


def test_an_if_without_else_as_a_statement_still_runs_its_block(capfd):
    source = "let x = 2;\nif true { print(x * 10) };\nif false { print(x) };\nif true { print(x + 1); };\n"
    einc.load(einc.compile(source).vmfb).run({})
    assert capfd.readouterr().out.split() == ["20", "3"]


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_the_size_of_a_scalar_is_one_as_in_numpy(target):
    """`x.size` of a scalar was an internal error (AttributeError on a literal)."""
    out = einc.load(einc.compile("""
        use std::ml::size;
        let x = 42.0;
        let y: f32;
        let s = x.size;
        let t = size(x);
        let u = y.size + size(7) + numel([[1, 2, 3], [4, 5, 6]]);
    """.replace("numel", "std::ml::numel"), target=target).vmfb)(y=np.float32(1.5))
    assert (out["s"], out["t"], out["u"]) == (np.size(42.0), np.size(42.0), 1 + 1 + np.size(np.zeros((2, 3))))


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_conditions_known_at_build_time_pick_their_side(target):
    # regression (fuzz seed 7 program 951): a `where false` reached IREE as a select on a
    # constant, and Vulkan then failed to compile the reduction around it
    x = np.array([3, 1, 4, 1, 5], np.int32)
    with einc.load(einc.compile("""
        let x: [i32; N];
        let none[i in 0..N] = max[k in 0..i + 1](sum[m in 0..5](k where false));
        let all[i in 0..N] = sum[k in 0..i + 1](x[k] where k >= 0 || false);
        let anded[i in 0..N] = sum[k in 0..N](x[k] where x[k] > 1 && true);
        let picked[i in 0..N] = if false { x[i] * 100 } else { x[i] + 1 };
    """, target=target).vmfb) as program:
        out = program(x=x)
    np.testing.assert_array_equal(out["none"], np.zeros(5))
    np.testing.assert_array_equal(out["all"], np.cumsum(x))
    np.testing.assert_array_equal(out["anded"], np.full(5, x[x > 1].sum()))
    np.testing.assert_array_equal(out["picked"], x + 1)


def test_output_naming_a_tuple_binding_gives_all_its_parts():
    """`--output top` of `let top = topk(..)` (a tuple) outputs `top.0` and `top.1`, as a build
    without --output does (it was E003: no top-level value named `top`)."""
    source = """
        use std::ml::topk;
        let scores: [f32; B, C];
        let top = topk(scores, 2, 1);
        let other = scores[0, 0];
    """
    scores = np.float32([[1.0, 3.0, 2.0], [5.0, 4.0, 6.0], [0.5, -1.0, 0.25]])
    out = einc.load(einc.compile(source, outputs=["top"]).vmfb)(scores=scores)
    assert sorted(out) == ["top.0", "top.1"]
    order = np.argsort(-scores, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(out["top.0"], np.take_along_axis(scores, order, 1))   # exact: values picked
    np.testing.assert_array_equal(out["top.1"], order)


@pytest.mark.parametrize("target, dtype", [("llvm-cpu", "f64"),
                                           pytest.param("vulkan-spirv", "f32", marks=pytest.mark.vulkan)])
def test_literals_of_literals_of_per_point_values_inside_an_indexed_definition(run, target, dtype):
    """A matrix (and a rank-3) literal whose elements read the point, read at run-time subscripts
    (was E011 "an array literal of arrays inside an indexed definition"; vulkan-spirv picks the
    element by selects on each subscript, IREE-89)."""
    x, w = np.array([1.0, 2.0, 3.0, -1.5]), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    out = run(f"""
        let x: [{dtype}; 4];
        let w: [{dtype}; 2, 3];
        let y[i] = {{ let M = [[x[i], 1.0, -x[i]], [2.0, x[i] * x[i], 0.5]]; sum[a, b](M[a, b] * w[a, b]) }};
        let c[i] = {{ let C = [[[x[i], 1.0], [2.0, 3.0]], [[4.0, x[i]], [5.0, 6.0]]];
                      sum[a, b, e](C[a, b, e] * ((a * 4 + b * 2 + e + 1) as {dtype})) }};
    """, target=target, x=x.astype(dtype.replace("f", "float")), w=w.astype(dtype.replace("f", "float")))
    M = np.array([[x, np.ones(4), -x], [2 * np.ones(4), x * x, 0.5 * np.ones(4)]])
    C = np.array([[[x, np.ones(4)], [2 * np.ones(4), 3 * np.ones(4)]], [[4 * np.ones(4), x], [5 * np.ones(4), 6 * np.ones(4)]]])
    np.testing.assert_allclose(out["y"], np.einsum("abi,ab->i", M, w), rtol=1e-6)
    np.testing.assert_allclose(out["c"], np.einsum("abei,abe->i", C, np.arange(1.0, 9.0).reshape(2, 2, 2)), rtol=1e-6)


def test_a_row_of_an_enclosing_definition_converts_with_as_point_by_point():
    # `K[e] as [f64]` (in a function called per point e) converts the row, as arithmetic on it
    # does; it was E011 "a sub-array used whole inside an indexed definition"
    source = "let K: [f32; 4, 3];\nfn f(r) { let w = r as [f64]; sum[i](w[i] * w[i]) }\n" \
             "let s[e in 0..4] = f(K[e]);\nlet h[e in 0..4, i in 0..3] = (K[e] as [f16; 3])[i];\n"
    k = np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32)
    out = einc.load(einc.compile(source).vmfb)(K=k)
    np.testing.assert_allclose(out["s"], (k.astype(np.float64) ** 2).sum(1), rtol=1e-15)
    assert out["s"].dtype == np.float64
    np.testing.assert_array_equal(out["h"], k.astype(np.float16))
