"""A recurrence inside a step of another (a loop inside a loop) against NumPy loops: the inner
loop runs whole in each outer step, reading the outer state at an earlier step, and the outer
step reads its last value, a sum over it, or a gradient through it (BPTT inside training)."""
import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from einc.driver import emit_program

TARGETS = ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)]


@pytest.mark.parametrize("target", TARGETS)
def test_newton_iterations_inside_each_step(run, target):
    """Each outer step takes a square root by 5 Newton iterations of an inner recurrence."""
    out = run("""
        let c: [f32; 6];
        let x[0] = 1.0;
        let x[e in 1..6] = {
            let y[0] = x[e - 1] + c[e];
            let y[i in 1..6] = 0.5 * (y[i - 1] + (x[e - 1] + c[e]) / y[i - 1]);
            y[5]
        };
    """, target=target, c=np.array([0.0, 1.0, 2.5, 0.5, 3.0, 1.5], np.float32))
    c, x = [0.0, 1.0, 2.5, 0.5, 3.0, 1.5], [1.0]
    for e in range(1, 6):
        a = y = x[-1] + c[e]
        for _ in range(5):
            y = 0.5 * (y + a / y)
        x.append(y)
    np.testing.assert_allclose(out["x"], x, rtol=2e-6)      # f32; Newton converges to a few ulps


@pytest.mark.parametrize("target", TARGETS)
def test_a_vector_rnn_inside_each_step_of_a_vector_recurrence(run, target):
    """The inner state is a vector over its own steps; the outer step reads its last row."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 4)).astype(np.float32)
    out = run("""
        use std::math::tanh;
        let x: [f32; T, H];
        let W[0, i in 0..H] = 0.1 * (i as f32);
        let W[e in 1..5, i in 0..H] = {
            let h[0, j in 0..H] = 0.0;
            let h[t in 1..T, j in 0..H] = tanh(W[e - 1, j] * h[t - 1, j] + x[t, j]);
            W[e - 1, i] - 0.1 * h[T - 1, i]
        };
    """, target=target, x=x)
    W = [0.1 * np.arange(4)]
    for _ in range(1, 5):
        h = np.zeros(4)
        for t in range(1, 7):
            h = np.tanh(W[-1] * h + x[t])
        W.append(W[-1] - 0.1 * h)
    np.testing.assert_allclose(out["W"], W, rtol=1e-5, atol=1e-6)     # f32 tanh over 24 steps


@pytest.mark.parametrize("target", TARGETS)
def test_the_outer_step_reads_a_sum_over_the_inner_loop_and_its_own_step(run, target):
    out = run("""
        let x[0] = 1.0;
        let x[e in 1..5] = {
            let y[0] = x[e - 1];
            let y[i in 1..4] = y[i - 1] * 0.5 + (e as f32);
            sum[i](y[i]) / 4.0
        };
    """, target=target)
    x = [1.0]
    for e in range(1, 5):
        y = [x[-1]]
        for _ in range(3):
            y.append(y[-1] * 0.5 + e)
        x.append(sum(y) / 4)
    np.testing.assert_allclose(out["x"], x, rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_value_iteration_whose_step_runs_a_dynamic_program(run, target):
    """V[e] from V[e - 1] through a 3-stage DP over actions (a max over a table each stage)."""
    r = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 1.0], [0.0, 2.0, 1.0, -1.5], [1.0, 0.5, 0.0, 0.75]],
                 np.float32)
    out = run("""
        let r: [f32; S, S];
        let V[0, s in 0..S] = (s as f32) * 0.5;
        let V[e in 1..6, s in 0..S] = {
            let q[0, a in 0..S] = V[e - 1, a];
            let q[k in 1..4, a in 0..S] = max[b](r[a, b] + 0.9 * q[k - 1, b]);
            q[3, s]
        };
    """, target=target, r=r)
    V = [np.arange(4) * 0.5]
    for _ in range(1, 6):
        q = V[-1]
        for _ in range(3):
            q = np.max(r + 0.9 * q[None, :], axis=1)
        V.append(q)
    np.testing.assert_allclose(out["V"], V, rtol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_an_ode_integrator_inside_an_optimizer_called_through_a_function(run, target):
    """`decay(p[e - 1])` runs 20 Euler steps of dz/ds = -p z for each iterate of p."""
    out = run("""
        fn decay(p) {
            let z[0] = 1.0;
            let z[s in 1..21] = z[s - 1] - 0.05 * p * z[s - 1];
            z[20]
        }
        let p[0] = 0.2;
        let p[e in 1..10] = p[e - 1] + 0.8 * (decay(p[e - 1]) - 0.3);
    """, target=target)
    p = [0.2]
    for _ in range(1, 10):
        z = 1.0
        for _ in range(20):
            z = z - 0.05 * p[-1] * z
        p.append(p[-1] + 0.8 * (z - 0.3))
    np.testing.assert_allclose(out["p"], p, rtol=1e-5)


def test_a_cholesky_inside_each_step_of_a_hyperparameter_iteration(run):
    """std's cholesky is a recurrence over rows: it runs in each step on K + s[e - 1] I."""
    A = np.array([[4.0, 1.0, 0.5, 0.2], [1.0, 3.0, 0.2, 0.1], [0.5, 0.2, 2.0, 0.3], [0.2, 0.1, 0.3, 1.5]])
    out = run("""
        use std::ml::linalg_ops::cholesky;
        let A: [f64; 4, 4];
        let s[0] = 1.0;
        let s[e in 1..5] = {
            let M[i in 0..4, j in 0..4] = A[i, j] + s[e - 1] * (if i == j { 1.0 } else { 0.0 });
            let L = cholesky(M);
            0.5 * s[e - 1] + 0.1 * sum[i](L[i, i])
        };
    """, A=A)
    s = [1.0]
    for _ in range(1, 5):
        L = np.linalg.cholesky(A + s[-1] * np.eye(4))
        s.append(0.5 * s[-1] + 0.1 * np.trace(L))
    np.testing.assert_allclose(out["s"], s, rtol=1e-12)


