"""Fixtures of the lowering tests: programs written to files, since `einc.driver.lower` reads a
file, and the MLIR einc emits for them."""
from __future__ import annotations

import hashlib

import pytest


@pytest.fixture(scope="module")
def program_file(tmp_path_factory):
    """program_file(text) -> the path of an .ein file holding `text`, in a folder of the test
    module's own (load_npy reads files beside it); one file per text, named by its hash."""
    folder = tmp_path_factory.mktemp("programs")

    def write(text: str) -> str:
        path = folder / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.ein"
        path.write_text(text, encoding="utf-8")
        return str(path)
    return write


@pytest.fixture(scope="module")
def emitted(program_file):
    """emitted(text, target, outputs, dims) -> the MLIR text einc lowers `text` to."""
    from einc.driver import lower

    def lowered(text: str, target: str = "llvm-cpu", outputs=None, dims=None) -> str:
        return str(lower(program_file(text), target, outputs, dims))
    return lowered
