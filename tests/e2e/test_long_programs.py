"""Programs as long as a generator makes them build and run: every walk over the AST and the IR
goes along a chain of thousands of values without a recursion per value (a chain of 80
definitions was an internal RecursionError, a flat sum of 600 terms was E001)."""
import numpy as np

from benchmarks.build_time import definition_chain


def chain_reference(x: np.ndarray, n: int) -> np.ndarray:
    """NumPy's meaning of benchmarks.build_time.definition_chain(n), in f64."""
    h = x.astype(np.float64)
    for k in range(1, n):
        h = h @ h * 0.1 if k % 4 == 0 else h * 0.5 + 1.0
    return h


def test_a_chain_of_2000_definitions_matches_numpy(run):
    x = np.random.default_rng(5).uniform(-1.0, 1.0, (4, 4)).astype(np.float32)
    got = run(definition_chain(2000), outputs=["out"], x=x)["out"]
    # the chain contracts (each step halves the error it is given): f32 rounding stays ~1e-7
    np.testing.assert_allclose(got, chain_reference(x, 2000), rtol=1e-5, atol=1e-5)


def test_a_sum_of_5000_terms_matches_numpy(run):
    x = np.random.default_rng(6).standard_normal(8).astype(np.float32)
    terms = [k % 8 for k in range(5000)]
    source = "let x: [f32; 8];\nlet s = " + " + ".join(f"x[{k}]" for k in terms) + ";\n"
    got = run(source, x=x)["s"]
    # 5000 f32 additions of terms ~1 in order: rounding below 5000 * 2**-24 * |partial sums|
    np.testing.assert_allclose(got, x.astype(np.float64)[terms].sum(), rtol=1e-3, atol=1e-2)


def test_a_product_of_5000_factors_in_an_indexed_definition_matches_numpy(run):
    x = np.random.default_rng(7).standard_normal(8).astype(np.float32)
    y = np.random.default_rng(8).uniform(0.999, 1.001, 16).astype(np.float32)
    factors = [k % 16 for k in range(5000)]
    source = ("let x: [f32; 8];\nlet y: [f32; 16];\nlet p[i in 0..8] = x[i] * "
              + " * ".join(f"y[{k}]" for k in factors) + ";\n")
    got = run(source, x=x, y=y)["p"]
    want = x.astype(np.float64) * np.prod(y.astype(np.float64)[factors])
    # 5000 f32 roundings of relative 2**-24 each: below 3e-4 relative
    np.testing.assert_allclose(got, want, rtol=1e-3)
