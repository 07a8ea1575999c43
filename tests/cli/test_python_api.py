"""The Python API: einc.compile -> Artifact, einc.load -> callable."""
import sys
import types

import numpy as np
import pytest

import einc
from einc.driver import Built
from mlir_samples import compiled


@pytest.fixture
def driver(monkeypatch):
    fake = types.ModuleType("einc.driver")
    fake.paths = []

    def build_program(path, target, outputs, dims, allow_python=False, fp_contract=False, weights_threshold=None,
                      unchecked_indices=False):
        with open(path) as source:
            fake.paths.append((path, source.read()) + (("unchecked_indices",) if unchecked_indices else ()))
        return Built(compiled("matmul", target))

    fake.build_program = build_program
    monkeypatch.setitem(sys.modules, "einc.driver", fake)
    monkeypatch.setattr("einc.driver", fake, raising=False)
    return fake


def test_compile_save_load_run(driver, tmp_path):
    source = tmp_path / "mm.ein"
    source.write_text("let C = A;\n")
    artifact = einc.compile(source)
    assert artifact.target == "llvm-cpu"
    assert [spec.name for spec in artifact.signature.inputs] == ["A", "B", "s"]
    artifact.save(tmp_path / "mm.vmfb")
    with einc.load(tmp_path / "mm.vmfb") as program:
        outputs = program(A=np.eye(2, dtype=np.float32), B=np.eye(2, dtype=np.float32), s=3.0)
    np.testing.assert_array_equal(outputs["C"], 3 * np.eye(2))


def test_an_artifact_loads_without_a_file(driver):
    with einc.load(einc.compile("let C = A;\n"), device="local-sync") as program:
        assert program.device == "local-sync"
        outputs = program(A=np.eye(2, dtype=np.float32), B=np.eye(2, dtype=np.float32), s=2.0)
    np.testing.assert_array_equal(outputs["C"], 2 * np.eye(2))


def test_source_text_is_compiled_from_a_temporary_file(driver):
    einc.compile("let x: f32;\nlet y = x;\n")
    path, text = driver.paths[-1]
    assert path.endswith("program.ein") and text == "let x: f32;\nlet y = x;\n"


def test_one_line_of_items_without_a_semicolon_is_source_text(driver):
    # a program of functions alone was taken for a file name (E009 "cannot read fn main() ..")
    einc.compile("fn main() { (1, 2.5) }")
    assert driver.paths[-1][1] == "fn main() { (1, 2.5) }"


def test_version_and_errors_are_at_the_top_level():
    from importlib import metadata
    from einc.diagnostics import CompileError
    from einc.runtime.errors import RunError
    assert einc.__version__ == metadata.version("einc")
    assert (einc.CompileError, einc.RunError) == (CompileError, RunError)
    assert issubclass(einc.OptionError, ValueError)


def test_a_compile_error_reads_file_line_col_code_message(tmp_path):
    path = tmp_path / "bad.ein"
    path.write_text("let a = 1.0;\nlet b = a + undefined_name;\n")
    with pytest.raises(einc.CompileError) as info:
        einc.compile(path)
    assert str(info.value) == f"{path}:2:13: error[E003]: {info.value.diagnostics[0].message}"


def test_cache_is_the_one_einc_run_uses(tmp_path, monkeypatch, einc_cli):
    monkeypatch.setenv("EINC_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "scale.ein"
    path.write_text("let x: [f32; N];\nlet y[i] = x[i] * 3.0 + 1.0;\n")
    x = np.array([1.0, -2.5, 0.25], np.float32)
    np.save(tmp_path / "x.npy", x)
    artifact = einc.compile(path, cache=True)
    [module] = (tmp_path / "cache" / "modules").rglob("*.vmfb")
    assert module.read_bytes() == artifact.vmfb
    status, out, err = einc_cli("run", path, "--generic", "-v", "-i", f"x={tmp_path / 'x.npy'}")
    assert (status, err) == (0, f"einc: cache hit for {path}: {module}\n")

    def no_compiling(*args, **kwargs):
        raise AssertionError("a cache hit must not compile")
    monkeypatch.setattr("einc.driver.compile_ir", no_compiling)
    again = einc.compile(path, cache=True)
    np.testing.assert_array_equal(einc.load(again.vmfb)(x=x)["y"], x.astype(np.float64) * 3 + 1)   # exact in f32
