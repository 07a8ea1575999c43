"""The program fuzzer's build-and-run job (fuzz/programs/execute.py) reports what it met."""
import numpy as np

from fuzz.programs.execute import build_and_run
from tests.compiler_crashes import next_compiler_crashes  # noqa: F401 - a fixture

DOUBLE = "let x: [f32; 3];\nlet y[i] = x[i] * 2.0;\n"


def test_a_program_builds_runs_and_returns_its_outputs():
    result = build_and_run(DOUBLE, "llvm-cpu", ["y"], {"x": np.arange(3, dtype=np.float32)})
    assert result["kind"] == "ok"
    np.testing.assert_array_equal(result["outputs"]["y"], [0.0, 2.0, 4.0])


def test_a_build_irees_compiler_crashed_on_is_a_finding_though_einc_built_it_again(next_compiler_crashes):
    result = build_and_run(DOUBLE, "llvm-cpu", ["y"], {"x": np.arange(3, dtype=np.float32)})
    assert result["kind"] == "internal" and "IREE's compiler crashed (SIGSEGV)" in result["error"]