RNN_TRAINING = """
use std::math::tanh;
let x: [f64; T, H];
let goal: [f64; H];
fn loss(W) {
    let h[0, i in 0..H] = 0.0;
    let h[t in 1..T, i in 0..H] = tanh(sum[j](W[i, j] * h[t - 1, j]) + x[t, i]);
    sum[i]((h[T - 1, i] - goal[i]) * (h[T - 1, i] - goal[i]))
}
let W[0, i in 0..H, j in 0..H] = (((i * 2 + j) % 5) as f64) / 10.0 - 0.2;
let W[e in 1..12, i in 0..H, j in 0..H] = W[e - 1, i, j] - 0.3 * {
    let L = loss(W[e - 1]);
    (@L / @W[e - 1])[i, j]
};
let losses[e in 0..12] = loss(W[e]);
"""


def _rnn_loss_and_gradient(W, x, target):
    """The loss of the last hidden state and its gradient by backpropagation through time."""
    hs = [np.zeros(len(W))]
    for t in range(1, len(x)):
        hs.append(np.tanh(W @ hs[-1] + x[t]))
    dh, dW = 2 * (hs[-1] - target), np.zeros_like(W)
    for t in range(len(x) - 1, 0, -1):
        da = dh * (1 - hs[t] ** 2)
        dW += np.outer(da, hs[t - 1])
        dh = W.T @ da
    return np.sum((hs[-1] - target) ** 2), dW


def test_an_rnn_trained_by_bptt_inside_an_epoch_recurrence(run):
    """`@L / @W[e - 1]` where L reads an inner recurrence over time: reverse mode through the
    inner loop (its adjoint loop runs in the same outer step)."""
    rng = np.random.default_rng(7)
    x, target = rng.standard_normal((6, 3)) * 0.5, np.array([-0.2, 0.1, 0.4])
    out = run(RNN_TRAINING, x=x, goal=target)
    i, j = np.meshgrid(range(3), range(3), indexing="ij")
    W = [((i * 2 + j) % 5) / 10.0 - 0.2]
    for _ in range(1, 12):
        W.append(W[-1] - 0.3 * _rnn_loss_and_gradient(W[-1], x, target)[1])
    np.testing.assert_allclose(out["W"], W, rtol=1e-10, atol=1e-12)     # f64, same operations
    losses = [_rnn_loss_and_gradient(w, x, target)[0] for w in W]
    np.testing.assert_allclose(out["losses"], losses, rtol=1e-10)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("target", TARGETS)
