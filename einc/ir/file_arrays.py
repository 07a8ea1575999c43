"""Constant arrays that are views of a file (`load_npy` maps its file: np.load(mmap_mode="r")).

A build must not hold a copy of its weights: reading a mapped array maps its pages into the
process, so its memory would still grow by the weights' size. The consumers of a whole array's
bytes (the shared-values key, the weights archive) therefore read a file-backed array from its
file, in chunks, through the page cache, instead of through the mapping.
"""
from __future__ import annotations

import hashlib
import os

import numpy as np

_CHUNK = 1 << 22


def file_extent(array: np.ndarray) -> tuple[str, int] | None:
    """(file, byte offset) of `array`'s data when it is a C-contiguous view of a file mapped
    read-only by np.memmap (a copy-on-write mapping may differ from its file); None otherwise."""
    if not array.flags.c_contiguous or array.size == 0:
        return None
    root = array
    while isinstance(root, np.ndarray) and not _maps_a_file(root):
        root = root.base
    if not isinstance(root, np.memmap) or root.filename is None or root.mode != "r":
        return None
    start = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return os.fspath(root.filename), root.offset + start


def content_digest(array: np.ndarray) -> bytes:
    """SHA-256 of `array`'s bytes (C order), without a copy of them in memory."""
    digest = hashlib.sha256()
    extent = file_extent(array)
    if extent is None:
        digest.update(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
        return digest.digest()
    path, offset = extent
    fd = os.open(path, os.O_RDONLY)
    try:
        end = offset + array.nbytes
        while offset < end:
            chunk = os.pread(fd, min(_CHUNK, end - offset), offset)
            if not chunk:
                raise OSError(f"{path} became shorter while it was read")
            digest.update(chunk)
            offset += len(chunk)
    finally:
        os.close(fd)
    return digest.digest()


def all_equal(array: np.ndarray) -> bool:
    """Whether `array` has elements and all equal the first (NaN equals nothing), compared a
    chunk at a time up to the first difference: a weight is not read whole to learn it varies."""
    flat = array.reshape(-1)
    if flat.size == 0:
        return False
    step = max(1, _CHUNK // flat.itemsize)
    return all(bool(np.all(flat[i:i + step] == flat[0])) for i in range(0, flat.size, step))


def _maps_a_file(array: np.ndarray) -> bool:
    """The np.memmap np.load made: its base is the mmap itself, its offset the data's."""
    return isinstance(array, np.memmap) and not isinstance(array.base, np.ndarray)
