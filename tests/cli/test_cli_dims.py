"""Size specialization: `--dim NAME=SIZE` (and `einc.compile(dims=...)`) fixes a named dim."""
import io
from pathlib import Path

import numpy as np
import pytest

import einc
from einc.diagnostics import OptionError
from einc.runtime import RunError

MATMUL = Path(__file__).resolve().parents[2] / "examples" / "basics" / "matmul.ein"
rng = np.random.default_rng(8)
A = rng.standard_normal((4, 3)).astype(np.float32)
B = rng.standard_normal((3, 5)).astype(np.float32)


def test_emitted_mlir_has_static_shapes_for_fixed_dims(einc_cli):
    status, out, _ = einc_cli("build", MATMUL, "--emit", "mlir", "--dim", "M=4", "--dim", "K=3")
    assert status == 0
    assert "func.func @main(%arg0: tensor<4x3xf32>, %arg1: tensor<3x?xf32>) -> (tensor<4x?xf32>, tensor<4xf32>)" in out
    status, out, _ = einc_cli("build", MATMUL, "--emit", "mlir")
    assert "func.func @main(%arg0: tensor<?x?xf32>, %arg1: tensor<?x?xf32>)" in out


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
def test_fixed_module_runs_its_size_and_refuses_others(built, target):
    path = built(MATMUL, target, {"M": 4, "K": 3})
    with einc.load(path) as program:
        assert program.signature.fixed_dims == {"M": 4, "K": 3}
        assert program.signature.input("A").dims == ["M", "K"]
        outputs = program.run({"A": A, "B": B}, io.StringIO())
        np.testing.assert_allclose(outputs["C"], A @ B, rtol=1e-5, atol=1e-6)
        with pytest.raises(RunError, match=r"^input A: dim M was fixed to 4 when the module was built "
                                           r"\(--dim M=4\), got 6 on axis 0 \(shape \[6, 3\]\)$"):
            program.run({"A": np.ones((6, 3), np.float32), "B": B}, io.StringIO())
        with pytest.raises(RunError, match=r"^input B: dim K was fixed to 3"):
            program.run({"A": A, "B": np.ones((2, 5), np.float32)}, io.StringIO())


def test_cli_build_with_dims_and_a_size_mismatch(einc_cli, tmp_path):
    module = tmp_path / "matmul4.vmfb"
    assert einc_cli("build", MATMUL, "-o", module, "--dim", "M=4") == (0, "", "")
    np.save(tmp_path / "A.npy", A)
    np.save(tmp_path / "A5.npy", np.ones((5, 3), np.float32))
    np.save(tmp_path / "B.npy", B)
    status, out, err = einc_cli("run", module, "-i", f"A={tmp_path / 'A.npy'}", "-i", f"B={tmp_path / 'B.npy'}",
                                "--out", tmp_path / "out.npz")
    assert (status, err) == (0, "") and out.startswith("C is 4 x 5;")
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["C"], A @ B, rtol=1e-5, atol=1e-6)
    status, _, err = einc_cli("run", module, "-i", f"A={tmp_path / 'A5.npy'}", "-i", f"B={tmp_path / 'B.npy'}")
    assert (status, err) == (1, "error: input A: dim M was fixed to 4 when the module was built (--dim M=4), "
                                "got 5 on axis 0 (shape [5, 3])\n")


@pytest.mark.parametrize("option, message", [
    ("Q=4", "error: cannot fix dim Q: the program has no named dim Q (its named dims: M, K, N)\n"),
    ("M=-1", "error: --dim expects NAME=SIZE with SIZE a whole number, got 'M=-1' (see 'einc build --help')\n"),
    ("M=four", "error: --dim expects NAME=SIZE with SIZE a whole number, got 'M=four' (see 'einc build --help')\n"),
    ("M", "error: --dim expects NAME=SIZE with SIZE a whole number, got 'M' (see 'einc build --help')\n"),
    ("M=4294967296", "error: dim M must be fixed to a whole number from 0 to 2147483647, got 4294967296\n"),
])
def test_bad_dims_are_usage_errors(einc_cli, tmp_path, option, message):
    assert einc_cli("build", MATMUL, "-o", tmp_path / "m.vmfb", "--dim", option) == (2, "", message)
    assert not (tmp_path / "m.vmfb").exists()


def test_python_api_dims_errors():
    with pytest.raises(OptionError, match="no named dim B"):
        einc.compile(MATMUL, dims={"B": 2})
    with pytest.raises(ValueError, match="dim M must be fixed to a whole number"):
        einc.compile(MATMUL, dims={"M": 2.5})


def test_a_fixed_dim_makes_a_size_value_a_constant(einc_cli):
    status, out, _ = einc_cli("build", MATMUL, "--emit", "ir", "--dim", "M=4", "--dim", "N=2")
    assert status == 0 and "print" in out
    assert "(4, 2, " in out       # `{M}` and `{N}` in the print are the fixed sizes
