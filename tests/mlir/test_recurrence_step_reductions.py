"""A reduction in a step's clause that uses no point variable (a softmax's max and sum over the
step's row) has one value at every point of the step, so the step computes it once, before the
points (recurrence_step.step_reductions); each point computed it again before, N^2 work a step
for a row of N (a particle filter's weights). Against NumPy: hoisted reductions reading other
members at the current step and the member itself at an earlier step, beside ones that stay per
point (under a select, reading the member's own points of the step)."""
import numpy as np

import einc
from einc.driver import lower
from iree.compiler import ir

rng = np.random.default_rng(41)

SOURCE = """
use std::math::{exp, log};
let u: [f64; T, N];
let x[0, j in 0..N] = u[0, j];
let s[t in 1..T, j in 0..N] = x[t - 1, j] + u[t, j];
let x[t in 1..T, j in 0..N] = 0.5 * (s[t, j] - m - log(z)) + 0.1 * x[t - 1, j] / (1.0 + max[k](x[t - 1, k] ** 2))
    where m = max[k](s[t, k]), z = sum[k](exp(s[t, k] - m));
let c[t in 1..T, 0] = u[t, 0];
let c[t in 1..T, j in 1..N] = u[t, j] + max[k in 0..1](c[t, k]) + if u[t, j] > 0.0 { sum[k](x[t, k]) } else { 0.0 };
"""


def reference(u):
    T, N = u.shape
    x, s, c = np.zeros((T, N)), np.zeros((T, N)), np.zeros((T, N))
    x[0] = u[0]
    for t in range(1, T):
        s[t] = x[t - 1] + u[t]
        m = s[t].max()
        z = np.exp(s[t] - m).sum()
        x[t] = 0.5 * (s[t] - m - np.log(z)) + 0.1 * x[t - 1] / (1.0 + (x[t - 1] ** 2).max())
        c[t, 0] = u[t, 0]
        c[t, 1:] = u[t, 1:] + c[t, 0] + np.where(u[t, 1:] > 0.0, x[t].sum(), 0.0)
    return {"x": x, "s": s, "c": c}


def test_step_reductions_match_numpy():
    u = rng.standard_normal((30, 13))
    with einc.load(einc.compile(SOURCE, outputs=["x", "s", "c"]).vmfb) as program:
        got = program(u=u)
    for name, expected in reference(u).items():
        np.testing.assert_allclose(got[name], expected, rtol=1e-12, atol=1e-12, err_msg=name)


def _deepest_loops(op) -> int:
    """The most scf.for loops nested in one another under `op`."""
    inner = max((_deepest_loops(o) for region in op.regions for block in region.blocks for o in block.operations),
                default=0)
    return inner + (op.name == "scf.for")


def test_a_softmax_over_the_step_row_is_computed_once_a_step(tmp_path):
    path = tmp_path / "softmax.ein"
    path.write_text("""use std::math::exp;
let u: [f64; T, N];
let w[0, j in 0..N] = u[0, j];
let w[t in 1..T, j in 0..N] = exp(w[t - 1, j] + u[t, j] - m) / z
    where m = max[k](w[t - 1, k] + u[t, k]), z = sum[k](exp(w[t - 1, k] + u[t, k] - m));
""")
    module = lower(str(path), "llvm-cpu", ["w"])
    # the step loop holds the loops of max, sum and the points side by side, none in another
    assert _deepest_loops(module.operation) == 2
