"""Where einc keeps what it can rebuild: built modules for `einc run FILE.ein`, the parser's tables.

`EINC_CACHE` names the folder; otherwise the platform's user cache folder (XDG_CACHE_HOME or
~/.cache on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows), under `einc`.
Deleting it at any time is safe.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional


def cache_root() -> Path:
    override = os.environ.get("EINC_CACHE")
    if override:
        return Path(override)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "einc"
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "einc" / "Cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "einc"


def cache_folder(name: str) -> Optional[Path]:
    """`<cache root>/<name>`, created; None when it cannot be (a read-only home, say)."""
    folder = cache_root() / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder
