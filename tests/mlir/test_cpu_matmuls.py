"""f32 matmuls on llvm-cpu with an AVX-512 or AVX2 host (einc/mlir/cpu_matmuls): packed into
8x32 or 8x16 register tiles (linalg.pack, linalg.mmt4d, linalg.unpack); every other case keeps
the named linalg.matmul for IREE's data tiling. Results match NumPy whatever the sizes'
remainders by the tile, K = 1, K = 0 and K given at run time included. The host is set per
test, so every form is checked on any machine (off its host, a packed form is correct but not
fast)."""
import re

import numpy as np
import pytest

import einc
from einc.driver import lower
from einc.mlir.dense import cpu_matmuls
from einc.host_cpu import vector_unit
from einc.target import get

NAMED = """
let A: [f32; M, K];
let B: [f32; K, N];
let C[i, j] = sum[k](A[i, k] * B[k, j]);
"""


def host_with_avx512(monkeypatch, present: bool):
    host_of(monkeypatch, "avx512" if present else None)


def host_of(monkeypatch, unit):
    """The lowering sees a host of vector unit `unit` (the build keeps this host's flags)."""
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: unit)


def mlir_of(tmp_path, source: str, target: str = "llvm-cpu") -> str:
    path = tmp_path / "matmul.ein"
    path.write_text(source)
    return str(lower(str(path), target, None))


def fixed(m: int, k: int, n: int, dtype: str = "f32") -> str:
    return f"let A: [{dtype}; {m}, {k}];\nlet B: [{dtype}; {k}, {n}];\nlet C[i, j] = sum[k](A[i, k] * B[k, j]);\n"


def test_named_dims_are_packed_into_register_tiles(monkeypatch, tmp_path):
    host_with_avx512(monkeypatch, True)
    text = mlir_of(tmp_path, NAMED)
    assert text.count("linalg.pack") == 2 and "inner_tiles = [8, 1]" in text and "inner_tiles = [32, 1]" in text
    assert "linalg.mmt4d" in text and "tensor<?x?x8x32xf32>" in text and "linalg.unpack" in text
    assert "linalg.matmul" not in text


def test_packs_carry_their_workgroup_tiles(monkeypatch, tmp_path):
    """Each pack names its tiles for IREE (a row tile of A over all of K, a column panel of B
    over 64 rows of K), with run-time sizes and with fixed ones."""
    host_with_avx512(monkeypatch, True)
    for source in (NAMED, fixed(100, 1000, 40)):
        text = mlir_of(tmp_path, source)
        assert "distribution = [1, 0], vector_common_parallel = [1, 16]" in text
        assert "distribution = [1, 64], vector_common_parallel = [1, 1]" in text
        assert text.count("compilation_info = #") == 2


def read_once(text: str) -> set[str]:
    return set(re.search(r'einc.read_once_inputs = "([^"]*)"', text).group(1).split())


def test_inputs_only_their_packs_read_are_recorded_as_read_once(monkeypatch, tmp_path):
    """The runner lends such inputs off a cache line (einc/runtime/host_memory.py): each element
    is read once, also through a reshape (X's run of summed axes). An input another kernel reads
    too (A times 2), or that IREE's own matmul reads, is left out."""
    host_with_avx512(monkeypatch, True)
    assert read_once(mlir_of(tmp_path, NAMED)) == {"A", "B"}
    assert read_once(mlir_of(tmp_path, NAMED + "let D[i, k] = A[i, k] * 2.0;\n")) == {"B"}
    assert read_once(mlir_of(tmp_path, RESULTS)) == {"A", "B", "P", "Q", "X", "W"}
    host_with_avx512(monkeypatch, False)
    assert read_once(mlir_of(tmp_path, NAMED)) == set()


def test_fixed_dims_are_packed_with_padded_tiles(monkeypatch, tmp_path):
    host_with_avx512(monkeypatch, True)
    text = mlir_of(tmp_path, fixed(100, 1000, 40))
    assert "tensor<13x1000x8x1xf32>" in text and "tensor<2x1000x32x1xf32>" in text    # 104 rows, 64 columns
    assert "padding_value" in text and "linalg.matmul" not in text


@pytest.mark.parametrize("case, source, target, avx512", [
    ("no AVX-512", NAMED, "llvm-cpu", False),
    ("portable target", NAMED, "llvm-cpu-generic", True),
    ("Vulkan", NAMED, "vulkan-spirv", True),
    ("f64", fixed(64, 64, 64, "f64"), "llvm-cpu", True),
    ("N shorter than a tile", fixed(64, 64, 10), "llvm-cpu", True),
    ("M shorter than a tile", fixed(7, 64, 64), "llvm-cpu", True),
])
def test_plain_matmul_elsewhere(monkeypatch, tmp_path, case, source, target, avx512):
    host_with_avx512(monkeypatch, avx512)
    text = mlir_of(tmp_path, source, target)
    assert "linalg.matmul" in text and "linalg.mmt4d" not in text, case


