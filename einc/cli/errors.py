"""Errors the CLI reports as a single `error: ...` line."""


class CliError(Exception):
    pass
