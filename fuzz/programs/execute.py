"""Build a module with einc and run it: the job a worker process runs (fuzz.workers).

The result says how far it got: `ok` with the outputs, `rejected` (a diagnostic: code, message,
line), `internal` (any other exception while building: an einc bug, or IREE rejecting einc's
MLIR or crashing on it) or `run-error` (the module built but loading or running it failed). The module runs in a
folder of its own, and `ok` also carries the files its `save_npy` effects wrote there.
"""
from __future__ import annotations

import os
import tempfile
import warnings

import ml_dtypes
import numpy as np

import einc
from einc import driver as einc_driver
from einc.diagnostics import BuildWarning, CompileError


def build_and_run(source: str, target: str, outputs: list, inputs: dict, dims: dict | None = None) -> dict:
    """`dims`: named dims fixed at build time, as `--dim` fixes them."""
    return _build(source, target, outputs, inputs, einc.compile, dims)


def lower_only(source: str, target: str, outputs: list, inputs: dict, dims: dict | None = None) -> dict:
    """Like build_and_run, but stops at einc's verified MLIR (no IREE): `lowered` if it got
    there. Enough, and ten times faster, to shrink a program einc rejects."""
    return _build(source, target, outputs, inputs, lower, dims)


def lower(path: str, target: str, outputs: list, dims: dict | None = None):
    einc_driver.lower(path, target, outputs, dims)
    return None


def _build(source: str, target: str, outputs: list, inputs: dict, build, dims: dict | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="einc-fuzz-") as folder:
        path = os.path.join(folder, "program.ein")
        with open(path, "w", encoding="utf-8") as file:
            file.write(source)
        try:
            with warnings.catch_warnings():     # IREE's compiler crashed: a finding, though einc built again
                warnings.simplefilter("error", BuildWarning)
                artifact = build(path, target=target, outputs=list(outputs), dims=dims or None)
        except CompileError as err:
            first = err.diagnostics[0]
            return {"kind": "rejected", "code": first.code, "message": first.message,
                    "line": _line_in(first, path), "text": err.render()}
        except Exception as err:  # noqa: BLE001 - every other failure is the finding
            return {"kind": "internal", "error": f"{type(err).__name__}: {err}"}
        if artifact is None:
            return {"kind": "lowered"}
        return _run(artifact, inputs, folder)


def _run(artifact, inputs: dict, folder: str) -> dict:
    """Run the module in `folder`, where its `save_npy` effects write: `saved` holds each file
    written, by its name without `.npy`."""
    here = os.getcwd()
    os.chdir(folder)
    try:
        with einc.load(artifact.vmfb) as program:     # closed before the next one opens
            values = program(**inputs)
        saved = {name[:-4]: _load(name) for name in os.listdir(".") if name.endswith(".npy")}
    except Exception as err:  # noqa: BLE001
        return {"kind": "run-error", "error": f"{type(err).__name__}: {err}"}
    finally:
        os.chdir(here)
    return {"kind": "ok", "outputs": {name: values[name] for name in values}, "saved": saved}


def _line_in(diagnostic, path: str) -> int | None:
    """The line of `path` a diagnostic points at: its own span, or the call that led there."""
    spans = [diagnostic.span] + [note.span for note in diagnostic.notes]
    return next((s.line for s in spans if s is not None and s.file == path), None)


def _load(path: str) -> np.ndarray:
    """A .npy file as einc reads it: 2-byte voids are bfloat16, which .npy headers cannot name."""
    array = np.load(path)
    return array.view(ml_dtypes.bfloat16) if array.dtype == np.dtype("V2") else array
