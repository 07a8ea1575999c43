"""The build cache behind `einc run FILE.ein`, `einc.jit` and `einc.compile(..., cache=True)`:
one sealed .vmfb per key, under the user cache.

The key is a SHA-256 over everything a module's bytes depend on: the text of the program and of
every module it loaded (by the names the diagnostics and asserts embed), the contents of every
file `load_npy` read, what every Python function called during the build returned (the front
end, which computes the key, runs them), the target, its IREE flags and, for a target tuned to the host, the
host CPU the code is tuned to, the chosen outputs, the fixed dims (given, or read from the
inputs of a specialized build: einc.specialize), whether Python may run,
whether llvm-cpu may fuse float products, whether data-dependent indices are checked, which
constant arrays go to a weights archive, and the einc (version and code) and IREE versions.
A change to any of them is a new key. Entries are written atomically and verified (their seal,
and their weights archive's digest) when read, so a damaged entry is rebuilt rather than run.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
from pathlib import Path
from typing import Iterable, Optional

import iree.runtime as rt

from einc.backend.artifact import write_artifact
from einc.diagnostics import file_problem
from einc.host_cpu import IDENTIFYING_FIELDS, cpuinfo_fields
from einc.module_file import (PARAMETERS_KEY, ModuleFileError, archive_beside, check_archive, file_digest,
                              load_module)
from einc.target import Target
from einc.user_cache import cache_folder
from einc.version import einc_code_digest, einc_version, iree_versions


def cache_key(sources: Iterable[tuple[str, str]], data_files: Iterable[str], target: Target,
              outputs: Optional[list[str]], dims: dict[str, int], allow_python: bool = False,
              python_results: Iterable[str] = (), fp_contract: bool = False, unchecked_indices: bool = False,
              weights_threshold: Optional[int] = None, ranks: Optional[dict[str, int]] = None) -> str:
    """The key of a build: `sources` are (file name, text) of every module loaded; `ranks`, those
    of its any-rank inputs."""
    description = {
        "einc": [einc_version(), einc_code_digest()],
        "iree": iree_versions(),
        "target": target.name,
        "flags": list(target.flags),
        "host_cpu": _host_cpu() if target.tuned_to_host else None,
        "outputs": outputs,
        "dims": sorted(dims.items()),
        "ranks": sorted((ranks or {}).items()),
        "allow_python": allow_python,
        "fp_contract": fp_contract,
        "unchecked_indices": unchecked_indices,
        "weights_threshold": weights_threshold,
        "python": list(python_results),
        "sources": sorted((name, _digest(text.encode())) for name, text in sources),
        "data": sorted((path, file_digest(path)) for path in set(data_files)),
    }
    return _digest(json.dumps(description, sort_keys=True).encode())


class CacheWriteError(OSError):
    """The cache folder cannot take a new entry (a full disk, a read-only folder)."""


class ModuleCache:
    """Entries are KEY.vmfb, with KEY.irpa beside it for a module with external weights.
    `stored` records the entries this object wrote, in order (each one a build)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.stored: list[Path] = []

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.vmfb"

    def lookup(self, key: str) -> Optional[Path]:
        """The entry's path if it is there and intact, its weights archive too; a damaged
        entry is removed."""
        path = self.path(key)
        try:
            module = load_module(rt.VmInstance(), path.read_bytes(), str(path))
            digest = dict(module.lookup_function("main").reflection).get(PARAMETERS_KEY)
            if digest is not None:
                check_archive(digest, archive_beside(str(path)), str(path))
        except FileNotFoundError:
            return None
        except (OSError, ModuleFileError):
            _remove(path)
            _remove(Path(archive_beside(str(path))))
            return None
        return path

    def store(self, key: str, vmfb: bytes, archive=None) -> Path:
        """Write an entry, the weights archive (an einc.backend.parameters.Archive) first so that
        a module found is never without it."""
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if archive is not None:
                archive.save(archive_beside(str(path)))
            write_artifact(path, vmfb)
        except OSError as err:
            raise CacheWriteError(f"cannot write to the build cache {self.folder}: {file_problem(err)}") from None
        self.stored.append(path)
        return path


def user_module_cache() -> Optional[ModuleCache]:
    """The cache `einc run FILE.ein` and `einc.compile(..., cache=True)` share, under the user
    cache folder (einc.user_cache); None when it cannot be created."""
    folder = cache_folder("modules")
    return None if folder is None else ModuleCache(folder)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _host_cpu() -> str:
    """What `target-cpu=host` tunes for: the CPU model and its feature flags (Linux), else the
    processor name; a cache shared between machines must not hand one machine another's code."""
    fields = cpuinfo_fields()
    if not fields:
        return f"{platform.machine()} {platform.processor()}"
    return _digest("\n".join(f"{name}: {fields[name]}" for name in IDENTIFYING_FIELDS if name in fields).encode())


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
