"""Constant arrays mapped from their file (einc.ir.file_arrays): where their bytes lie in the
file, and digests and uniformity read without a copy, equal to those of the bytes in memory."""
import hashlib

import numpy as np

from einc.ir.file_arrays import all_equal, content_digest, file_extent


def test_views_of_a_mapped_file_know_their_offset(tmp_path):
    stack = np.arange(5 * 3 * 4, dtype=np.float32).reshape(5, 3, 4)
    np.save(tmp_path / "stack.npy", stack)
    mapped = np.load(tmp_path / "stack.npy", mmap_mode="r")
    path, header = file_extent(mapped)
    assert path == str(tmp_path / "stack.npy")
    layer = np.ascontiguousarray(mapped[3])                    # a view: no copy
    assert file_extent(layer) == (path, header + 3 * 12 * 4)
    with open(path, "rb") as f:
        f.seek(header + 3 * 12 * 4)
        assert np.array_equal(np.frombuffer(f.read(48), np.float32).reshape(3, 4), stack[3])
    assert file_extent(mapped[:, 1]) is None                   # not contiguous
    assert file_extent(np.array(mapped)) is None               # a copy in memory
    assert file_extent(np.load(tmp_path / "stack.npy", mmap_mode="c")) is None   # may differ from the file


def test_digests_equal_those_of_the_bytes(tmp_path):
    stack = np.random.default_rng(1).standard_normal((6, 7)).astype(np.float64)
    np.save(tmp_path / "s.npy", stack)
    mapped = np.load(tmp_path / "s.npy", mmap_mode="r")
    for array in (mapped, mapped[2:4], stack, stack[:, 1:3], np.float32(2.5), np.array([True, False])):
        expected = hashlib.sha256(np.ascontiguousarray(array).tobytes()).digest()
        assert content_digest(np.asarray(array)) == expected
    assert content_digest(mapped[2:4]) != content_digest(mapped[3:5])


def test_all_equal():
    assert all_equal(np.full((3, 1 << 20), 2.0, np.float32))   # over several chunks
    changed = np.full(3 << 20, 2.0, np.float32)
    changed[-1] = 1.0
    assert not all_equal(changed)
    assert not all_equal(np.array([np.nan, np.nan]))
    assert not all_equal(np.zeros((0, 3)))
    assert all_equal(np.array(4))
