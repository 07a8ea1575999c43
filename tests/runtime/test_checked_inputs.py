"""Program.run checks a call's inputs once per size signature (einc/runtime/inputs.py
CheckedInputs): a call whose arrays have the names, dtypes and shapes of one already checked
skips the checks; any other call is checked in full, before or after, with the same messages."""
import io

import numpy as np
import pytest

import einc
from einc.runtime import RunError, inputs as inputs_module

MATMUL = """
let A: [f32; M, K];
let B: [f32; K, N];
let C[i, j] = sum[k](A[i, k] * B[k, j]);
"""


@pytest.fixture(scope="module")
def program():
    with einc.load(einc.compile(MATMUL).vmfb, device="local-sync") as loaded:
        yield loaded


@pytest.fixture
def checks(monkeypatch):
    """The calls that went through the full checks."""
    seen = []

    def counted(signature, values):
        seen.append({name: np.shape(value) for name, value in values.items()})
        return bind_inputs(signature, values)
    bind_inputs = inputs_module.bind_inputs
    monkeypatch.setattr(inputs_module, "bind_inputs", counted)
    return seen


def matrices(seed: int, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for shape in shapes]


def check(program, a, b):
    """einc's product against NumPy's in float64 (rtol 1e-5, atol 1e-5 * sqrt(K))."""
    got = program.run({"A": a, "B": b}, io.StringIO())["C"]
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5 * np.sqrt(a.shape[1]))


def test_same_sizes_are_checked_once_and_new_sizes_again(program, checks):
    for seed in range(3):
        check(program, *matrices(seed, (37, 20), (20, 45)))
    assert len(checks) == 1
    check(program, *matrices(3, (8, 20), (20, 45)))
    check(program, *matrices(4, (8, 20), (20, 45)))
    assert [c["A"] for c in checks] == [(37, 20), (8, 20)]


def test_arrays_the_checks_would_change_are_checked_every_time(program, checks):
    """A transposed (non-contiguous) array is copied by the checks, so it never skips them."""
    a, b = matrices(5, (20, 37), (20, 45))
    for _ in range(2):
        check(program, a.T, b)
    assert len(checks) == 2


@pytest.mark.parametrize("given, message", [
    (lambda a, b: {"A": a, "B": b[:10]}, r"^named dim K is 20 from A but 10 from B$"),
    (lambda a, b: {"A": a.astype(np.float64), "B": b}, r"^input A: expected float32, got float64$"),
    (lambda a, b: {"A": a}, r"^missing input 'B'"),
    (lambda a, b: {"A": a, "B": b, "D": b}, r"^unknown input 'D'; the program's inputs are: A, B$"),
    (lambda a, b: {"A": a[0], "B": b}, r"^input A: expected rank 2"),
])
def test_bad_inputs_after_a_checked_call_are_still_refused(program, given, message):
    a, b = matrices(6, (37, 20), (20, 45))
    check(program, a, b)
    with pytest.raises(RunError, match=message):
        program.run(given(a, b), io.StringIO())
