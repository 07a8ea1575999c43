"""The stdlib campaign's oracle (fuzz.stdlib.reference, fuzz.stdlib.compare) against NumPy
written another way: one output element at a time, straight from the ONNX definitions; and the
comparison catches the mistakes a wrong pad, stride or axis makes."""
import itertools

import numpy as np

from fuzz.stdlib import reference as ref
from fuzz.stdlib.calls import CALLS, LATER_CALLS
from fuzz.stdlib.compare import disagreement
from fuzz.stdlib.generate import generate_case
from fuzz.stdlib.newer_calls import NEWER_CALLS, _doolittle
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


def test_scatter_and_gather_nd_references_are_onnx_examples():
    """The ONNX operator documents' examples, with negative indices for some entries."""
    got = ref.scatter_elements(np.array([[1.0, 2, 3, 4, 5]]), np.array([[1, -2]]), np.array([[1.1, 2.1]]), -1)
    np.testing.assert_array_equal(got, [[1.0, 1.1, 3, 2.1, 5]])
    data = np.zeros((3, 3))
    got = ref.scatter_elements(data, np.array([[1, 0, 2], [0, 2, 1]]), np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]]), 0)
    np.testing.assert_array_equal(got, [[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]])
    got = ref.scatter_nd(np.arange(1.0, 9.0), np.array([[4], [3], [-7], [7]]), np.array([9.0, 10, 11, 12]))
    np.testing.assert_array_equal(got, [1, 11, 3, 10, 9, 6, 7, 12])
    data = np.arange(8.0).reshape(2, 2, 2)
    np.testing.assert_array_equal(ref.gather_nd(data, np.array([[[0, 1]], [[1, -2]]])), [[[2, 3]], [[4, 5]]])
    np.testing.assert_array_equal(ref.gather_nd(data[0], np.array([[0, 0], [1, 1]])), [0, 3])


def test_later_calls_leave_the_other_cases_of_a_seed_as_they_were():
    """A case that does not draw from LATER_CALLS is the one CALLS alone gives, so adding
    functions there keeps a seed's other cases (and its figures comparable)."""
    _kept_apart(tuple(CALLS), tuple(LATER_CALLS) + tuple(NEWER_CALLS), 80)


def test_newer_calls_leave_the_other_cases_of_a_seed_as_they_were():
    """Likewise for NEWER_CALLS (branch fuzz9), drawn after LATER_CALLS."""
    _kept_apart(tuple(CALLS) + tuple(LATER_CALLS), tuple(NEWER_CALLS), 100)


def _kept_apart(before: tuple, added: tuple, least: int):
    """Of 150 cases of seed 7, more than `least` and fewer than all are the ones the tables
    `before` alone give, with the same inputs; the others call a function of `added`."""
    drawn = {generate_case(7, k, only=added).program.function for k in range(400)}
    kept = 0
    for k in range(150):
        case, alone = generate_case(7, k), generate_case(7, k, only=before)
        if case.program != alone.program:
            assert case.program.function in drawn
            continue
        for name, value in alone.inputs.items():
            np.testing.assert_array_equal(case.inputs[name], value)
        kept += 1
    assert least < kept < 150


def test_doolittle_factors_multiply_back():
    a = RNG.uniform(-1, 1, (5, 5)) + 3 * np.eye(5)
    lower, upper = _doolittle(a)
    np.testing.assert_allclose(lower @ upper, a, rtol=1e-12, atol=1e-12)
    assert np.allclose(np.diag(lower), 1) and not np.triu(lower, 1).any() and not np.tril(upper, -1).any()


def test_factorizations_run_on_the_cpu_only_and_solves_everywhere():
    """Factorizations read an earlier point of the step they compute, which vulkan-spirv refuses
    with E011: the campaign sends them to llvm-cpu alone. The solves read every earlier step,
    which vulkan-spirv refused too (stdlib seed 9103 program 175, solve_triangular_upper) until
    its host loop kept the member whole (branch fuzz11); they go there as other calls do."""
    from fuzz.stdlib.campaign import StdlibDifferential
    from fuzz.stdlib.newer_calls import CPU_ONLY
    campaign = StdlibDifferential.__new__(StdlibDifferential)
    cases = [generate_case(7, k, only=("linear_algebra",)) for k in range(40)]
    assert all(campaign.runs_on(c, "llvm-cpu") for c in cases)
    factorizations = [c for c in cases if c.program.function in CPU_ONLY]
    assert factorizations and not any(campaign.runs_on(c, "vulkan-spirv") for c in factorizations)
    solves = [c for c in cases if c.program.function not in CPU_ONLY]
    assert any(campaign.runs_on(c, "vulkan-spirv") for c in solves)     # their share of them
