"""End-to-end helpers: compile Einlang source with einc and run the module with IREE."""
from __future__ import annotations

import numpy as np
import pytest

import einc
from tests.programs import built


def compile_and_run(source: str, target: str = "llvm-cpu", device: str | None = None,
                    outputs: list[str] | None = None, **inputs) -> dict:
    """Build `source` (once per test process: a test that runs a program twice shares its build)
    and run it on `inputs`."""
    artifact = built(source, target, outputs)
    program = einc.load(artifact.vmfb, device=device)
    return program(**inputs)


@pytest.fixture
def run():
    return compile_and_run


FD_STEP = 1e-6     # central-difference step: in f64 the difference is good to ~1e-9 relative


def central_jacobian(f, x):
    """d f(x) / d x by central differences in f64, of shape f(x).shape + x.shape."""
    cols = []
    for p in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[p] = FD_STEP
        cols.append((f(x + step) - f(x - step)) / (2 * FD_STEP))
    return np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(f(x)) + x.shape)


@pytest.fixture
def fd_jacobian():
    return central_jacobian
