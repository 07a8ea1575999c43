"""Helpers for the standard-library tests: each module compiles ONE program with many outputs
(IREE compiles dominate the run time) and checks every output against NumPy in its own test."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

import einc
from einc.diagnostics import CompileError


def run_program(source: str, files: dict | None = None, target: str = "llvm-cpu", **inputs) -> dict:
    """Compile `source` (beside the .npy `files`, name -> array) for `target` and run it on `inputs`."""
    with tempfile.TemporaryDirectory(prefix="einc-stdlib-") as tmp:
        for name, array in (files or {}).items():
            np.save(Path(tmp) / name, array)
        path = Path(tmp) / "program.ein"
        path.write_text(source)
        artifact = einc.compile(path, target=target)
    return einc.load(artifact.vmfb)(**inputs)


def diagnostic_of(source: str, tmp_path):
    """The first diagnostic of a program that must not compile."""
    path = Path(tmp_path) / "prog.ein"
    path.write_text(source)
    with pytest.raises(CompileError) as info:
        einc.compile(path)
    return info.value.diagnostics[0], str(path)


def rand(*shape, dtype=np.float32, seed=0, lo=-2.0, hi=2.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


# Tolerances: float32 results against a float64 NumPy reference, and float64 against float64.
F32 = dict(rtol=2e-5, atol=2e-6)
F64 = dict(rtol=1e-12, atol=1e-12)


def close(actual, expected, dtype=np.float32, **tol):
    actual = np.asarray(actual)
    assert actual.dtype == np.dtype(dtype), f"dtype {actual.dtype}, expected {np.dtype(dtype)}"
    np.testing.assert_allclose(actual, expected, **{**(F32 if dtype == np.float32 else F64), **tol})
