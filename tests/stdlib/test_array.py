"""std::array against NumPy (f32 and i32 data, ranks 1 to 3)."""
import numpy as np
import pytest

import einc
from einc.runtime.errors import RunError
from stdlib_harness import close, diagnostic_of, rand, run_program

SOURCE = """
use std::array::*;
let x: [f32; 2, 3, 4];
let v: [f32; 7];
let k: [i32; 3, 5];
let flat3 = flatten(x);
let flat2 = flatten(k);
let tr = transpose(x[1]);
let tri = transpose(k);
let s3 = sum(x);
let s1 = sum(k[0]);
let cat3 = concatenate(x, x);
let cat1 = concatenate(v, k[0] as f32);
let am1 = argmax(v);
let an1 = argmin(v);
let am3 = argmax(x);
let ami = argmax(k);
let ama = argmax_all(x);
let ana = argmin_all(k);
let part = partition(v, 0.0);
let parti = partition(k[1], 5);
let part_rows = partition_2d(x[0], 0.0, 1);
let part_cols = partition_2d(x[0], 0.0, 0);
let top = topk_extract(v, 3);
let topi = topk_with_indices_extract(v, [10, 11, 12, 13, 14, 15, 16], 4);
"""

X = rand(2, 3, 4)
V = np.array([0.5, -1.0, 2.0, 2.0, -3.0, 0.25, 1.5], np.float32)   # a tie at the maximum
K = np.random.default_rng(3).integers(0, 10, (3, 5)).astype(np.int32)


@pytest.fixture(scope="module")
def out():
    return run_program(SOURCE, x=X, v=V, k=K)


def stable_partition(a, pivot):
    return np.concatenate([a[a < pivot], a[a >= pivot]])


def test_flatten(out):
    close(out["flat3"], X.reshape(-1))
    np.testing.assert_array_equal(out["flat2"], K.reshape(-1))


def test_transpose(out):
    close(out["tr"], X[1].T)
    np.testing.assert_array_equal(out["tri"], K.T)


def test_sum(out):
    close(out["s3"], X.astype(np.float64).sum(), rtol=1e-5)
    assert out["s1"].dtype == np.int32 and out["s1"] == K[0].sum()


def test_concatenate(out):
    close(out["cat3"], np.concatenate([X, X]))
    close(out["cat1"], np.concatenate([V, K[0]]))


def test_argmax_argmin_first_occurrence(out):
    assert out["am1"] == 2 and out["am1"].dtype == np.int32
    assert out["an1"] == np.argmin(V)
    np.testing.assert_array_equal(out["am3"], X.argmax(-1))
    np.testing.assert_array_equal(out["ami"], K.argmax(-1))
    assert out["ama"] == X.argmax()
    assert out["ana"] == K.argmin()


def test_partition(out):
    close(out["part"], stable_partition(V, 0.0))
    np.testing.assert_array_equal(out["parti"], stable_partition(K[1], 5))
    close(out["part_rows"], np.stack([stable_partition(r, 0.0) for r in X[0]]))
    close(out["part_cols"], np.stack([stable_partition(c, 0.0) for c in X[0].T]).T)


@pytest.mark.parametrize("call", ["std::array::topk_extract([1.0, 2.0], 5)",
                                  "std::array::topk_with_indices_extract([1.0, 2.0], [3, 4], 3)",
                                  "std::ml::topk([[1.0, 3.0, 2.0]], 4, -1)",
                                  "std::ml::selection_ops::topk_1d_helper([1.0, 2.0], 3)"])
def test_topk_of_more_elements_than_there_are_is_an_error(call, tmp_path):
    """k > n gave made-up zeros (`[2, 1, 0, 0, 0]`)."""
    diag, path = diagnostic_of(f"let r = {call};\n", tmp_path)
    assert diag.code == "E006" and "k must be between 0 and" in diag.message
    assert any(n.span.file == path and n.span.line == 1 for n in diag.notes)


def test_topk_of_a_run_time_length_is_checked_when_the_program_runs():
    program = einc.load(einc.compile("let x: [f32; N];\nlet r = std::array::topk_extract(x, 3);\n").vmfb)
    x = np.array([0.5, -1.0, 2.0, 1.0], np.float32)
    close(program(x=x)["r"], np.sort(x)[::-1][:3])
    with pytest.raises(RunError, match="topk_extract: k must be between 0 and the array's length"):
        program(x=x[:2])


def test_topk(out):
    close(out["top"], np.sort(V)[::-1][:3])
    values, idx = out["topi.0"], out["topi.1"]
    close(values, [2.0, 2.0, 1.5, 0.5])
    np.testing.assert_array_equal(idx, [12, 13, 16, 10])
