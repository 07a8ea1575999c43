"""The parameter archive (.irpa) of a module's external weights (einc.mlir.weights).

The module records the archive's SHA-256 (`einc.parameters` in main's reflection, added by
einc.mlir.signature.record_parameters), so the runner refuses an archive that is damaged or
belongs to another build before IREE reads it (einc.module_file.check_archive).
"""
from __future__ import annotations

import hashlib
import os
import tempfile

import numpy as np
from iree.runtime import ParameterIndex
from iree.runtime.io import parameter_index_add_numpy_ndarray

from einc.module_file import ARCHIVE_SUFFIX



def archive_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The .irpa archive holding `arrays` by key, as IREE's writer lays it out."""
    index = ParameterIndex()
    for key, array in arrays.items():
        parameter_index_add_numpy_ndarray(index, key, np.ascontiguousarray(array))
    fd, path = tempfile.mkstemp(prefix="einc-", suffix=ARCHIVE_SUFFIX)
    os.close(fd)
    try:
        index.create_archive_file(path)
        with open(path, "rb") as archive:
            return archive.read()
    finally:
        os.unlink(path)


def archive_digest(archive: bytes) -> str:
    return hashlib.sha256(archive).hexdigest()
