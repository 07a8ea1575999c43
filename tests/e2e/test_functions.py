"""Functions, generic specialisation, lambdas, elementwise application, modules."""
import re

import numpy as np
import pytest

import einc
from tests.tiers import VULKAN_FULL


def test_generic_function_is_specialised_per_call(run):
    out = run("""
        fn double(x) { x + x }
        fn hyp(a: f32, b: f32) -> f32 { (a * a + b * b) ** 0.5 }
        let a = double(1.5);
        let b = double(2.5f64);
        let c = double(21);
        let h = hyp(3.0, 4.0);
        let later = uses_later(2.0);
        fn uses_later(v) { v * 3.0 }
    """)
    assert out["a"].dtype == np.float32 and out["a"] == 3.0
    assert out["b"].dtype == np.float64 and out["b"] == 5.0
    assert out["c"].dtype == np.int32 and out["c"] == 42
    assert out["h"] == 5.0 and out["later"] == 6.0


def test_lambdas_capture_their_scope_and_pipelines_call(run):
    out = run("""
        let k = 3.0;
        let scale = |x| x * k;
        fn twice(f, x) { f(f(x)) }
        let y = twice(scale, 2.0);
        let z = 2.0 |> scale;
    """)
    assert out["y"] == 18.0 and out["z"] == 6.0


def test_scalar_function_applies_elementwise_to_arrays(run):
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    out = run("""
        let x: [f32; 2, 3, 4];
        fn relu(v) { if v > 0.0 { v } else { 0.0 } }
        let y = relu(x);
        let z = relu(x * 2.0 - 0.5) + x;
    """, x=x)
    np.testing.assert_array_equal(out["y"], np.maximum(x, 0))
    np.testing.assert_allclose(out["z"], np.maximum(x * 2 - 0.5, 0) + x, rtol=1e-6)


