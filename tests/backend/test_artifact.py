"""write_artifact replaces the output only on success and never leaves partial files."""
import os
import stat

import pytest

from einc.backend import write_artifact


def test_writes_and_replaces(tmp_path):
    out = tmp_path / "m.vmfb"
    write_artifact(out, b"first")
    write_artifact(out, b"second")
    assert out.read_bytes() == b"second"
    assert os.listdir(tmp_path) == ["m.vmfb"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask  # as open() would, not mkstemp's 0600


def test_failure_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    out = tmp_path / "m.vmfb"
    out.write_bytes(b"old")

    def failing_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError):
        write_artifact(out, b"new")
    assert out.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["m.vmfb"]


def test_failure_without_old_file_leaves_nothing(tmp_path, monkeypatch):
    def failing_replace(src, dst):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        write_artifact(tmp_path / "m.vmfb", b"data")
    assert os.listdir(tmp_path) == []


def test_missing_directory_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_artifact(tmp_path / "no" / "m.vmfb", b"data")
