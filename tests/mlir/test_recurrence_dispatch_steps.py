"""A recurrence whose steps compute whole tensors (a gradient, a linear solve's loops) runs as one
dispatch on the CPU (recurrence_dispatch_steps), its tensors on the dispatch's stack or in buffers
of the dispatch; a host loop of kernels where that cannot be (recurrence_tensor_steps).
Each program is checked against NumPy at the form `--explain` names."""
import numpy as np
import pytest

import einc
from einc.driver import emit_program
from tests.e2e.test_nested_recurrences import NEWTON_SYSTEM, _newton_system

rng = np.random.default_rng(23)
DISPATCH = "one dispatch whose loops run every step, computing the step's tensors once a step"

DESCENT = """
let X: [f64; N, D];
let y: [f64; N];
let w[0, d in 0..D] = 0.0;
let w[k in 1..40, d in 0..D] = w[k - 1, d] - 0.05 * g[d] where g = {
    let v = w[k - 1];
    let r[n] = sum[j](X[n, j] * v[j]) - y[n];
    let L = sum[n](r[n] * r[n]) / (N as f64);
    let raw = @L / @v;
    let norm = sum[j](raw[j] * raw[j]).sqrt();
    raw * (if norm > 2.0 { 2.0 / norm } else { 1.0 })
};
let loss[k in 0..40] = sum[n]((sum[j](X[n, j] * w[k, j]) - y[n]) ** 2) / (N as f64);
"""


def descent(X, y):
    w = [np.zeros(X.shape[1])]
    for _ in range(39):
        g = 2 * X.T @ (X @ w[-1] - y) / len(y)
        norm = np.sqrt(g @ g)
        w.append(w[-1] - 0.05 * g * (2 / norm if norm > 2 else 1))
    w = np.array(w)
    return {"w": w, "loss": ((w @ X.T - y) ** 2).mean(1)}


def build(tmp_path, source, dims, outputs=None):
    path = tmp_path / "program.ein"
    path.write_text(source)
    explain = emit_program(str(path), "explain", outputs=outputs, dims=dims)
    return explain, einc.load(einc.compile(str(path), dims=dims, outputs=outputs))


@pytest.mark.parametrize("dims", [{"N": 24, "D": 4}, {"N": 1100, "D": 4}, None])
def test_a_gradient_step_runs_in_one_dispatch(tmp_path, dims):
    """At N = 24 the step's tensors (the residual among them, N f64) are made on the dispatch's
    stack; at N = 1,100 (past STACK_BUDGET) and at run-time sizes they are kept in buffers of
    the dispatch: the same values every way (rtol 1e-10)."""
    n = 300 if dims is None else dims["N"]
    X, y = rng.standard_normal((n, 4)), rng.standard_normal(n)
    explain, program = build(tmp_path, DESCENT, dims)
    assert DISPATCH in explain
    got, want = program(X=X, y=y), descent(X, y)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-10, atol=1e-12, err_msg=key)


def test_loops_nested_in_the_step_run_inside_its_dispatch(tmp_path):
    """std's solve (an elimination loop and a back substitution) inside each Newton step, f64."""
    explain, program = build(tmp_path, NEWTON_SYSTEM.replace("f32", "f64"), None)
    assert DISPATCH in explain and "runs 2 nested recurrence loop(s)" in explain
    x0 = np.array([0.5, 1.5, 0.8])
    np.testing.assert_allclose(program(x0=x0)["x"], _newton_system(x0, 20), rtol=1e-9, atol=1e-12)


DECODE = """
use std::math::{exp, tanh};
let x0: [f32; D];
let Wq: [f32; D, D];
let Wk: [f32; D, D];
let Wo: [f32; D, D];
let x[0] = x0;
let k[t in 0..7, j in 0..D] = sum[i](x[t, i] * Wk[i, j]);
let q[t in 0..7, j in 0..D] = sum[i](x[t, i] * Wq[i, j]);
let o[t in 0..7, j in 0..D] = {
    let s[u in 0..7] = if u <= t { sum[i](q[t, i] * k[u, i]) } else { -1.0e9 };
    let m = max[u](s[u]);
    sum[u in 0..t + 1](exp(s[u] - m) * k[u, j]) / sum[u](exp(s[u] - m))
};
let x[t in 1..7, j in 0..D] = tanh(sum[i](o[t - 1, i] * Wo[i, j]));
"""


