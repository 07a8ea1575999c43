"""Every example, compiled and run, against its golden outputs and printed text.

Goldens are made by the NumPy references in references.py (`make golden`), never by einc.
Tolerances are per example (catalog.Example.rtol/atol): about 1e-6 relative for float32
programs without long loops, 1e-4 for float32 recurrences over hundreds of steps (rounding
differs between NumPy and the compiled code, e.g. fused multiply-adds), and 1e-7 to 1e-12
for float64 programs. Integers and booleans must match exactly. A printed number may also
differ by one unit in its last printed digit.
"""
from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import einc
import einc.backend
import references  # noqa: F401  (registers the examples)
from catalog import EXAMPLES, EXAMPLES_DIR, ROOT, TESTED_ELSEWHERE, load_golden_outputs
from compare import assert_outputs_match, assert_text_matches
from tests.backend import spirv

ALL = sorted(EXAMPLES)
VULKAN = [path for path in ALL if EXAMPLES[path].vulkan]
# tests/backend/test_spirv_valid.py leaves these to the Vulkan test below: built whole, their
# kernels are the ones it would build again
SPIRV_CHECKED_WHOLE = [path for path in VULKAN if EXAMPLES[path].outputs is None]


def build_and_run(path: str, target: str, device: str | None = None) -> tuple[dict, str]:
    ex = EXAMPLES[path]
    artifact = einc.compile(ex.source, target=target, outputs=list(ex.outputs) if ex.outputs else None)
    printed = io.StringIO()
    with einc.load(artifact.vmfb, device=device) as program:
        outputs = program.run(ex.input_arrays(), stdout=printed)
    return outputs, printed.getvalue()


def assert_matches_golden(path: str, outputs: dict, printed: str) -> None:
    ex = EXAMPLES[path]
    assert_outputs_match(outputs, load_golden_outputs(ex.golden_outputs), ex.rtol, ex.atol)
    golden_text = ex.golden_text.read_text() if ex.golden_text.exists() else ""
    assert_text_matches(printed, golden_text, ex.rtol, ex.atol)


def assert_saved_files_match(path: str, folder: Path) -> None:
    """The files the program's `save_npy` wrote into the folder it ran in, each equal to the
    golden of the output it saves; no other file."""
    ex = EXAMPLES[path]
    assert sorted(p.name for p in folder.iterdir()) == sorted(ex.saves)
    golden = load_golden_outputs(ex.golden_outputs)
    for file, name in ex.saves.items():
        assert_outputs_match({name: np.load(folder / file)}, {name: golden[name]}, ex.rtol, ex.atol)


@pytest.mark.sampled(every=2)
@pytest.mark.parametrize("path", ALL)
def test_example_matches_its_golden_on_llvm_cpu(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)               # where `save_npy` writes
    assert_matches_golden(path, *build_and_run(path, "llvm-cpu"))
    assert_saved_files_match(path, tmp_path)


@pytest.mark.vulkan
@pytest.mark.parametrize("path", VULKAN)
def test_example_matches_its_golden_on_vulkan_and_its_kernels_are_valid_spirv(path, tmp_path, monkeypatch):
    kernels = tmp_path / "kernels"
    compile_mlir = einc.backend.compile_mlir       # the build dumps its kernels on the way
    monkeypatch.setattr(einc.backend, "compile_mlir",
                        lambda module, target, flags=(): compile_mlir(module, target, (*flags, *spirv.dump_flags(kernels))))
    run_in = tmp_path / "run"
    run_in.mkdir()
    monkeypatch.chdir(run_in)
    assert_matches_golden(path, *build_and_run(path, "vulkan-spirv", "vulkan"))
    assert_saved_files_match(path, run_in)
    if spirv.available():
        count, invalid = spirv.invalid_kernels(path, kernels)
        assert count >= 1 and invalid == []


@pytest.mark.parametrize("path", ALL)
def test_golden_is_what_the_reference_computes(path):
    """A changed reference needs `make golden`. The references use NumPy's BLAS (`p @ P`), whose
    float32 rounding depends on the CPU, so the goldens written on one machine are compared with
    this machine's reference at a tenth of the example's tolerance, not bit for bit."""
    ex = EXAMPLES[path]
    ref = ex.compute()
    golden_text = ex.golden_text.read_text() if ex.golden_text.exists() else ""
    assert_outputs_match(ref.outputs, load_golden_outputs(ex.golden_outputs), ex.rtol / 10, ex.atol / 10)
    assert_text_matches(ref.text, golden_text, ex.rtol / 10, ex.atol / 10)


def test_every_example_has_a_reference():
    programs = {str(p.relative_to(EXAMPLES_DIR)) for p in EXAMPLES_DIR.rglob("*.ein")}
    modules = {str((EXAMPLES_DIR / entry).parent.relative_to(EXAMPLES_DIR) / f"{name}.ein")
               for entry in programs for name in re.findall(r"^mod (\w+);", (EXAMPLES_DIR / entry).read_text(), re.M)}
    assert sorted(programs - modules - TESTED_ELSEWHERE) == ALL


def header_commands(path: str) -> str:
    """The example's header comment with continued (`\\`) lines joined."""
    return re.sub(r" \\\n//\s*", " ", EXAMPLES[path].source.read_text().split("\n\n")[0])


@pytest.mark.parametrize("path", ALL)
def test_header_says_how_to_build_and_run(path):
    """The header's commands name this file, its inputs (by their files) and its selected outputs."""
    ex = EXAMPLES[path]
    header = header_commands(path)
    build = re.search(r"einc build (\S+) -o (\S+)(.*)", header)
    assert build and build.group(1) == f"examples/{path}", header
    assert re.findall(r"--output (\w+)", build.group(3)) == list(ex.outputs or ())
    run = re.search(rf"einc run {re.escape(build.group(2))}(.*)", header, re.S)
    assert run, header
    given = dict(re.findall(r"--input (\w+)=(\S+)", run.group(1)))
    assert given == {name: f"examples/{path.rsplit('/', 1)[0]}/{file}" for name, file in ex.inputs.items()}


def test_header_commands_run_as_written(tmp_path):
    """The Kalman filter's header commands, run from the repository root with the einc CLI."""
    path = "filters/kalman_filter.ein"
    commands = [shlex.split(line.split("//", 1)[1])
                for line in header_commands(path).splitlines() if re.match(r"//\s+einc (build|run) ", line)]
    assert [argv[1] for argv in commands] == ["build", "run"]
    printed = ""
    for argv in commands:
        argv = [str(tmp_path / a) if a.endswith(".vmfb") else a for a in argv]
        done = subprocess.run([sys.executable, "-m", "einc", *argv[1:]], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        printed = done.stdout
    golden = EXAMPLES[path].golden_text.read_text()
    prints = "".join(printed.splitlines(keepends=True)[:len(golden.splitlines())])  # then the outputs
    assert_text_matches(prints, golden, EXAMPLES[path].rtol, EXAMPLES[path].atol)


def test_the_half_precision_example_is_outside_the_vulkan_subset_because_vulkan_refuses_f16():
    """basics/half_precision.ein runs on llvm-cpu only (catalog: vulkan=False) because
    vulkan-spirv refuses f16 with E011, not because it was left out."""
    path = "basics/half_precision.ein"
    assert not EXAMPLES[path].vulkan
    with pytest.raises(einc.CompileError) as info:
        einc.compile(EXAMPLES[path].source, target="vulkan-spirv")
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.code == "E011" and "f16 is not supported on vulkan-spirv" in diagnostic.message
