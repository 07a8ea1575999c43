"""The Einlang examples of the reference documents (/work/shared/spec/einlang-thesis.md,
chapters 2-6, and /work/shared/LANGUAGE.md), each made a program by declaring its inputs and
run against a NumPy reference written here. The example's own lines are kept verbatim; only the
declarations before them (and the functions they call) are ours. After them, the tests a peer
would write from LANGUAGE.md section by section, for what the other suites leave out."""
import io

import ml_dtypes
import numpy as np
import pytest

import einc
from tests.programs import built

rng = np.random.default_rng(2029)

MATMUL_FIGURE_2_1 = """
    let A: [f32; 5, 3];
    let B: [f32; 3, 4];
    let C[i, j] =
      sum[k] (A[i, k] * B[k, j]);
"""
RECURRENCE_FIGURE_2_2 = """
    let init: f32;
    let x: [f32; T];
    fn step(y, v) { 0.9 * y + v }
    let y[0] = init;
    let y[t in 1..T] =
      step(y[t - 1], x[t]);
    let out = y[T - 1];
"""


def run_with(source: str, inputs: dict) -> dict:
    """Build `source` for llvm-cpu and run it on `inputs` (a dict: an input may be called `target`)."""
    return einc.load(built(source).vmfb).run(inputs)


def test_chapter_2_opening_matmul_recurrence_and_derivative(run):
    # thesis chapter 2: C = A B, x[t] = step(x[t - 1], u[t]), dx0 = @x[T - 1] / @x0
    source = """
    let A: [f64; 3, 4];
    let B: [f64; 4, 2];
    let x0: f64;
    let u: [f64; T];
    fn step(x, v) { 0.5 * x * x + v }
    let C[i, j] = sum[k](A[i, k] * B[k, j]);
    let x[0] = x0;
    let x[t in 1..T] = step(x[t - 1], u[t]);
    let dx0 = @x[T - 1] / @x0;
    """
    A, B, u = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.uniform(-0.3, 0.3, 6)
    out = run(source, A=A, B=B, x0=np.float64(0.4), u=u)
    x, dx = [0.4], 1.0
    for t in range(1, 6):
        dx *= x[-1]                     # d step / d x = x
        x.append(0.5 * x[-1] ** 2 + u[t])
    np.testing.assert_allclose(out["C"], A @ B, rtol=1e-12)
    np.testing.assert_allclose(out["x"], x, rtol=1e-12)
    np.testing.assert_allclose(out["dx0"], dx, rtol=1e-12)


def test_section_2_1_direct_convolution(run):
    source = """
    let X: [f32; N, IC, H, W_];
    let W: [f32; OC, IC, KH, KW];
    let OH = H - KH + 1;
    let OW = W_ - KW + 1;
    let Y[n in 0..N, o in 0..OC, i in 0..OH, j in 0..OW] =
      sum[c in 0..IC, r in 0..KH, s in 0..KW](
        X[n, c, i + r, j + s] * W[o, c, r, s]);
    """
    X = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    W = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    windows = np.lib.stride_tricks.sliding_window_view(X, (3, 2), axis=(2, 3))
    expected = np.einsum("ncijrs,ocrs->noij", windows.astype(np.float64), W.astype(np.float64))
    np.testing.assert_allclose(run(source, X=X, W=W)["Y"], expected, rtol=1e-5, atol=1e-5)


def test_figure_2_1_matmul_written_over_two_lines(run):
    source = MATMUL_FIGURE_2_1
    A, B = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(run(source, A=A, B=B)["C"], A @ B, rtol=1e-5, atol=1e-6)


def test_section_2_1_1_a_guard_filters_points_and_a_sum_reads_them(run):
    source = """
    let N: i32 = 11;
    let even_square[i in 0..N] = i * i where i % 2 == 0;
    let total = sum[k in 0..N](even_square[k]);
    """
    out = run(source)
    expected = np.array([i * i if i % 2 == 0 else 0 for i in range(11)])
    np.testing.assert_array_equal(out["even_square"], expected)
    assert out["total"] == expected.sum()


def test_section_2_2_two_dimensional_recurrence_with_boundary_clauses(run):
    source = """
    let top: [f64; N];
    let left: [f64; M];
    let input: [f64; M, N];
    fn mix(up, before, here) { 0.5 * up + 0.25 * before + here }
    let H[0, j in 0..N] = top[j];
    let H[i in 0..M, 0] = left[i];
    let H[i in 1..M, j in 1..N] =
        mix(H[i - 1, j], H[i, j - 1], input[i, j]);
    """
    top, left, inp = rng.standard_normal(5), rng.standard_normal(4), rng.standard_normal((4, 5))
    H = np.zeros((4, 5))
    H[0, :] = top
    H[:, 0] = left          # the later clause wins at (0, 0)
    for i in range(1, 4):
        for j in range(1, 5):
            H[i, j] = 0.5 * H[i - 1, j] + 0.25 * H[i, j - 1] + inp[i, j]
    np.testing.assert_allclose(run(source, top=top, left=left, input=inp)["H"], H, rtol=1e-12)


