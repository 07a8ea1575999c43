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


def test_source_text_is_compiled_from_a_temporary_file(driver):
    einc.compile("let x: f32;\nlet y = x;\n")
    path, text = driver.paths[-1]
    assert path.endswith("program.ein") and text == "let x: f32;\nlet y = x;\n"
