"""Empty tensors: an empty input, a clause over `2..N` at N = 2, a filter that keeps nothing.

With the size fixed at build time, IREE crashed compiling an empty matrix-vector product for
llvm-cpu and MLIR rejected the empty clause's slice: kernels over tensors empty at build time
are now skipped on every target (einc/mlir/empty_guards.py). At run time llvm-cpu runs them (zero
iterations), while IREE 3.13's Vulkan HAL refuses a dispatch that binds an empty buffer: there a
run with an empty tensor is a one-line RunError, never a wrong value (guarding every op with a
host `scf.if` gave wrong values; the differential fuzzer found them). Each value is checked
against NumPy.
"""
import numpy as np
import pytest

import einc
from tests.tiers import VULKAN_FULL

TARGETS = ["llvm-cpu", VULKAN_FULL]

# every output has a meaning at N = 0
EMPTY_INPUT = """
let x: [f32; N];
let m: [f32; 3, N];
let doubled = x * 2.0;
let total = sum[j in 0..N](x[j]);
let mv[i in 0..3] = sum[j in 0..N](m[i, j] * x[j]);
let kept = [v * 2.0 | v in x, v > 1.0];
let kept_total = sum[i in 0..len(kept)](kept[i]);
let h[0] = 1.0;
let h[t in 1..N + 1] = h[t - 1] * 0.5 + x[t - 1];
let table[i in 0..N, j in 0..4] = x[i] * j as f32;
let picked[j in 0..N] = table[j, j % 4];
"""

# the fuzzer's shape: rows 0 and 1, then a clause over 2..N
EMPTY_CLAUSE = """
let x: [i32; N];
let p[0, j in 0..N] = x[j] + x[j];
let p[1, j] = -x[j];
let p[i in 2..N, j in 0..N] = x[i / 2] - x[j];
let q[0] = 1;
let q[1] = x[0];
let q[i in 2..N] = x[i] * 2;
"""


def empty_input_meaning(x: np.ndarray, m: np.ndarray) -> dict:
    x64 = x.astype(np.float64)
    h = [1.0]
    for v in x64:
        h.append(h[-1] * 0.5 + v)
    kept = x64[x64 > 1.0] * 2.0
    return {"doubled": x64 * 2.0, "total": x64.sum(), "mv": m.astype(np.float64) @ x64, "kept": kept,
            "kept_total": kept.sum(), "h": np.array(h), "picked": x64 * (np.arange(len(x)) % 4)}


def empty_clause_meaning(x: np.ndarray) -> dict:
    n = len(x)
    p = np.zeros((n, n), np.int32)
    p[0], p[1] = x + x, -x
    for i in range(2, n):
        p[i] = x[i // 2] - x
    return {"p": p, "q": np.concatenate([[1, x[0]], x[2:] * 2]).astype(np.int32)}


@pytest.fixture(scope="module", params=TARGETS)
def target(request):
    return request.param


@pytest.fixture(scope="module")
def empty_input_build(target):
    return einc.compile(EMPTY_INPUT, target=target).vmfb


@pytest.fixture(scope="module")
def empty_clause_build(target):
    return einc.compile(EMPTY_CLAUSE, target=target).vmfb


# Built once per module, loaded per test: an open Vulkan program spins lavapipe's threads
# (docs/DECISIONS.md, Running on Vulkan), so none stays open between tests.
@pytest.fixture
def empty_input_program(empty_input_build):
    with einc.load(empty_input_build) as program:
        yield program


@pytest.fixture
def empty_clause_program(empty_clause_build):
    with einc.load(empty_clause_build) as program:
        yield program


def _check(got: dict, expected: dict) -> None:
    for name, value in expected.items():
        assert got[name].shape == np.shape(value), name   # for integers, atol 1e-5 means equal
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-5, err_msg=name)


def _check_run(program, target: str, has_empty_tensor: bool, expected: dict, **inputs) -> None:
    """The right values; on vulkan-spirv, where a tensor is empty, the values or the RunError
    (whether IREE dispatches over that tensor depends on how it planned the module)."""
    if target == "vulkan-spirv" and has_empty_tensor:
        try:
            got = program(**inputs)
        except einc.runtime.RunError as err:
            assert "empty" in str(err) and "vulkan device cannot dispatch" in str(err)
            return
        _check(got, expected)
        return
    _check(program(**inputs), expected)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_kernels_over_an_empty_input_give_their_empty_or_identity_values(empty_input_program, target, n):
    x = np.linspace(-2.0, 2.0, n).astype(np.float32)        # the filter keeps 2.0 from n = 5 on
    m = np.random.default_rng(n).standard_normal((3, n)).astype(np.float32)
    _check_run(empty_input_program, target, not (x > 1.0).any(), empty_input_meaning(x, m), x=x, m=m)


