"""Derivatives with respect to build-time values (LANGUAGE.md section 9): a binding under `@`
is a variable whatever its origin, so `@e / @h` of `let h = 1.5; let e = h * h * h;` is 6.75,
never a 0 left by constant folding. Expected values are the analytic derivatives."""
import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from einc.driver import emit_program
from tests.tiers import VULKAN_FULL

LITERALS = """
use std::math::{sin, cos};
let h = 1.5;
let e = h * h * h;
let de = @e / @h;
let dde = @de / @h;
let hf: f32 = 1.5;
let ef = hf * hf * hf;
let def = @ef / @hf;
let M = [[1.0, 2.0], [3.0, 4.0]];
let a = M[0, 0];
let trace = a + M[1, 1];
let det = a * M[1, 1] - M[0, 1] * M[1, 0];
let dtrace = @trace / @a;
let ddet = @det / @a;
let dtrace_dM = @trace / @M;
let w = [1.0, 2.0, 3.0];
let cubes = sum[i](w[i] * w[i] * w[i]);
let dcubes = @cubes / @w;
let sq[i] = w[i] * w[i] * 3.0;
let jac = @sq / @w;
fn f(v) { v * v + sin(v) }
let x = 2.0;
let y = f(x);
let dy = @y / @x;
let v = h * 2.0;
let yv = v * v;
let dyv_dv = @yv / @v;
let dyv_dh = @yv / @h;
let n = 3;
let yn = n * 2.5;
let dyn = @yn / @n;
let c = 2.0;
let dc = @c / @h;
fn square(s) { s * s }
@fn square(s) { 2.0 * s * @s }
let q = 3.0;
let sq = square(q);
let dq = @sq / @q;
let k = 0.5;
let u[0] = 1.0;
let u[t in 1..6] = u[t - 1] * (1.0 - k * 0.1);
let du = @u / @k;
let last = u[5];
let dlast = @last / @k;
"""


@pytest.fixture(scope="module", params=["llvm-cpu", VULKAN_FULL])
def literals(request):
    return einc.load(einc.compile(LITERALS, target=request.param).vmfb)()


def test_a_derivative_of_an_untyped_literal_binding_is_its_analytic_value(literals):
    assert literals["de"] == np.float32(6.75) and literals["de"].dtype == np.float32
    assert literals["dde"] == np.float32(9.0)          # the first derivative is a graph in h too


def test_the_ir_shows_the_variable_as_one_unfolded_value(tmp_path):
    path = tmp_path / "cube.ein"
    path.write_text("let h = 1.5;\nlet e = h * h * h;\nlet de = @e / @h;\n")
    ir = emit_program(str(path), "ir")
    assert "%0: f32 = variable 1.5" in ir and "output e = ((%0 * %0) * %0)" in ir


def test_a_typed_constant_under_at_is_not_folded_into_a_zero_derivative(literals):
    assert literals["ef"] == np.float32(3.375) and literals["def"] == np.float32(6.75)


def test_elements_of_a_literal_matrix_are_variables(literals):
    assert literals["dtrace"] == 1.0 and literals["ddet"] == 4.0
    np.testing.assert_array_equal(literals["dtrace_dM"], [[1.0, 0.0], [0.0, 1.0]])


def test_a_literal_array_as_the_parameter_gives_its_gradient_and_jacobian(literals):
    w = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(literals["dcubes"], 3 * w * w, rtol=1e-6)
    np.testing.assert_allclose(literals["jac"], np.diag(6 * w), rtol=1e-6)


def test_derivatives_go_through_functions_of_literals(literals):
    np.testing.assert_allclose(literals["dy"], 2 * 2.0 + np.cos(2.0), rtol=1e-6)
    assert literals["sq"] == 9.0 and literals["dq"] == 6.0      # through a `@fn` rule


def test_a_value_computed_from_a_variable_is_a_variable_and_the_chain_rule_holds(literals):
    assert literals["dyv_dv"] == 6.0 and literals["dyv_dh"] == 12.0


