"""What einc and the IREE it builds with are: for `einc --version` and the build cache's key.

Reads installed package metadata and einc's own files only; importing this loads neither the
compiler nor the runtime.
"""
from __future__ import annotations

import functools
import hashlib
from importlib import metadata
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_IREE_PACKAGES = {"IREE compiler": "iree-base-compiler", "IREE runtime": "iree-base-runtime"}


def einc_version() -> str:
    return _installed_version("einc")


def iree_versions() -> dict[str, str]:
    """{"IREE compiler": "3.13.0", "IREE runtime": "3.13.0"} as installed."""
    return {label: _installed_version(package) for label, package in _IREE_PACKAGES.items()}


@functools.lru_cache(maxsize=None)
def einc_code_digest() -> str:
    """SHA-256 over einc's own source files: a checkout between releases keeps its version
    number while its code (and so what it builds) changes."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE_DIR.rglob("*")):
        if path.suffix in (".py", ".lark") and path.is_file():
            digest.update(path.relative_to(_PACKAGE_DIR).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _installed_version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def version_report() -> str:
    """The lines `einc --version` prints: einc, then the IREE builds it runs with."""
    import iree.compiler.version as compiler_build   # ~0.2 s: only --version needs the builds
    import iree.runtime.version as runtime_build
    lines = [f"einc {einc_version()} (code {einc_code_digest()[:12]})"]
    for label, build in (("IREE compiler", compiler_build), ("IREE runtime", runtime_build)):
        commit = build.REVISIONS.get("IREE", "unknown")[:12]
        lines.append(f"{label} {build.VERSION} (commit {commit})")
    return "\n".join(lines)
