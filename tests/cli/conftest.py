import sys
from pathlib import Path

import pytest

# The hand-written sample modules live with the runtime tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))

from mlir_samples import compiled  # noqa: E402
from einc.cli import _run_cli  # noqa: E402


@pytest.fixture(scope="session")
def modules(tmp_path_factory) -> dict[str, Path]:
    """The matmul sample as .vmfb files for CPU and Vulkan, compiled once."""
    directory = tmp_path_factory.mktemp("modules")
    paths = {}
    for target in ("llvm-cpu", "vulkan-spirv"):
        paths[target] = directory / f"matmul-{target}.vmfb"
        paths[target].write_bytes(compiled("matmul", target))
    return paths


@pytest.fixture
def einc_cli(capsys):
    """Run the CLI in process: returns (exit status, stdout, stderr)."""
    def run(*argv: str):
        status = _run_cli([str(arg) for arg in argv])
        captured = capsys.readouterr()
        return status, captured.out, captured.err
    return run


ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """`built(source, target="llvm-cpu", dims=None)`: the .vmfb of an example (path) or of
    Einlang text, built once per session and shared by the CLI tests."""
    import einc

    folder = tmp_path_factory.mktemp("built")
    modules: dict = {}

    def build(source, target: str = "llvm-cpu", dims: dict | None = None) -> Path:
        key = (str(source), target, tuple(sorted((dims or {}).items())))
        if key not in modules:
            path = folder / f"module{len(modules)}.vmfb"
            einc.compile(str(source), target, dims=dims).save(path)
            modules[key] = path
        return modules[key]
    return build


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty build cache (EINC_CACHE) of the test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("EINC_CACHE", str(folder))
    return folder
