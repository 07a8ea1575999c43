"""`einc run FILE.ein`: the module for a source file, built into the cache unless it is there."""
from __future__ import annotations

from pathlib import Path

import click

from einc.build.cache import ModuleCache, cache_key
from einc.cli.diagnostics_output import diagnostics_shown
from einc.cli.errors import CliError
from einc.user_cache import cache_folder, cache_root


def cached_module(source: str, target: str, outputs: list[str] | None, dims: dict[str, int],
                  allow_python: bool, verbose: bool, *, unchecked_indices: bool = False) -> Path:
    """The path of the sealed module for `source`; a hit runs the front end (tens of ms) to
    learn the key, but neither the lowering nor IREE."""
    if not Path(source).is_file():
        raise CliError(f"cannot read {source}: no such file")
    from einc import driver  # lazy: the whole compiler

    with diagnostics_shown("human"):
        program, ir_program = driver.check_program(source, target, outputs, dims, allow_python,
                                                   unchecked_indices=unchecked_indices)
    try:
        key = cache_key(program.sources.items(), ir_program.data_files, target, outputs, dims, allow_python,
                        ir_program.python_results, unchecked_indices)
    except OSError as err:
        raise CliError(f"cannot read {err.filename}: {err.strerror or err}") from None
    cache = _module_cache()
    found = cache.lookup(key)
    if found is not None:
        _log(verbose, f"cache hit for {source}: {found}")
        return found
    _log(verbose, f"cache miss for {source}: building for {target} into {cache.path(key)}")
    with diagnostics_shown("human"):
        built = driver.build_ir(program, ir_program, target)
    try:
        return cache.store(key, built.vmfb, built.parameters)
    except OSError as err:
        raise CliError(f"cannot write to the build cache {cache.folder}: {err.strerror or err}") from None


def _module_cache() -> ModuleCache:
    folder = cache_folder("modules")
    if folder is None:
        raise CliError(f"cannot create the build cache in {cache_root()}; set EINC_CACHE to a writable folder")
    return ModuleCache(folder)


def _log(verbose: bool, message: str) -> None:
    if verbose:
        click.echo(f"einc: {message}", err=True)
