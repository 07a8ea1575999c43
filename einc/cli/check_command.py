"""`einc check`: every einc analysis of each file, no MLIR and no IREE (fast enough for on-save)."""
from __future__ import annotations

import click

from einc.cli.diagnostics_output import diagnostics_shown
from einc.cli.options import (allow_python_option, dims_option, message_format_option, outputs_option,
                              parse_dims, target_option)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@target_option
@outputs_option
@dims_option
@allow_python_option
@message_format_option
def check(files: tuple[str, ...], target: str, outputs: tuple[str, ...], dims: tuple[str, ...],
          allow_python: bool, message_format: str) -> int:
    """Check the Einlang programs FILES and report their errors as `einc build` would, without
    compiling. A file of the standard library is checked as the module it is (std::...).
    Exit status 0 when every file is fine, 1 otherwise."""
    fixed_dims = parse_dims(dims)
    from einc import driver  # lazy: the front end

    failed = 0
    for file in files:
        try:
            with diagnostics_shown(message_format):
                driver.check_file(file, target, list(outputs) or None, fixed_dims, allow_python)
        except click.exceptions.Exit:
            failed += 1
    return 1 if failed else 0
