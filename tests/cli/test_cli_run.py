"""`einc run`: prints, summaries, --out, and one-line errors with the right exit status."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

A = np.arange(6, dtype=np.float32).reshape(3, 2)
B = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


@pytest.fixture
def inputs(tmp_path):
    paths = {"A": tmp_path / "A.npy", "B": tmp_path / "B.npy", "A64": tmp_path / "A64.npy",
             "bad": tmp_path / "bad.npy"}
    np.save(paths["A"], A)
    np.save(paths["B"], B)
    np.save(paths["A64"], A.astype(np.float64))
    paths["bad"].write_bytes(b"\x93NUMPY garbage")
    np.save(tmp_path / "s.npy", np.float32(2))
    return {**paths, "s": tmp_path / "s.npy", "absent": tmp_path / "absent.npy", "folder": tmp_path}


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
def test_run_prints_then_summarizes_and_saves(einc_cli, modules, inputs, tmp_path, target):
    status, out, err = einc_cli("run", modules[target], "--input", f"A={inputs['A']}",
                                "--input", f"B={inputs['B']}", "--input", "s=2", "--out", tmp_path / "out")
    expected = (A @ B) * 2
    assert (status, err) == (0, "")
    assert out == f"s = 2.00\nC =\n{expected}\nC: float32[3, 2] {np.array2string(expected.ravel())}\n" \
                  "scale: float32 = 2.0\n"
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "C.npy"), expected)
    assert np.load(tmp_path / "out" / "scale.npy").shape == ()


def test_large_output_summary_shows_statistics(einc_cli, modules, tmp_path):
    np.save(tmp_path / "A.npy", np.ones((50, 2), np.float32))
    np.save(tmp_path / "B.npy", np.eye(2, dtype=np.float32))
    status, out, _ = einc_cli("run", modules["llvm-cpu"], "-i", f"A={tmp_path / 'A.npy'}",
                              "-i", f"B={tmp_path / 'B.npy'}", "-i", "s=1")
    assert status == 0
    assert "C: float32[50, 2] [1. 1. 1. 1. ...] min=1.0 max=1.0 mean=1\n" in out


@pytest.mark.parametrize("bindings, message", [
    (["A={A}", "B={B}"], "missing input 's' (float32 scalar)"),
    (["A={A}", "B={B}", "s=1", "Q=1"], "unknown input 'Q'; the program's inputs are: A, B, s"),
    (["A={A}", "b={B}", "s=1"], "unknown input 'b' (did you mean 'B'?); the program's inputs are: A, B, s"),
    (["A={A}", "B={B}", "ss=1"], "unknown input 'ss' (did you mean 's'?); the program's inputs are: A, B, s"),
    (["A={A64}", "B={B}", "s=1"], "input A: expected float32, got float64"),
    (["A={A}", "B={B}", "s={A}"], "input s: expected a scalar (float32), got an array of shape [3, 2]"),
    (["A={A}", "B={bad}", "s=1"], "cannot read {bad}: not a valid .npy file"),
    (["A={A}", "B={absent}", "s=1"], "cannot read {absent}: no such file"),
    (["A={A}", "B={folder}", "s=1"], "cannot read {folder}: it is a directory"),
    (["A={A}", "B={A}", "s=1"], "named dim K is 2 from A but 3 from B"),
    (["A={A}", "B={s}", "s=1"], "input B: expected rank 2 (float32[K, 2]), got rank 0 (shape [])"),
    (["A={A}", "B={B}", "s=zero"], "input s: 'zero' is neither a float32 literal nor an existing .npy file"),
    (["A={A}", "B={B}", "s=0"], "matmul.ein:4:1: error[E006]: assertion failed: scale must be nonzero"),
])
def test_run_errors_are_one_line(einc_cli, modules, inputs, bindings, message):
    argv = ["run", modules["llvm-cpu"]]
    for binding in bindings:
        argv += ["--input", binding.format(**{k: str(v) for k, v in inputs.items()})]
    status, _, err = einc_cli(*argv)
    assert status == 1
    assert err.count("\n") == 1 and re.match(r"error: |\S+:\d+:\d+: error\[E\d{3}\]: ", err)
    assert message.format(**{k: str(v) for k, v in inputs.items()}) in err


def test_named_dim_disagreement(einc_cli, modules, inputs, tmp_path):
    np.save(tmp_path / "B32.npy", np.ones((3, 2), np.float32))
    status, _, err = einc_cli("run", modules["llvm-cpu"], "-i", f"A={inputs['A']}",
                              "-i", f"B={tmp_path / 'B32.npy'}", "-i", "s=1")
    assert (status, err) == (1, "error: named dim K is 2 from A but 3 from B\n")


def test_usage_errors_exit_2(einc_cli, modules):
    status, _, err = einc_cli("run", modules["llvm-cpu"], "--input", "A")
    assert status == 2 and err.startswith("error: --input expects NAME=FILE.npy") and err.count("\n") == 1
    status, _, err = einc_cli("run", modules["llvm-cpu"], "--device", "tpu")
    assert status == 2 and err.startswith("error: Invalid value for '--device'")


def test_corrupt_and_foreign_modules(einc_cli, tmp_path, modules):
    corrupt = tmp_path / "corrupt.vmfb"
    corrupt.write_bytes(modules["llvm-cpu"].read_bytes()[:3000])
    status, _, err = einc_cli("run", corrupt)
    assert (status, err) == (1, f"error: {corrupt} has no einc integrity seal: it is damaged, or was not "
                                "built by this einc (rebuild it with `einc build`)\n")
    status, _, err = einc_cli("run", tmp_path / "absent.vmfb")
    assert (status, err) == (1, f"error: cannot read {tmp_path / 'absent.vmfb'}: no such file\n")
    status, _, err = einc_cli("run", tmp_path)
    assert (status, err[:60]) == (2, "error: Invalid value for 'PROGRAM': File '" + str(tmp_path)[:18])


def run_in_subprocess(*argv):
    return subprocess.run([sys.executable, "-m", "einc", *map(str, argv)], capture_output=True, text=True,
                          env={**os.environ, "EINC_TRACEBACK": "0"})


def test_subprocess_assert_and_dtype_errors_have_no_traceback(modules, inputs):
    failed_assert = run_in_subprocess("run", modules["llvm-cpu"], "-i", f"A={inputs['A']}", "-i", f"B={inputs['B']}",
                                      "-i", "s=0")
    assert failed_assert.returncode == 1
    assert failed_assert.stdout == "s = 0.00\n"
    assert failed_assert.stderr == "matmul.ein:4:1: error[E006]: assertion failed: scale must be nonzero\n"
    wrong_dtype = run_in_subprocess("run", modules["llvm-cpu"], "-i", f"A={inputs['A64']}", "-i", f"B={inputs['B']}",
                                    "-i", "s=1")
    assert (wrong_dtype.returncode, wrong_dtype.stderr) == (1, "error: input A: expected float32, got float64\n")


def test_subprocess_success_exits_cleanly(modules, inputs):
    done = run_in_subprocess("run", modules["llvm-cpu"], "-i", f"A={inputs['A']}", "-i", f"B={inputs['B']}",
                             "-i", "s=1")
    assert done.returncode == 0 and done.stderr == ""  # no nanobind leak warnings at exit
