"""What an einc module file carries beyond IREE's bytes, shared by the build that writes it and
the runner that reads it: the keys of `main`'s reflection, the integrity seal, and the weights
archive (.irpa) beside it. Errors are ModuleFileError (one line); the runner reports them as
RunErrors.

The seal: IREE trusts a module, and flipped bytes make its loader segfault or raise internal
errors, so every module einc builds carries the SHA-256 of the bytes IREE wrote, checked before
IREE sees a byte. An IREE .vmfb is also a ZIP archive ending in an end-of-central-directory
record with an empty comment; the seal is that comment, `einc-sha256:<64 hex digits>`. IREE's
loader and tools ignore it (tests/runtime/test_integrity.py), and removing it restores IREE's
exact bytes.
"""
from __future__ import annotations

import hashlib
import os

from einc.diagnostics import file_problem

SIGNATURE_KEY = "einc.signature"     # JSON: what main takes, returns and prints (einc.runtime.signature)
SIGNATURE_VERSION = 2
TARGET_KEY = "einc.target"           # the target's name, which picks the runtime device
PARAMETERS_KEY = "einc.parameters"   # SHA-256 of the weights archive the module needs
CPU_FEATURES_KEY = "einc.cpu_features"  # for code tuned to the build CPU: its ISA extensions
INPUT_ALIGNMENT_KEY = "einc.input_alignment"  # bytes an input must start on to be lent in place (IREE-31)
READ_ONCE_KEY = "einc.read_once_inputs"  # inputs whose every reader reads each element once: lent off a cache line
IREE_INPUT_ALIGNMENT = 64            # what IREE's CPU kernels assume where a module does not say
SCOPE = "einc"                       # the scope the module's parameters name (einc.mlir.weights)
ARCHIVE_SUFFIX = ".irpa"

_END_OF_DIRECTORY = b"PK\x05\x06"
_END_RECORD_SIZE = 22                  # the record without its comment
_PREFIX = b"einc-sha256:"
_COMMENT_SIZE = len(_PREFIX) + 64
_SEAL_SIZE = 2 + _COMMENT_SIZE         # the comment length field, then the comment
_CHUNK = 1 << 20


class ModuleFileError(Exception):
    """A module or weights archive that is damaged, missing, or not einc's."""


def seal(vmfb: bytes) -> bytes:
    """`vmfb` (as IREE wrote it) with its digest as the archive comment."""
    end = len(vmfb) - _END_RECORD_SIZE
    if end < 0 or vmfb[end:end + 4] != _END_OF_DIRECTORY or vmfb[-2:] != b"\0\0":
        raise ValueError("IREE wrote a module that does not end in an empty ZIP archive comment; "
                         "einc cannot seal it")
    comment = _PREFIX + hashlib.sha256(vmfb).hexdigest().encode()
    return vmfb[:-2] + _COMMENT_SIZE.to_bytes(2, "little") + comment


def unseal(data: bytes, name: str) -> bytes:
    """The module IREE wrote, after checking its seal."""
    seal_start = len(data) - _SEAL_SIZE
    record = seal_start - (_END_RECORD_SIZE - 2)
    comment = data[seal_start + 2:]
    if record < 0 or data[record:record + 4] != _END_OF_DIRECTORY or \
            data[seal_start:seal_start + 2] != _COMMENT_SIZE.to_bytes(2, "little") or \
            not comment.startswith(_PREFIX):
        raise ModuleFileError(f"{name} has no einc integrity seal: it is damaged, or was not built by this "
                              f"einc (rebuild it with `einc build`)")
    original = data[:seal_start] + b"\0\0"
    if hashlib.sha256(original).hexdigest().encode() != comment[len(_PREFIX):]:
        raise ModuleFileError(f"{name} is damaged: its contents do not match its integrity digest "
                              f"(rebuild it with `einc build`)")
    return original


def load_module(instance, sealed: bytes, name: str):
    """The iree.runtime VmModule in `sealed` (IREE sees it once its seal matched); it must
    export `main`."""
    import iree.runtime as rt
    vmfb = unseal(sealed, name)
    try:
        module = rt.VmModule.copy_buffer(instance, vmfb)
        exported = module.function_names
    except Exception as err:  # noqa: BLE001 - whatever IREE raises, the file is not a module it loads
        lines = str(err).strip().splitlines()
        reason = (lines[0] if lines else type(err).__name__).split("; ")[-1].strip()
        raise ModuleFileError(f"{name} is not a valid IREE module ({reason})") from None
    if "main" not in exported:
        raise ModuleFileError(f"{name} is not an einc module (it exports no main function)")
    return module


def archive_beside(module_path: str) -> str:
    """Where einc writes the archive of `module_path`: the same name with .irpa."""
    return os.path.splitext(module_path)[0] + ARCHIVE_SUFFIX


def check_archive(digest: str, archive: str, name: str) -> None:
    """Unless `archive` is the one module `name` was built with (its `digest`): IREE trusts an
    archive, so a truncated one could read past its data and a damaged one give wrong results."""
    if _archive_digest(archive) != digest:
        raise ModuleFileError(f"{archive} is damaged or belongs to another build of {name} "
                              f"(its digest does not match the module's); rebuild both with `einc build`")


def file_digest(path: str | os.PathLike) -> str:
    """The SHA-256 of a file, read a chunk at a time (weights and their archives can be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as data:
        while chunk := data.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _archive_digest(path: str) -> str:
    try:
        return file_digest(path)
    except FileNotFoundError:
        raise ModuleFileError(f"cannot read the weights archive {path}: no such file (einc build writes it "
                              f"beside the module; keep the two together)") from None
    except OSError as err:
        raise ModuleFileError(f"cannot read the weights archive {path}: {file_problem(err)}") from None