def test_an_int_literal_binding_takes_the_float_type_its_use_gives(literals):
    assert literals["dyn"] == np.float32(2.5)


def test_a_value_that_does_not_use_the_variable_has_a_zero_derivative(literals):
    assert literals["dc"] == 0.0


def test_a_recurrence_over_literal_inputs_has_its_forward_and_reverse_derivatives(literals):
    t = np.arange(6)
    expected = -0.1 * t * (1 - 0.05) ** np.maximum(t - 1, 0)      # d/dk (1 - 0.1 k)^t at k = 0.5
    np.testing.assert_allclose(literals["du"], expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(literals["dlast"], expected[5], rtol=1e-5)     # an adjoint loop


def test_an_untyped_variable_takes_f64_from_its_use():
    out = einc.load(einc.compile("""
        let x: f64 = 2.0;
        let s = 0.5;
        let y = x * s * s;
        let g = @y / @s;
    """).vmfb)()
    assert out["g"].dtype == np.float64 and out["g"] == 2.0


RUN_TIME_VIEWS = """
let X: [f32; 2, 3];
let a = X[0, 0];
let s = sum[j](X[0, j] * a);
let ds = @s / @a;
let r = X[1];
let norm = sum[j](r[j] * r[j]);
let dnorm = @norm / @r;
let z[j] = X[1, j] * a;
let J = @z / @a;
let q = J[0] * J[2];
let dq = @q / @J;
"""


def test_a_binding_that_reads_an_element_or_a_row_is_its_own_variable():
    # `a = X[0, 0]` is one value: s reads X[0, 0] through X[0, j] too, but only a's use counts
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    out = einc.load(einc.compile(RUN_TIME_VIEWS).vmfb)(X=x)
    assert out["ds"] == x[0].sum()
    np.testing.assert_array_equal(out["dnorm"], 2 * x[1])
    np.testing.assert_array_equal(out["J"], x[1])
    np.testing.assert_array_equal(out["dq"], [x[1, 2], 0.0, x[1, 0]])


RENAMED = """
let s: f32;
let x: [f32; 3];
let sw = s;
let ys = s * 3.0 + sw * sw;
let dys = @ys / @sw;
let xw = x;
let yx = sum[i in 0..3](x[i] * xw[i] * xw[i]);
let dyx_xw = @yx / @xw;
let dyx_x = @yx / @x;
let h: f32 = 1.5;
let hw = h;
let yh = h * hw * hw;
let dyh_hw = @yh / @hw;
let dyh_h = @yh / @h;
let l = 2.5;
let lw = l;
let yl = l * lw;
let dyl_lw = @yl / @lw;
let dyl_l = @yl / @l;
"""


def test_a_binding_that_renames_another_is_its_own_variable():
    # `let w = x;`: @y / @w counts only the uses of w in y (it counted those of x too: fuzz seed
    # 1 program 482), while @y / @x still counts every use, those through w included
    x = np.array([1.0, 2.0, 3.0], np.float32)
    s = np.float32(2.0)
    out = einc.load(einc.compile(RENAMED).vmfb)(s=s, x=x)
    expected = {"dys": 2 * s, "dyx_xw": 2 * x * x, "dyx_x": 3 * x * x, "dyh_hw": 2 * 1.5 * 1.5,
                "dyh_h": 3 * 1.5 * 1.5, "dyl_lw": 2.5, "dyl_l": 2 * 2.5}
    for name, value in expected.items():
        np.testing.assert_allclose(out[name], value, rtol=1e-6, err_msg=name)


LIBRARY_LOSSES = """
use std::ml::{mse_loss, softmax};
let pred: [f32; 3];
let target = [1.5, 2.0, 2.0];
let loss = mse_loss(pred, target);
let dloss = @loss / @pred;
let z = [1.0, 2.0, 3.0];
let p = softmax(z);
let dp = @p / @z;
"""


def test_derivatives_through_library_reductions_to_a_scalar_tensor():
    # sum_all leaves a rank-0 tensor standing in the loss's expression: its adjoint was dropped
    # (a silent 0) and its tangent was E011
    pred = np.array([1.0, 2.0, 3.0], np.float32)
    out = einc.load(einc.compile(LIBRARY_LOSSES).vmfb)(pred=pred)
    np.testing.assert_allclose(out["dloss"], 2 * (pred - [1.5, 2.0, 2.0]) / 3, rtol=1e-6, atol=1e-7)
    p = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(out["dp"], np.diag(p) - np.outer(p, p), rtol=1e-5, atol=1e-6)


LITERAL_RNN = """
use std::math::tanh;
let W = [[0.5, -0.2], [0.1, 0.3]];
let x = [[1.0, 0.0], [0.5, -0.5], [0.2, 0.1], [0.0, 1.0]];
let h[0, i in 0..2] = 0.0;
let h[t in 1..4, i in 0..2] = tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i]);
let loss = sum[t, i](h[t, i] * h[t, i]) / 2.0;
let g = @loss / @W;
"""


def test_reverse_mode_through_a_recurrence_over_literal_inputs(fd_jacobian):
    W = np.array([[0.5, -0.2], [0.1, 0.3]])
    x = np.array([[1.0, 0.0], [0.5, -0.5], [0.2, 0.1], [0.0, 1.0]])

    def loss(w):
        h = np.zeros((4, 2))
        for t in range(1, 4):
            h[t] = np.tanh(w @ h[t - 1] + x[t])
        return (h ** 2).sum() / 2
    out = einc.load(einc.compile(LITERAL_RNN).vmfb)()
    np.testing.assert_allclose(out["g"], fd_jacobian(loss, W), rtol=1e-4, atol=1e-6)


COMPREHENSIONS = """
let w = [1.0, 2.0, 3.0];
let squares = [v * v | v in w];
let total = squares[0] + squares[1] + squares[2];
let dtotal = @total / @w;
let big = [v * 2.0 | v in w, v > 1.5];
let kept = big[0] + big[1];
let dkept = @kept / @w;
let u: [f32; 3] = [1.0, 2.0, 3.0];
let doubled = u * 2.0;
let picked = [v * v | v in doubled, v > 3.0];
let both = picked[0] + picked[1];
let dboth = @both / @u;
let h = 1.5;
let appended = array_append([1.0, 2.0], h);
let last_sq = appended[2] * appended[2];
let dlast_sq = @last_sq / @h;
let grown = array_append(u, 3.0);
let grown_sq = sum[i](grown[i] * grown[i]);
let dgrown_sq = @grown_sq / @u;
"""


def test_comprehensions_and_appends_of_a_variable_keep_its_elements_in_the_graph():
    # build-time comprehensions and array_append took the variable's numbers: a silent 0
    out = einc.load(einc.compile(COMPREHENSIONS).vmfb)()
    np.testing.assert_array_equal(out["dtotal"], [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(out["dkept"], [0.0, 2.0, 2.0])
    np.testing.assert_array_equal(out["dboth"], [0.0, 16.0, 24.0])
    assert out["dlast_sq"] == 3.0
    np.testing.assert_array_equal(out["dgrown_sq"], [2.0, 4.0, 6.0])


def test_a_python_function_of_a_variable_is_an_error_not_a_zero_derivative(tmp_path):
    (tmp_path / "helpers.py").write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "prog.ein").write_text("use python::helpers;\nlet h = 1.5;\nlet y = helpers::double(h);\n"
                                       "let g = @y / @h;\n")
    with pytest.raises(CompileError) as info:
        einc.compile(tmp_path / "prog.ein", allow_python=True)
    diag = info.value.diagnostics[0]
    assert diag.code == "E011" and diag.span.line == 3 and "derivative" in diag.message
