"""einc as people install it: the wheel carries the grammar and the standard library, and an
installed einc builds and runs a program that uses std:: from a folder outside the checkout.

The wheel is installed with --no-deps into a fresh venv that sees this venv's numpy, IREE,
lark and click through a .pth file, so the test needs PyPI only for pip's build isolation
(setuptools, usually in pip's cache).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import einc

ROOT = Path(__file__).resolve().parent.parent
DEPENDENCIES = ("numpy", "iree.compiler", "iree.runtime", "lark", "click")


def _pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", line.split("#")[0].strip())
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def test_iree_compiler_and_runtime_are_one_release_in_ranges_and_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    ranges = {re.split(r"[<>=!~]", dep, 1)[0]: dep[len(re.split(r"[<>=!~]", dep, 1)[0]):]
              for dep in project["dependencies"]}
    assert ranges["iree-base-compiler"] == ranges["iree-base-runtime"]
    pins = _pins(ROOT / "constraints.txt")
    assert pins["iree-base-compiler"] == pins["iree-base-runtime"]
    # every library dependency is a range, and the development pins fall inside it
    from packaging.specifiers import SpecifierSet
    for name, spec in ranges.items():
        assert "==" not in spec, f"{name} is pinned in pyproject.toml; pins go in constraints.txt"
        assert pins[name] in SpecifierSet(spec), f"constraints.txt pins {name} outside {spec}"


def test_requires_python_admits_this_python_and_numpy_needs_311():
    from packaging.specifiers import SpecifierSet
    required = SpecifierSet(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in required
    assert "3.10" not in required


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of a fresh venv with einc's wheel installed, a work folder outside the checkout)."""
    base = tmp_path_factory.mktemp("package")
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "einc", source / "einc", ignore=shutil.ignore_patterns("__pycache__"))
    wheels = base / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)], base)
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], base)
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base).strip())
    (site / "einc_test_dependencies.pth").write_text("\n".join(sorted(_dependency_dirs())) + "\n")
    wheel, = wheels.glob("einc-*.whl")
    _run([str(python), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], base)
    work = base / "work"
    work.mkdir()
    return python, work


def _dependency_dirs() -> set[str]:
    import importlib
    return {str(Path(importlib.import_module(name).__file__).resolve().parents[name.count(".") + 1])
            for name in DEPENDENCIES}


def _run(command: list[str], cwd: Path) -> str:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "EINC_STDLIB")}
    env["EINC_CACHE"] = str(cwd / "cache")
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_wheel_carries_the_grammar_and_the_standard_library(installed):
    python, work = installed
    found = _run([str(python), "-c", "import einc, pathlib; p = pathlib.Path(einc.__file__).parent; "
                  "print(p); print((p / 'syntax' / 'grammar.lark').is_file()); "
                  "print(len(list((p / 'stdlib').rglob('*.ein'))))"], work).split()
    assert not Path(found[0]).is_relative_to(ROOT) and found[1] == "True"
    assert int(found[2]) == len(list((ROOT / "einc" / "stdlib").rglob("*.ein")))


def test_installed_einc_builds_and_runs_a_program_using_std(installed):
    python, work = installed
    (work / "dense.ein").write_text(
        "use std::ml::layers::linear;\nuse std::ml::activations::relu;\n"
        "let x: [f32; B, I];\nlet w: [f32; I, O];\nlet b: [f32; O];\n"
        "let y[n, o] = relu(linear(x, w, b)[n, o]);\n")
    rng = np.random.default_rng(3)
    x, w, b = (rng.uniform(-1, 1, shape).astype(np.float32) for shape in ((5, 7), (7, 4), (4,)))
    for name, array in (("x", x), ("w", w), ("b", b)):
        np.save(work / f"{name}.npy", array)
    einc_cli = [str(python), "-m", "einc"]
    _run(einc_cli + ["build", "dense.ein", "-o", "dense.vmfb"], work)
    _run(einc_cli + ["run", "dense.vmfb", "-i", "x=x.npy", "-i", "w=w.npy", "-i", "b=b.npy", "--out", "out.npz"], work)
    expected = np.maximum(x.astype(np.float64) @ w + b, 0.0)
    np.testing.assert_allclose(np.load(work / "out.npz")["y"], expected, rtol=1e-5, atol=1e-6)
    # a file of the installed standard library checks as the module it is
    layers = _run([str(python), "-c", "import einc, pathlib; "
                   "print(pathlib.Path(einc.__file__).parent / 'stdlib' / 'ml' / 'layers.ein')"], work).strip()
    _run(einc_cli + ["check", layers], work)


def test_installed_version_is_the_project_version(installed):
    python, work = installed
    version = _run([str(python), "-c", "import einc; print(einc.__version__)"], work).strip()
    assert version == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert einc.__version__ == version
