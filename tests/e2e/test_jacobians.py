"""`@y / @x` for a y of any shape (LANGUAGE.md section 5): dense Jacobians against central
finite differences in f64, and rows (reverse mode), columns (forward mode) and entries against
the dense Jacobian, computed without it."""
import io

import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from einc.driver import emit_program

FD_TOL = dict(rtol=1e-6, atol=1e-8)     # vs central differences in f64 (conftest.FD_STEP)

VECTOR_FUNCTION = """use std::math::*;
let x: [f64; 6];
let W: [f64; 5, 6];
let v: [f64; 4];
let y[i in 0..5, j] = tanh(sum[k](W[i, k] * x[k])) * v[j] + x[i] * x[i + 1];
let J = @y / @x;
let JW = @y / @W;
let row = J[1, 2, :];
let col = J[:, :, 3];
let entry = J[4, 0, 5];
let row_W = JW[2, 3];
"""


def vector_function(x, W, v):
    return np.tanh(W @ x)[:, None] * v[None, :] + (x[:5] * x[1:])[:, None]


@pytest.fixture(scope="module")
def vector_inputs():
    rng = np.random.default_rng(11)
    return dict(x=rng.standard_normal(6), W=rng.standard_normal((5, 6)) * 0.5, v=rng.standard_normal(4))


def test_dense_jacobians_match_finite_differences(vector_inputs, fd_jacobian):
    x, W, v = vector_inputs["x"], vector_inputs["W"], vector_inputs["v"]
    out = einc.load(einc.compile(VECTOR_FUNCTION, outputs=["J", "JW"]).vmfb)(**vector_inputs)
    assert out["J"].shape == (5, 4, 6) and out["JW"].shape == (5, 4, 5, 6)
    np.testing.assert_allclose(out["J"], fd_jacobian(lambda z: vector_function(z, W, v), x), **FD_TOL)
    np.testing.assert_allclose(out["JW"], fd_jacobian(lambda z: vector_function(x, z, v), W), **FD_TOL)


def test_rows_columns_and_entries_are_slices_of_the_dense_jacobian(vector_inputs):
    out = einc.load(einc.compile(VECTOR_FUNCTION).vmfb)(**vector_inputs)
    J, JW = out["J"], out["JW"]
    np.testing.assert_allclose(out["row"], J[1, 2, :], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["col"], J[:, :, 3], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["entry"], J[4, 0, 5], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["row_W"], JW[2, 3], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["row", "col", "entry", "row_W"])
def test_a_projection_never_builds_the_dense_jacobian(tmp_path, name):
    path = tmp_path / "program.ein"
    path.write_text(VECTOR_FUNCTION)
    mlir = emit_program(str(path), "mlir", [name])
    assert "5x4x6xf64" not in mlir and "5x4x5x6xf64" not in mlir
    assert "5x4x6xf64" in emit_program(str(path), "mlir", ["J"])     # the check can fail


def test_derivative_of_an_element_inside_an_indexed_definition(fd_jacobian):
    rng = np.random.default_rng(4)
    x, W = rng.standard_normal(3), rng.standard_normal((3, 3))
    out = einc.load(einc.compile("""use std::math::*;
        let x: [f64; 3];
        let W: [f64; 3, 3];
        let h[i] = exp(sum[k](W[i, k] * x[k]));
        let local[i, k] = @h[i] / @W[i, k];
    """, outputs=["local"]).vmfb)(x=x, W=W)
    dense = fd_jacobian(lambda z: np.exp(z @ x), W)
    np.testing.assert_allclose(out["local"], np.einsum("iik->ik", dense), **FD_TOL)


