"""`einc build` against a stand-in einc.driver: outputs, diagnostics, and no file on failure."""
import sys
import types

import pytest

from einc.diagnostics import CompileError, SourceMap, Span, error
from einc.backend.parameters import Archive
from einc.driver import DEFAULT_THRESHOLD, Built


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "prog.ein"
    path.write_text("let x = 1.0 +;\n")
    return path


@pytest.fixture
def driver(monkeypatch):
    """Install a fake einc.driver; tests set .build_program / .emit_program behaviour."""
    fake = types.ModuleType("einc.driver")
    fake.calls = []

    def build_program(path, target, outputs, dims, allow_python=False, fp_contract=False,
                      weights_threshold=DEFAULT_THRESHOLD, unchecked_indices=False):
        fake.calls.append((path, target, outputs, dims) + (("allow_python",) if allow_python else ())
                          + (("fp_contract",) if fp_contract else ())
                          + ((("weights", weights_threshold),) if weights_threshold != DEFAULT_THRESHOLD else ())
                          + (("unchecked_indices",) if unchecked_indices else ()))
        return Built(b"VMFB:" + target.encode(), Archive.from_bytes(b"IRPA") if weights_threshold == 0 else None)

    def emit_program(path, what, outputs, target, dims, allow_python=False, fp_contract=False,
                     unchecked_indices=False):
        fake.calls.append((path, what, outputs, target, dims) + (("fp_contract",) if fp_contract else ())
                          + (("unchecked_indices",) if unchecked_indices else ()))
        return f"<{what} of {path} for {target}>\n"

    fake.build_program, fake.emit_program = build_program, emit_program
    monkeypatch.setitem(sys.modules, "einc.driver", fake)
    monkeypatch.setattr("einc.driver", fake, raising=False)
    return fake


def syntax_error(path) -> CompileError:
    sources = SourceMap()
    sources.add(str(path), path.read_text())
    err = error("E001", "expected an expression", Span(str(path), 1, 14, 1, 15), hint="finish the sum")
    err.sources = sources
    return err


def test_build_writes_the_module(einc_cli, driver, program, tmp_path):
    out = tmp_path / "prog.vmfb"
    status, stdout, stderr = einc_cli("build", program, "-o", out, "--target", "vulkan-spirv",
                                      "--output", "y", "--output", "z")
    assert (status, stdout, stderr) == (0, "", "")
    assert out.read_bytes() == b"VMFB:vulkan-spirv"
    assert driver.calls == [(str(program), "vulkan-spirv", ["y", "z"], {})]


def test_build_passes_allow_python_on(einc_cli, driver, program, tmp_path):
    status, _, _ = einc_cli("build", program, "-o", tmp_path / "p.vmfb", "--allow-python")
    assert status == 0 and driver.calls == [(str(program), "llvm-cpu", None, {}, "allow_python")]


def test_compile_error_prints_diagnostics_and_leaves_old_output(einc_cli, driver, program, tmp_path):
    out = tmp_path / "prog.vmfb"
    out.write_bytes(b"previous build")

    def failing(path, target, outputs, dims, allow_python=False, fp_contract=False, weights_threshold=None,
                   unchecked_indices=False):
        raise syntax_error(program)

    driver.build_program = failing
    status, stdout, stderr = einc_cli("build", program, "-o", out)
    assert status == 1 and stdout == ""
    assert stderr.startswith("error[E001]: expected an expression\n")
    assert "1 | let x = 1.0 +;" in stderr and "= hint: finish the sum" in stderr
    assert out.read_bytes() == b"previous build"


def test_compile_error_creates_no_output(einc_cli, driver, program, tmp_path):
    def failing(path, target, outputs, dims, allow_python=False, fp_contract=False, weights_threshold=None,
                   unchecked_indices=False):
        raise syntax_error(program)

    driver.build_program = failing
    status, _, _ = einc_cli("build", program, "-o", tmp_path / "new.vmfb")
    assert status == 1 and not (tmp_path / "new.vmfb").exists()


def test_internal_errors_have_no_traceback(einc_cli, driver, program, tmp_path):
    def crashing(path, target, outputs, dims, allow_python=False, fp_contract=False, weights_threshold=None,
                    unchecked_indices=False):
        raise KeyError("oops")

    driver.build_program = crashing
    status, _, stderr = einc_cli("build", program, "-o", tmp_path / "m.vmfb")
    assert status == 1
    assert stderr.startswith("internal error: KeyError: 'oops'\n") and "please report" in stderr
    assert "Traceback" not in stderr and not (tmp_path / "m.vmfb").exists()


