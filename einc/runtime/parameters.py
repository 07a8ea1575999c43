"""Supplying a module's external weights: the parameter archive (.irpa) einc wrote beside it.

The archive is checked against the digest the module records (einc.build.parameters) before
IREE reads it: IREE trusts an archive, so a truncated one could read past its data and a
damaged one would give wrong results silently. IREE then maps the file; it is not copied.
"""
from __future__ import annotations

import hashlib
import os

import iree.runtime as rt

from einc.runtime.errors import RunError

SCOPE = "einc"              # the scope the parameters of einc modules name (einc.mlir.weights)
ARCHIVE_SUFFIX = ".irpa"
_CHUNK = 1 << 20


def archive_beside(module_path: str) -> str:
    """Where einc writes the archive of `module_path`: the same name with .irpa."""
    return os.path.splitext(module_path)[0] + ARCHIVE_SUFFIX


def parameters_module(instance: rt.VmInstance, digest: str, archive: str | None, name: str) -> rt.VmModule:
    """The io_parameters module serving `archive` to module `name`, after checking it is the
    archive the module was built with; RunError (one line) when it is missing or another."""
    if archive is None:
        raise RunError(f"{name} keeps its weights in a parameter archive (.irpa): load it from its file, "
                       f"or pass the archive (einc.load(..., parameters=PATH))")
    check_archive(digest, archive, name)
    index = rt.ParameterIndex()
    try:
        index.load(archive)
    except (RuntimeError, ValueError) as err:
        raise RunError(f"cannot read {archive}: not a valid parameter archive ({_first_line(err)})") from None
    return rt.create_io_parameters_module(instance, index.create_provider(scope=SCOPE))


def check_archive(digest: str, archive: str, name: str) -> None:
    """RunError unless `archive` is the one module `name` was built with (its `digest`)."""
    if _file_digest(archive) != digest:
        raise RunError(f"{archive} is damaged or belongs to another build of {name} "
                       f"(its digest does not match the module's); rebuild both with `einc build`")


def _file_digest(path: str) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as archive:
            while chunk := archive.read(_CHUNK):
                digest.update(chunk)
    except FileNotFoundError:
        raise RunError(f"cannot read the weights archive {path}: no such file (einc build writes it "
                       f"beside the module; keep the two together)") from None
    except OSError as err:
        raise RunError(f"cannot read the weights archive {path}: {err.strerror or err}") from None
    return digest.hexdigest()


def _first_line(err: Exception) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
