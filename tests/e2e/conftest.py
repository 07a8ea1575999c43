"""End-to-end helpers: compile Einlang source with einc and run the module with IREE."""
from __future__ import annotations

import pytest

import einc


def compile_and_run(source: str, target: str = "llvm-cpu", device: str | None = None,
                    outputs: list[str] | None = None, **inputs) -> dict:
    artifact = einc.compile(source, target=target, outputs=outputs)
    program = einc.load(artifact.vmfb, device=device)
    return program(**inputs)


@pytest.fixture
def run():
    return compile_and_run
