"""Sizes a program cannot take are one-line errors before anything runs (einc.runtime.sizes)."""
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONV2D = EXAMPLES / "basics" / "conv2d.ein"
KALMAN = EXAMPLES / "filters" / "kalman_filter.ein"
FIRST_AND_LAST = "let y: [f32; N];\nlet ends = y[0] + y[N - 1];\n"


@pytest.fixture
def run_module(einc_cli, tmp_path):
    """run_module(module, NAME=array, ...) -> (status, stdout, stderr)"""
    def run(module, **arrays):
        argv = ["run", module]
        for name, value in arrays.items():
            np.save(tmp_path / f"{name}.npy", value)
            argv += ["-i", f"{name}={tmp_path / (name + '.npy')}"]
        return einc_cli(*argv)
    return run


def conv2d_reference(x, k):
    n, c, h, w = x.shape
    o, _, kh, kw = k.shape
    y = np.zeros((n, o, h - kh + 1, w - kw + 1), np.float32)
    for i in range(h - kh + 1):
        for j in range(w - kw + 1):
            y[:, :, i, j] = np.einsum("nchw,ochw->no", x[:, :, i:i + kh, j:j + kw], k)
    return y


def test_an_image_smaller_than_the_kernel_is_refused(built, run_module):
    status, out, err = run_module(built(CONV2D), X=np.ones((1, 1, 1, 1), np.float32),
                                  K=np.ones((1, 1, 3, 3), np.float32))
    assert (status, out) == (1, "")
    assert err == (f"error: input sizes H = 1 (X axis 2), KH = 3 (K axis 2) do not fit the program: the range "
                   f"of `oh` at {CONV2D}:12:13 would have extent H - KH + 1 = -1\n")
    status, _, err = run_module(built(CONV2D), X=np.ones((1, 1, 5, 1), np.float32),
                                K=np.ones((1, 1, 3, 3), np.float32))
    assert status == 1 and "W = 1 (X axis 3), KW = 3 (K axis 3)" in err and "W - KW + 1 = -1" in err


def test_an_image_one_row_short_of_the_kernel_gives_empty_outputs(built, run_module, tmp_path):
    x = np.arange(2 * 5, dtype=np.float32).reshape(1, 1, 2, 5)
    k = np.ones((1, 1, 3, 3), np.float32)
    status, out, err = run_module(built(CONV2D), X=x, K=k)
    assert (status, err) == (0, "")
    assert "Y: float32[1, 1, 0, 3] []" in out and "P: float32[1, 1, 0, 1] []" in out


def test_the_smallest_image_that_fits_matches_numpy(built, einc_cli, tmp_path):
    rng = np.random.default_rng(3)
    x, k = rng.standard_normal((2, 2, 3, 4)).astype(np.float32), rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    np.save(tmp_path / "X.npy", x)
    np.save(tmp_path / "K.npy", k)
    status, _, err = einc_cli("run", built(CONV2D), "-i", f"X={tmp_path / 'X.npy'}", "-i", f"K={tmp_path / 'K.npy'}",
                              "--out", tmp_path / "out.npz")
    assert (status, err) == (0, "")
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["Y"], conv2d_reference(x, k), rtol=1e-5, atol=1e-5)


def test_an_empty_series_is_refused_and_one_measurement_runs(built, run_module):
    status, _, err = run_module(built(KALMAN), z=np.zeros(0))
    assert status == 1 and err.startswith("error: input size T = 0 (z axis 0) does not fit the program: ")
    assert err.count("\n") == 1 and "T - 1 = -1" in err
    status, out, err = run_module(built(KALMAN), z=np.array([2.5]))
    assert (status, err) == (0, "")
    assert out.startswith("1 measurements; final estimate: position 2.500 m, velocity 0.0000 m/s\n")


def test_fixed_reads_of_an_empty_input_are_refused(built, run_module):
    module = built(FIRST_AND_LAST)
    status, out, err = run_module(module, y=np.zeros(0, np.float32))
    assert (status, out) == (1, "")
    assert err.startswith("error: input size N = 0 (y axis 0) does not fit the program: the read of y at ")
    assert err.endswith("program.ein:2:12 needs index 0 of its axis 0, which has size N = 0\n")
    status, out, _ = run_module(module, y=np.array([1.5, 4.0, -2.0], np.float32))
    assert status == 0 and "ends: float32 = -0.5" in out


def test_a_prefix_sum_longer_than_its_input_is_refused(built, run_module):
    # `k` runs to i at row i: row 7 reads x[7], which an input of 3 elements does not have
    module = built("let x: [f32; N];\nlet c[i in 0..8] = sum[k in 0..i + 1](x[k]);\n")
    status, out, err = run_module(module, x=np.ones(3, np.float32))
    assert (status, out) == (1, "")
    assert err.startswith("error: input size N = 3 (x axis 0) does not fit the program: the read of x at ")
    assert err.endswith("program.ein:2:39 needs index 7 of its axis 0, which has size N = 3\n")
    x = np.arange(8, dtype=np.float32)
    status, out, err = run_module(module, x=x)
    assert (status, err) == (0, "")
    assert "c: float32[8] [ 0.  1.  3.  6. 10. 15. 21. 28.]" in out and np.cumsum(x)[-1] == 28


def test_sizes_fixed_at_build_time_are_checked_at_build_time(einc_cli, tmp_path):
    status, _, err = einc_cli("build", CONV2D, "-o", tmp_path / "c.vmfb", "--dim", "H=1", "--dim", "KH=3")
    # the pooling's `ph in 0..(H - KH + 1) / 2` is empty there, so its read never runs: the
    # convolution's range is what H = 1 breaks
    assert status == 1 and err.startswith("error[E004]: the range of `oh` has extent -1, below zero")
    assert not (tmp_path / "c.vmfb").exists()
    program = tmp_path / "windows.ein"
    program.write_text("let x: [f32; H];\nlet k: [f32; KH];\nlet count[o in 0..H - KH + 1] = 1.0;\n")
    status, _, err = einc_cli("check", program, "--dim", "H=1", "--dim", "KH=3")
    assert status == 1 and err.startswith("error[E004]: the range of `o` has extent -1, below zero\n")
    assert f"--> {program}:3:11" in err
    assert einc_cli("check", program, "--dim", "H=2", "--dim", "KH=3") == (0, "", "")