def test_indices_read_from_a_jacobian_take_their_ranges_from_it(fd_jacobian):
    # Gauss-Newton's normal equations `sum[m](Jr[m, i] * Jr[m, j])` with `Jr = @r / @p` were E004
    # "cannot infer the range of index `m`": a Jacobian's reads gave their indices no extent.
    t, p = np.linspace(0.0, 3.0, 7), np.array([2.0, 1.3, 0.4])
    out = einc.load(einc.compile("""use std::math::exp;
        let t: [f64; M];
        let p: [f64; 3];
        let r[m] = p[0] * exp(-p[1] * t[m]) + p[2];
        let Jr = @r / @p;
        let A[i, j] = sum[m](Jr[m, i] * Jr[m, j]);
        let first[m] = Jr[m, 0];
        fn norm2(q: [f64; 3]) -> f64 { let s[m] = q[0] * exp(-q[1] * t[m]); let G = @s / @q; sum[m, i](G[m, i] * G[m, i]) }
        let g2 = norm2(p);
    """).vmfb)(t=t, p=p)
    J = fd_jacobian(lambda q: q[0] * np.exp(-q[1] * t) + q[2], p)
    np.testing.assert_allclose(out["A"], J.T @ J, **FD_TOL)
    np.testing.assert_allclose(out["first"], J[:, 0], **FD_TOL)
    np.testing.assert_allclose(out["g2"], (J[:, :2] ** 2).sum(), **FD_TOL)


def test_print_of_a_jacobian():
    art = einc.compile("let x: [f64; 2];\nlet y = x * x;\nprint(@y / @x);\n")
    buf = io.StringIO()
    einc.load(art.vmfb).run({"x": np.array([1.5, -2.0])}, stdout=buf)
    printed = np.array(buf.getvalue().replace("[", " ").replace("]", " ").split(), float)
    np.testing.assert_array_equal(printed, [3.0, 0.0, 0.0, -4.0])


# ---------------------------------------------------------------- user derivative rules

RULES = """use std::math::*;
fn softplus(z) { log(1.0 + exp(z)) }
@fn softplus(z) { @z / (1.0 + exp(-z)) }
fn cube_ish(z) { z * z }
@fn cube_ish(z) { 3.0 * z * @z }
let x: [f64; 3];
let a: f64;
let s = sum[i](softplus(x[i] * a));
let grad_x = @s / @x;
let grad_a = @s / @a;
let sp = softplus(x);
let J_sp = @sp / @x;
let q = cube_ish(a);
let dq = @q / @a;
let qs = cube_ish(x);
let col_qs = (@qs / @x)[:, 1];
"""


def test_user_rules_are_used_by_both_modes(fd_jacobian):
    x, a = np.array([0.3, -1.2, 2.0]), 0.7
    out = einc.load(einc.compile(RULES).vmfb)(x=x, a=a)
    softplus = lambda z: np.log1p(np.exp(z))
    np.testing.assert_allclose(out["grad_x"], fd_jacobian(lambda z: softplus(z * a).sum(), x), **FD_TOL)
    np.testing.assert_allclose(out["grad_a"], fd_jacobian(lambda z: softplus(x * z).sum(), np.array(a)), **FD_TOL)
    np.testing.assert_allclose(out["J_sp"], fd_jacobian(softplus, x), **FD_TOL)
    # `cube_ish` (z * z) has a deliberately wrong rule (3 z instead of 2 z): the rule, not the body, counts
    assert out["q"] == a * a
    np.testing.assert_allclose(out["dq"], 3 * a, rtol=1e-15)
    np.testing.assert_allclose(out["col_qs"], [0.0, 3 * x[1], 0.0], rtol=1e-15)


def test_a_rule_that_calls_its_own_function_takes_its_value():
    # `hyp(a, b)` in its own rule is the value (the body's): evaluating the rule again there
    # recursed without end (a RecursionError); the rule is deliberately 2x the true derivative
    # so that the test tells rule from body
    source = """use std::math::sqrt;
fn hyp(a, b) { sqrt(a * a + b * b) }
@fn hyp(a, b) { 2.0 * (a * @a + b * @b) / hyp(a, b) }
let p: [f64; 4, 2];
let total = sum[i](hyp(p[i, 0], p[i, 1]));
let g = @total / @p;
"""
    p = np.random.default_rng(5).standard_normal((4, 2))
    out = einc.load(einc.compile(source).vmfb)(p=p)
    r = np.sqrt((p * p).sum(1))
    np.testing.assert_allclose(out["total"], r.sum(), rtol=1e-14)
    np.testing.assert_allclose(out["g"], 2 * p / r[:, None], rtol=1e-14)


TANGENTS = """
let x: f64;
let v: [f64; 3];
let y = x * x + 3.0 * x;
let dy = @y;
let tx = @x;
let w[i in 0..4] = x * (i as f64) * x;
let dw = @w;
let s = sum[i](v[i] * v[i]);
let ds = @s;
let de[i] = @(v[i] * v[i] * v[i]);
print(@y);
"""