@pytest.mark.parametrize("n", [2, 3])
def test_a_clause_over_an_empty_run_time_range_writes_nothing(empty_clause_program, target, n):
    x = np.arange(1, n + 1, dtype=np.int32) * 3
    _check_run(empty_clause_program, target, n == 2, empty_clause_meaning(x), x=x)


def test_sizes_fixed_at_build_time_to_empty_extents(target):
    x = np.array([-6, 5], np.int32)
    with einc.load(einc.compile(EMPTY_CLAUSE, target=target, dims={"N": 2}).vmfb) as program:
        _check(program(x=x), empty_clause_meaning(x))
    empty, rows = np.zeros(0, np.float32), np.zeros((3, 0), np.float32)
    with einc.load(einc.compile(EMPTY_INPUT, target=target, dims={"N": 0}).vmfb) as program:
        _check(program(x=empty, m=rows), empty_input_meaning(empty, rows))


@pytest.mark.vulkan
def test_a_vulkan_dispatch_over_an_empty_tensor_is_a_run_error_not_a_crash():
    # the shrunk fuzz finding (tests/fuzz/regressions/vulkan_empty_clause_range.ein): the clause
    # over 2..N at N = 2 is a dispatch over an empty tensor
    source = "let x1: [i32; N];\nlet p6[1, j] = x1[j];\nlet p6[i in 2..N, j in 0..N] = i;\n"
    with einc.load(einc.compile(source, target="vulkan-spirv").vmfb) as program:
        with pytest.raises(einc.runtime.RunError, match="empty .* vulkan device cannot dispatch"):
            program(x1=np.array([-6, 5], np.int32))
        np.testing.assert_array_equal(program(x1=np.array([-6, 5, 1], np.int32))["p6"],
                                      [[0, 0, 0], [-6, 5, 1], [2, 2, 2]])


# the output has no columns: llvm-cpu's convolution tiles once failed on it (a mutant of a test)
NO_COLUMNS = """
let X: [f32; 1, 2, 7, 6];
let K: [f32; 3, 2, 3, 3];
let Y[n, o, oh in 0..5, ow in 0..0] = sum[c, kh, kw](X[n, c, ih, iw] * K[o, c, kh, kw]) where ih = oh + kh, iw = ow + kw;
let m[o] = max[oh, ow](Y[0, o, oh, ow]);
"""


def test_a_convolution_with_an_empty_output_row_builds_and_gives_empty_values():
    rng = np.random.default_rng(4)
    out = einc.load(einc.compile(NO_COLUMNS).vmfb)(X=rng.standard_normal((1, 2, 7, 6)).astype(np.float32),
                                                  K=rng.standard_normal((3, 2, 3, 3)).astype(np.float32))
    assert out["Y"].shape == (1, 3, 5, 0)
    np.testing.assert_array_equal(out["m"], np.full(3, -np.inf, np.float32))


@pytest.mark.parametrize("threshold, kept", [(5.0, []), (1.5, [2.0, 3.0])])
def test_a_guarded_read_of_a_filter_that_may_keep_nothing(threshold, kept):
    """`if i < len(a) { a[i] }` over i in 0..len(a) + 1: with `a` empty at build time the
    condition is false at the one point, so the read never runs and is not an E005."""
    out = einc.load(einc.compile(f"""
        let v = [1.0, 2.0, 3.0];
        let a = [x | x in v, x > {threshold}];
        let out[i in 0..len(a) + 1] = if i < len(a) {{ a[i] }} else {{ 9.0 }};
        let both[i in 0..3] = if i >= len(a) && i < 3 {{ -1.0 }} else {{ a[i] * 2.0 }};
    """).vmfb)()
    np.testing.assert_array_equal(out["out"], kept + [9.0])
    np.testing.assert_array_equal(out["both"], [k * 2.0 for k in kept] + [-1.0] * (3 - len(kept)))
