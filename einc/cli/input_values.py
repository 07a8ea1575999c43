"""Turning `--input` options into input values: `NAME=FILE.npy`, `NAME=NUMBER` for a scalar, or
`FILE.npz` / `FILE.safetensors`, which bind every array in them by name (an explicit `NAME=`
wins over an archive)."""
from __future__ import annotations

import os
from typing import NamedTuple

import click

from einc.runtime import (InputSpec, RunError, Signature, check_input_names, check_known_names, not_an_input,
                          read_npy, read_npz)
from einc.runtime.npy import npy_rank
from einc.runtime.safetensors import read_safetensors

_BOOL_LITERALS = {"true": True, "false": False}
ARCHIVE_READERS = {".npz": read_npz, ".safetensors": read_safetensors}


class InputOptions(NamedTuple):
    texts: dict[str, str]       # NAME -> FILE.npy or a literal
    archives: list[str]         # .npz and .safetensors files


def split_input_options(options: tuple[str, ...]) -> InputOptions:
    """Sort `--input` options; malformed or repeated names are usage errors."""
    texts: dict[str, str] = {}
    archives: list[str] = []
    for option in options:
        name, sep, value = option.partition("=")
        if not sep and option.endswith(tuple(ARCHIVE_READERS)):
            archives.append(option)
            continue
        if not sep or not name or not value:
            raise click.UsageError(f"--input expects NAME=FILE.npy, NAME=NUMBER, FILE.npz or FILE.safetensors, "
                                   f"got {option!r}")
        if name in texts:
            raise click.UsageError(f"input {name!r} is given more than once")
        texts[name] = value
    return InputOptions(texts, archives)


def input_values(signature: Signature, options: InputOptions) -> dict[str, object]:
    """Load each input, after checking the names so that no .npy file is read for a misspelt one."""
    values = _archive_arrays(signature, options.archives)
    check_known_names(signature, options.texts)
    given = list(options.texts) + [name for name in values if name not in options.texts]
    if options.archives:
        _check_nothing_missing(signature, given, options.archives)
    check_input_names(signature, given)
    for name, text in options.texts.items():
        spec = signature.input(name)
        values[name] = _scalar_or_file(spec, text) if spec.is_scalar else read_npy(text)
    return values


def input_ranks(names: list[str], options: InputOptions) -> dict[str, int]:
    """The rank of the array given for each of the any-rank inputs `names` (a .npy file's from its
    header; a literal's is 0), before the program's signature is known; a name not given is left
    out (its input stays of unknown rank)."""
    ranks = {name: npy_rank(text) if os.path.exists(text) else 0
             for name, text in options.texts.items() if name in names}
    in_archives = [name for name in names if name not in ranks]
    for path in options.archives if in_archives else []:
        arrays = _read_archive(path)
        ranks.update({name: arrays[name].ndim for name in in_archives if name in arrays})
    return ranks


def _archive_arrays(signature: Signature, archives: list[str]) -> dict[str, object]:
    """The arrays of every archive by name; each must be an input, and in one archive only."""
    found: dict[str, object] = {}
    origin: dict[str, str] = {}
    for path in archives:
        for name, array in _read_archive(path).items():
            if signature.input(name) is None:
                declared = [spec.name for spec in signature.inputs]
                raise RunError(f"{path} has an array {name!r} that is not an input{not_an_input(name, declared)}")
            if name in found:
                raise RunError(f"array {name!r} is in both {origin[name]} and {path}")
            found[name], origin[name] = array, path
    return found


def _read_archive(path: str) -> dict[str, object]:
    return next(read for suffix, read in ARCHIVE_READERS.items() if path.endswith(suffix))(path)


def _check_nothing_missing(signature: Signature, given: list[str], archives: list[str]) -> None:
    for spec in signature.inputs:
        if spec.name not in given:
            raise RunError(f"missing input {spec.name!r} ({spec.describe()}): no array {spec.name!r} in "
                           f"{' or '.join(archives)} and no --input {spec.name}=...")


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
