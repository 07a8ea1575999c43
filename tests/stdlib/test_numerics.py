"""std::numerics and the recurrent parts of std::ml::linalg_ops, against closed forms and NumPy.

The single steps are plain arithmetic. Trajectories, iterations, Cholesky and the triangular
solves are recurrences, whose lowering is being finished separately: if that program does not
compile yet, its tests fail with the compiler's message."""
import numpy as np
import pytest

from stdlib_harness import close, run_program

STEPS = """
use std::numerics::*;
let u: f64;
let k: f64;
let dt: f64;
let ul: [f64; 3];
let A: [f64; 3, 3];
let x2: [f64; 2];
let A2: [f64; 2, 2];
let b2: [f64; 2];
let xs: [f64; 6];
let ys: [f64; 6];
let V: [f64; 3];
let r: [f64; 3];
let P: [f64; 3, 3];
let eu = euler_decay_step(u, k, dt);
let mid = midpoint_decay_step(u, k, dt);
let rk = rk4_decay_step(u, k, dt);
let eul = euler_linear_step(ul, A, dt, 3);
let qv = quadratic_value_2d(x2, A2, b2);
let qg = quadratic_gradient_2d(x2, A2, b2);
let gd = gradient_descent_step_2d(x2, A2, b2, 0.1);
let res = quadratic_residual_norm_2d(x2, A2, b2);
let ls = least_squares_slope_intercept(xs, ys, 6);
let slope = ls[0];
let ev = expected_value_at_state(V, P, 1, 3);
let disc = discounted_return(r, 0.9, 3);
let bs = bellman_step(V, r, P, 0.9, 3);
let br = bellman_residual(V, r, P, 0.9, 3);
"""

RECURRENCES = """
use std::numerics::*;
use std::ml::{cholesky, solve_triangular_lower, solve_triangular_lower_unit, solve_triangular_upper, solve_cholesky};
let S: [f64; 4, 4];
let y: [f64; 4];
let A2: [f64; 2, 2];
let b2: [f64; 2];
let r: [f64; 3];
let P: [f64; 3, 3];
let L = cholesky(S);
let xl = solve_triangular_lower(L, y);
let xu1 = solve_triangular_lower_unit(L, y);
let xu = solve_triangular_upper(transpose_(L), y);
let xc = solve_cholesky(S, y);
let ed = euler_decay(1.0f64, 0.5f64, 0.1f64, 10);
let md = midpoint_decay(1.0f64, 0.5f64, 0.1f64, 10);
let rd = rk4_decay(1.0f64, 0.5f64, 0.1f64, 10);
let gdt = gradient_descent_2d(A2, b2, 0.1, 50);
let vi = value_iteration(r, P, 0.9, 3, 40);
fn transpose_(m) { let t[i, j] = m[j, i]; t }
"""

RNG = np.random.default_rng(0)
M4 = RNG.uniform(-1, 1, (4, 4))
SPD = M4 @ M4.T + 4 * np.eye(4)
A3 = RNG.uniform(-1, 1, (3, 3))
A2 = np.array([[3.0, 1.0], [1.0, 2.0]])
B2 = np.array([1.0, -1.0])
X2 = np.array([0.3, 0.7])
P3 = RNG.uniform(0, 1, (3, 3))
P3 /= P3.sum(1, keepdims=True)
R3 = np.array([1.0, 0.0, 2.0])
V3 = np.array([0.5, 1.5, -1.0])
XS = np.arange(6.0)
YS = 2.5 * XS - 1.0 + RNG.uniform(-0.1, 0.1, 6)


@pytest.fixture(scope="module")
def steps():
    return run_program(STEPS, u=np.float64(2.0), k=np.float64(0.5), dt=np.float64(0.1), ul=np.array([1.0, 2, 3]),
                       A=A3, x2=X2, A2=A2, b2=B2, xs=XS, ys=YS, V=V3, r=R3, P=P3)


