"""std::ml::resize_ops (Resize, Upsample), special_ops::einsum and selection_ops::nonzero.

Resize is checked against a per-axis NumPy implementation of the ONNX coordinate rules and
against closed forms (np.repeat, identity); einsum against np.einsum."""
import numpy as np
import pytest

from stdlib_harness import close, rand, run_program

SOURCE = """
use std::ml::*;
let X: [f32; 1, 2, 3, 4];
let V: [f64; 2, 5];
let a: [f32; 3, 4];
let b: [f32; 4, 5];
let q: [f64; 2, 3, 4];
let k: [f64; 2, 4, 5];
let v: [f32; 4];
let S: [f32; 3, 3];
let c: [f32; 5, 2];
let Z: [f32; 2, 3];
let nz = nonzero(Z);
let up_nearest = resize(X, [1.0, 1.0, 2.0, 1.5], "nearest");
let up_linear = resize(X, [1.0, 1.0, 2.0, 1.5], "linear");
let down_nearest = resize(V, [1.0, 0.6], "nearest");
let down_linear = resize(V, [1.0, 0.6], "linear");
let same = resize(X, [1.0, 1.0, 1.0, 1.0], "linear");
let rep = upsample(X, [1.0, 1.0, 2.0, 3.0], "nearest");
let ups_linear = upsample(V, [2.0, 2.5], "linear");
let mm = einsum("ij,jk->ik", (a, b));
let bmm = einsum("bij,bjk->bik", (q, k));
let tr = einsum("ij->ji", a);
let dot = einsum("i,i", (v, v));
let outer3 = einsum("i,j,k", (v, v, v));
let diag = einsum("ii->i", S);
let implicit = einsum("ba,ac", (b, c));
let gram_list = einsum("ij,kj->ik", [a, a]);
let mm_list = einsum("ij,jk->ik", [a, b]);
let dot_literal = einsum("i,i->", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
let tr_list = einsum("ij->ji", [a]);
"""

INPUTS = dict(X=rand(1, 2, 3, 4), V=rand(2, 5, dtype=np.float64, seed=1), a=rand(3, 4, seed=2),
              b=rand(4, 5, seed=3), q=rand(2, 3, 4, dtype=np.float64, seed=4),
              k=rand(2, 4, 5, dtype=np.float64, seed=5), v=rand(4, seed=6),
              S=rand(3, 3, seed=7), c=rand(5, 2, seed=8),
              Z=np.array([[1.5, 0.0, -2.0], [0.0, 0.0, 3.0]], np.float32))
F = {name: x.astype(np.float64) for name, x in INPUTS.items()}


@pytest.fixture(scope="module")
def out():
    return run_program(SOURCE, **INPUTS)


def resize_ref(x, scales, mode, asymmetric=False):
    """ONNX Resize/Upsample one axis at a time: source coordinate, then nearest or linear."""
    for axis, s in enumerate(scales):
        n = x.shape[axis]
        o = np.arange(int(np.floor(n * s)))
        c = o / s if asymmetric else (o + 0.5) / s - 0.5
        if mode == "nearest":
            i = np.floor(c) if asymmetric else np.ceil(c - 0.5)     # round_prefer_floor
            x = np.take(x, np.clip(i.astype(int), 0, n - 1), axis)
        else:
            f = np.floor(c)
            w = (c - f).reshape([-1 if ax == axis else 1 for ax in range(x.ndim)])
            lo = np.take(x, np.clip(f.astype(int), 0, n - 1), axis)
            hi = np.take(x, np.clip(f.astype(int) + 1, 0, n - 1), axis)
            x = lo * (1 - w) + hi * w
    return x


def test_resize_up_f32_rank4(out):
    close(out["up_nearest"], resize_ref(F["X"], [1, 1, 2, 1.5], "nearest"))
    close(out["up_linear"], resize_ref(F["X"], [1, 1, 2, 1.5], "linear"))


def test_resize_down_f64_rank2(out):
    assert out["down_nearest"].shape == (2, 3)
    close(out["down_nearest"], resize_ref(F["V"], [1, 0.6], "nearest"), np.float64)
    close(out["down_linear"], resize_ref(F["V"], [1, 0.6], "linear"), np.float64)


def test_resize_closed_forms(out):
    close(out["same"], F["X"])
    close(out["rep"], np.repeat(np.repeat(F["X"], 2, 2), 3, 3))


def test_upsample_linear_asymmetric(out):
    close(out["ups_linear"], resize_ref(F["V"], [2, 2.5], "linear", asymmetric=True), np.float64)


def test_einsum(out):
    close(out["mm"], np.einsum("ij,jk->ik", F["a"], F["b"]), atol=1e-5)
    close(out["bmm"], np.einsum("bij,bjk->bik", F["q"], F["k"]), np.float64)
    close(out["tr"], F["a"].T)
    close(out["dot"], F["v"] @ F["v"], rtol=1e-5)
    close(out["outer3"], np.einsum("i,j,k", F["v"], F["v"], F["v"]))
    close(out["diag"], np.diag(F["S"]))
    close(out["implicit"], np.einsum("ba,ac", F["b"], F["c"]), atol=1e-5)


def test_einsum_takes_a_list_of_operands(out):
    # `[a, a]` stacks into one array whose rows are the operands; `[a, b]` (two shapes) is a list
    close(out["gram_list"], np.einsum("ij,kj->ik", F["a"], F["a"]), atol=1e-5)
    close(out["mm_list"], np.einsum("ij,jk->ik", F["a"], F["b"]), atol=1e-5)
    close(out["dot_literal"], np.float64(1 * 4 + 2 * 5 + 3 * 6))
    close(out["tr_list"], F["a"].T)


def test_einsum_letter_on_axes_of_different_lengths_is_E004(diagnose):
    diag = diagnose('use std::ml::einsum;\nlet a: [f32; 3, 4];\nlet b: [f32; 4, 4];\nlet y = einsum("ij,ij->i", (a, b));\n')[0]
    assert diag.code == "E004" and "`i`" in diag.message


@pytest.mark.parametrize("equation, code", [("ij...->ij", "E011"), ("ij,jk->ik", "E002"), ("ij->iz", "E006")])
def test_einsum_equation_errors(diagnose, equation, code):
    diag = diagnose(f'use std::ml::einsum;\nlet a: [f32; 3, 4];\nlet y = einsum("{equation}", a);\n')[0]
    assert diag.code == code


def test_nonzero_has_the_data_dependent_count_of_numpy(out):
    # the count of nonzero elements is computed on the device (a filtered comprehension)
    expected = np.array(np.nonzero(INPUTS["Z"]))
    assert out["nz"].dtype == np.int64
    np.testing.assert_array_equal(out["nz"], expected)
