"""Gradient descent written in Einlang: the iterates are a recurrence over steps whose body asks
for `@L / @w` at the previous iterate. Each example's whole trajectory is checked against the same
training loop in NumPy (float64, tolerance stated per test), and its loss against a stated value."""
from pathlib import Path

import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError
from einc.driver import emit_program
from tests.tiers import GENERIC_FULL, VULKAN_FULL

TRAIN = Path(__file__).resolve().parents[2] / "examples" / "train"


def run_example(name: str, outputs: list[str]) -> dict:
    return einc.load(einc.compile(TRAIN / name, outputs=outputs).vmfb)()


def linreg_data():
    n, d = np.arange(100)[:, None], np.arange(4)[None, :]
    X = np.where(d == 3, 1.0, ((n * 37 + d * 101 + n * d * 13) % 41) / 20.5 - 1.0)
    y = X @ np.array([1.5, -2, 0.5, 0.3]) + 0.02 * ((np.arange(100) * 7) % 5 - 2.0)
    return X, y


def test_linear_regression_trains_like_numpy():
    X, y = linreg_data()
    w, trajectory = np.zeros(4), [np.zeros(4)]
    for _ in range(1, 300):
        w = w - 0.2 * X.T @ (X @ w - y) / len(y)
        trajectory.append(w)
    out = run_example("train_linreg.ein", ["w", "first_loss", "final_loss"])
    np.testing.assert_allclose(out["w"], np.array(trajectory), rtol=0, atol=1e-12)
    mse = lambda w: ((X @ w - y) ** 2).sum() / (2 * len(y))     # noqa: E731
    np.testing.assert_allclose([out["first_loss"], out["final_loss"]], [mse(trajectory[0]), mse(w)],
                               rtol=1e-12)
    assert out["final_loss"] < 4e-4                     # from 1.07: the fit is down to the noise