def test_decay_steps(steps):
    u, k, h = 2.0, 0.5, 0.1
    close(steps["eu"], u * (1 - h * k), np.float64)
    close(steps["mid"], u * (1 - h * k + (h * k) ** 2 / 2), np.float64)
    z = -h * k
    close(steps["rk"], u * (1 + z + z ** 2 / 2 + z ** 3 / 6 + z ** 4 / 24), np.float64)


def test_decay_trajectories_of_literal_arguments_compute_in_f64():
    """The interface types the decay functions f64: with untyped literals they computed in f32
    (the default of a generic parameter), 3e-8 away from the f64 trajectory."""
    out = run_program("use std::numerics::ode::*;\nlet e = euler_decay(1.0, 0.5, 0.1, 20);\n"
                      "let r = rk4_decay(1.0, 0.5, 0.1, 20);\n")
    z = -0.5 * 0.1
    assert out["e"].dtype == out["r"].dtype == np.float64
    np.testing.assert_allclose(out["e"], (1 + z) ** np.arange(21), rtol=1e-14)
    np.testing.assert_allclose(out["r"], (1 + z + z ** 2 / 2 + z ** 3 / 6 + z ** 4 / 24) ** np.arange(21), rtol=1e-14)


def test_euler_linear_step(steps):
    u = np.array([1.0, 2, 3])
    close(steps["eul"], u + 0.1 * A3 @ u, np.float64)


def test_quadratic_2d(steps):
    close(steps["qv"], 0.5 * X2 @ A2 @ X2 - B2 @ X2, np.float64)
    g = A2 @ X2 - B2
    close(steps["qg"], g, np.float64)
    close(steps["gd"], X2 - 0.1 * g, np.float64)
    close(steps["res"], np.linalg.norm(g), np.float64)


def test_least_squares_gives_the_array_slope_intercept(steps):
    slope, intercept = np.polyfit(XS, YS, 1)
    close(steps["ls"], [slope, intercept], np.float64, rtol=1e-10, atol=1e-12)
    close(steps["slope"], slope, np.float64, rtol=1e-10)


def test_dp_steps(steps):
    close(steps["ev"], P3[1] @ V3, np.float64)
    close(steps["disc"], R3 @ 0.9 ** np.arange(3), np.float64)
    tv = R3 + 0.9 * P3 @ V3
    close(steps["bs"], tv, np.float64)
    close(steps["br"], np.abs(tv - V3).max(), np.float64)


@pytest.fixture(scope="module")
def rec():
    return run_program(RECURRENCES, S=SPD, y=np.array([1.0, -2, 0.5, 3]), A2=A2, b2=B2, r=R3, P=P3)


def test_cholesky_and_solves(rec):
    L = np.linalg.cholesky(SPD)
    y = np.array([1.0, -2, 0.5, 3])
    close(rec["L"], L, np.float64, rtol=1e-12)
    close(rec["xl"], np.linalg.solve(L, y), np.float64, rtol=1e-11)
    unit = np.tril(L, -1) + np.eye(4)
    close(rec["xu1"], np.linalg.solve(unit, y), np.float64, rtol=1e-11)
    close(rec["xu"], np.linalg.solve(L.T, y), np.float64, rtol=1e-11)
    close(rec["xc"], np.linalg.solve(SPD, y), np.float64, rtol=1e-11)


def test_trajectories(rec):
    t = np.arange(11)
    close(rec["ed"], (1 - 0.05) ** t, np.float64)
    close(rec["md"], (1 - 0.05 + 0.05 ** 2 / 2) ** t, np.float64)
    z = -0.05
    close(rec["rd"], (1 + z + z ** 2 / 2 + z ** 3 / 6 + z ** 4 / 24) ** t, np.float64)


def test_iterations(rec):
    x = np.zeros(2)
    for _ in range(50):
        x = x - 0.1 * (A2 @ x - B2)
    close(rec["gdt"], x, np.float64)
    v = np.zeros(3)
    for _ in range(40):
        v = R3 + 0.9 * P3 @ v
    close(rec["vi"], v, np.float64)
