"""Showing a program's diagnostics: rendered for people on stderr, or JSON lines on stdout."""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Iterator

import click

from einc.diagnostics import CompileError, SourceMap


def show_diagnostics(err: CompileError, message_format: str) -> None:
    sources = err.sources or SourceMap()
    if message_format == "json":
        for diagnostic in err.diagnostics:
            click.echo(json.dumps(diagnostic.as_json(sources)))
    else:
        click.echo(err.render(sources), err=True)


@contextmanager
def diagnostics_shown(message_format: str) -> Iterator[None]:
    """Run a compile step; a program error is shown in `message_format` and ends the command
    with exit status 1."""
    try:
        yield
    except CompileError as err:
        show_diagnostics(err, message_format)
        raise click.exceptions.Exit(1) from None
