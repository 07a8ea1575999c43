"""Constructs other Einlang users write: lambdas on the right of `|>`, functions nested in a
block that read its locals, comprehension-local bindings, and the prelude's `sum`, `min` and
`max` without a `use`. Each checked against NumPy or plain Python."""
import numpy as np
import pytest
from tests.tiers import VULKAN_FULL

x = np.array([1.0, -2.0, 3.5, 0.25], np.float32)
M = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_lambda_on_the_right_of_a_pipeline(run, target):
    out = run("""
        fn inc(v) { v + 1 }
        let x: [f32; 4];
        let a = 5 |> |k: i32| k * 2;
        let b = 5 |> inc |> |k| k * 10;
        let c = x |> |v| v * 2.0 |> |w| w + 1.0;
    """, target=target, x=x)
    assert out["a"] == 10 and out["b"] == 60
    np.testing.assert_allclose(out["c"], x * 2 + 1)


def test_functions_nested_in_a_block_read_its_locals(run):
    out = run("""
        fn outer() { let a = 5; fn inner() { a * 2 } inner() }
        fn scale(v: f32) -> f32 { let k = 3.0; fn by(w: f32) -> f32 { w * k + v } by(1.0) }
        let x: [f32; 4];
        let r = outer();
        let s = scale(2.0);
        let t = { let b = 1.5; fn add(q) { q + b } add(x) };
    """, x=x)
    assert out["r"] == 10 and out["s"] == 5.0
    np.testing.assert_allclose(out["t"], x + 1.5)


def test_a_top_level_function_still_sees_only_items_and_top_level_bindings(diagnose):
    diag, text = diagnose("fn f() { a }\nlet r = { let a = 2; f() };\n")
    assert diag.code == "E003" and "`a`" in diag.message


def test_a_lambda_with_a_result_type_checks_it_and_types_its_literals(run, diagnose):
    """Rust's `|x: f64| -> f64 { .. }` (it was E001 at `->`): the result type is checked like a
    function's, and an untyped literal result takes it."""
    out = run("""
        let x: [f32; 4];
        let k = 2.0;
        let force = |v: [f32; 4], i: i32| -> f32 {
            let left = if i > 0 { v[i - 1] } else { 0.0 };
            k * (left - v[i])
        };
        let f[i in 0..4] = force(x, i);
        let g = || -> f64 { 3 };
        let three = g();
    """, x=x)
    np.testing.assert_allclose(out["f"], 2 * (np.r_[0, x[:-1]] - x), rtol=1e-6)
    assert out["three"].dtype == np.float64 and out["three"] == 3.0
    diag, _ = diagnose("let f = |x: f32| -> f64 { x * 2.0 };\nlet y = f(1.0);\n")
    assert diag.code == "E002" and diag.span.line == 1 and "expected f64, found f32" in diag.message


def test_comprehension_local_bindings(run):
    out = run("""
        let xs = [1, 2, 3, 4];
        let a = [r | x in xs, y = x * 2, r = y + 1];
        let b = [y | x in 0..6, y = x * x, y % 2 == 0];
        let v: [f32; 4];
        let c = [w | i in 0..4, w = v[i] * 2.0];
        let d = [w | i in 0..4, w = v[i] * 2.0, w > 0.0];
    """, v=x)
    np.testing.assert_array_equal(out["a"], [3, 5, 7, 9])
    np.testing.assert_array_equal(out["b"], [0, 4, 16])
    np.testing.assert_allclose(out["c"], x * 2)
    np.testing.assert_allclose(out["d"], (x * 2)[x * 2 > 0])


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_prelude_sum_min_max_need_no_use(run, target):
    out = run("""
        let M: [f32; 2, 3];
        let total = sum(M);
        let row_total = sum(M[1]);
        let lowest = min(M);
        let highest = max(M[0]);
        let pair = min(3, 5);
        let clipped = max(M, 0.5);
        let literal = sum([1, 2, 3]);
        let g = @total / @M;
    """, target=target, M=M)
    assert out["total"] == pytest.approx(M.sum()) and out["row_total"] == pytest.approx(M[1].sum())
    assert out["lowest"] == M.min() and out["highest"] == M[0].max()
    assert out["pair"] == 3 and out["literal"] == 6
    np.testing.assert_array_equal(out["clipped"], np.maximum(M, 0.5))
    np.testing.assert_array_equal(out["g"], np.ones_like(M))


def test_a_definition_or_use_of_the_same_name_shadows_the_prelude(run):
    out = run("""
        fn max(a, b) { a + b }
        let r = max(2, 3);
    """)
    assert out["r"] == 5
    out = run("""
        use std::math::min;
        let r = min(2.0, 3.0);
    """)
    assert out["r"] == 2.0


def test_the_math_glob_import_keeps_the_prelude_reductions_of_any_rank(run):
    """std::math's `sum`, `min` and `max` are the prelude's: under `use std::math::*` a whole
    matrix's sum, min and max, and the two-value min and max point by point."""
    M = np.array([[0.5, -1.25, 2.0], [3.5, 0.25, -0.75]], dtype=np.float32)
    v = np.array([1.5, -2.0, 0.5], dtype=np.float32)
    out = run("""
        use std::math::*;
        let M: [f32; 2, 3];
        let v: [f32; 3];
        let total = sum(M);
        let highest = max(M);
        let lowest = min(M);
        let row = std::math::sum(M[1]);
        let clipped[i in 0..2, j in 0..3] = max(min(M[i, j], 1.0), v[j]);
    """, M=M, v=v)
    assert out["total"] == pytest.approx(M.sum(dtype=np.float64), rel=1e-6)
    assert out["highest"] == M.max() and out["lowest"] == M.min()
    assert out["row"] == pytest.approx(M[1].sum(dtype=np.float64), rel=1e-6)
    np.testing.assert_array_equal(out["clipped"], np.maximum(np.minimum(M, 1.0), v))
