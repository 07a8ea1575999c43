"""`einc run FILE.ein`: the module for a source file, built for the sizes of its inputs into the
cache unless it is there."""
from __future__ import annotations

from pathlib import Path

import click

from einc.backend.cache import CacheWriteError, user_module_cache
from einc.cli.diagnostics_output import diagnostics_shown
from einc.cli.errors import CliError
from einc.diagnostics import file_problem
from einc.user_cache import cache_root


def cached_module(source: str, target: str, outputs: list[str] | None, dims: dict[str, int],
                  allow_python: bool, verbose: bool, sizes_of, ranks_of, *,
                  unchecked_indices: bool = False) -> Path:
    """The path of the sealed module for `source` in the build cache the Python API shares
    (einc.jit, einc.compile(..., cache=True)), specialized to the named dims' sizes
    `sizes_of(signature)` gives (einc.driver.specialized_build; {} for run-time sizes) and to
    the ranks of the any-rank inputs `ranks_of(names)` gives."""
    if not Path(source).is_file():
        raise CliError(f"cannot read {source}: no such file")
    from einc import driver  # lazy: the whole compiler

    cache = user_module_cache()
    if cache is None:
        raise CliError(f"cannot create the build cache in {cache_root()}; set EINC_CACHE to a writable folder")
    try:
        with diagnostics_shown("human"):
            return driver.specialized_build(source, target, outputs, dims, allow_python, cache, sizes_of,
                                            _logger(verbose), ranks_of=ranks_of,
                                            unchecked_indices=unchecked_indices)
    except CacheWriteError as err:
        raise CliError(str(err)) from None
    except OSError as err:
        raise CliError(f"cannot read {err.filename}: {file_problem(err)}") from None


def _logger(verbose: bool):
    def log(message: str) -> None:
        if verbose:
            click.echo(f"einc: {message}", err=True)
    return log
