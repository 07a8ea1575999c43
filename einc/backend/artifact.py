"""Writing build outputs so that a reader never sees a partial file."""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import BinaryIO, Callable


def write_artifact(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` atomically: a temp file in the same directory, then os.replace.

    On any failure the temp file is removed and an existing `path` is left untouched.
    """
    _write_atomically(path, lambda out: out.write(data))


def write_artifact_from(path: str | os.PathLike, source: BinaryIO) -> None:
    """write_artifact of what the open file `source` holds, copied a chunk at a time."""
    _write_atomically(path, lambda out: shutil.copyfileobj(source, out))


def _write_atomically(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> None:
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".einc-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, _ordinary_file_mode())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _ordinary_file_mode() -> int:
    """The mode open() would give a new file; mkstemp's 0600 would make artifacts private."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