RESULTS = """
let A: [f32; M, K];
let B: [f32; K, N];
let P: [f32; 30, 1000];
let Q: [f32; 1000, 33];
let X: [f32; R, 2, 3, 4];
let W: [f32; 24, 40];
let C[i, j] = sum[k](A[i, k] * B[k, j]);
let D[i, j] = sum[k](P[i, k] * Q[k, j]);
let F[n, j] = sum[c, h, w](X[n, c, h, w] * W[12 * c + 4 * h + w, j]);
"""


@pytest.fixture(scope="module")
def packed_module():
    """One module, built with the packed form whatever the host: a matmul with run-time sizes,
    one with fixed sizes that are no multiples of the tile, one over a run of summed axes."""
    with pytest.MonkeyPatch.context() as patch:
        host_with_avx512(patch, True)
        return einc.load(einc.compile(RESULTS).vmfb)


@pytest.mark.parametrize("m, k, n", [(37, 1000, 45), (37, 1, 45), (37, 0, 45), (1, 300, 1), (64, 256, 96)])
def test_packed_results_match_numpy(packed_module, m, k, n):
    """f32 sums of K products of standard normals against float64 NumPy: rtol 1e-5 and atol
    1e-5 * sqrt(K), the size of the rounding of such a sum."""
    rng = np.random.default_rng(m * k + n)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    x = {"A": f(m, k), "B": f(k, n), "P": f(30, 1000), "Q": f(1000, 33), "X": f(3, 2, 3, 4), "W": f(24, 40)}
    got = packed_module(**x)
    d = {name: v.astype(np.float64) for name, v in x.items()}
    expected = {"C": (d["A"] @ d["B"], k), "D": (d["P"] @ d["Q"], 1000), "F": (d["X"].reshape(3, 24) @ d["W"], 24)}
    for name, (want, summed) in expected.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5 * np.sqrt(summed), err_msg=name)


LAYERS = """
let X: [f32; 15, 33];
let W1: [f32; 33, H];
let W2: [f32; H, 40];
let h[i, j] = 1.0 - sum[k](X[i, k] * W1[k, j]);
let y[i, j] = sum[k](h[i, k] * W2[k, j]);
"""


def test_a_computed_left_operand_summed_over_a_run_time_dim_keeps_iree_tiles(monkeypatch, tmp_path):
    """IREE 3.13 failed to compile the second layer's pack of `h` fused with `1.0 - ..` on the
    first layer's unpacked result when H is a run-time dim (found by the dense fuzz campaign):
    that matmul stays a linalg.matmul; the first is still packed."""
    host_with_avx512(monkeypatch, True)
    rng = np.random.default_rng(4)
    x = {"X": rng.standard_normal((15, 33)), "W1": rng.standard_normal((33, 20)), "W2": rng.standard_normal((20, 40))}
    with einc.load(einc.compile(LAYERS, outputs=["y"]).vmfb) as program:
        got = program(**{name: v.astype(np.float32) for name, v in x.items()})["y"]
    np.testing.assert_allclose(got, (1.0 - x["X"] @ x["W1"]) @ x["W2"], rtol=1e-5, atol=1e-4)
    path = tmp_path / "layers.ein"
    path.write_text(LAYERS)
    text = str(lower(str(path), "llvm-cpu", ["y"]))
    assert text.count("linalg.mmt4d") == 1 and text.count("linalg.matmul") == 1