def test_a_history_read_after_its_member_is_written_sees_the_current_step(tmp_path):
    """`k[u]` for u <= t, read whole by a tensor computed after k's step-t row is written (it
    also reads q at step t): that row is part of what it reads."""
    d = 6
    x0, Wq, Wk, Wo = rng.standard_normal(d), *(rng.standard_normal((3, d, d)) * 0.5)
    explain, program = build(tmp_path, DECODE, {"D": d})
    assert DISPATCH in explain
    x, k, q, o = (np.zeros((7, d)) for _ in range(4))
    x[0] = x0
    for t in range(7):
        if t:
            x[t] = np.tanh(o[t - 1] @ Wo)
        k[t], q[t] = x[t] @ Wk, x[t] @ Wq
        s = k[:t + 1] @ q[t]
        e = np.exp(s - s.max())
        o[t] = e @ k[:t + 1] / e.sum()
    f32 = np.float32
    got = program(x0=x0.astype(f32), Wq=Wq.astype(f32), Wk=Wk.astype(f32), Wo=Wo.astype(f32))
    for key, want in dict(x=x, k=k, q=q, o=o).items():
        np.testing.assert_allclose(got[key], want, rtol=2e-4, atol=2e-5, err_msg=key)


ONE_SLOT = """
let A: [f64; 6, 4];
let m[0, f in 0..4] = 0.0;
let g[t in 1..20] = {
    let v = m[t - 1];
    let r[i] = sum[j](A[i, j] * v[j]) - 1.0;
    let L = sum[i](r[i] * r[i]);
    @L / @v
};
let m[t in 1..20] = 0.9 * m[t - 1] - 0.01 * g[t];
"""


def test_a_member_of_one_slot_written_whole_from_a_step_tensor(tmp_path):
    """g is read only at its own step, so it keeps one slot, which each step overwrites whole
    with the gradient the step computed: IREE folded that write into the gradient's tensor, and
    the loop's storage failed to bufferize ("Yield operand #0 is not equivalent")."""
    A = rng.standard_normal((6, 4))
    explain, program = build(tmp_path, ONE_SLOT, None, outputs=["m"])
    assert DISPATCH in explain and "g: lookback 0, tail 1, storage 1 slots" in explain
    m = [np.zeros(4)]
    for _ in range(19):
        m.append(0.9 * m[-1] - 0.01 * 2 * A.T @ (A @ m[-1] - 1))
    np.testing.assert_allclose(program(A=A)["m"], np.array(m), rtol=1e-10, atol=1e-12)


STOPPING = """
let X: [f64; 8, 3];
let y: [f64; 8];
let w[0, d in 0..3] = 0.0;
let done[0] = false;
let w[k in 1..30] = if done[k - 1] { w[k - 1] } else {
    let v = w[k - 1];
    let r[n] = sum[j](X[n, j] * v[j]) - y[n];
    let over[n] = r[n] > 0.0;
    let L = sum[n](if over[n] { r[n] * r[n] } else { 0.5 * r[n] * r[n] });
    v - 0.02 * @L / @v
};
let done[k in 1..30] = done[k - 1] || sum[d]((w[k, d] - w[k - 1, d]) ** 2) < 1.0e-4;
"""