def test_a_bare_differential_is_the_tangent_along_the_one_input_read():
    # thesis 6.1 `let tx = @x;`, LANGUAGE.md section 5 `print(@y)`: E011 before. The seed is 1 on
    # every element of the input (the thesis's ones_like), so @s for s = |v|^2 is 2 sum(v).
    x, v = 1.5, np.array([0.5, -1.0, 2.0])
    buf = io.StringIO()
    out = einc.load(einc.compile(TANGENTS).vmfb).run({"x": x, "v": v}, stdout=buf)
    assert out["dy"] == 2 * x + 3 and out["tx"] == 1.0 and buf.getvalue() == f"{2 * x + 3}\n"
    np.testing.assert_allclose(out["dw"], 2 * x * np.arange(4), rtol=1e-15)
    np.testing.assert_allclose(out["ds"], 2 * v.sum(), rtol=1e-15)
    np.testing.assert_allclose(out["de"], 3 * v * v, rtol=1e-15)


# ---------------------------------------------------------------- unsupported

@pytest.mark.parametrize("source, words", [
    ("let x: f64;\nlet z: f64;\nlet y = x * z;\nlet t = @y;\n", "along the one input it reads, but it reads `x`, `z`"),
    ("let c = 2.0;\nlet t = @c;\n", "reads no run-time float input"),
    ("let x: [f64; 3];\nlet y = x[:];\n", "`:` slice of an array that is not a derivative"),
    ("let x: [f64; 3];\nlet y = x * x;\nlet c[i] = (@y / @x)[i, :];\n", "`:` slice of a derivative inside"),
    ("let x: [f64; T];\nlet a[0] = 0.0;\nlet b[0] = 0.0;\nlet a[t in 1..T] = b[t - 1] + x[t];\n"
     "let b[t in 1..T] = a[t] * 2.0;\nlet l = sum[t](b[t]);\nlet g = @l / @a;\n", "through its own recurrence"),
    ("let x: [f64; T];\nlet a[0] = 0.0;\nlet b[0] = 0.0;\nlet a[t in 1..T] = b[t - 1] + x[t];\n"
     "let b[t in 1..T] = a[t] * 2.0;\nlet c = (@b / @a)[:, 0];\n", "through its own recurrence"),
    # a gradient per microbatch inside a sum over them whose range is inferred (an internal
    # error before, a TypeError; with the range written it is compiled,
    # tests/e2e/test_per_point_gradients.py)
    ("let X: [f32; M, B, D];\nlet w: [f32; D];\n"
     "fn grad(X, w) { let r[n] = sum[d](X[n, d] * w[d]); let L = sum[n](r[n] * r[n]); @L / @w }\n"
     "let g[d] = sum[mb](grad(X[mb], w)[d]);\n", "per point of `mb`, an index whose range is inferred"),
    # a Jacobian with respect to a point's row that a recurrence reads (the row's reads there
    # are not rewritten; a gradient falls back to the whole array's, a Jacobian is E011)
    ("let m: [f64; 5, 4];\nfn f(x) { let h[0] = x[0]; let h[t in 1..4] = h[t - 1] * x[t]; h }\n"
     "fn g(m, t) { let r = m[t]; let y = f(r); let J = @y / @r; J[3, 0] }\n"
     "let d[t in 0..5] = g(m, t);\n", "Jacobian with respect to a point's row that a recurrence"),
    ("fn total(v: [f64; 3]) -> f64 { sum[i](v[i]) }\n@fn total(v) { 1.0 }\n"
     "let x: [f64; 3];\nlet s = total(x);\n", "derivative rule for `total`"),
])
def test_unsupported_derivatives_are_E011_naming_the_construct(source, words):
    with pytest.raises(CompileError) as info:
        einc.compile(source)
    assert info.value.diagnostics[0].code == "E011"
    assert words in info.value.diagnostics[0].message