def test_figure_2_2_recurrence_observed_at_its_last_step(run):
    source = RECURRENCE_FIGURE_2_2
    x = rng.standard_normal(9).astype(np.float32)
    y = [np.float32(1.5)]
    for t in range(1, 9):
        y.append(np.float32(0.9) * y[-1] + x[t])
    out = run(source, init=np.float32(1.5), x=x)
    np.testing.assert_allclose(out["y"], y, rtol=1e-6)
    np.testing.assert_allclose(out["out"], y[-1], rtol=1e-6)


def test_section_2_2_1_fibonacci(run):
    source = """
    let N = 25;
    let fib[0] = 0;
    let fib[1] = 1;
    let fib[n in 2..N] = fib[n - 1] + fib[n - 2];
    """
    fib = [0, 1]
    while len(fib) < 25:
        fib.append(fib[-1] + fib[-2])
    out = run(source)["fib"]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, fib)


def test_section_2_3_gradient_of_a_squared_error(run):
    source = """
    let X: [f32; 6, 3];
    let W: [f32; 3];
    let target: [f32; 6];
    let pred[i] = sum[j](X[i, j] * W[j]);
    let loss = sum[i]((pred[i] - target[i]) * (pred[i] - target[i]));
    let dloss_dW = @loss / @W;
    """
    X, W, target = (rng.standard_normal(s).astype(np.float32) for s in [(6, 3), (3,), (6,)])
    out = run_with(source, {"X": X, "W": W, "target": target})
    X64, r = X.astype(np.float64), X.astype(np.float64) @ W - target
    np.testing.assert_allclose(out["loss"], r @ r, rtol=1e-5)
    np.testing.assert_allclose(out["dloss_dW"], 2.0 * X64.T @ r, rtol=1e-4, atol=1e-5)


def test_figure_2_3_a_shaped_local_derivative(run):
    # h[t, j] = theta[j]^(t + 1): dh[t, j] / dtheta[j] = (t + 1) theta[j]^t
    source = """
    let theta: [f64; 4];
    let h[0, j in 0..4] = theta[j];
    let h[t in 1..6, j in 0..4] = h[t - 1, j] * theta[j];
    let local[t, j] =
      @h[t, j] / @theta[j];
    """
    theta = rng.uniform(0.5, 1.5, 4)
    t = np.arange(6)[:, None]
    np.testing.assert_allclose(run(source, theta=theta)["local"], (t + 1) * theta ** t, rtol=1e-12)