def test_constant_weights_are_packed_at_build_time(monkeypatch, tmp_path):
    """A right operand known at build time (a matrix, a layer of a stack, one read transposed)
    is packed by NumPy into the [N/32, K, 32, 1] layout, zero-padded: the module packs only the
    left operands, and the products match NumPy (sums of 50 products: rtol 1e-5, atol 1e-4)."""
    host_with_avx512(monkeypatch, True)
    rng = np.random.default_rng(7)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    w, stack, wt = f(50, 45), f(3, 50, 70), f(33, 50)
    for name, array in (("w", w), ("stack", stack), ("wt", wt)):
        np.save(tmp_path / f"{name}.npy", array)
    path = tmp_path / "weights.ein"
    path.write_text('use std::io::load_npy;\nlet X: [f32; M, 50];\nlet w = load_npy("w.npy");\n'
                    'let stack = load_npy("stack.npy");\nlet wt = load_npy("wt.npy");\n'
                    "let a[i, j] = sum[k](X[i, k] * w[k, j]);\n"
                    "let b[i, j] = sum[k](X[i, k] * stack[2, k, j]);\n"
                    "let c[i, j] = sum[k](X[i, k] * wt[j, k]);\n")
    for output, packed in (("a", "2x50x32x1"), ("b", "3x50x32x1"), ("c", "2x50x32x1")):
        text = str(lower(str(path), "llvm-cpu", [output]))
        assert "linalg.mmt4d" in text and text.count("linalg.pack") == 1 and f"tensor<{packed}xf32>" in text
    x = rng.standard_normal((20, 50)).astype(np.float32)
    with einc.load(einc.compile(str(path), weights_threshold=None).vmfb) as program:
        got = program(X=x)
    x64 = x.astype(np.float64)
    w, stack, wt = (v.astype(np.float64) for v in (w, stack, wt))
    for name, want in (("a", x64 @ w), ("b", x64 @ stack[2]), ("c", x64 @ wt.T)):
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-4, err_msg=name)


TWO_LAYERS = """
let X: [f32; B, 33];
let W1: [f32; 33, 800];
let b1: [f32; 800];
let W2: [f32; 800, 50];
let h[i, j] = max(0.0, b1[j] + sum[k](X[i, k] * W1[k, j]));
let y[i, j] = sum[k](h[i, k] * W2[k, j]);
"""


def test_a_tiled_pack_of_a_computed_left_operand_matches_numpy(monkeypatch):
    """The second layer's pack of `h`, which IREE fuses with the first layer's unpack, bias and
    max, builds with IREE's tiles (a row tile over all of K would vectorize the fused producer at
    rows x K: with 14-row tiles over IREE's vector limit at K = 768); 29 rows leave a partial row tile (rtol 1e-5,
    atol 1e-4). K = 800 here is that case."""
    host_with_avx512(monkeypatch, True)
    rng = np.random.default_rng(11)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    x = {"X": f(29, 33), "W1": f(33, 800), "b1": f(800), "W2": f(800, 50)}
    with einc.load(einc.compile(TWO_LAYERS, outputs=["y"]).vmfb) as program:
        got = program(**x)["y"]
    d = {name: v.astype(np.float64) for name, v in x.items()}
    want = np.maximum(0.0, d["b1"] + d["X"] @ d["W1"]) @ d["W2"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_the_tile_and_the_kernel_step_fit_each_vector_unit():
    """8 rows by two vectors of B a tile: AVX-512 8 x 32 (as before AVX2 had a tile), AVX2 8 x
    16 (the pack microkernel's fast rows). The mmt4d steps through the tile's rows in halves
    until each row's two accumulators fit beside B's vectors and A's broadcast: all 8 rows on
    AVX-512 (29 of 32 registers), 4 on AVX2 (11 of 16)."""
    assert cpu_matmuls.register_tile("avx512") == (8, 32)
    assert cpu_matmuls.register_tile("avx2") == (8, 16)
    assert cpu_matmuls.kernel_step("avx512") == (8, 32)
    assert cpu_matmuls.kernel_step("avx2") == (4, 16)


def test_an_avx2_host_packs_into_8x16_tiles_with_iree_pack_microkernels(monkeypatch, tmp_path):
    """On AVX2 the packs carry no tiles of einc's: the build runs them as IREE's pack and
    unpack microkernels (einc/target.py), and only there. The mmt4d's is its one tile info."""
    host_of(monkeypatch, "avx2")
    text = mlir_of(tmp_path, NAMED)
    assert "inner_tiles = [8, 1]" in text and "inner_tiles = [16, 1]" in text
    assert "tensor<?x?x8x16xf32>" in text and "linalg.matmul" not in text
    assert text.count("compilation_info = #") == 1
    assert "tensor<2x40x16x1xf32>" in mlir_of(tmp_path, fixed(9, 40, 20))      # 20 columns: 2 tiles, padded
    assert "linalg.matmul" in mlir_of(tmp_path, fixed(7, 64, 64))               # M under 8 rows
    llvm_cpu = get("llvm-cpu")
    assert "--iree-llvmcpu-enable-ukernels=pack,unpack" in llvm_cpu.flags_on("avx2")
    assert "--iree-llvmcpu-enable-ukernels=none" not in llvm_cpu.flags_on("avx2")
    assert llvm_cpu.flags_on("avx512") == llvm_cpu.flags_on(None) == llvm_cpu.flags
    assert get("llvm-cpu-generic").flags_on("avx2") == get("llvm-cpu-generic").flags


def test_an_avx2_host_blocks_the_mmt4d_for_its_caches(monkeypatch, tmp_path):
    """On AVX2 the mmt4d names its workgroup of 12 x 8 register tiles and blocks of 256 of K
    (cpu_matmuls.KERNEL_BLOCKS) and its vector step of 4 of the tile's 8 rows, with run-time
    sizes and fixed ones; on AVX-512 it carries none (IREE's, as before)."""
    host_of(monkeypatch, "avx2")
    for source in (NAMED, fixed(100, 1000, 40)):
        text = mlir_of(tmp_path, source)
        assert ("cache_reduction = [0, 0, 256, 0, 0, 0], distribution = [12, 8, 0, 0, 0, 0], "
                "vector_common_parallel = [1, 1, 0, 4, 16, 0], vector_reduction = [0, 0, 1, 0, 0, 1]") in text
        assert "Mmt4dTilingExpert" in text and "linalg.mmt4d {compilation_info" in text
    host_of(monkeypatch, "avx512")
    text = mlir_of(tmp_path, NAMED)
    assert "linalg.mmt4d ins(" in text and "cache_reduction" not in text and "Mmt4dTilingExpert" not in text


@pytest.fixture(scope="module")
def avx2_module():
    """RESULTS built with AVX2's tiles, with this host's flags (on an AVX2 host, its own)."""
    with pytest.MonkeyPatch.context() as patch:
        host_of(patch, "avx2")
        return einc.load(einc.compile(RESULTS).vmfb)


@pytest.mark.parametrize("m, k, n", [(37, 1000, 45), (6, 7, 16), (8, 7, 16), (7, 1, 17), (5, 0, 3), (1, 300, 1), (64, 256, 96),
                                     (97, 129, 250), (200, 700, 300)])
def test_avx2_results_match_numpy(avx2_module, m, k, n):
    """Run-time sizes with every remainder by 8 and 16, K = 1 and K = 0, sizes over several of
    the mmt4d's blocks with remainders (200 rows: 2 workgroups of 96 and 8 rows; 300 columns;
    K = 700: 2 blocks of 256 and 188), a fixed matmul of remainders (30 x 33) and one over a
    run of summed axes, against float64 NumPy: rtol 1e-5, atol 1e-5 * sqrt(K)."""
    rng = np.random.default_rng(m * k + n + 1)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    x = {"A": f(m, k), "B": f(k, n), "P": f(30, 1000), "Q": f(1000, 33), "X": f(5, 2, 3, 4), "W": f(24, 40)}
    got = avx2_module(**x)
    d = {name: v.astype(np.float64) for name, v in x.items()}
    expected = {"C": (d["A"] @ d["B"], k), "D": (d["P"] @ d["Q"], 1000), "F": (d["X"].reshape(5, 24) @ d["W"], 24)}
    for name, (want, summed) in expected.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5 * np.sqrt(summed), err_msg=name)