def test_a_rule_for_a_function_of_a_whole_array_is_E011_naming_the_array_and_the_failing_point():
    """`lse(v)` reads v[k]: applied point by point, as a rule's function is, its body fails on a
    scalar. That was reported alone (E002 "cannot index a value of type f64" inside `lse`); now
    E011 at the call names the array and the rule, the failure a note."""
    with pytest.raises(CompileError) as info:
        einc.compile("use std::math::{exp, ln};\nlet a: [f64; 4];\n"
                     "fn lse(v) { let m = max[k](v[k]); m + ln(sum[k](exp(v[k] - m))) }\n"
                     "@fn lse(v) { sum[k](exp(v[k] - lse(v)) * @v[k]) }\nlet y = lse(a);\n")
    first = info.value.diagnostics[0]
    assert first.code == "E011" and "derivative rule for `lse`, called with [f64; 4]" in first.message
    assert first.span.line == 5 and "cannot index" in first.notes[0].note


def test_jacobian_entries_per_point_of_an_enclosing_definition():
    """`J[0, t, 0]` of `@y / @m` where y = f(m[t]) is computed per point t: the reverse pass's
    tensors batched over t (a lowering failure before, "not iterated by the enclosing kernel")."""
    m = np.arange(10.0).reshape(5, 2) * 0.3 - 0.4
    out = einc.load(einc.compile("""let m: [f64; 5, 2];
        fn f(x) { [x[0] * x[1], x[1] + x[0] * x[0]] }
        fn det(m, t) { let y = f(m[t]); let J = @y / @m; J[0, t, 0] * J[1, t, 1] - J[0, t, 1] * J[1, t, 0] }
        let d[t in 0..5] = det(m, t);
        let cross[t in 0..5, k in 0..2] = (@f(m[t]) / @m)[0, (t + 1) % 5, k];
    """).vmfb)(m=m)
    np.testing.assert_allclose(out["d"], m[:, 1] - 2 * m[:, 0] ** 2, rtol=1e-15)
    np.testing.assert_array_equal(out["cross"], np.zeros((5, 2)))    # y at t reads no other row


def test_derivatives_inside_functions_and_blocks():
    x = np.array([0.5, -1.0, 2.0])
    out = einc.load(einc.compile("""use std::math::*;
        fn jacobian_row(v, k: i32) {
            let y = v * v;
            let J = @y / @v;
            J[k]
        }
        let x: [f64; 3];
        let row = jacobian_row(x, 1);
        let g = { let s = sum[i](exp(x[i])); @s / @x };
    """).vmfb)(x=x)
    np.testing.assert_array_equal(out["row"], [0.0, -2.0, 0.0])
    np.testing.assert_allclose(out["g"], np.exp(x), rtol=1e-15)


@pytest.mark.parametrize("k", ["k", "k in 0..3"])
def test_a_scalar_gradient_per_point_with_the_range_inferred_or_given(k):
    """A function taking a point's value and differentiating inside it (Newton's step for an
    implied volatility per strike, found by the hold-out program implied_vol): with the point's
    range inferred, `k` was still pending when the gradient was asked for and any such request
    was E011, though the gradient is scalars only; with `k in 0..3` it compiled. A gradient whose
    tensors read `k` is compiled with its range written (tests/e2e/test_per_point_gradients.py)."""
    x, w = np.array([0.5, -1.0, 2.0]), 1.5
    out = einc.load(einc.compile(f"""use std::math::*;
        let x: [f64; 3];
        let w: f64;
        fn slope(a, w) {{ let s = a; let c = exp(w * s) + sum[j](s * x[j] * w); @c / @s }}
        let v[{k}] = slope(x[k], w);
    """).vmfb)(x=x, w=np.float64(w))
    np.testing.assert_allclose(out["v"], w * np.exp(w * x) + w * x.sum(), rtol=1e-14)


def test_reverse_and_forward_mode_through_a_piecewise_definition(fd_jacobian):
    x = np.array([0.5, -1.0, 2.0, 0.25])
    out = einc.load(einc.compile("""use std::math::*;
        let x: [f64; 4];
        let y[0] = x[0] * x[1];
        let y[i in 1..4] = exp(x[i]) * x[i - 1];
        let y[2] = x[2] * x[2] * x[2];
        let loss = sum[i](y[i] * y[i]);
        let g = @loss / @x;
        let J = @y / @x;
        let row = J[2];
    """).vmfb)(x=x)

    def y(v):
        out = np.r_[v[0] * v[1], np.exp(v[1:]) * v[:-1]]
        out[2] = v[2] ** 3
        return out
    np.testing.assert_allclose(out["g"], fd_jacobian(lambda v: (y(v) ** 2).sum(), x), **FD_TOL)
    np.testing.assert_allclose(out["J"], fd_jacobian(y, x), **FD_TOL)
    np.testing.assert_allclose(out["row"], out["J"][2], rtol=1e-14)


