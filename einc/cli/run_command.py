"""`einc run`: run a built module, or a source file built through the cache, on inputs from .npy
and .npz files or literals; optionally time it."""
from __future__ import annotations

from pathlib import Path

import click

from einc.target import TARGETS
from einc.cli.errors import CliError
from einc.cli.files import ensure_dir, save_bytes, save_npy, save_npz
from einc.cli.options import (allow_python_option, dims_option, outputs_option, parse_dims,
                              unchecked_indices_option)
from einc.cli.summary import summarize

DEVICES = tuple(dict.fromkeys(device for target in TARGETS.values() for device in target.devices))
SOURCE_SUFFIX = ".ein"


@click.command()
@click.argument("program", type=click.Path(dir_okay=False))
@click.option("--input", "-i", "inputs", multiple=True, metavar="NAME=FILE.npy|NAME=NUMBER|FILE.npz|FILE.safetensors",
              help="Bind input NAME to an array from a .npy file, or to a number for a scalar input; "
                   "FILE.npz or FILE.safetensors binds every array in it by name (repeatable; NAME= wins "
                   "over an archive).")
@click.option("--device", type=click.Choice(DEVICES),
              help="Runtime device (default: local-task for CPU modules, vulkan for Vulkan modules).")
@click.option("--out", "out_path", type=click.Path(),
              help="Save the outputs: DIR/NAME.npy each, or all in one FILE.npz or FILE.safetensors.")
@click.option("--target", type=click.Choice(list(TARGETS)),
              help="For a .ein PROGRAM: the target to build for (default: vulkan-spirv with "
                   "--device vulkan, else llvm-cpu).")
@outputs_option
@dims_option
@allow_python_option
@unchecked_indices_option
@click.option("--generic", is_flag=True,
              help="For a .ein PROGRAM: build it with its named dims as run-time sizes (the module "
                   "einc build makes) instead of for the sizes of the inputs given.")
@click.option("--repeat", type=click.IntRange(min=1), metavar="N",
              help="After one warm-up call, time N calls of main and print the min and median per call.")
@click.option("-v", "--verbose", is_flag=True, help="Say whether a .ein PROGRAM was found in the build cache.")
def run(program: str, inputs: tuple[str, ...], device: str | None, out_path: str | None, target: str | None,
        outputs: tuple[str, ...], dims: tuple[str, ...], allow_python: bool, unchecked_indices: bool,
        generic: bool, repeat: int | None, verbose: bool) -> None:
    """Run PROGRAM: a .vmfb built by einc build, or a .ein source, built into the user cache
    first (EINC_CACHE moves it) unless an unchanged build is there. A .ein source is built for
    the sizes of the inputs given, as jax.jit does: its named dims are fixed to them (one module
    per distinct set of sizes, each built once), unless --generic. Prints what the program
    prints, then one line per output."""
    from einc.cli.input_values import split_input_options  # lazy: the runtime
    from einc.runtime import load

    options = split_input_options(inputs)
    values: dict = {}
    module = _module(program, target, device, outputs, dims, allow_python, unchecked_indices, generic, verbose,
                     options, values)
    with load(module, device) as loaded:
        values = values or _input_values(loaded.signature, options)
        if repeat is None:
            results, timing = loaded.run(values), None
        else:
            results, timing = loaded.benchmark(values, repeat)
    for name, value in results.items():
        click.echo(summarize(name, value))
    if timing is not None:
        click.echo(_timing_line(timing))
    if out_path is not None:
        _save_outputs(out_path, results)


def _module(program: str, target: str | None, device: str | None, outputs: tuple[str, ...],
            dims: tuple[str, ...], allow_python: bool, unchecked_indices: bool, generic: bool, verbose: bool,
            options, values: dict) -> str:
    """The .vmfb to run: PROGRAM itself, or the cached build of a .ein PROGRAM, for which the
    input `options` are read into `values` first (their sizes, and the ranks of any-rank inputs,
    choose the build)."""
    if Path(program).suffix != SOURCE_SUFFIX:
        if target or outputs or dims or allow_python or unchecked_indices or generic:
            raise click.UsageError("--target, --output, --dim, --allow-python, --unchecked-indices and "
                                   "--generic apply when PROGRAM is a .ein source; a built module has its "
                                   "target, outputs and sizes already")
        return program
    from einc.cli.run_source import cached_module

    def sizes_of(signature) -> dict[str, int]:
        from einc.specialize import size_signature
        values.update(_input_values(signature, options))
        return {} if generic else size_signature(signature, {name: _shape(v) for name, v in values.items()})
    def ranks_of(names: list[str]) -> dict[str, int]:
        from einc.cli.input_values import input_ranks
        return input_ranks(names, options)
    fixed_dims = parse_dims(dims)
    return str(cached_module(program, target or _default_target(device), list(outputs) or None, fixed_dims,
                             allow_python, verbose, sizes_of, ranks_of, unchecked_indices=unchecked_indices))


def _input_values(signature, options) -> dict:
    from einc.cli.input_values import input_values
    return input_values(signature, options)


def _shape(value) -> tuple[int, ...]:
    return getattr(value, "shape", ())


def _default_target(device: str | None) -> str:
    return next(name for name, t in TARGETS.items() if device is None or device in t.devices)


def _timing_line(timing) -> str:
    return (f"timing: {timing.calls} calls of main after 1 warm-up: min {_duration(timing.min_s)}, "
            f"median {_duration(timing.median_s)} per call (call to completion, inputs already on "
            "the device: upload and download excluded)")


def _duration(seconds: float) -> str:
    return f"{seconds * 1e3:.4g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.4g} us"


def _save_outputs(out_path: str, results: dict) -> None:
    from einc.runtime.safetensors import safetensors_bytes
    if out_path.endswith(".npz"):
        save_npz(out_path, results)
        return
    if out_path.endswith(".safetensors"):
        save_bytes(out_path, safetensors_bytes(results))
        return
    if Path(out_path).is_file():
        raise CliError(f"--out {out_path} is a file; give a folder, or a name ending in .npz or .safetensors")
    ensure_dir(out_path)
    for name, value in results.items():
        save_npy(Path(out_path) / f"{name}.npy", value)
