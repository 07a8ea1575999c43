"""The elementwise op computing a matmul's packed left operand (an MLP's bias and GELU between
its two matmuls) stays out of the pack's dispatch on an AVX2 host (its 8-row packs, 6-row ones
before: IREE-145, einc/mlir/dense/packed_epilogues.py `fence_odd_tiled_pack_sources`) and where
the register tile's rows are not a power of two; AVX-512's 8-row packs keep the fusion and their MLIR. The host is forced per test; the values are NumPy's on any host."""
import re

import numpy as np
import pytest

import einc
from einc.driver import lower
from einc.mlir.dense import cpu_matmuls
from tests.programs import built

MLP = """
let x: [f32; N, 24];
let W1: [f32; 24, 40];
let b1: [f32; 40];
let W2: [f32; 40, 24];
let h[n, j] = sum[k](x[n, k] * W1[k, j]) + b1[j];
let g[n, j] = 0.5 * h[n, j] * (1.0 + tanh(0.7978845608 * (h[n, j] + 0.044715 * h[n, j] * h[n, j] * h[n, j])));
let y[n, d] = sum[j](g[n, j] * W2[j, d]);
"""


def mlir_of(monkeypatch, tmp_path, unit: str) -> str:
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: unit)
    path = tmp_path / "mlp.ein"
    path.write_text("use std::math::tanh;\n" + MLP)
    return str(lower(str(path), "llvm-cpu", None))


def packs_of_barriers(text: str) -> list[str]:
    """The inner tiles of each `linalg.pack` whose source is a `flow.tensor.barrier`'s result,
    directly or through a reshape."""
    defined = {m.group(1): m.group(2) for m in re.finditer(r"(%[\w.]+)(?::\d+)? = ([\w.]+)", text)}
    reshaped = {m.group(1): m.group(2) for m in re.finditer(r"(%[\w.]+) = tensor\.(?:collapse|expand)_shape (%[\w.]+)", text)}
    found = []
    for m in re.finditer(r"linalg\.pack (%[\w.]+) .*?inner_tiles = \[([\d, ]+)\]", text):
        value = reshaped.get(m.group(1), m.group(1))
        if defined.get(value) == "flow.tensor.barrier":
            found.append(m.group(2))
    return found


def test_an_elementwise_producer_of_an_avx2_pack_passes_a_barrier(monkeypatch, tmp_path):
    assert packs_of_barriers(mlir_of(monkeypatch, tmp_path, "avx2")) == ["8, 1"]


def test_an_avx2_right_operand_computed_elementwise_keeps_its_producer(monkeypatch, tmp_path):
    """Only a left operand's pack passes IREE-145's barrier on AVX2: the right one's (16 x 1)
    keeps its producer, as before AVX2's tile had 8 rows."""
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: "avx2")
    path = tmp_path / "right.ein"
    path.write_text("let x: [f32; N, 24];\nlet W: [f32; 24, 40];\nlet V[k, j] = 2.0 * W[k, j] + 1.0;\n"
                    "let y[n, j] = sum[k](x[n, k] * V[k, j]);\n")
    text = str(lower(str(path), "llvm-cpu", None))
    assert "inner_tiles = [16, 1]" in text and packs_of_barriers(text) == []


def test_eight_row_packs_keep_their_producers(monkeypatch, tmp_path):
    assert packs_of_barriers(mlir_of(monkeypatch, tmp_path, "avx512")) == []


@pytest.mark.sampled(every=3)
@pytest.mark.parametrize("n", [1, 7, 197])
def test_the_mlp_matches_numpy(n):
    rng = np.random.default_rng(145)
    d, h = 24, 40
    x, w1, b1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((n, d), (d, h), (h,), (h, d)))
    with einc.load(built("use std::math::tanh;\n" + MLP, outputs=["y"]).vmfb) as program:     # one build, every n
        got = program(x=x, W1=w1, b1=b1, W2=w2)["y"]
    pre = x.astype(np.float64) @ w1 + b1
    g = 0.5 * pre * (1 + np.tanh(0.7978845608 * (pre + 0.044715 * pre ** 3)))
    want = g @ w2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