TYPED_ON_SCALARS = """
fn grade(score: i32) -> i32 { if score >= 90 { 4 } else if score >= 80 { 3 } else { 0 } }
fn affine(x: f32, w: [f32; 3]) -> f32 { x * w[0] + w[1] * w[2] }
fn clamp(x: f32, lo: f32, hi: f32) -> f32 { if x < lo { lo } else if x > hi { hi } else { x } }
fn positive(x: f32) -> bool { x > 0.0 }
let S: [i32; N, 4];
let X: [f32; N, 4];
let g = grade(S);
let literal = grade([95, 85, 70]);
let per_row[i] = sum[j](grade(S[i])[j]);
let a = affine(X, [1.0, 2.0, 3.0]);
let c = clamp(X, 0.5, 2.5);
let both = clamp(X, X * 0.5, 2.0);
let p = positive(X - 1.0);
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_function_typed_on_scalars_maps_over_arrays(target):
    """A parameter typed as a number given an array applies the function to each element, as
    an untyped one does; other arguments (an array parameter, scalars) are passed whole."""
    rng = np.random.default_rng(3)
    S = rng.integers(60, 100, (3, 4)).astype(np.int32)
    X = rng.uniform(0, 3, (3, 4)).astype(np.float32)
    program = einc.load(einc.compile(TYPED_ON_SCALARS, target=target).vmfb)
    try:
        out = program(S=S, X=X)
    finally:
        program.close()
    grade = np.where(S >= 90, 4, np.where(S >= 80, 3, 0))
    np.testing.assert_array_equal(out["g"], grade)
    np.testing.assert_array_equal(out["literal"], [4, 3, 0])
    np.testing.assert_array_equal(out["per_row"], grade.sum(axis=1))
    np.testing.assert_allclose(out["a"], X * 1 + 2 * 3, rtol=1e-6)
    np.testing.assert_array_equal(out["c"], np.clip(X, 0.5, 2.5))
    np.testing.assert_array_equal(out["both"], np.minimum(np.maximum(X, X * np.float32(0.5)), 2))
    np.testing.assert_array_equal(out["p"], X - 1 > 0)


@pytest.mark.parametrize("source, code, message", [
    ("fn grade(score: i32) -> i32 { score * 2 }\nlet X: [f32; N];\nlet g = grade(X);", "E002",
     "`grade` is applied to each element of an array of f32, but its parameter `score` is i32"),
    ("fn grade(score: i32) -> i32 { score * 2 }\nlet g = grade([1.5, 2.5]);", "E002", "expected i32"),
    ("fn two(x: f32) -> [f32; 2] { [x, x * 2.0] }\nlet g = two([1.5, 2.5]);", "E011",
     "`two` applied to each element of an array returns [f32; 2]"),
    ("fn pair(x: f32) -> (f32, f32) { (x, x) }\nlet g = pair([1.5, 2.5]);", "E011",
     "`pair` applied to each element of an array returns (f32, f32)"),
])
def test_mapping_a_typed_function_whose_types_do_not_fit_is_a_diagnostic(diagnose, source, code, message):
    diag, _ = diagnose(source)
    assert diag.code == code and message in diag.message


def test_std_math_imports(run):
    x = np.array([0.25, 1.0, 4.0], np.float32)
    out = run("""
        use std::math::{sqrt, exp};
        use std::math as m;
        let x: [f32; 3];
        let a = sqrt(x);
        let b = m::exp(x) + x.sqrt();
    """, x=x)
    np.testing.assert_allclose(out["a"], np.sqrt(x), rtol=1e-6)
    np.testing.assert_allclose(out["b"], np.exp(x) + np.sqrt(x), rtol=1e-6)


def test_main_reads_the_program_inputs_and_their_named_dims(run):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = run("""
        let X: [f32; R, C];
        fn main() {
            let col[j] = sum[i](X[i, j]);
            let mean = sum[j](col[j]) / ((R * C) as f32);
            (col, mean)
        }
    """, X=x)
    np.testing.assert_array_equal(out["main.0"], x.sum(0))     # exact: small integers in f32
    assert out["main.1"] == np.float32(x.mean())


def test_a_parameters_named_dims_are_its_sizes_in_the_body(run, diagnose):
    # `fn mean(p: [f32; M]) -> f32 { sum[i](p[i]) / (M as f32) }` was E003 "`M` is used before it
    # is defined": a parameter's named dims were bound only where an input declared them.
    v, w = np.arange(5, dtype=np.float32), np.linspace(0.0, 1.0, 8, dtype=np.float32)
    out = run("""
        let v: [f32; 5];
        let w: [f32; K];
        fn mean(p: [f32; M]) -> f32 { sum[i](p[i]) / (M as f32) }
        fn dot(a: [f32; L], b: [f32; L]) -> f32 { sum[i in 0..L](a[i] * b[i]) }
        fn middle(p: [f32; R, 2]) -> f32 { p[R / 2, 1] }
        let m = mean(v);
        let mw = mean(w);
        let d = dot(w, w);
        let q = middle([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        let width = (|a: [f32; Z]| Z)(w);
    """, v=v, w=w)
    np.testing.assert_allclose(out["m"], v.mean(), rtol=1e-6)
    np.testing.assert_allclose(out["mw"], w.mean(), rtol=1e-6)
    np.testing.assert_allclose(out["d"], w @ w, rtol=1e-6)
    assert out["q"] == 4.0 and out["width"] == 8
    diag, _ = diagnose("let v: [f32; 5];\nlet w: [f32; 4];\n"
                       "fn dot(a: [f32; L], b: [f32; L]) -> f32 { sum[i](a[i] * b[i]) }\nlet d = dot(v, w);\n")
    assert diag.code == "E004" and "`L` is 5 from an earlier parameter but 4 here" in diag.message


def test_functions_read_top_level_bindings_like_module_constants(tmp_path):
    # weights from a file, a literal, and a value computed from the run-time input, all read
    # by `fn infer` and `fn main`; `scale_later` is written before the `let` it reads
    rng = np.random.default_rng(5)
    w = rng.standard_normal((2, 3)).astype(np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    np.save(tmp_path / "w.npy", w)
    (tmp_path / "model.ein").write_text("""
        let X: [f32; N, 3];
        let W = load_npy("w.npy");
        let b = [0.5, -0.25];
        let mean_x[j] = sum[n](X[n, j]) / (N as f32);
        fn infer(v) { let o[i] = sum[j](W[i, j] * (v[j] - mean_x[j])) + b[i]; o }
        fn scale_later(v) { v * factor }
        let factor = 4.0;
        fn main() { (infer(X[0]), scale_later(b)) }
    """)
    out = einc.load(einc.compile(str(tmp_path / "model.ein")).vmfb)(X=x)
    np.testing.assert_allclose(out["main.0"], w @ (x[0] - x.mean(0)) + [0.5, -0.25], rtol=1e-5)
    np.testing.assert_array_equal(out["main.1"], [2.0, -1.0])


def test_a_function_reads_the_top_level_binding_in_effect_when_it_is_called(run):
    out = run("""
        let x = 1.0;
        fn f() { x }
        let before = f();
        let x = 2.0;
        let after = f();
    """)
    assert out["before"] == 1.0 and out["after"] == 2.0


def test_functions_of_a_local_module_read_its_top_level_bindings_and_consts(tmp_path):
    (tmp_path / "helpers.ein").write_text(
        "pub const K = 2.0;\nlet scale = 3.0;\nlet scale = scale + 1.0;\npub fn f(x) { x * K * scale }\n")
    (tmp_path / "main.ein").write_text("mod helpers;\nuse helpers::{f, K};\nlet y = f(1.5) + K;\n")
    out = einc.load(einc.compile(str(tmp_path / "main.ein")).vmfb)()
    assert out["y"] == 14.0


ROW_PROGRAM = """
    use std::math::sqrt;
    use std::ml::softmax;
    let X: [f32; N, D];
    fn mean(v) { sum[j](v[j]) / (v.length as f32) }
    fn normalize(v) { let c = v - mean(v); c / sqrt(sum[j](c[j] * c[j]) / (len(v) as f32) + 1e-5) }
    let Z[i, j] = normalize(X[i])[j];
    let P[i, j] = softmax(X[i] * 2.0)[j];
"""


def test_functions_of_a_row_inside_a_definition_run_for_every_row(run):
    x = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)
    out = run(ROW_PROGRAM, X=x)
    x64 = x.astype(np.float64)
    c = x64 - x64.mean(1, keepdims=True)
    e = np.exp(2 * x64 - (2 * x64).max(1, keepdims=True))
    np.testing.assert_allclose(out["Z"], c / np.sqrt((c * c).mean(1, keepdims=True) + 1e-5), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["P"], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_piecewise_definitions_of_a_function_called_per_point_run_for_every_point(run):
    """A function holding a definition of several clauses, or of one clause not starting at 0
    (`let p[t in 1..T] = ..;`), called per point (`let c[e] = f(X[e]);`) computes it for every
    point, as leading axes, guarded clauses and derivatives included. It was E011 (tests/semantics/
    test_diagnostics.py asserted it for `shifted`): found by the
    hold-out program rnn_train_epochs (`let curve[e in 0..8] = loss(P[e], U[e]);`)."""
    x = np.random.default_rng(5).standard_normal((3, 5))
    out = run("""
        let X: [f64; N, 5];
        fn tail(r) { let p[t in 1..5] = r[t] * r[t - 1]; sum[t in 1..5](p[t]) }
        fn decay(r) { let q[0] = r[0]; let q[t in 1..5] = 0.5 * q[t - 1] + r[t]; let w[t in 2..5] = q[t] - q[t - 2]; w[4] }
        fn parity(r) { let s[t in 0..5] = r[t] where t % 2 == 0; let s[t in 0..5] = -r[t] * r[0] where t % 2 == 1; s }
        let a[e] = tail(X[e]);
        let b[e in 0..N] = decay(X[e]);
        let c[e, t] = parity(X[e])[t];
        fn shifted(v) { let s[0] = 0.0; let s[j in 1..5] = v[j - 1]; s }
        let Y[i, j] = shifted(X[i])[j];
        let L = sum[e](a[e]);
        let dX = @L / @X;
    """, X=x)
    q = [x[:, 0]]
    for t in range(1, 5):
        q.append(0.5 * q[-1] + x[:, t])
    sign = np.where(np.arange(5) % 2 == 0, 1.0, -x[:, :1])
    grad = np.zeros_like(x); grad[:, 1:] += x[:, :-1]; grad[:, :-1] += x[:, 1:]
    np.testing.assert_allclose(out["a"], (x[:, 1:] * x[:, :-1]).sum(1), rtol=1e-12)
    np.testing.assert_allclose(out["b"], q[4] - q[2], rtol=1e-12)
    np.testing.assert_allclose(out["c"], x * sign, rtol=1e-12)
    np.testing.assert_allclose(out["Y"], np.hstack([np.zeros((3, 1)), x[:, :-1]]), rtol=1e-12)
    np.testing.assert_allclose(out["dX"], grad, rtol=1e-12)


def test_a_row_function_is_batched_over_the_rows_not_recomputed_per_point(tmp_path):
    # softmax(X[i] * 2.0) becomes whole-matrix kernels over [i, j], each computed once
    from einc.driver import emit_program
    path = tmp_path / "rows.ein"
    path.write_text(ROW_PROGRAM)
    ir_text = emit_program(str(path), "ir")
    row_sums = [line for line in ir_text.splitlines() if "f32[N] = generic [i < N] { sum[i' < D]" in line]
    assert len(row_sums) == 1, ir_text            # the softmax denominator: one vector for all rows


def test_a_generic_function_is_its_body_specialized_so_one_ignoring_its_array_gives_a_scalar(run):
    # elementwise application comes from the body's elementwise operations (monomorphization)
    x = np.array([-2, -2, -4], np.int32)
    out = run("""
        let x: [i32; 3];
        fn constant(a, b) { 3 }
        fn shifted(a, b) { b + 1 }
        let c = constant(2.5, x);
        let s = shifted(2.5, x);
    """, x=x)
    assert out["c"].shape == () and out["c"] == 3
    np.testing.assert_array_equal(out["s"], x + 1)


TYPED_ROWS = """
    use std::ml::{layer_normalization, softmax, relu};
    use std::array::argmax;
    let x: [f32; N, 8];
    let images: [f32; B, 3, 3];
    let W: [f32; 2, 9];
    let scale: [f32; 8];
    let bias: [f32; 8];
    fn first(v: [f32; 8]) -> f32 { let n = v * 2.0; n[0] }
    fn norm(v: [f32; 8]) -> [f32; 8] { layer_normalization(v, scale, bias, 1e-5, -1) }
    fn infer(img: [f32; 3, 3]) -> [f32; 2] {
        let h[j in 0..2] = sum[a in 0..3, b in 0..3](W[j, 3 * a + b] * img[a, b]);
        softmax(relu(h))
    }
    fn peak(v: [f32; 8]) -> i32 { argmax(v) as i32 }
    fn spread(v) { let c = v - sum[k](v[k]) / 8.0; sum[k](c[k] * c[k]) }
    let firsts = [first(x[i]) | i in 0..N];
    let firsts2[i in 0..N] = first(x[i]);
    let ln = [norm(row) | row in x];
    let ln2[i, c] = norm(x[i])[c];
    let probs = [infer(img) | img in images];
    let peaks = [peak(row) | row in x];
    let spreads = [spread(x[i]) | i in 0..N];
"""


def test_functions_of_rows_of_run_time_inputs_are_batched_in_comprehensions(run):
    """A function taking a typed row (`v: [f32; 8]`) applied to rows of a run-time input in a
    comprehension or an indexed definition: its body's whole-row work (elementwise ops, sums,
    layer_normalization, softmax, argmax) is batched over the rows as vmap does (it was E011,
    "a sub-array used whole"). NumPy computes each row's result in f64; tolerance 1e-5."""
    rng = np.random.default_rng(4)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    inputs = {"x": f(37, 8), "images": f(6, 3, 3), "W": f(2, 9), "scale": f(8), "bias": f(8)}
    out = run(TYPED_ROWS, **inputs)
    x, scale, bias = (inputs[k].astype(np.float64) for k in ("x", "scale", "bias"))
    np.testing.assert_allclose(out["firsts"], 2 * x[:, 0], rtol=1e-6)
    np.testing.assert_allclose(out["firsts2"], 2 * x[:, 0], rtol=1e-6)
    c = x - x.mean(1, keepdims=True)
    want = c / np.sqrt((c * c).mean(1, keepdims=True) + 1e-5) * scale + bias
    np.testing.assert_allclose(out["ln"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["ln2"], want, rtol=1e-5, atol=1e-5)
    h = np.maximum(inputs["images"].reshape(6, 9).astype(np.float64) @ inputs["W"].T.astype(np.float64), 0)
    e = np.exp(h - h.max(1, keepdims=True))
    np.testing.assert_allclose(out["probs"], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["peaks"], x.argmax(1))
    np.testing.assert_allclose(out["spreads"], (c * c).sum(1), rtol=1e-5)


def test_typed_row_functions_compute_each_row_reduction_once_for_all_rows(tmp_path):
    from einc.driver import emit_program
    path = tmp_path / "typed_rows.ein"
    path.write_text(TYPED_ROWS)
    ir_text = emit_program(str(path), "ir")
    # softmax's denominator over the images and layer_normalization's mean and variance over
    # the rows: one vector each, computed once for all rows
    assert len(re.findall(r"f32\[B\] = generic \[\w+ < B\] \{ sum\[", ir_text)) == 1, ir_text
    assert len(re.findall(r"f32\[N\] = generic \[\w+ < N\] \{ sum\[", ir_text)) >= 2, ir_text


WHOLE_ROW_REDUCTIONS = """
    use std::ml::{reduce_mean, reduce_log_sum_exp, softmax};
    let x: [f32; N, 3];
    let z: [f32; N, 2, 3];
    let xd: [f64; N, 3];
    let xi: [i32; N, 3];
    fn h(v: [f32; 3]) -> f32 { sum(v * 2.0) }
    fn spread(v: [f32; 3]) -> f32 { max(v) - min(v * v) }
    fn twice(v: [f32; 3]) -> f32 { let w = v * 2.0; sum(w) }
    fn inner(v) { max(v) }
    fn outer(v: [f32; 3]) -> f32 { inner(v + 1.0) + sum(v) }
    fn hd(v: [f64; 3]) -> f64 { sum(v * v) - max(v) }
    fn hi(v: [i32; 3]) -> i32 { sum(v * 2) + min(v) }
    let u[i] = h(x[i]);
    let s[r] = sum(x[r] * 2.0);
    let spreads = [spread(x[i]) | i in 0..N];
    let twices = [twice(v) | v in x];
    let outers[i] = outer(x[i]);
    let plane[i] = sum(z[i] * z[i]) + max(z[i]);
    let scaled[i, j] = x[i, j] / sum(x[i] * x[i]);
    let d[i] = hd(xd[i]);
    let n[i] = hi(xi[i]);
    let lib[i] = reduce_mean(x[i]) + reduce_log_sum_exp(x[i]);
    let p[i, j] = softmax(x[i] * 2.0)[j];
    let total = sum[i](u[i] * u[i]);
    let grad = @total / @x;
"""


def test_prelude_reductions_of_rows_are_one_per_point(run):
    """`sum`, `min` and `max` of one argument on a row of a run-time input (or an elementwise
    expression of rows), inline, in typed and generic functions, in comprehensions, on rows of
    rank 2, in f64 and i32, through std::ml, and differentiated: each row's reduction (was E011,
    "a sub-array used whole inside an indexed definition"). NumPy in f64; tolerance 1e-5."""
    rng = np.random.default_rng(11)
    x, z = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((5, 2, 3)).astype(np.float32)
    xd, xi = rng.standard_normal((5, 3)), rng.integers(-9, 9, (5, 3)).astype(np.int32)
    out = run(WHOLE_ROW_REDUCTIONS, x=x, z=z, xd=xd, xi=xi)
    X, Z = x.astype(np.float64), z.astype(np.float64)
    close = lambda name, want: np.testing.assert_allclose(out[name], want, rtol=1e-5, atol=1e-6)
    close("u", 2 * X.sum(1))
    close("s", 2 * X.sum(1))
    close("spreads", X.max(1) - (X * X).min(1))
    close("twices", 2 * X.sum(1))
    close("outers", (X + 1).max(1) + X.sum(1))
    close("plane", (Z * Z).sum((1, 2)) + Z.max((1, 2)))
    close("scaled", X / (X * X).sum(1, keepdims=True))
    np.testing.assert_allclose(out["d"], (xd * xd).sum(1) - xd.max(1), rtol=1e-12)
    np.testing.assert_array_equal(out["n"], 2 * xi.sum(1) + xi.min(1))
    close("lib", X.mean(1) + np.log(np.exp(X).sum(1)))
    e = np.exp(2 * X - (2 * X).max(1, keepdims=True))
    close("p", e / e.sum(1, keepdims=True))
    # d/dx of sum_i (2 sum_j x[i, j])^2 is 8 sum_j x[i, j] at every x[i, j]
    close("grad", np.broadcast_to(8 * X.sum(1, keepdims=True), X.shape))


def test_a_prelude_reduction_of_a_boolean_row_is_a_diagnostic(diagnose):
    diag, _ = diagnose("let b: [bool; 2, 3];\nlet c[i in 0..2] = sum(b[i]);")
    assert diag.code == "E002" and "`sum` needs a number or an array of numbers" in diag.message


def test_prelude_reductions_of_rows_in_a_recurrence_step(run):
    """A step reduces the previous step's state row and an input row whole. NumPy in f64;
    tolerance 1e-5."""
    x = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    out = run("""
        let x: [f32; 5, 3];
        let a[t in 0..1, j in 0..3] = x[0, j];
        let a[t in 1..5, j in 0..3] = a[t - 1, j] / max(a[t - 1] * a[t - 1]) + sum(x[t] * 2.0);
    """, x=x)
    X = x.astype(np.float64)
    want = [X[0]]
    for t in range(1, 5):
        want.append(want[-1] / (want[-1] ** 2).max() + 2 * X[t].sum())
    np.testing.assert_allclose(out["a"], np.array(want), rtol=1e-5)


def test_a_prelude_reduction_of_a_row_is_computed_once_per_row(tmp_path):
    from einc.driver import emit_program
    path = tmp_path / "row_sum.ein"
    path.write_text("let x: [f32; N, 3];\nlet w[i, j] = x[i, j] / sum(x[i] * x[i]);\n")
    ir_text = emit_program(str(path), "ir")
    # one vector of row sums, read at each (i, j): not a sum inside the kernel over j
    assert len(re.findall(r"f32\[N\] = generic \[\w+ < N\] \{ sum\[", ir_text)) == 1, ir_text
    assert not re.search(r"f32\[N, 3\] = generic .*sum\[", ir_text), ir_text