def test_avx2_build_time_weights_are_packed_into_16_columns(monkeypatch, tmp_path):
    """A constant right operand on AVX2: packed by NumPy into [N/16, K, 16, 1] (45 columns: 3
    tiles, zero-padded); the product matches NumPy (sums of 50 products: rtol 1e-5, atol 1e-4)."""
    host_of(monkeypatch, "avx2")
    rng = np.random.default_rng(8)
    w = rng.standard_normal((50, 45)).astype(np.float32)
    np.save(tmp_path / "w.npy", w)
    path = tmp_path / "weights.ein"
    path.write_text('use std::io::load_npy;\nlet X: [f32; M, 50];\nlet w = load_npy("w.npy");\n'
                    "let a[i, j] = sum[k](X[i, k] * w[k, j]);\n")
    text = str(lower(str(path), "llvm-cpu", None))
    assert "tensor<3x50x16x1xf32>" in text and text.count("linalg.pack") == 1 and "linalg.mmt4d" in text
    x = rng.standard_normal((23, 50)).astype(np.float32)
    with einc.load(einc.compile(str(path), weights_threshold=None).vmfb) as program:
        got = program(X=x)["a"]
    np.testing.assert_allclose(got, x.astype(np.float64) @ w.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_this_host_gets_the_tile_of_its_vector_unit(tmp_path):
    """Unpatched: on this machine's vector unit (einc.host_cpu), its tile; without one, IREE's."""
    unit = vector_unit()
    text = mlir_of(tmp_path, NAMED)
    if unit is None:
        assert "linalg.matmul" in text and "linalg.mmt4d" not in text
    else:
        rows, columns = cpu_matmuls.register_tile(unit)
        assert f"tensor<?x?x{rows}x{columns}xf32>" in text
