"""Reading input arrays from .npy files with one-line errors."""
from __future__ import annotations

import numpy as np

from einc.runtime.errors import RunError


def read_npy(path: str) -> np.ndarray:
    """Load one array; no pickles, and no guessing at files that are not .npy."""
    try:
        with open(path, "rb") as npy_file:
            return np.lib.format.read_array(npy_file, allow_pickle=False)
    except FileNotFoundError:
        raise RunError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise RunError(f"cannot read {path}: it is a directory") from None
    except (OSError, ValueError, EOFError) as err:
        raise RunError(f"cannot read {path}: not a valid .npy file ({_first_line(err)})") from None


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
