"""The `einc` command end to end on a real example: build once, run at two sizes."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from einc.host_cpu import vector_registers, vector_unit

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "basics" / "matmul.ein"


def einc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "einc", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd)


@pytest.fixture(scope="module")
def matmul_vmfb(tmp_path_factory):
    out = tmp_path_factory.mktemp("build") / "matmul.vmfb"
    result = einc("build", MATMUL, "-o", out)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("m, k, n", [(2, 3, 4), (17, 9, 5)])
def test_one_vmfb_runs_every_size(matmul_vmfb, tmp_path, m, k, n):
    rng = np.random.default_rng(m)
    a, b = rng.random((m, k), np.float32), rng.random((k, n), np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    result = einc("run", matmul_vmfb, "--input", f"A={tmp_path / 'a.npy'}",
                  "--input", f"B={tmp_path / 'b.npy'}", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    c = np.load(tmp_path / "out" / "C.npy")
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    norms = np.sqrt(((a @ b) ** 2).sum(1))
    assert result.stdout.splitlines()[0] == f"C is {m} x {n}; largest row norm {norms.max():.4f}"


def test_mismatched_named_dim_is_one_line(matmul_vmfb, tmp_path):
    np.save(tmp_path / "a.npy", np.ones((2, 3), np.float32))
    np.save(tmp_path / "b.npy", np.ones((4, 5), np.float32))
    result = einc("run", matmul_vmfb, "--input", f"A={tmp_path / 'a.npy'}",
                  "--input", f"B={tmp_path / 'b.npy'}")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "K" in lines[0] and "Traceback" not in result.stderr


def test_emit_mlir_shows_linalg_matmul_not_a_host_loop():
    """An AVX-512 or AVX2 host packs the matmul into einc's register tiles (tests/mlir/test_cpu_matmuls.py)."""
    result = einc("build", MATMUL, "--emit", "mlir")
    assert result.returncode == 0, result.stderr
    assert ("linalg.mmt4d" if vector_unit() else "linalg.matmul") in result.stdout
    assert "scf.for" not in result.stdout


@pytest.mark.parametrize("target, pads", [("llvm-cpu", 4), ("vulkan-spirv", 2)])
def test_emit_mlir_of_the_cnn_shows_named_ops_and_no_gathers(target, pads):
    # llvm-cpu gives the one-channel first convolution a channel of zeros, image and filter
    # (einc/mlir/dense/cpu_convolutions.py), and rows of 14 columns (28 and 14 wide) with AVX-512,
    # of 7 with AVX2 (tests/mlir/test_conv_rows.py); its first
    # 2x2 max pool reads its rows as pairs of columns (one bitcast, einc/mlir/dense/pooling_pairs.py)
    result = einc("build", ROOT / "examples" / "mnist" / "cnn.ein", "--emit", "mlir", "--target", target)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.count("linalg.conv_2d_nchw_fchw ") == 2
    pairs = text.count("flow.tensor.bitcast")
    assert pairs == (1 if target == "llvm-cpu" else 0)
    assert text.count("linalg.pooling_nchw_max ") + pairs == 2 and "linalg.matmul " in text
    assert text.count("tensor.pad ") == pads and not re.search(r"tensor\.extract\s", text)
    if target == "llvm-cpu":
        row = {16: 14, 8: 7}.get(vector_registers(True).lanes)
        assert row is None or f"vector_common_parallel = [1, 8, 1, {row}, 0, 0, 0]" in text  # one alias
        assert text.count("compilation_info = #compilation") == 2                # for both


def test_build_error_exits_1_and_leaves_no_output(tmp_path):
    bad = tmp_path / "bad.ein"
    bad.write_text("let A: [f32; 3, 4];\nlet B: [f32; 5, 2];\nlet C[i, j] = sum[k](A[i, k] * B[k, j]);\n")
    result = einc("build", bad, "-o", tmp_path / "bad.vmfb")
    assert result.returncode == 1
    assert "error[E004]" in result.stderr and "bad.ein:3:" in result.stderr
    assert not (tmp_path / "bad.vmfb").exists()


@pytest.mark.sampled(every=3)
@pytest.mark.parametrize("text", ["", "fn twice(x) { x * 2.0 }\n", "let x: f32;\n"])
def test_a_program_with_nothing_to_run_does_not_build_but_checks(tmp_path, text):
    # An empty file, or one of functions only, built a module with no outputs and exited 0.
    source = tmp_path / "lib.ein"
    source.write_text(text)
    result = einc("build", source, "-o", tmp_path / "lib.vmfb")
    assert result.returncode == 1 and "error[E006]" in result.stderr and "lib.ein:1:1" in result.stderr
    assert "no output and no run-time effect" in result.stderr and not (tmp_path / "lib.vmfb").exists()
    assert einc("check", source).returncode == 0