def test_an_eof_error_inside_einc_is_an_internal_error_not_an_interruption(einc_cli, driver, program, tmp_path):
    """click turns an EOFError into Abort, which einc reported as "interrupted" (exit 130): an
    empty file given to load_npy did, numpy raising EOFError."""
    def crashing(*args, **kwargs):
        raise EOFError("no data left")

    driver.build_program = crashing
    status, _, stderr = einc_cli("build", program, "-o", tmp_path / "m.vmfb")
    assert status == 1 and "internal error: EOFError: no data left\n" in stderr and "interrupted" not in stderr


def test_external_weights_option_and_the_archive_beside_the_module(einc_cli, driver, program, tmp_path):
    assert einc_cli("build", program, "-o", tmp_path / "none.vmfb", "--external-weights", "none")[0] == 0
    assert einc_cli("build", program, "-o", tmp_path / "big.vmfb", "--external-weights", "1000")[0] == 0
    assert einc_cli("build", program, "-o", tmp_path / "all.vmfb", "--external-weights", "all")[0] == 0
    assert [call[-1] for call in driver.calls] == [("weights", None), ("weights", 1000), ("weights", 0)]
    assert (tmp_path / "all.irpa").read_bytes() == b"IRPA" and (tmp_path / "all.vmfb").exists()
    assert not (tmp_path / "none.irpa").exists() and not (tmp_path / "big.irpa").exists()
    status, _, stderr = einc_cli("build", program, "--external-weights", "4k")
    assert status == 2 and "--external-weights expects a number of bytes, all or none, got '4k'" in stderr


def test_emit_goes_to_stdout_or_file(einc_cli, driver, program, tmp_path):
    assert einc_cli("build", program, "--emit", "mlir") == (0, f"<mlir of {program} for llvm-cpu>\n", "")
    assert einc_cli("build", program, "--explain", "-o", tmp_path / "why.txt")[0] == 0
    assert (tmp_path / "why.txt").read_text() == f"<explain of {program} for llvm-cpu>\n"


def test_emit_mlir_is_the_lowering_for_the_chosen_target(einc_cli, driver, program):
    # recurrences lower differently per target, so the shown MLIR must be the built one
    status, stdout, _ = einc_cli("build", program, "--emit", "mlir", "--target", "vulkan-spirv")
    assert status == 0 and stdout == f"<mlir of {program} for vulkan-spirv>\n"


def test_build_usage_and_file_errors(einc_cli, driver, program, tmp_path):
    status, _, stderr = einc_cli("build", program, "--emit", "ir", "--explain")
    assert status == 2 and stderr.startswith("error: --emit and --explain cannot be combined")
    assert einc_cli("build", tmp_path / "absent.ein") == (1, "", f"error: cannot read {tmp_path / 'absent.ein'}: no such file\n")
    status, _, stderr = einc_cli("build", program, "-o", tmp_path / "no" / "dir" / "m.vmfb")
    assert status == 1 and stderr.startswith("error: cannot write ") and stderr.count("\n") == 1


def test_fp_contract_reaches_the_driver_and_takes_on_or_off(einc_cli, driver, program, tmp_path):
    out = tmp_path / "prog.vmfb"
    assert einc_cli("build", program, "-o", out, "--fp-contract", "on")[0] == 0
    assert einc_cli("build", program, "--emit", "mlir", "--fp-contract", "off")[0] == 0
    assert driver.calls == [(str(program), "llvm-cpu", None, {}, "fp_contract"),
                            (str(program), "mlir", None, "llvm-cpu", {})]
    status, _, stderr = einc_cli("build", program, "--fp-contract", "fast")
    assert status == 2 and stderr.startswith("error: ") and "--fp-contract" in stderr


def test_unchecked_indices_reach_the_driver(einc_cli, driver, program, tmp_path):
    assert einc_cli("build", program, "-o", tmp_path / "prog.vmfb", "--unchecked-indices")[0] == 0
    assert einc_cli("build", program, "--explain", "--unchecked-indices")[0] == 0
    assert einc_cli("build", program, "-o", tmp_path / "prog.vmfb")[0] == 0
    assert driver.calls == [(str(program), "llvm-cpu", None, {}, "unchecked_indices"),
                            (str(program), "explain", None, "llvm-cpu", {}, "unchecked_indices"),
                            (str(program), "llvm-cpu", None, {})]
