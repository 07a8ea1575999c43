"""Programs as long as a generator makes them build and run: every walk over the AST and the IR
goes along a chain of thousands of values without a recursion per value (a chain of 80
definitions was an internal RecursionError, a flat sum of 600 terms was E001), also forward and
reverse mode derivatives through them. The lengths are past Python's recursion limit (1,000
frames; `long_enough`; the stages run under that limit here, not einc.deep_stack's), so a walk
that recursed once per value would fail; longer ones add only IREE build time."""
import sys

import numpy as np

from benchmarks.build_time import definition_chain
import einc.deep_stack
import pytest


@pytest.fixture(autouse=True)
def pythons_frame_limit(monkeypatch):
    monkeypatch.setattr(einc.deep_stack, "FRAMES", sys.getrecursionlimit())


def chain_reference(x: np.ndarray, n: int) -> np.ndarray:
    """NumPy's meaning of benchmarks.build_time.definition_chain(n), in f64."""
    h = x.astype(np.float64)
    for k in range(1, n):
        h = h @ h * 0.1 if k % 4 == 0 else h * 0.5 + 1.0
    return h


def long_enough(n: int) -> int:
    """`n`, checked to be at least 1.5 times Python's recursion limit."""
    assert n >= 1.5 * sys.getrecursionlimit(), n
    return n


@pytest.mark.full
def test_a_chain_of_1500_definitions_matches_numpy(run):
    x = np.random.default_rng(5).uniform(-1.0, 1.0, (4, 4)).astype(np.float32)
    n = long_enough(1500)
    got = run(definition_chain(n), outputs=["out"], x=x)["out"]
    # the chain contracts (each step halves the error it is given): f32 rounding stays ~1e-7
    np.testing.assert_allclose(got, chain_reference(x, n), rtol=1e-5, atol=1e-5)


@pytest.mark.full
def test_a_sum_of_2000_terms_matches_numpy(run):
    x = np.random.default_rng(6).standard_normal(8).astype(np.float32)
    terms = [k % 8 for k in range(long_enough(2000))]
    source = "let x: [f32; 8];\nlet s = " + " + ".join(f"x[{k}]" for k in terms) + ";\n"
    got = run(source, x=x)["s"]
    # 2000 f32 additions of terms ~1 in order: rounding below 2000 * 2**-24 * |partial sums|
    np.testing.assert_allclose(got, x.astype(np.float64)[terms].sum(), rtol=1e-3, atol=1e-2)


def test_a_product_of_2000_factors_in_an_indexed_definition_matches_numpy(run):
    x = np.random.default_rng(7).standard_normal(8).astype(np.float32)
    y = np.random.default_rng(8).uniform(0.999, 1.001, 16).astype(np.float32)
    factors = [k % 16 for k in range(long_enough(2000))]
    source = ("let x: [f32; 8];\nlet y: [f32; 16];\nlet p[i in 0..8] = x[i] * "
              + " * ".join(f"y[{k}]" for k in factors) + ";\n")
    got = run(source, x=x, y=y)["p"]
    want = x.astype(np.float64) * np.prod(y.astype(np.float64)[factors])
    # 2000 f32 roundings of relative 2**-24 each: below 1.2e-4 relative
    np.testing.assert_allclose(got, want, rtol=1e-3)


def test_derivatives_through_a_chain_of_300_definitions_match_numpy(run):
    """h_k = h_{k-1} / 2 + x: the Jacobian (forward mode, one tangent per element of x) is c I with
    c_k = c_{k-1} / 2 + 1, the gradient of sum(h^2) is 2 c h (reverse mode). The forward walk was
    a RecursionError (fuzz seed 41 program 474)."""
    n = 300
    lines = ["let x: [f32; 4];", "let h0[i] = x[i];"]
    lines += [f"let h{k}[i] = h{k - 1}[i] * 0.5 + x[i];" for k in range(1, n + 1)]
    lines += [f"let j = @h{n} / @x;", f"let l = sum[i in 0..4](h{n}[i] * h{n}[i]);", "let g = @l / @x;"]
    x = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
    out = run("\n".join(lines) + "\n", outputs=["j", "g"], x=x)
    h, c = x.astype(np.float64), 1.0
    for _ in range(n):
        h, c = h * 0.5 + x, c * 0.5 + 1.0
    # f32 through a contraction: each step halves the rounding it is given
    np.testing.assert_allclose(out["j"], c * np.eye(4), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["g"], 2.0 * c * h, rtol=1e-5, atol=1e-5)


@pytest.mark.full      # a tangent walk as deep: the chain of 300 definitions above
def test_the_jacobian_of_a_whole_array_expression_of_400_terms_matches_numpy(run):
    """Each whole-array operation is a tensor: the tangent walks a chain 400 tensors deep."""
    factors = [0.5 + 0.25 * (k % 5) for k in range(400)]
    terms = [f"x * {f}" if k % 7 else "sin(x)" for k, f in enumerate(factors)]
    x = np.array([0.5, -1.0, 2.0], np.float32)
    out = run("use std::math::sin;\nlet x: [f32; 3];\nlet y = " + " + ".join(terms) + ";\nlet j = @y / @x;\n",
              outputs=["j"], x=x)
    scale = sum(f for k, f in enumerate(factors) if k % 7)
    sines = sum(1 for k in range(400) if k % 7 == 0)
    want = np.diag(scale + sines * np.cos(x.astype(np.float64)))
    # 400 f32 additions of terms below 2 in size: rounding below 400 * 2**-24 * 400
    np.testing.assert_allclose(out["j"], want, rtol=1e-4, atol=1e-3)
