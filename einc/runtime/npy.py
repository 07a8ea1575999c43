"""Reading input arrays from .npy files and .npz archives with one-line errors."""
from __future__ import annotations

import tokenize
import zipfile
import zlib
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from einc.diagnostics import file_problem, first_line
from einc.runtime.errors import RunError

# What numpy and zipfile raise for a file that is not what it claims (a header that asks for
# more memory than there is included): each means "not a valid file", never a crash.
# (numpy tokenizes old-style headers: a damaged one can end in tokenize.TokenError.)
_BAD_FILE = (OSError, ValueError, EOFError, MemoryError, OverflowError, zipfile.BadZipFile, zlib.error,
             NotImplementedError, RuntimeError, UnicodeDecodeError, KeyError, SyntaxError, tokenize.TokenError)


def read_npy(path: str) -> np.ndarray:
    """Load one array; no pickles, and no guessing at files that are not .npy."""
    with _reading(path, ".npy"), open(path, "rb") as npy_file:
        _check_not_npz(path, npy_file)
        return np.lib.format.read_array(npy_file, allow_pickle=False)


def npy_rank(path: str) -> int:
    """The rank of the array in `path`, from its header alone (read before the array is)."""
    with _reading(path, ".npy"), open(path, "rb") as npy_file:
        _check_not_npz(path, npy_file)
        version = np.lib.format.read_magic(npy_file)
        header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        return len(header(npy_file)[0])


def _check_not_npz(path: str, npy_file) -> None:
    if npy_file.read(4) == b"PK\x03\x04":      # a zip: `np.savez` writes them
        raise RunError(f"cannot read {path}: it is an .npz archive, not one array; give it alone "
                       f"(`--input {path}`) to bind its arrays by name")
    npy_file.seek(0)


def read_npz(path: str) -> dict[str, np.ndarray]:
    """Every array of an .npz archive by name (`np.savez` names members NAME.npy)."""
    with _reading(path, ".npz"), zipfile.ZipFile(path) as archive:
        return {_array_name(path, member): _member_array(archive, member) for member in archive.namelist()}


@contextmanager
def _reading(path: str, kind: str) -> Iterator[None]:
    """Whatever reading `path` raises becomes one line."""
    try:
        yield
    except (FileNotFoundError, IsADirectoryError, PermissionError, NotADirectoryError) as err:
        raise RunError(f"cannot read {path}: {file_problem(err)}") from None
    except _BAD_FILE as err:
        raise RunError(f"cannot read {path}: not a valid {kind} file ({first_line(err)})") from None


def _array_name(path: str, member: str) -> str:
    if not member.endswith(".npy") or member == ".npy":
        raise RunError(f"cannot read {path}: its member {member!r} is not an array (.npz members are NAME.npy)")
    return member[:-len(".npy")]


def _member_array(archive: zipfile.ZipFile, member: str) -> np.ndarray:
    with archive.open(member) as npy_file:
        return np.lib.format.read_array(npy_file, allow_pickle=False)
