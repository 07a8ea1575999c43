"""The `einc` command line: `einc build`, `einc check`, `einc run` and `einc --version`.

Every failure ends as one `error: ...` line on stderr (compile diagnostics as rendered blocks),
exit status 1, or 2 for usage errors. A traceback is never shown unless EINC_TRACEBACK=1.
"""
from __future__ import annotations

import os
import sys
import warnings

import click

from einc.cli.build_command import build
from einc.cli.check_command import check
from einc.cli.errors import CliError
from einc.cli.run_command import run

REPORT_REQUEST = "this is a bug in einc; please report it with the command and files that caused it"


def _print_version(ctx: click.Context, _param, wanted: bool) -> None:
    if not wanted or ctx.resilient_parsing:
        return
    from einc.version import version_report
    click.echo(version_report())
    ctx.exit(0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show einc's version and the IREE compiler and runtime it uses, then exit.")
def einc() -> None:
    """Compile Einlang programs to IREE modules and run them."""


einc.add_command(build)
einc.add_command(check)
einc.add_command(run)


def main(argv: list[str] | None = None) -> None:
    sys.exit(_run_cli(argv))


def _run_cli(argv: list[str] | None) -> int:
    from einc.diagnostics import BuildWarning
    with warnings.catch_warnings():
        python_shows = warnings.showwarning

        def show(message, category, *where, **more) -> None:
            """A BuildWarning as one `warning: ...` line; any other as Python shows it."""
            if issubclass(category, BuildWarning):
                click.echo(f"warning: {message}", err=True)
            else:
                python_shows(message, category, *where, **more)
        warnings.showwarning = show
        return _run_einc(argv)


def _run_einc(argv: list[str] | None) -> int:
    from einc.diagnostics import CompileError, OptionError
    from einc.runtime.errors import RunError

    try:
        result = einc.main(args=argv, prog_name="einc", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except click.exceptions.Exit as done:  # --help and friends
        return done.exit_code
    except click.UsageError as err:
        command = err.ctx.command_path if err.ctx else "einc"
        _error(f"{err.format_message()} (see '{command} --help')")
        return err.exit_code
    except click.ClickException as err:
        _error(err.format_message())
        return err.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt) as err:
        if isinstance(err.__cause__, EOFError):     # click makes any EOFError an Abort: a bug, not Ctrl-C
            return _internal(err.__cause__)
        _error("interrupted")
        return 130
    except CompileError as err:
        click.echo(err.render(err.sources), err=True)
        return 1
    except OptionError as err:
        _error(str(err))
        return 2
    except RunError as err:   # a failed assert has its location: `file:line:col: error[E006]: ..`
        click.echo(str(err) if err.location else f"error: {err}", err=True)
        return 1
    except CliError as err:
        _error(str(err))
        return 1
    except Exception as err:  # noqa: BLE001 - the last line of defence against tracebacks
        return _internal(err)


def _internal(err: Exception) -> int:
    if os.environ.get("EINC_TRACEBACK") == "1":
        raise err
    _internal_error(err)
    return 1


def _error(message: str) -> None:
    click.echo(f"error: {message}", err=True)


MAX_DETAIL_LINES = 12


def _internal_error(err: Exception) -> None:
    lines = str(err).strip().splitlines() or [""]
    click.echo(f"internal error: {type(err).__name__}: {lines[0]}", err=True)
    detail = lines[1:]   # e.g. IREE's diagnostics for MLIR it rejected, which can run long
    for line in detail[:MAX_DETAIL_LINES]:
        click.echo(f"  {line}", err=True)
    if len(detail) > MAX_DETAIL_LINES:
        click.echo(f"  ... {len(detail) - MAX_DETAIL_LINES} more lines (EINC_TRACEBACK=1 shows all)", err=True)
    click.echo(f"  ({REPORT_REQUEST})", err=True)
