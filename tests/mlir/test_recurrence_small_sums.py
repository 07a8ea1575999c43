"""A step's scalar reduction over at most UNROLLED_POINTS points of constant ranges is unrolled
at build time, in order (recurrence_scalars.scalar_reduce): a small tensor state read at the
summed coordinate is then picked by constant subscripts. Against NumPy in f64 (the same order of
terms, so to the last bits): sums from a nonzero start, guarded, nested, a max, and a 4 x 4
sum (16 points, unrolled) beside a 17-point one (a loop; read across its axis, so not in
vector lanes)."""
import os

import numpy as np
import pytest

import einc
from einc.driver import lower
from einc.mlir.recurrences.scalars import UNROLLED_POINTS
from tests.tiers import GENERIC_FULL

rng = np.random.default_rng(31)

SOURCE = """
let A: [f64; 3, 3];
let B: [f64; 4, 4];
let u: [f64; T, 17];
let x[0, i in 0..3] = A[i, i] + 1.0;
let x[t in 1..T, i in 0..3] = {
    let across = sum[k](A[k, i] * x[t - 1, k]) where k != i;
    0.5 * sum[k in 1..3](A[i, k] * x[t - 1, k]) + across + 0.01 * max[k in 0..3](x[t - 1, k])
};
let M[0, i in 0..4, j in 0..4] = if i == j { 1.0 as f64 } else { 0.0 as f64 };
let M[t in 1..T, i in 0..4, j in 0..4] = 0.5 * sum[k in 0..4, l in 0..4](B[i, k] * M[t - 1, k, l] * B[l, j])
    + sum[k in 0..2](sum[l in 0..2](A[k, l] * x[t, l]));
let s[0] = 0.0;
let s[t in 1..T] = 0.5 * s[t - 1] + sum[k in 0..17](u[t, k] * x[t, k % 3]) / 17.0;
"""


def reference(A, B, u):
    T = len(u)
    x, M, s = np.zeros((T, 3)), np.zeros((T, 4, 4)), np.zeros(T)
    x[0], M[0] = np.diag(A) + 1.0, np.eye(4)
    for t in range(1, T):
        p = x[t - 1]
        for i in range(3):
            ahead = sum(A[i, k] * p[k] for k in range(1, 3))
            across = sum(A[k, i] * p[k] for k in range(3) if k != i)
            x[t, i] = 0.5 * ahead + across + 0.01 * p.max()
        inner = sum(sum(A[k, l] * x[t, l] for l in range(2)) for k in range(2))
        for i in range(4):
            for j in range(4):
                M[t, i, j] = 0.5 * sum(B[i, k] * M[t - 1, k, l] * B[l, j] for k in range(4) for l in range(4)) + inner
        s[t] = 0.5 * s[t - 1] + sum(u[t, k] * x[t, k % 3] for k in range(17)) / 17.0
    return {"x": x, "M": M, "s": s}


@pytest.mark.parametrize("target", ["llvm-cpu", GENERIC_FULL])
def test_small_constant_sums_in_a_step_match_numpy(target):
    A = rng.standard_normal((3, 3)) / 3
    B = rng.standard_normal((4, 4)) / 4
    u = rng.standard_normal((40, 17))
    with einc.load(einc.compile(SOURCE, target=target, outputs=["x", "M", "s"]).vmfb) as program:
        got = program(A=A, B=B, u=u)
    for name, expected in reference(A, B, u).items():
        np.testing.assert_allclose(got[name], expected, rtol=1e-12, atol=1e-12, err_msg=name)


def test_sums_of_up_to_the_limit_are_unrolled_and_larger_ones_loop(tmp_path):
    def loops(points: int) -> int:
        path = os.path.join(tmp_path, f"sum{points}.ein")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"""let v: [f64; {points}, T];
                let s[0] = 0.0;
                let s[t in 1..T] = 0.5 * s[t - 1] + sum[k in 0..{points}](v[k, t]);""")
        return str(lower(path, "llvm-cpu", ["s"])).count("scf.for")
    assert loops(UNROLLED_POINTS + 1) == loops(UNROLLED_POINTS) + 1