def test_section_2_4_types_and_values(run, tmp_path):
    weights = rng.standard_normal((2, 3)).astype(np.float32)
    np.save(tmp_path / "weights.npy", weights)
    source = tmp_path / "types.ein"
    source.write_text("""use std::io::load_npy;
let x: f32 = 1.0;
let v: [f32] = [1.0, 2.0, 3.0];
let m: [f32; 2, 3] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
let dyn: [f32; *] = load_npy("weights.npy");
""")
    out = einc.load(einc.compile(str(source)).vmfb)()
    assert out["x"] == np.float32(1.0) and out["x"].dtype == np.float32
    np.testing.assert_array_equal(out["v"], np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(out["m"], np.arange(1, 7, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(out["dyn"], weights)


def test_section_2_5_functions_blocks_and_modules(run):
    source = """
    use std::math::basic::sqrt;

    fn norm2(x, y) {
        sqrt(x * x + y * y)
    }

    let r = norm2(3.0, 4.0);
    """
    out = run(source)["r"]
    assert out.dtype == np.float32 and out == np.float32(5.0)


def test_section_2_7_composition(run):
    source = """
    let x: [f64; T, D];
    let w: [f64; D];
    let score[t] = sum[d](x[t, d] * w[d]);
    let prefix[0] = score[0];
    let prefix[t in 1..T] = prefix[t - 1] + score[t];
    let dw = @prefix[T - 1] / @w;
    """
    x, w = rng.standard_normal((7, 3)), rng.standard_normal(3)
    out = run(source, x=x, w=w)
    np.testing.assert_allclose(out["prefix"], np.cumsum(x @ w), rtol=1e-12)
    np.testing.assert_allclose(out["dw"], x.sum(axis=0), rtol=1e-12)


def test_section_5_2_two_base_clauses(run):
    source = """
    let init0: f64;
    let init1: f64;
    let T = 12;
    let y[0] = init0;  
    let y[1] = init1;  
    let y[t in 2..T] = y[t - 1] + y[t - 2];
    """
    y = [0.25, -1.5]
    while len(y) < 12:
        y.append(y[-1] + y[-2])
    np.testing.assert_allclose(run(source, init0=np.float64(0.25), init1=np.float64(-1.5))["y"], y, rtol=1e-12)


def test_section_6_3_3_derivative_of_a_polynomial_and_of_a_sum_of_squares(run):
    source = """
    let x: f64;
    let w: [f64; 5];
    let y = x * x + 3.0 * x;
    let dy = @y / @x;
    let s = sum[i](w[i] * w[i]);
    let ds = @s / @w;
    """
    w = rng.standard_normal(5)
    out = run(source, x=np.float64(1.25), w=w)
    np.testing.assert_allclose(out["dy"], 2.0 * 1.25 + 3.0, rtol=1e-14)
    np.testing.assert_allclose(out["ds"], 2.0 * w, rtol=1e-14)


def test_section_6_4_2_rows_columns_and_entries_of_a_jacobian(run):
    # h: [T, H] from theta: [P]; J = @h / @theta is [T, H, P]
    source = """
    use std::math::tanh;
    let theta: [f64; 3];
    let M: [f64; 4, 3];
    let h[0, j in 0..4] = 0.0;
    let h[t in 1..5, j in 0..4] = tanh(h[t - 1, j] + sum[p](M[j, p] * theta[p]));
    let J = @h / @theta;
    let row = J[3, 1, :];
    let column = J[:, :, 2];
    let entry = J[4, 0, 1];
    """
    theta, M = rng.standard_normal(3), rng.standard_normal((4, 3)) * 0.5

    def h_of(th):
        h = np.zeros((5, 4))
        for t in range(1, 5):
            h[t] = np.tanh(h[t - 1] + M @ th)
        return h

    eps, cols = 1e-6, []
    for p in range(3):
        e = np.zeros(3)
        e[p] = eps
        cols.append((h_of(theta + e) - h_of(theta - e)) / (2 * eps))
    J = np.stack(cols, axis=-1)
    out = run(source, theta=theta, M=M)
    np.testing.assert_allclose(out["J"], J, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(out["row"], J[3, 1, :], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(out["column"], J[:, :, 2], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(out["entry"], J[4, 0, 1], rtol=1e-7, atol=1e-9)


def test_section_6_1_the_two_source_forms(run):
    source = """
    let x: f64;
    let y = x * x * x - 2.0 * x;
    let tx = @x;  
    let dy_dx = @y / @x;
    let dy = @y;
    """
    out = run(source, x=np.float64(1.5))
    assert out["tx"] == 1.0
    np.testing.assert_allclose(out["dy_dx"], 3 * 1.5 ** 2 - 2, rtol=1e-15)
    np.testing.assert_allclose(out["dy"], 3 * 1.5 ** 2 - 2, rtol=1e-15)


@pytest.mark.vulkan
def test_the_f32_examples_of_chapter_2_on_vulkan():
    A, B = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    x = rng.standard_normal(7).astype(np.float32)
    program = einc.load(built(MATMUL_FIGURE_2_1, "vulkan-spirv").vmfb, device="vulkan")
    try:
        np.testing.assert_allclose(program.run({"A": A, "B": B})["C"], A @ B, rtol=1e-5, atol=1e-6)
    finally:
        program.close()
    program = einc.load(built(RECURRENCE_FIGURE_2_2, "vulkan-spirv").vmfb, device="vulkan")
    try:
        y = [np.float32(0.5)]
        for t in range(1, 7):
            y.append(np.float32(0.9) * y[-1] + x[t])
        out = program.run({"init": np.float32(0.5), "x": x})
        np.testing.assert_allclose(out["y"], y, rtol=1e-6)
        np.testing.assert_allclose(out["out"], y[-1], rtol=1e-6)
    finally:
        program.close()


# ------------------------------------------------- /work/shared/LANGUAGE.md, section by section

def test_operators_precedence_and_integer_division(run):
    out = run("""
    let a: i32;
    let b: i32;
    let q = a / b;
    let r = a % b;
    let mixed = 1 + 2 * 3 - 8 / 4 % 3;
    let power = 2 ** 3 ** 2;
    let neg_power = -2 ** 2;
    let logic = true || false && false;
    let compare = 1 + 1 == 2 && 3 > 2;
    let not_first = !false == true;
    """, a=np.int32(-7), b=np.int32(2))
    assert (out["q"], out["r"]) == (-3, -1)          # truncates toward zero, the dividend's sign
    assert out["mixed"] == 1 + 2 * 3 - (8 // 4) % 3
    assert out["power"] == 512 and out["neg_power"] == 4      # (-2) ** 2: docs/DECISIONS.md, Numbers
    assert out["logic"] and out["compare"] and out["not_first"]


@pytest.mark.parametrize("a, b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3)])
def test_integer_division_and_remainder_follow_rust(run, a, b):
    out = run("let a: i64;\nlet b: i64;\nlet q = a / b;\nlet r = a % b;\n", a=np.int64(a), b=np.int64(b))
    assert out["q"] == int(np.trunc(a / b)) and out["r"] == int(np.fmod(a, b))


def test_casts_and_literals_in_their_context(run):
    out = run("""
    let k: f64;
    let z = 1.0 - k;
    let t = 3.9 as i32;
    let u = -3.9 as i32;
    let w = 300 as u8;
    let h = 1.5 as f16;
    let big = 5_000_000_000 as i64;
    let hex = 0xff;
    let e = 1.0e6;
    """, k=np.float64(0.25))
    assert out["z"].dtype == np.float64 and out["z"] == 0.75
    assert (out["t"], out["u"], out["w"]) == (3, -3, np.uint8(300 % 256))
    assert out["h"].dtype == np.float16 and out["h"] == np.float16(1.5)
    assert out["big"] == 5_000_000_000 and out["big"].dtype == np.int64
    assert out["hex"] == 255 and out["e"] == np.float32(1e6)


def test_print_writes_values_as_the_language_spells_them(run):
    program = einc.load(built("""
    let x: f64;
    let v: [f32; 3];
    let flag = x > 1.0;
    print(true, false, flag);
    print("x = {x}, x to 3 places {x:.3f}, flag {flag}, v = {v}, braces {{}}");
    print(v, (1, 2.5), [x > 0.0, x > 5.0]);
    """).vmfb)
    buf = io.StringIO()
    program.run({"x": np.float64(2.0), "v": np.array([1.0, 2.5, -3.0], np.float32)}, stdout=buf)
    v = np.array([1.0, 2.5, -3.0], np.float32)
    assert buf.getvalue() == (f"true false true\nx = 2.0, x to 3 places 2.000, flag true, v = {v}, braces {{}}\n"
                              f"{v} (1, 2.5) [true false]\n")


def test_a_where_membership_of_a_value_is_a_guard(run):
    # of an index it would be a range, which a where clause may not give (tests/semantics)
    x = rng.standard_normal(5).astype(np.float32)
    k = np.array([4, 0, 2, 7, 3], np.int32)
    out = run("let x: [f32; 5];\nlet k: [i32; 5];\nlet y[i] = x[i] where v = k[i], v in 0..3;\n", x=x, k=k)
    np.testing.assert_array_equal(out["y"], np.where((k >= 0) & (k < 3), x, 0))


def test_a_backward_recurrence_numbered_from_the_end(run):
    # E007's hint for `v[t] = .. v[t + 1]`: value iteration back from the horizon, indexed by steps
    # to go; v[s] is the value with s steps left
    reward = rng.uniform(0, 1, 8)
    out = run("""
    let reward: [f64; N];
    let v[0] = reward[N - 1];
    let v[s in 1..N] = reward[N - 1 - s] + 0.9 * v[s - 1];
    """, reward=reward)
    expected = [reward[-1]]
    for s in range(1, 8):
        expected.append(reward[8 - 1 - s] + 0.9 * expected[-1])
    np.testing.assert_allclose(out["v"], expected, rtol=1e-14)


def test_half_and_narrow_integer_types(run):
    xh = np.array([0.5, 1.25, -2.0], np.float16)
    xb = np.array([0.5, 1.25, -2.0], ml_dtypes.bfloat16)
    xu = np.array([200, 100, 7], np.uint8)
    out = run("""
    let xh: [f16; 3];
    let xb: [bf16; 3];
    let xu: [u8; 3];
    let h[i] = xh[i] * xh[i] + 1.0;
    let b[i] = xb[i] * 3.0;
    let u[i] = xu[i] + xu[i];
    let wide = sum[i](xu[i] as i32);
    """, xh=xh, xb=xb, xu=xu)
    np.testing.assert_array_equal(out["h"], (xh.astype(np.float32) ** 2 + 1).astype(np.float16))
    np.testing.assert_array_equal(out["b"], (xb.astype(np.float32) * 3).astype(ml_dtypes.bfloat16))
    np.testing.assert_array_equal(out["u"], xu + xu)          # wraps, as NumPy's uint8 does
    assert out["wide"] == 307 and out["u"].dtype == np.uint8
