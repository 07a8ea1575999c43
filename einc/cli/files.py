"""Writing files from the CLI, with OS errors reported as one line."""
from __future__ import annotations

import io
import os
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from einc.backend import write_artifact
from einc.cli.errors import CliError
from einc.diagnostics import file_problem


def save_bytes(path: str | os.PathLike, data: bytes) -> None:
    with _writing(path):
        write_artifact(path, data)


def save_archive(archive, path: str | os.PathLike) -> None:
    """Copy a build's weights archive (einc.backend.parameters.Archive) to `path`."""
    with _writing(path):
        archive.save(path)


@contextmanager
def _writing(path: str | os.PathLike) -> Iterator[None]:
    try:
        yield
    except OSError as err:
        raise CliError(f"cannot write {os.fspath(path)}: {file_problem(err)}") from None


def ensure_dir(path: str | os.PathLike) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise CliError(f"cannot create directory {os.fspath(path)}: {file_problem(err)}") from None


def save_npy(path: str | os.PathLike, array: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    save_bytes(path, buffer.getvalue())


def save_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """All arrays in one archive, written atomically like every other output."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    save_bytes(path, buffer.getvalue())