def mlp_data():
    n = np.arange(144)
    X = np.stack([(n // 12) / 5.5 - 1.0, (n % 12) / 5.5 - 1.0, np.ones(144)], axis=1)
    labels = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 0.36, 0, np.where(X[:, 0] > 0, 1, 2))
    W1 = ((np.arange(3)[:, None] * 7 + np.arange(8)[None, :] * 3) % 11) / 5.5 - 1.0
    W2 = ((np.arange(8)[:, None] * 5 + np.arange(3)[None, :] * 7) % 13) / 6.5 - 1.0
    return X, labels, W1, W2, np.zeros(3)


def mlp_loss_and_gradients(X, labels, W1, W2, b2):
    h = np.tanh(X @ W1)
    z = h @ W2 + b2
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    rows = np.arange(len(X))
    dz = p.copy()
    dz[rows, labels] -= 1
    dz /= len(X)
    loss = -np.log(p[rows, labels]).mean()
    return loss, X.T @ ((dz @ W2.T) * (1 - h * h)), h.T @ dz, dz.sum(0)


def test_mlp_trains_like_numpy():
    X, labels, W1, W2, b2 = mlp_data()
    first = mlp_loss_and_gradients(X, labels, W1, W2, b2)[0]
    for _ in range(1, 400):
        _, g1, g2, gb = mlp_loss_and_gradients(X, labels, W1, W2, b2)
        W1, W2, b2 = W1 - 0.5 * g1, W2 - 0.5 * g2, b2 - 0.5 * gb
    out = run_example("train_mlp.ein", ["W1", "W2", "b2", "first_loss", "final_loss", "accuracy"])
    for name, ref in (("W1", W1), ("W2", W2), ("b2", b2)):
        np.testing.assert_allclose(out[name][-1], ref, rtol=0, atol=1e-10, err_msg=name)
    final = mlp_loss_and_gradients(X, labels, W1, W2, b2)[0]
    np.testing.assert_allclose([out["first_loss"], out["final_loss"]], [first, final], rtol=1e-10)
    assert out["final_loss"] < 0.12 < 1.3 < out["first_loss"]
    z = np.tanh(X @ W1) @ W2 + b2
    np.testing.assert_allclose(out["accuracy"], (z.argmax(1) == labels).mean(), rtol=1e-6)


def test_explain_says_each_step_computes_its_tensors_once():
    text = emit_program(str(TRAIN / "train_linreg.ein"), "explain")
    assert ("lowering: one dispatch whose loops run every step, computing the step's tensors once a step "
            "with scalar loops, because each step computes 4 tensor(s) whole from 1 earlier-step state(s), "
            "which one dispatch holds, and llvm-cpu runs loops inside a dispatch (a step runs about "
            "4,868 scalar operations)") in text


def test_explain_says_a_heavy_step_runs_as_a_host_loop(tmp_path):
    """At 4,000 x 64 the step's work outweighs the host loop's kernel launches, whose kernels run
    on every core."""
    path = tmp_path / "descent.ein"
    path.write_text(CLAUSE_BODY_DESCENT.format(t="f32"))
    text = emit_program(str(path), "explain", dims={"N": 4000, "D": 64})
    assert ("lowering: a host loop over chunks of up to 256 steps: each step computes its tensors once "
            "with ordinary kernels, then one kernel per clause, because each step computes") in text
    assert "kernel launches of a host loop's step cost (20,000 each)" in text


CLAUSE_BODY_DESCENT = """
    let X: [{t}; N, D];
    let y: [{t}; N];
    let w[k in 0..20, d in 0..D] = 0.0;
    let w[k in 1..20, d in 0..D] = w[k - 1, d] - 0.1 * {{
        let v = w[k - 1];
        let r[n] = sum[j](X[n, j] * v[j]) - y[n];
        let L = sum[n](r[n] * r[n]) / 2.0;
        (@L / @v)[d]
    }};
"""


def clause_body_descent_data(dtype):
    """X, y and the 20th iterate of the same descent in NumPy float64."""
    rng = np.random.default_rng(4)
    X, y = (rng.standard_normal((12, 3)) * 0.3).astype(dtype), rng.standard_normal(12).astype(dtype)
    w = np.zeros(3)
    for _ in range(1, 20):
        w = w - 0.1 * X.T.astype(np.float64) @ (X.astype(np.float64) @ w - y)
    return X, y, w


def test_derivative_written_in_the_clause_body(run):
    X, y, w = clause_body_descent_data(np.float64)
    out = run(CLAUSE_BODY_DESCENT.format(t="f64"), X=X, y=y)
    np.testing.assert_allclose(out["w"][-1], w, rtol=0, atol=1e-12)


@pytest.mark.parametrize("body, code, message", [
    ("w[k - 1, d] - {let v = w[k]; v[d]}", "E007", "`w[k]` is read inside its own definition"),
    ("w[k - 1, d] - {let v = w[k + 1]; v[d]}", "E011", "can be read whole only at the current step or an earlier one"),
    ("w[k - 1, d] - {let r[n] = w[k, 0] * X[n, 0]; r[d]}", "E011", "reads `w` at the same step, before its points exist"),
])
def test_state_reads_a_step_cannot_make_are_diagnostics(body, code, message):
    source = f"""
        let X: [f64; 4, 4];
        let w[k in 0..5, d in 0..4] = 0.0;
        let w[k in 1..5, d in 0..4] = {body};
    """
    with pytest.raises(CompileError) as err:
        einc.compile(source)
    assert err.value.diagnostics[0].code == code and message in str(err.value)


@pytest.mark.parametrize("weights", [
    "let w[0, f in 0..3] = 0.0;\nlet w[e in 1..10] = { let L = loss(w[e], X, y); w[e - 1] - 0.1 * (@L / @w[e - 1]) };",
    "let w[0] = 0.0;\nlet w[e in 1..10] = w[e - 1] - 0.1 * { let L = sum[n]((y[n] - w[e]) ** 2); @L / @w[e - 1] };",
    # a point of the row being computed, read in a clause of whole rows (built before, and trained nothing)
    "let w[0, f in 0..3] = 0.0;\n"
    "let w[e in 1..10] = w[e - 1] - 0.1 * { let L = sum[n]((y[n] - w[e, 0]) ** 2); @L / @w[e - 1] };",
])
def test_a_loss_of_the_step_being_computed_is_e007_though_its_derivative_drops_it(weights):
    # `loss(w[e])` for `loss(w[e - 1])` (a slip of one character) built, and since
    # `@L / @w[e - 1]` of that L is 0 the weights never moved: mutants of hold-out programs
    source = "let X: [f32; 6, 3];\nlet y: [f32; 6];\n" \
             "fn loss(w, X, y) { sum[n]((sum[f](X[n, f] * w[f]) - y[n]) ** 2) }\n" + weights
    with pytest.raises(CompileError) as err:
        einc.compile(source)
    diag = err.value.diagnostics[0]
    assert diag.code == "E007" and "`w[e]` is read inside its own definition" in diag.message and diag.span.line == 5
    assert diag.hint.startswith("read the step before, `w[e - 1]`")


SEVERAL_MEMBERS = """
    let a0: [f32; D];
    let a[k in 0..5, d in 0..D] = a0[d];
    let a[k in 1..5, d in 0..D] = a[k - 1, d] - 0.1 * b[k - 1, d] * sum[j](a[k - 1][j]);
    let b[k in 0..5, d in 0..D] = a0[d] * 2.0;
    let b[k in 1..5, d in 0..D] = b[k - 1, d] * 0.5;
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_several_members_with_run_time_sizes(run, target):
    # IREE 3.13 read every carried storage after the first at the first one's offset
    # (einc/mlir/recurrences/flat_storage.py); this was E011 before the storages were carried flat
    a0 = np.array([0.5, -0.25, 1.0, 0.75, -1.5], np.float32)
    a, b = [a0.astype(np.float64)], [a0.astype(np.float64) * 2.0]
    for _ in range(1, 5):
        a.append(a[-1] - 0.1 * b[-1] * a[-1].sum())
        b.append(b[-1] * 0.5)
    out = run(SEVERAL_MEMBERS, target=target, a0=a0)
    np.testing.assert_allclose(out["a"], np.array(a), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["b"], np.array(b), rtol=1e-6, atol=0)


@pytest.mark.vulkan
def test_gradient_descent_on_vulkan(run):
    X, y, w = clause_body_descent_data(np.float32)
    out = run(CLAUSE_BODY_DESCENT.format(t="f32"), target="vulkan-spirv", X=X, y=y)
    np.testing.assert_allclose(out["w"][-1], w, rtol=0, atol=1e-5)    # float32 against float64


def test_training_read_only_at_its_last_step_keeps_two_slots(tmp_path):
    program = tmp_path / "last_step.ein"
    source = (TRAIN / "train_linreg.ein").read_text().split("let first_loss")[0]
    program.write_text(source + "let final_loss = mse(w[K - 1], X, y);\n")
    assert "storage 2 slots" in emit_program(str(program), "explain", ["final_loss"])
    out = einc.load(einc.compile(program, outputs=["final_loss"]).vmfb)()
    X, y = linreg_data()
    w = np.zeros(4)
    for _ in range(1, 300):
        w = w - 0.2 * X.T @ (X @ w - y) / len(y)
    np.testing.assert_allclose(out["final_loss"], ((X @ w - y) ** 2).sum() / (2 * len(y)), rtol=1e-12)


LOGISTIC_WITH_SCALAR_BIAS = """
    use std::math::{exp, log};
    let X: [f64; N, D];
    let y: [f64; N];
    fn loss(X, y, w, b) {
        let z[n] = sum[d](X[n, d] * w[d]) + b;
        sum[n](log(1.0 + exp(-z[n])) + (1.0 - y[n]) * z[n]) / (len(y) as f64)
    }
    let w[0, d in 0..D] = 0.0;
    let b[0] = 0.0;
    let w[k in 1..40, d in 0..D] = w[k - 1, d] - 0.5 * {
        let L = loss(X, y, w[k - 1], b[k - 1]);
        (@L / @w[k - 1])[d]
    };
    let b[k in 1..40] = b[k - 1] - 0.5 * { let L = loss(X, y, w[k - 1], b[k - 1]); @L / @b[k - 1] };
"""


def test_the_gradient_by_a_row_state_counts_its_point_reads(run):
    """`@L / @W[s - 1]` where L reads the row's points `W[s - 1, e]` (not the row whole): each
    point read is the slice's element e. It was silently 0, so W never moved (logistic
    regression with an L2 term written as a user would)."""
    rng = np.random.default_rng(28)
    X = rng.standard_normal((30, 3))
    y = (X @ [1.0, -1.0, 0.5] > 0).astype(np.float64)
    out = run("""
        use std::math::{exp, log};
        let X: [f64; N, D];
        let y: [f64; N];
        let W[0, d in 0..D] = 0.1;
        let W[s in 1..6, d] = {
            let q[n] = 1.0 / (1.0 + exp(-sum[e](X[n, e] * W[s - 1, e])));
            let L = -sum[n](y[n] * log(q[n]) + (1.0 - y[n]) * log(1.0 - q[n])) / (N as f64)
                + 0.05 * sum[e](W[s - 1, e] * W[s - 1, e]);
            let g = @L / @W[s - 1];
            W[s - 1, d] - 0.5 * g[d]
        };
    """, X=X, y=y)
    w, path = np.full(3, 0.1), [np.full(3, 0.1)]
    for _ in range(5):
        p = 1 / (1 + np.exp(-X @ w))
        w = w - 0.5 * (X.T @ (p - y) / len(y) + 0.1 * w)
        path.append(w)
    np.testing.assert_allclose(out["W"], np.array(path), rtol=1e-10, atol=1e-12)


def test_logistic_regression_with_a_scalar_bias_state(run):
    # @L / @w[k - 1] reads the scalar state b[k - 1] as a given of the step (as it reads a row
    # state); it was E011 "derivatives through recurrences", reported as an f32/f64 E002
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = (X @ [1.0, -2.0, 0.5] + 0.3 > 0).astype(np.float64)
    w, b, ws, bs = np.zeros(3), 0.0, [np.zeros(3)], [0.0]
    for _ in range(1, 40):
        p = 1 / (1 + np.exp(-(X @ w + b)))
        w, b = w - 0.5 * X.T @ (p - y) / len(y), b - 0.5 * (p - y).mean()
        ws.append(w)
        bs.append(b)
    out = run(LOGISTIC_WITH_SCALAR_BIAS, X=X, y=y)
    np.testing.assert_allclose(out["w"], np.array(ws), rtol=0, atol=1e-12)
    np.testing.assert_allclose(out["b"], np.array(bs), rtol=0, atol=1e-12)


def test_the_derivative_by_a_scalar_state_counts_every_read_of_it(run):
    # `@L / @b[k - 1]` where L reads b[k - 1] again: a read of its own; the derivative was 0
    y = np.arange(5.0)
    out = run("""
        let y: [f64; N];
        let b[0] = 0.0;
        let b[k in 1..6] = b[k - 1] - 0.05 * { let L = sum[n]((y[n] - b[k - 1]) ** 2); @L / @b[k - 1] };
    """, y=y)
    b, ref = 0.0, [0.0]
    for _ in range(1, 6):
        b = b + 0.1 * (y - b).sum()
        ref.append(b)
    np.testing.assert_allclose(out["b"], ref, rtol=1e-12)


RMSPROP = """
    let A: [f64; M, 3];
    let b: [f64; M];
    fn objective(w) {
        let r[m] = sum[j](A[m, j] * w[j]) - b[m];
        sum[m](r[m] * r[m]) / 16.0
    }
    let w[0, j in 0..3] = 0.0;
    let s[0, j in 0..3] = 0.0;
    let g[k in 1..12, j in 0..3] = { let L = objective(w[k - 1]); (@L / @w[k - 1])[j] };
    let s[k in 1..12, j in 0..3] = 0.9 * s[k - 1, j] + 0.1 * g[k, j] * g[k, j];
    let w[k in 1..12, j in 0..3] = w[k - 1, j] - 0.05 * g[k, j] / (s[k, j].sqrt() + 1.0e-8);
    let final_w = w[11];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_rmsprop_whose_two_states_keep_two_slots_each(run, target):
    # s and w (only their last step an output) each keep 2 slots, started from equal zeros: the
    # loop carried them as one buffer (IREE-78), so from step 3 on s read w's values (NaN)
    rng = np.random.default_rng(2)
    A, b = rng.standard_normal((8, 3)), rng.standard_normal(8)
    w, s, gs = np.zeros(3), np.zeros(3), [np.zeros(3)]
    for _ in range(1, 12):
        g = A.T @ (A @ w - b) / 8
        s = 0.9 * s + 0.1 * g * g
        w = w - 0.05 * g / (np.sqrt(s) + 1e-8)
        gs.append(g)
    out = run(RMSPROP, target=target, outputs=["g", "final_w"], A=A, b=b)
    np.testing.assert_allclose(out["g"], np.array(gs), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out["final_w"], w, rtol=1e-12)


NESTEROV = """
    let X: [f64; N, D];
    let y: [f64; N];
    fn grad(w, X, y) {
        let r[n] = sum[d](X[n, d] * w[d]) - y[n];
        let L = sum[n](r[n] * r[n]) / (2.0 * len(y) as f64);
        @L / @w
    }
    let w[0, d in 0..D] = 0.0;
    let v[0, d in 0..D] = 0.0;
    let v[k in 1..12, d] = 0.9 * v[k - 1, d] - 0.05 * grad(w[k - 1] + 0.9 * v[k - 1], X, y)[d];
    let w[k in 1..12, d] = w[k - 1, d] + v[k, d];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_nesterov_momentum_whose_two_states_are_both_outputs(run, target):
    # w and v, both kept whole (outputs) and of one size, are copied chunk by chunk into whole
    # tensors the loop carries from equal zeros: IREE folded them into one buffer (IREE-78), so
    # v came back holding w's trajectory
    rng = np.random.default_rng(3)
    X = rng.standard_normal((20, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.7
    w, v, ws, vs = np.zeros(3), np.zeros(3), [np.zeros(3)], [np.zeros(3)]
    for _ in range(1, 12):
        ahead = w + 0.9 * v
        v = 0.9 * v - 0.05 * X.T @ (X @ ahead - y) / 20
        w = w + v
        ws.append(w)
        vs.append(v)
    out = run(NESTEROV, target=target, X=X, y=y)
    np.testing.assert_allclose(out["v"], np.array(vs), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out["w"], np.array(ws), rtol=1e-12, atol=1e-15)


WHOLE_ARRAY_STEPS = """
    let X: [f32; N, 3];
    let Y: [f32; N, 2];
    let W1i: [f32; 3, 6];
    let W2i: [f32; 6, 2];
    fn relu(x) { if x > 0.0 { x } else { 0.0 } }
    fn mse(X, Y, W1, W2) {
        let h[n, j] = relu(sum[i](X[n, i] * W1[i, j]));
        let p[n, o] = sum[j](h[n, j] * W2[j, o]);
        sum[n, o]((p[n, o] - Y[n, o]) ** 2) / (len(X) as f32)
    }
    let W1[0] = W1i;
    let W2[0] = W2i;
    let W1[k in 1..30] = W1[k - 1] - 0.05 * (@mse(X, Y, W1[k - 1], W2[k - 1]) / @W1[k - 1]);
    let W2[k in 1..30] = W2[k - 1] - 0.05 * (@mse(X, Y, W1[k - 1], W2[k - 1]) / @W2[k - 1]);
    let W1f = W1[29];
    let W2f = W2[29];
"""


def test_weights_as_whole_arrays_in_each_clause(run):
    # `W1[0] = W1i` and `W1[k] = W1[k - 1] - lr * gradient`, arrays per step: E004 before
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((16, 3)).astype(np.float32), rng.standard_normal((16, 2)).astype(np.float32)
    W1i, W2i = ((rng.standard_normal(s) * 0.5).astype(np.float32) for s in ((3, 6), (6, 2)))
    W1, W2 = W1i.astype(np.float64), W2i.astype(np.float64)
    for _ in range(1, 30):
        a = X @ W1
        dp = 2 * (np.maximum(a, 0) @ W2 - Y) / len(X)
        W1, W2 = W1 - 0.05 * X.T @ ((dp @ W2.T) * (a > 0)), W2 - 0.05 * np.maximum(a, 0).T @ dp
    out = run(WHOLE_ARRAY_STEPS, outputs=["W1f", "W2f"], X=X, Y=Y, W1i=W1i, W2i=W2i)
    np.testing.assert_allclose(out["W1f"], W1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["W2f"], W2, rtol=1e-4, atol=1e-5)


ADAM = """
    use std::math::sqrt;
    let A: [f64; 5, 3];
    let c: [f64; 5];
    fn f(w) {
        let r[i] = sum[j](A[i, j] * w[j]) - c[i];
        sum[i](r[i] ** 2) + 0.1 * sum[j](w[j] ** 4)
    }
    let w[0] = [1.0, -1.0, 0.5];
    let m[0, j in 0..3] = 0.0;
    let v[0, j in 0..3] = 0.0;
    let g[k in 1..30] = { let y = f(w[k - 1]); @y / @w[k - 1] };
    let m[k in 1..30] = 0.9 * m[k - 1] + 0.1 * g[k];
    let v[k in 1..30] = 0.999 * v[k - 1] + 0.001 * g[k] * g[k];
    let w[k in 1..30] = w[k - 1] - 0.05 * (m[k] / (1.0 - 0.9 ** k)) / (sqrt(v[k] / (1.0 - 0.999 ** k)) + 1.0e-8);
    let final_w = w[29];
"""


def test_adam_with_a_gradient_member_known_only_from_its_clause(run):
    # g has no clause reading no member: its axis shows only in its value, a gradient of the
    # vector w[k - 1]; m and v read g[k] whole (E004 before)
    rng = np.random.default_rng(5)
    A, c = rng.standard_normal((5, 3)), rng.standard_normal(5)
    w, m, v = np.array([1.0, -1.0, 0.5]), np.zeros(3), np.zeros(3)
    for k in range(1, 30):
        g = 2 * A.T @ (A @ w - c) + 0.4 * w ** 3
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        w = w - 0.05 * (m / (1 - 0.9 ** k)) / (np.sqrt(v / (1 - 0.999 ** k)) + 1e-8)
    out = run(ADAM, outputs=["final_w"], A=A, c=c)
    np.testing.assert_allclose(out["final_w"], w, rtol=1e-10)



GRADIENT_MEMBER_PAST_A_CHUNK = """
    let x0: [f32; 2];
    let g[t in 1..301] = x[t - 1] * 2.0 + x[t - 1] * x[t - 1];
    let x[0] = x0;
    let x[t in 1..301] = x[t - 1] - 0.01 * g[t];
"""


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_a_whole_row_read_at_t_minus_1_survives_the_chunk_boundary(run, target):
    # Adam on Rosenbrock for 300 steps (a hold-out program) went wrong from step 256: the steps
    # run in chunks of 256, and the row x[t - 1] the step's tensors read whole was not carried
    # into the next chunk (the storage plan counted only the clauses' point reads). On vulkan-spirv
    # the carry then failed with OUT_OF_RANGE in a copy_buffer: IREE-251 (VM branch operands)
    x, xs = np.array([0.7, -0.4]), [np.array([0.7, -0.4])]
    for _ in range(300):
        x = x - 0.01 * (2 * x + x * x)
        xs.append(x)
    out = run(GRADIENT_MEMBER_PAST_A_CHUNK, target=target, outputs=["x"], x0=np.float32([0.7, -0.4]))
    np.testing.assert_allclose(out["x"], np.array(xs), rtol=1e-5)     # float32 against float64

SOFTMAX_REGRESSION = """
    use std::ml::{softmax_cross_entropy_loss, argmax};
    let X: [f64; N, F];
    let Y: [f64; N, C];
    let W[0, f in 0..F, c in 0..C] = 0.0;
    let W[k in 1..25] = W[k - 1] - 0.3 * {
        let Wk = W[k - 1];
        let z[n, c] = sum[f](X[n, f] * Wk[f, c]);
        @softmax_cross_entropy_loss(z, Y) / @Wk
    };
    let Wf = W[24];
    let z[n, c] = sum[f](X[n, f] * Wf[f, c]);
    let accuracy = sum[n](if z[n, argmax(Y[n])] == max[c](z[n, c]) { 1.0 } else { 0.0 }) / (N as f64);
"""


def test_softmax_regression_with_the_library_loss(run):
    # the library's loss differentiated in each step, a gradient as the clause's array value,
    # and an accuracy summing literals beside f64 data
    rng = np.random.default_rng(2)
    X, labels = rng.standard_normal((30, 4)), rng.integers(0, 3, 30)
    Y, W = np.eye(3)[labels], np.zeros((4, 3))
    for _ in range(1, 25):
        z = X @ W
        p = np.exp(z - z.max(1, keepdims=True))
        W = W - 0.3 * X.T @ (p / p.sum(1, keepdims=True) - Y) / 30
    out = run(SOFTMAX_REGRESSION, outputs=["Wf", "accuracy"], X=X, Y=Y)
    np.testing.assert_allclose(out["Wf"], W, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out["accuracy"], np.mean((X @ W).argmax(1) == labels), rtol=1e-12)


def test_a_row_of_an_earlier_step_is_read_by_its_point_index(run):
    """`st[e - 1, o]` in a clause over the point o: row o of the previous iterate, as `let prev =
    st[e - 1]; prev[o]` reads it (several optimisers or restarts trained side by side). It was
    E011 "inside its recurrence read it at one point"."""
    rng = np.random.default_rng(29)
    X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
    out = run("""
        let X: [f64; N, 3];
        let y: [f64; N];
        let st[0, o in 0..2, d in 0..3] = 0.0;
        let st[e in 1..6, o in 0..2] = {
            let w = st[e - 1, o];
            let L = sum[n]((sum[d](X[n, d] * w[d]) - y[n]) ** 2) / (N as f64);
            w - (0.1 + 0.2 * (o as f64)) * @L / @w
        };
        let last[o in 0..2, d in 0..3] = st[5, o, d];
    """, X=X, y=y)
    paths = []
    for lr in (0.1, 0.3):
        w, path = np.zeros(3), [np.zeros(3)]
        for _ in range(5):
            w = w - lr * 2 * X.T @ (X @ w - y) / len(y)
            path.append(w)
        paths.append(path)
    np.testing.assert_allclose(out["st"], np.array(paths).transpose(1, 0, 2), rtol=1e-12, atol=1e-14)
