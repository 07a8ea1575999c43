"""Recurrence groups of several members whose storages have run-time sizes, in each form a
target runs them in. IREE 3.13 read every storage a host loop carries after the first at the
first one's offset (einc/mlir/recurrences/flat_storage.py): on vulkan-spirv the second member came back
holding the first one's values, and a Jacobian of a recurrence came back scrambled (found by the
differential fuzzer). Each case is checked against a NumPy loop."""
import numpy as np
import pytest

import einc
from tests.programs import built
from tests.tiers import VULKAN_FULL

TARGETS = ["llvm-cpu", VULKAN_FULL]

# every read at t - 1: chunks of steps inside one workgroup on vulkan-spirv
STEP_READS = """
let x: [f32; T, J];
let r[0, j in 0..J] = x[0, j];
let r[t in 1..T, j in 0..J] = r[t - 1, j] * 0.5 + x[t, j];
let s[0, j in 0..J, k in 0..3] = x[0, j] * k as f32;
let s[t in 1..T, j in 0..J, k in 0..3] = s[t - 1, j, k] * 0.25 + r[t - 1, j] * k as f32;
"""

# a read of the fixed step 0: one kernel per clause and step on the host
FIXED_STEP_READ = """
let x: [f32; T, J];
let r[0, j in 0..J] = x[0, j];
let r[t in 1..T, j in 0..J] = r[t - 1, j] * 0.5 + r[0, j] * 0.25 + x[t, j];
let s[0, j in 0..J, k in 0..3] = x[0, j] * k as f32;
let s[t in 1..T, j in 0..J, k in 0..3] = s[t - 1, j, k] * 0.25 + r[t - 1, j] * k as f32;
"""

# the fuzzer's program: the tangent of r6 is a second member, of rank 4
JACOBIAN = """
use std::math::*;
let x1: [f32; N, 3];
let r6[0, j in 0..N] = x1[0, 1 - j] * j as f32;
let r6[t in 1..N, j in 0..N] = (r6[t - 1, j / 3] + r6[t - 1, j / 2] * t as f32).tanh();
let g11 = @r6 / @x1;
"""


def two_members(x: np.ndarray, fixed_step: bool) -> dict:
    x = x.astype(np.float64)
    r = np.zeros_like(x)
    s = np.zeros(x.shape + (3,))
    k = np.arange(3.0)
    r[0], s[0] = x[0], x[0][:, None] * k
    for t in range(1, len(x)):
        r[t] = r[t - 1] * 0.5 + (r[0] * 0.25 if fixed_step else 0.0) + x[t]
        s[t] = s[t - 1] * 0.25 + r[t - 1][:, None] * k
    return {"r": r, "s": s}


def jacobian_program(x1: np.ndarray) -> np.ndarray:
    n = x1.shape[0]
    r = np.zeros((n, n))
    r[0] = [x1[0, 1 - j] * j for j in range(n)]
    for t in range(1, n):
        r[t] = [np.tanh(r[t - 1, j // 3] + r[t - 1, j // 2] * t) for j in range(n)]
    return r


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source, fixed_step, steps", [
    (STEP_READS, False, 2), (STEP_READS, False, 20_000), (FIXED_STEP_READ, True, 40)],
    ids=["step reads, one chunk", "step reads, several chunks", "a fixed-step read"])
def test_each_member_keeps_its_own_storage(target, source, fixed_step, steps):
    x = np.random.default_rng(steps).uniform(-1, 1, (steps, 2)).astype(np.float32)
    out = einc.load(built(source, target).vmfb)(x=x)       # one build for both lengths
    want = two_members(x, fixed_step)
    for name in ("r", "s"):
        np.testing.assert_allclose(out[name], want[name], rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("target", TARGETS)
def test_the_jacobian_of_a_recurrence(run, target, fd_jacobian):
    x1 = np.array([[0.3, 0.6, 0.9], [1.2, 1.5, 1.8]], np.float32)
    out = run(JACOBIAN, target=target, x1=x1)
    np.testing.assert_allclose(out["r6"], jacobian_program(x1.astype(np.float64)), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out["g11"], fd_jacobian(jacobian_program, x1.astype(np.float64)),
                               rtol=1e-5, atol=1e-5)
