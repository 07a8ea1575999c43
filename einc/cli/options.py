"""Options several commands share: --target, --output, --dim, --allow-python, --unchecked-indices
and --message-format."""
from __future__ import annotations

import click

from einc.target import DEFAULT, TARGETS

MESSAGE_FORMATS = ("human", "json")

target_option = click.option(
    "--target", type=click.Choice(list(TARGETS)), default=DEFAULT.name, show_default=True,
    help="; ".join(f"{t.name}: {t.note}" for t in TARGETS.values()) + ".")
outputs_option = click.option(
    "--output", "outputs", multiple=True, metavar="NAME",
    help="Make NAME an output (repeatable; default: every top-level binding).")
dims_option = click.option(
    "--dim", "dims", multiple=True, metavar="NAME=SIZE",
    help="Fix the named dim NAME to SIZE at build time: static shapes for IREE, and the module "
         "accepts no other size (repeatable).")
allow_python_option = click.option(
    "--allow-python", is_flag=True,
    help="Let the program call Python functions during the build (python::mod::f(..)).")
unchecked_indices_option = click.option(
    "--unchecked-indices", is_flag=True,
    help="Do not check data-dependent indices (`table[idx[i]]`) or integer divisors at run time: an "
         "index outside its axis is clamped into it and an integer division by zero is 0 (faster, but a "
         "wrong index or divisor gives a wrong value, not an error).")
message_format_option = click.option(
    "--message-format", type=click.Choice(MESSAGE_FORMATS), default="human", show_default=True,
    help="json: each diagnostic as one JSON object per line on stdout (schema in docs/CLI.md).")


def parse_dims(options: tuple[str, ...]) -> dict[str, int]:
    """`NAME=SIZE` strings -> {NAME: SIZE}; malformed or repeated ones are usage errors."""
    dims: dict[str, int] = {}
    for option in options:
        name, sep, size = option.partition("=")
        if not sep or not name.isidentifier() or not (size.isascii() and size.isdigit()):
            raise click.UsageError(f"--dim expects NAME=SIZE with SIZE a whole number, got {option!r}")
        if name in dims:
            raise click.UsageError(f"dim {name!r} is given more than once")
        dims[name] = int(size)
    return dims
