"""Derivatives through a recurrence whose step runs a recurrence, against NumPy loops
differentiated by central differences in f64."""
import numpy as np


def test_the_tangent_of_an_inner_loop_whose_step_is_an_array_literal(run, fd_jacobian):
    """Forward mode: the inner loop's step literal had its tangent asked for before the inner
    tangent members existed, and kept the zero (a silent wrong value: dy was only p's direct
    term)."""
    p = np.array([0.9, 0.4])
    out = run("""
        let p: [f64; 2];
        let y[0, j in 0..2] = if j == 0 { 1.0 } else { 0.0 };
        let y[n in 1..4] = {
            let z[0, j in 0..2] = y[n - 1, j];
            let z[s in 1..3] = [z[s - 1, 0] + 0.1 * z[s - 1, 1], z[s - 1, 1] - 0.1 * p[0] * z[s - 1, 0] * p[1]];
            z[2]
        };
        let dy = @y / @p;
    """, p=p)

    def iterates(p):
        ys = [np.array([1.0, 0.0])]
        for _ in range(3):
            v = ys[-1]
            for _ in range(2):
                v = np.array([v[0] + 0.1 * v[1], v[1] - 0.1 * p[0] * v[0] * p[1]])
            ys.append(v)
        return np.array(ys)
    np.testing.assert_allclose(out["dy"], fd_jacobian(iterates, p), rtol=1e-6, atol=1e-9)   # f64, FD ~1e-9
