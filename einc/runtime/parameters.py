"""Supplying a module's external weights: the parameter archive (.irpa) einc wrote beside it.

The archive is checked against the digest the module records (einc.backend.parameters) before
IREE reads it: IREE trusts an archive, so a truncated one could read past its data and a
damaged one would give wrong results silently. IREE then maps the file; it is not copied.
"""
from __future__ import annotations

import iree.runtime as rt

from einc.module_file import SCOPE, ModuleFileError, check_archive
from einc.runtime.errors import RunError


def parameters_module(instance: rt.VmInstance, digest: str, archive: str | None, name: str) -> rt.VmModule:
    """The io_parameters module serving `archive` to module `name`, after checking it is the
    archive the module was built with; RunError (one line) when it is missing or another."""
    if archive is None:
        raise RunError(f"{name} keeps its weights in a parameter archive (.irpa): load it from its file, "
                       f"or pass the archive (einc.load(..., parameters=PATH))")
    try:
        check_archive(digest, archive, name)
    except ModuleFileError as err:
        raise RunError(str(err)) from None
    index = rt.ParameterIndex()
    try:
        index.load(archive)
    except (RuntimeError, ValueError) as err:
        raise RunError(f"cannot read {archive}: not a valid parameter archive ({_first_line(err)})") from None
    return rt.create_io_parameters_module(instance, index.create_provider(scope=SCOPE))


def _first_line(err: Exception) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
