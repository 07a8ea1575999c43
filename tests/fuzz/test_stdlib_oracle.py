"""The stdlib campaign's oracle (fuzz.stdlib.reference, fuzz.stdlib.compare) against NumPy
written another way: one output element at a time, straight from the ONNX definitions; and the
comparison catches the mistakes a wrong pad, stride or axis makes."""
import itertools

import numpy as np

from fuzz.stdlib import reference as ref
from fuzz.stdlib.compare import disagreement
from fuzz.stdlib.generate import generate_case
from fuzz.stdlib.spec import Want

RNG = np.random.default_rng(3)


def conv_by_element(x, w, b, strides, pads, dilations, group):
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    out = [(x.shape[2 + a] + pads[a] + pads[2 + a] - dilations[a] * (w.shape[2 + a] - 1) - 1) // strides[a] + 1
           for a in range(2)]
    y = np.zeros((n, m, *out))
    for i, o, p, q in itertools.product(range(n), range(m), range(out[0]), range(out[1])):
        g = o // (m // group)
        total = b[o]
        for ci, u, v in itertools.product(range(cg), range(w.shape[2]), range(w.shape[3])):
            r, s = p * strides[0] - pads[0] + u * dilations[0], q * strides[1] - pads[1] + v * dilations[1]
            if 0 <= r < x.shape[2] and 0 <= s < x.shape[3]:
                total += x[i, g * cg + ci, r, s] * w[o, ci, u, v]
        y[i, o, p, q] = total
    return y


def test_conv_reference_is_onnx_conv():
    x, w, b = RNG.normal(size=(2, 4, 6, 5)), RNG.normal(size=(6, 2, 2, 3)), RNG.normal(size=6)
    args = ([2, 1], [1, 0, 2, 1], [1, 2], 2)
    np.testing.assert_allclose(ref.conv(x, w, b, *args), conv_by_element(x, w, b, *args), rtol=1e-12, atol=1e-12)


def test_average_pool_counts_only_elements_inside():
    x = RNG.normal(size=(1, 2, 5, 4))
    got = ref.average_pool(x, [3, 2], [2, 1], [1, 0, 1, 1])
    assert got.shape == (1, 2, 3, 4)
    window = x[0, 1, 0:2, 2:4]                    # the window at (0, 2): rows -1..1, columns 2..3
    np.testing.assert_allclose(got[0, 1, 0, 2], window.mean())
    np.testing.assert_allclose(ref.max_pool(x, [3, 2], [2, 1], [1, 0, 1, 1])[0, 1, 0, 3], x[0, 1, 0:2, 3].max())


def test_slice_and_topk_references_follow_onnx():
    v = np.arange(6.0)
    np.testing.assert_array_equal(ref.slice_onnx(v, [4], [-1000], [0], [-1]), [4, 3, 2, 1, 0])
    np.testing.assert_array_equal(ref.slice_onnx(v, [-2], [1000], [-1], [1]), [4, 5])
    values, idx = ref.topk(np.array([[1.0, 3.0, 3.0, 2.0]]), 2, 1)
    np.testing.assert_array_equal(idx, [[1, 2]])             # ties in index order
    np.testing.assert_array_equal(values, [[3.0, 3.0]])


def test_a_value_off_by_one_element_is_a_disagreement():
    x = RNG.normal(size=(1, 1, 8))
    want = ref.conv(x, np.ones((1, 1, 3)), np.zeros(1), [1], [1, 1], [1], 1)
    scale = ref.conv(np.abs(x), np.ones((1, 1, 3)), np.zeros(1), [1], [1, 1], [1], 1)
    shifted = ref.conv(x, np.ones((1, 1, 3)), np.zeros(1), [1], [2, 0], [1], 1)
    assert disagreement(want.astype(np.float32), Want(want, "f32", scale)) is None
    assert "elements wrong" in disagreement(shifted.astype(np.float32), Want(want, "f32", scale))
    assert "dtype" in disagreement(want, Want(want, "f32", scale))
    assert "shape" in disagreement(want[..., 1:].astype(np.float32), Want(want, "f32", scale))


def test_the_generator_draws_many_functions_and_is_deterministic():
    functions = {generate_case(7, k).program.function for k in range(200)}
    assert len(functions) > 50
    assert generate_case(7, 3).program == generate_case(7, 3).program