def test_bools_of_the_step_are_kept_as_bytes(tmp_path):
    """A bool state read whole at t - 1 (`done[k - 1]`, a slice) and a bool tensor of the step
    (`over[n]`): kept as i8 inside the dispatch (IREE-80), read back as bools."""
    X, y = rng.standard_normal((8, 3)), rng.standard_normal(8)
    explain, program = build(tmp_path, STOPPING, None)
    assert DISPATCH in explain
    w, done = [np.zeros(3)], [False]
    for _ in range(29):
        v = w[-1]
        if done[-1]:
            w.append(v)
        else:
            r = X @ v - y
            w.append(v - 0.02 * X.T @ np.where(r > 0, 2 * r, r))
        done.append(done[-1] or ((w[-1] - w[-2]) ** 2).sum() < 1e-4)
    got = program(X=X, y=y)
    np.testing.assert_allclose(got["w"], np.array(w), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(got["done"], np.array(done))


DAMPED_SOLVES = """
use std::ml::linalg_ops::solve;
let A: [f64; N, N];
let b: [f64; N];
let x[0, i in 0..N] = 0.0;
let x[k in 1..10] = {
    let v = x[k - 1];
    let r[i] = sum[j](A[i, j] * v[j]) - b[i];
    let M[i, j] = A[i, j] + (if i == j { 0.1 * v[i] * v[i] } else { 0.0 });
    v - 0.5 * solve(M, r)
};
"""


def test_loops_nested_in_a_step_of_run_time_sizes_keep_their_storage_in_buffers(tmp_path):
    """std's solve of an N x N system built in each step, N a run-time size: the solve's storage
    and the tensors the step computes for it (M, r, the augmented matrix) are buffers of the
    dispatch, cleared each step; one module for two sizes."""
    explain, program = build(tmp_path, DAMPED_SOLVES, None)
    assert DISPATCH in explain and "runs 2 nested recurrence loop(s)" in explain
    for n in (3, 40):
        A = rng.standard_normal((n, n)) + n * np.eye(n)
        b = rng.standard_normal(n)
        x = [np.zeros(n)]
        for _ in range(9):
            v = x[-1]
            x.append(v - 0.5 * np.linalg.solve(A + np.diag(0.1 * v * v), A @ v - b))
        np.testing.assert_allclose(program(A=A, b=b)["x"], np.array(x), rtol=1e-9, atol=1e-12)


BACKTRACKING = """
use std::math::{exp, ln};
let X: [f64; N, D];
let y: [f64; N];
fn softplus(z) { if z > 0.0 { z + ln(1.0 + exp(-z)) } else { ln(1.0 + exp(z)) } }
fn loss(w) { sum[n](softplus(-y[n] * sum[j](X[n, j] * w[j]))) / (N as f64) + 0.025 * sum[j](w[j] * w[j]) }
fn search(w, g, f0) {
    let gg = sum[j](g[j] * g[j]);
    let a[0] = 1.0;
    let a[i in 1..12] = if loss(w - a[i - 1] * g) <= f0 - 0.5 * a[i - 1] * gg { a[i - 1] } else { 0.5 * a[i - 1] };
    a[11]
}
let w[0, j in 0..D] = 0.0;
let w[t in 1..6] = { let prev = w[t - 1]; let f0 = loss(prev); let g = @f0 / @prev; prev - search(prev, g, f0) * g };
let steps[t in 0..5] = { let prev = w[t]; let f0 = loss(prev); search(prev, @f0 / @prev, f0) };
"""


def test_buffers_of_tensors_from_one_call_stay_apart(tmp_path):
    """The line search's dispatch keeps three tensors of its step made at one call's span in
    buffers of run-time size: marked alike, CSE merged their tensor.empty ops and the dispatch's
    results came apart ("optimization_barrier op ... same type")."""
    explain, program = build(tmp_path, BACKTRACKING, None)
    assert DISPATCH in explain
    X, y = rng.standard_normal((20, 3)), np.sign(rng.standard_normal(20))
    loss = lambda w: np.logaddexp(0, -y * (X @ w)).mean() + 0.025 * w @ w
    grad = lambda w: (X * (-y / (1 + np.exp(y * (X @ w))))[:, None]).mean(0) + 0.05 * w
    def search(w):
        g, a = grad(w), 1.0
        for _ in range(11):
            a = a if loss(w - a * g) <= loss(w) - 0.5 * a * (g @ g) else 0.5 * a
        return a
    w = [np.zeros(3)]
    for _ in range(5):
        w.append(w[-1] - search(w[-1]) * grad(w[-1]))
    got = program(X=X, y=y)
    np.testing.assert_allclose(got["w"], np.array(w), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["steps"], [search(v) for v in w[:5]], rtol=1e-12)


def test_a_step_of_many_tensors_of_run_time_sizes_keeps_the_host_loop():
    """A transformer's block as a step over 4 layers, 16 tensors of sizes (B, T, D) in buffers:
    the dispatch would take more push constants (a binding's offset, a size) than IREE's 64 and
    failed to load ("dispatch requiring 69 constants exceeds limit of 64")."""
    from tests.programs import FOLDER
    text = emit_program(str(FOLDER / "holdout" / "transformer_stack.ein"), "explain", outputs=["x", "logp", "nll"])
    assert "words of constants, more than 28 or 40" in text


PER_ROW_CG = """
let b: [f64; B, N];
fn scaled(v) {
    let w[i] = v[i] * (1.0 + i as f64);
    w
}
fn cg(b) {
    let r[0, i] = b[i];
    let p[0, i] = b[i];
    let rr[0] = sum[i](b[i] * b[i]);
    let q[k in 0..3, i] = scaled(p[k])[i];
    let alpha[k in 0..3] = rr[k] / sum[i](p[k, i] * q[k, i]);
    let r[k in 1..4, i] = r[k - 1, i] - alpha[k - 1] * q[k - 1, i];
    let rr[k in 1..4] = sum[i](r[k, i] * r[k, i]);
    let p[k in 1..4, i] = r[k, i] + (rr[k] / rr[k - 1]) * p[k - 1, i];
    rr[3]
}
let res[e in 2..B] = cg(b[e]);
"""


@pytest.mark.parametrize("dims", [{"B": 5, "N": 6}, None])
def test_a_slice_batched_over_an_index_starting_past_zero(tmp_path, dims):
    """cg's loop runs once for each e in 2..B (batched over e), its step computing `scaled(p[k])`
    from the slice p[k] of rows e = 2..B-1 only: that slice is the block of the state's rows its
    variables run over (it was the whole row, and the tensor read row e - 2 of it: NaN, garbage)."""
    b = rng.standard_normal((5, 6))
    explain, program = build(tmp_path, PER_ROW_CG, dims)
    assert DISPATCH in explain
    d = 1.0 + np.arange(6)

    def cg(v):
        r, p = v.copy(), v.copy()
        for _ in range(3):
            q = d * p; alpha = (r @ r) / (p @ q); rn = r - alpha * q
            p, r = rn + (rn @ rn) / (r @ r) * p, rn
        return r @ r
    np.testing.assert_allclose(program(b=b)["res"], [0, 0] + [cg(v) for v in b[2:]], rtol=1e-10, atol=1e-14)
