"""An integrity digest for .vmfb files, checked before IREE sees a byte of them.

IREE trusts a module: flipped bytes make its loader segfault or raise internal errors. einc
therefore seals every module it builds with the SHA-256 of the bytes IREE wrote, and the
runner refuses a file whose digest does not match.

The seal is the archive comment of the ZIP archive a .vmfb also is,
`einc-sha256:<64 hex digits>`: IREE's loader ignores it, ZIP tools show it, and removing it
restores IREE's exact bytes (docs/DECISIONS.md, Command line and modules).
"""
from __future__ import annotations

import hashlib

from einc.runtime.errors import RunError

_END_OF_DIRECTORY = b"PK\x05\x06"
_END_RECORD_SIZE = 22                  # the record without its comment
_PREFIX = b"einc-sha256:"
_COMMENT_SIZE = len(_PREFIX) + 64
_SEAL_SIZE = 2 + _COMMENT_SIZE         # the comment length field, then the comment


def seal(vmfb: bytes) -> bytes:
    """`vmfb` (as IREE wrote it) with its digest as the archive comment."""
    end = len(vmfb) - _END_RECORD_SIZE
    if end < 0 or vmfb[end:end + 4] != _END_OF_DIRECTORY or vmfb[-2:] != b"\0\0":
        raise ValueError("IREE wrote a module that does not end in an empty ZIP archive comment; "
                         "einc cannot seal it")
    comment = _PREFIX + hashlib.sha256(vmfb).hexdigest().encode()
    return vmfb[:-2] + _COMMENT_SIZE.to_bytes(2, "little") + comment


def unseal(data: bytes, name: str) -> bytes:
    """The module IREE wrote, after checking its seal; RunError if it is missing or wrong."""
    seal_start = len(data) - _SEAL_SIZE
    record = seal_start - (_END_RECORD_SIZE - 2)
    comment = data[seal_start + 2:]
    if record < 0 or data[record:record + 4] != _END_OF_DIRECTORY or \
            data[seal_start:seal_start + 2] != _COMMENT_SIZE.to_bytes(2, "little") or \
            not comment.startswith(_PREFIX):
        raise RunError(f"{name} has no einc integrity seal: it is damaged, or was not built by this "
                       f"einc (rebuild it with `einc build`)")
    original = data[:seal_start] + b"\0\0"
    if hashlib.sha256(original).hexdigest().encode() != comment[len(_PREFIX):]:
        raise RunError(f"{name} is damaged: its contents do not match its integrity digest "
                       f"(rebuild it with `einc build`)")
    return original