def test_a_scalar_parameter_trained_through_an_inner_recurrence_on_f32(run, target):
    out = run("""
        use std::math::tanh;
        let xs: [f32; T];
        fn loss(w) {
            let h[0] = 0.0;
            let h[t in 1..T] = tanh(w * h[t - 1] + xs[t]);
            (h[T - 1] - 0.5) * (h[T - 1] - 0.5)
        }
        let w[0] = 0.2;
        let w[e in 1..10] = { let L = loss(w[e - 1]); w[e - 1] - 2.0 * (@L / @w[e - 1]) };
    """, target=target, xs=np.array([-0.4, -0.1, 0.2, 0.5, 0.3], np.float32))
    xs, w = np.array([-0.4, -0.1, 0.2, 0.5, 0.3]), [0.2]
    for _ in range(1, 10):
        h = [0.0]
        for t in range(1, 5):
            h.append(np.tanh(w[-1] * h[-1] + xs[t]))
        dh, dw = 2 * (h[-1] - 0.5), 0.0
        for t in range(4, 0, -1):
            da = dh * (1 - h[t] ** 2)
            dw, dh = dw + da * h[t - 1], da * w[-1]
        w.append(w[-1] - 2.0 * dw)
    np.testing.assert_allclose(out["w"], w, rtol=1e-5)       # f32 over 9 gradient steps


@pytest.mark.parametrize("target", TARGETS)
def test_an_inner_loop_in_a_later_clause_reads_an_input_behind_the_step(run, target):
    """`x[t - 3]` inside the inner loop of the clause `t in 3..6` is in bounds: the bounds check
    took the outer step over every step of the member (0..6) inside the inner group's clauses
    and refused it (E005, found by the program fuzzer's nesting draw, seed 2024 program 83)."""
    x = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.75], np.float32)
    out = run("""
        let x: [f32; 6];
        let a[t in 0..3] = x[t];
        let a[t in 3..6] = 0.5 * a[t - 1] + { let s[0] = x[t - 3]; let s[k in 1..4] = 0.5 * s[k - 1] + 1.0; s[3] };
    """, target=target, x=x)
    a = list(x[:3])
    for t in range(3, 6):
        s = x[t - 3]
        for _ in range(3):
            s = 0.5 * s + 1.0
        a.append(0.5 * a[-1] + s)
    np.testing.assert_allclose(out["a"], a, rtol=1e-6)


INNER = "fn inner(b: f32) -> f32 { let s[0] = b; let s[k in 1..8] = 0.5 * s[k - 1] + b; s[7] }\n"


def _inner(b) -> np.float32:
    s = np.float32(b)
    for _ in range(7):
        s = np.float32(0.5) * s + np.float32(b)
    return s


def _h(p):
    return p[:3] + 1