def test_both_modes_through_an_array_literal_of_a_points_values(fd_jacobian):
    """`[x[r, 0], x[r, 1] * x[r, 0], x[r, 2]][k]`: a literal the kernel builds at each point r
    (fuzz seed 303: an internal error, its elements' index r not iterated by the derivative's
    kernel); through a max of one, whose derivative reads it again at fresh reduction indices."""
    x = np.array([[1.0, -2.0, 0.25], [0.3, 0.7, 0.1]])
    out = einc.load(einc.compile("""use std::math::*;
        let x: [f64; 2, 3];
        let r[p in 0..2, k in 0..3] = [x[p, 0], x[p, 1] * x[p, 0], x[p, 2]][k];
        let m[p in 0..2] = max[k in 0..3]([x[p, 0], x[p, 1], 3.0 * x[p, 2]][k]);
        let y[i in 0..4] = sin(m[i / 2]) + r[i % 2, i % 3] * r[i % 2, i % 3];
        let loss = sum[i](y[i] * y[i]);
        let g = @loss / @x;
        let J = @y / @x;
    """).vmfb)(x=x)

    def y(v):
        r = np.stack([v[:, 0], v[:, 1] * v[:, 0], v[:, 2]], 1)
        m = np.stack([v[:, 0], v[:, 1], 3 * v[:, 2]], 1).max(1)
        i = np.arange(4)
        return np.sin(m[i // 2]) + r[i % 2, i % 3] ** 2
    np.testing.assert_allclose(out["g"], fd_jacobian(lambda v: (y(v) ** 2).sum(), x), **FD_TOL)
    np.testing.assert_allclose(out["J"], fd_jacobian(y, x), **FD_TOL)


def test_a_read_of_a_derivative_gives_its_indices_their_ranges():
    """`J[i, k]` of `let J = @y / @x;` (and `(@y / @x)[i, k]`) bounds i and k by the
    derivative's shape, as a tensor's read does: it was E004 "cannot infer the range"."""
    rng = np.random.default_rng(14)
    x, W = rng.standard_normal(4), rng.standard_normal((3, 4))
    out = einc.load(einc.compile("""
        let x: [f64; 4];
        let W: [f64; 3, 4];
        let y[i in 0..3] = sum[k](W[i, k] * x[k]) * x[i];
        let J = @y / @x;
        let jvp[i] = sum[k](J[i, k] * x[k]);
        let vjp[k] = sum[i]((@y / @x)[i, k] * W[i, 0]);
    """).vmfb)(x=x, W=W)
    J = W * x[:3, None]
    J[np.arange(3), np.arange(3)] += W @ x
    np.testing.assert_allclose(out["jvp"], J @ x, rtol=1e-12)
    np.testing.assert_allclose(out["vjp"], W[:, 0] @ J, rtol=1e-12)


def test_a_read_of_a_derivative_under_a_guard_is_bounds_checked_as_guarded():
    """`if j < 3 { H[i, j] } else { g[i] }` over j in 0..4, with H a Jacobian, reads H only where
    the guard holds, as a tensor's read there does; it was E005 "read out of bounds": found by the
    hold-out program newton_logreg (the augmented matrix [H | g] of a Newton step, H = @g / @w).
    An unguarded read past the axis stays E005."""
    w = np.array([0.5, -1.0, 2.0])
    out = einc.load(einc.compile("""
        let w: [f64; 3];
        let L = sum[j](w[j] * w[j] * w[j]);
        let g = @L / @w;
        let H = @g / @w;
        let A[i in 0..3, j in 0..4] = if j < 3 { H[i, j] } else { g[i] };
    """).vmfb)(w=w)
    np.testing.assert_allclose(out["A"], np.hstack([np.diag(6 * w), (3 * w * w)[:, None]]), rtol=1e-12)
    with pytest.raises(CompileError) as info:
        einc.compile("let w: [f64; 3];\nlet y[i] = w[i] * w[i];\nlet J = @y / @w;\n"
                     "let A[i in 0..3, j in 0..4] = J[i, j];\n")
    assert info.value.diagnostics[0].code == "E005"
