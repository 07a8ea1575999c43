"""The parameter archive (.irpa) of a module's external weights (einc.mlir.weights).

The module records the archive's SHA-256 (`einc.parameters` in main's reflection, added by
einc.mlir.signature.record_parameters), so the runner refuses an archive that is damaged or
belongs to another build before IREE reads it (einc.module_file.check_archive).

The archive goes straight to a file and stays there: an array mapped from its file (`load_npy`)
is copied into it by IREE from that file, then the archive is hashed and saved a chunk at a
time, so a build's memory does not grow with the size of its weights.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
import weakref
from functools import cached_property

import numpy as np
from iree.runtime import FileHandle, ParameterIndex
# _make_tensor_metadata: the metadata parameter_index_add_numpy_ndarray gives an entry; entries
# copied from a file get the same
from iree.runtime.io import _make_tensor_metadata, parameter_index_add_numpy_ndarray

from einc.backend.artifact import write_artifact_from
from einc.ir.file_arrays import file_extent
from einc.module_file import ARCHIVE_SUFFIX, file_digest


class Archive:
    """A weights archive held in a file: a build's own temporary file (removed when the Archive
    is collected) or one already on disk. It pickles as its bytes and unpickles into a
    temporary file of the receiving process, since IREE maps archives from files."""

    def __init__(self, path: str, temporary: bool = False):
        self.path = path
        if temporary:
            weakref.finalize(self, _remove, path)

    @classmethod
    def from_bytes(cls, data: bytes) -> "Archive":
        path = _temporary_path()
        with open(path, "wb") as archive:
            archive.write(data)
        return cls(path, temporary=True)

    @property
    def size(self) -> int:
        return os.path.getsize(self.path)

    @cached_property
    def digest(self) -> str:
        return file_digest(self.path)

    def read(self) -> bytes:
        with open(self.path, "rb") as archive:
            return archive.read()

    def save(self, path: str | os.PathLike) -> None:
        """Copy the archive to `path` atomically, a chunk at a time."""
        with open(self.path, "rb") as archive:
            write_artifact_from(path, archive)

    def __reduce__(self):
        return Archive.from_bytes, (self.read(),)


def write_archive(arrays: dict[str, np.ndarray]) -> Archive:
    """The .irpa archive holding `arrays` by key, as IREE's writer lays it out, in a temporary file."""
    archive = Archive(_temporary_path(), temporary=True)   # removed on failure too, once dropped
    index, opened = ParameterIndex(), []
    try:
        for key, array in arrays.items():
            extent = file_extent(array)
            if extent is None:
                parameter_index_add_numpy_ndarray(index, key, np.ascontiguousarray(array))
                continue
            opened.append(os.open(extent[0], os.O_RDONLY))
            index.add_from_file_handle(key, FileHandle.wrap_fd(opened[-1]), array.nbytes, extent[1],
                                       metadata=_make_tensor_metadata(array))
        index.create_archive_file(archive.path)
    finally:
        for fd in opened:       # IREE's handles do not own them
            os.close(fd)
    return archive


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _temporary_path() -> str:
    fd, path = tempfile.mkstemp(prefix="einc-", suffix=ARCHIVE_SUFFIX)
    os.close(fd)
    return path