# A step that combines, outside its own loop, a reduction over an indexed `let` of the state
# with the last value of an inner loop (one, two or three 0-d values; i32 and f32): each such
# combination is a kernel with no loops. IREE-196: reading them as 0-d `ins`, llvm-cpu fused the
# reduction into it and vectorized the sum to `arith.addi (i32, vector<i32>)` (found building the
# nesting fuzzer's draw, branch nest12), so the module did not compile.
LOOPLESS_COMBINATIONS = {
    "i32_min_plus_the_inner_value": (
        "let r[0, j in 0..4] = j;\n"
        "let r[t in 1..6, j in 0..4] = (r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] + 1; "
        "min[l in 0..3](h[l]) } + inner(t as f32) as i32)) % 40;",
        lambda p, t: (p + (_h(p).min() + np.int32(_inner(t)))) % 40),
    "f32_max_plus_the_inner_value": (
        "let r[0, j in 0..4] = j as f32;\n"
        "let r[t in 1..6, j in 0..4] = 0.5 * r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] * 0.5; "
        "max[l in 0..3](h[l]) } + inner(t as f32));",
        lambda p, t: np.float32(0.5) * p + ((p[:3] * np.float32(0.5)).max() + _inner(t))),
    "f32_sum_times_the_inner_value": (
        "let r[0, j in 0..4] = j as f32;\n"
        "let r[t in 1..6, j in 0..4] = 0.5 * r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] * 0.5; "
        "sum[l in 0..3](h[l]) } * inner(t as f32));",
        lambda p, t: np.float32(0.5) * p + (p[:3] * np.float32(0.5)).sum() * _inner(t)),
    "i32_sum_inner_value_and_max": (
        "let r[0, j in 0..4] = j;\n"
        "let r[t in 1..6, j in 0..4] = (r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] + 1; "
        "sum[l in 0..3](h[l]) } + inner(t as f32) as i32 + { let h2[i in 0..3] = r[t - 1, i] * 2; "
        "max[l in 0..3](h2[l]) })) % 40;",
        lambda p, t: (p + (_h(p).sum() + np.int32(_inner(t)) + (p[:3] * 2).max())) % 40),
    "f32_max_inner_value_and_min": (
        "let r[0, j in 0..4] = j as f32;\n"
        "let r[t in 1..6, j in 0..4] = 0.5 * r[t - 1, j] + ({ let h[i in 0..3] = r[t - 1, i] * 0.5; "
        "max[l in 0..3](h[l]) } + inner(t as f32) + { let h2[i in 0..3] = r[t - 1, i + 1] - 1.0; "
        "min[l in 0..3](h2[l]) });",
        lambda p, t: np.float32(0.5) * p + ((p[:3] * np.float32(0.5)).max() + _inner(t)
                                            + (p[1:4] - np.float32(1)).min())),
}


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic",
                                    pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
@pytest.mark.parametrize("case", list(LOOPLESS_COMBINATIONS))
def test_a_reduction_combined_with_an_inner_loops_value_outside_the_step_loop(run, case, target):
    body, step = LOOPLESS_COMBINATIONS[case]
    out = run(INNER + body, target=target)
    dtype = np.int32 if case.startswith("i32") else np.float32
    r = [np.arange(4, dtype=dtype)]
    for t in range(1, 6):
        r.append(step(r[-1], t).astype(dtype))
    if dtype == np.int32:
        np.testing.assert_array_equal(out["r"], r)
    else:
        np.testing.assert_allclose(out["r"], r, rtol=1e-6)       # f32, a few roundings a step


def _diagnostic(source: str):
    with pytest.raises(CompileError) as info:
        einc.compile(source)
    return info.value.diagnostics[0]


def test_an_inner_loop_reading_a_point_of_the_outer_clause_is_e011():
    """One inner loop per point of a step is not compiled: the error names the index."""
    diag = _diagnostic("let W[0, i in 0..3] = 0.0;\n"
                       "let W[e in 1..4, i in 0..3] = { let h[0] = W[e - 1, i]; "
                       "let h[t in 1..3] = h[t - 1] * 0.5; h[2] };\n")
    assert diag.code == "E011" and "the index `i`" in diag.message and diag.span.line == 2


def test_an_inner_loop_reading_the_outer_state_at_the_current_step_is_e011():
    diag = _diagnostic("let a[0] = 1.0;\nlet b[0] = 1.0;\n"
                       "let a[e in 1..4] = b[e - 1] + 1.0;\n"
                       "let b[e in 1..4] = { let h[0] = a[e]; let h[t in 1..3] = h[t - 1] * 0.5; h[2] };\n")
    assert diag.code == "E011" and "reads `a` at a step other than an earlier one" in diag.message
    assert diag.span.line == 4


def test_explain_says_which_loop_runs_inside_which(tmp_path):
    path = tmp_path / "nested.ein"
    path.write_text(RNN_TRAINING)
    text = emit_program(str(path), "explain")
    assert "nested: runs whole inside each step of group 1 (W)" in text
    assert "inside each step: the loops of group 0 (h), group 3 (h_bar)" in text
    assert "runs 2 nested recurrence loop(s)" in text
