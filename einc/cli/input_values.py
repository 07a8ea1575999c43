"""Turning `--input NAME=VALUE` options into input values: a .npy file, or a literal for a scalar."""
from __future__ import annotations

import os

import click

from einc.runtime import InputSpec, RunError, Signature, check_input_names, read_npy

_BOOL_LITERALS = {"true": True, "false": False}


def split_input_options(options: tuple[str, ...]) -> dict[str, str]:
    """`NAME=VALUE` strings -> {NAME: VALUE}; malformed or repeated names are usage errors."""
    texts: dict[str, str] = {}
    for option in options:
        name, sep, value = option.partition("=")
        if not sep or not name or not value:
            raise click.UsageError(f"--input expects NAME=FILE.npy or NAME=NUMBER, got {option!r}")
        if name in texts:
            raise click.UsageError(f"input {name!r} is given more than once")
        texts[name] = value
    return texts


def input_values(signature: Signature, texts: dict[str, str]) -> dict[str, object]:
    """Load each input, after checking the names so that no file is read for a misspelt one."""
    check_input_names(signature, texts)
    values = {}
    for name, text in texts.items():
        spec = signature.input(name)
        values[name] = _scalar_or_file(spec, text) if spec.is_scalar else read_npy(text)
    return values


def _scalar_or_file(spec: InputSpec, text: str):
    literal = _parse_literal(spec.dtype, text)
    if literal is not None:
        return literal
    if os.path.exists(text):
        return read_npy(text)
    raise RunError(f"input {spec.name}: {text!r} is neither a {spec.dtype} literal nor an existing .npy file")


def _parse_literal(dtype: str, text: str):
    if dtype == "bool":
        return _BOOL_LITERALS.get(text.lower())
    try:
        return int(text) if dtype.startswith("int") else float(text)
    except ValueError:
        return None
