"""Matmuls on Vulkan whose build-time sizes IREE's SPIR-V tiles do not divide (einc/mlir/dense/
gpu/matmuls.py): the operands are padded with zeros up to (8, 64, 4) multiples of (M, N, K) and
the product sliced back, where that at most doubles the work; run-time sizes, sizes already
multiples, and other targets keep the op as written. Results match NumPy either way."""
import re

import numpy as np
import pytest

import einc
from einc.mlir.dense.gpu.matmuls import padded_sizes
from einc.target import get

MATMUL = """
let A: [f32; M, K];
let B: [f32; K, N];
let C[i, j] = sum[k](A[i, k] * B[k, j]);
"""
BATCHED = """
let Q: [f32; H, S, D];
let P: [f32; H, D, T];
let R[h, s, t] = sum[d](Q[h, s, d] * P[h, d, t]);
"""
VULKAN = (8, 64, 4)


def test_sizes_round_up_to_the_multiples_a_size_under_its_multiple_staying():
    assert get("vulkan-spirv").matmul_size_multiples == VULKAN
    assert padded_sizes((3000, 3000, 3000), VULKAN) == (3000, 3008, 3000)
    assert padded_sizes((197, 197, 63), VULKAN) == (200, 256, 64)
    assert padded_sizes((5, 100, 3), VULKAN) == (5, 128, 3)


def test_no_padding_where_sizes_are_multiples_run_time_or_padding_would_double_the_work():
    assert padded_sizes((4096, 4096, 4096), VULKAN) is None
    assert padded_sizes((5, 10, 3), VULKAN) is None
    assert padded_sizes((-(2 ** 63), 100, 3), VULKAN) is None   # IREE's dynamic size
    assert padded_sizes((9, 65, 5), VULKAN) is None              # 16 x 128 x 8 over 9 x 65 x 5: 5.6x


def _pads(emitted, source, target, dims):
    text = emitted(source, target, None, dims)
    return len(re.findall(r"tensor\.pad", text))


def test_only_vulkan_pads_and_only_sizes_its_tiles_do_not_divide(emitted):
    odd = {"M": 30, "K": 30, "N": 100}
    assert _pads(emitted, MATMUL, "vulkan-spirv", odd) == 3       # A, B and the zeroed result
    assert _pads(emitted, MATMUL, "llvm-cpu-generic", odd) == 0
    assert _pads(emitted, MATMUL, "vulkan-spirv", {"M": 64, "K": 64, "N": 128}) == 0
    assert _pads(emitted, MATMUL, "vulkan-spirv", None) == 0


@pytest.mark.vulkan
@pytest.mark.sampled(every=2)          # the fast tier: (30, 30, 100) and (3, 129, 200)
@pytest.mark.parametrize("m, k, n", [(30, 30, 100), (9, 7, 70), (3, 129, 200), (17, 4, 64)])
def test_a_padded_matmul_matches_numpy(m, k, n):
    rng = np.random.default_rng(m * k * n)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    built = einc.compile(MATMUL, target="vulkan-spirv", dims={"M": m, "K": k, "N": n})
    with einc.load(built.vmfb) as program:
        got = program(A=a, B=b)["C"]
    assert got.shape == (m, n)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.vulkan
@pytest.mark.parametrize("h, s, d, t, fixed", [
    (5, 30, 4, 30, ("S", "D", "T")),            # M padded, the batch (heads of a run-time count) kept
    (3, 197, 63, 197, ("H", "S", "D", "T")),    # attention's: 197 positions (14 x 14 and a class token), heads of 63
])
def test_a_padded_batch_matmul_matches_numpy(h, s, d, t, fixed):
    rng = np.random.default_rng(h * s * d)
    q = rng.standard_normal((h, s, d), dtype=np.float32)
    p = rng.standard_normal((h, d, t), dtype=np.float32)
    sizes = {"H": h, "S": s, "D": d, "T": t}
    built = einc.compile(BATCHED, target="vulkan-spirv", dims={k: sizes[k] for k in fixed})
    with einc.load(built.vmfb) as program:
        got = program(Q=q, P=p)["R"]
    np.testing.assert_allclose(got, q.astype(np.float64) @ p, rtol=1e-4, atol=1e-4)
