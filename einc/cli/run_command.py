"""`einc run`: run a built module with inputs from .npy files or literals."""
from __future__ import annotations

from pathlib import Path

import click

from einc.cli.files import ensure_dir, save_npy
from einc.cli.input_values import input_values, split_input_options
from einc.cli.summary import summarize
from einc.runtime import KNOWN_DEVICES, load


@click.command()
@click.argument("module", type=click.Path(dir_okay=False))
@click.option("--input", "-i", "inputs", multiple=True, metavar="NAME=FILE.npy|NUMBER",
              help="Bind input NAME to an array from a .npy file, or to a number for a scalar input (repeatable).")
@click.option("--device", type=click.Choice(KNOWN_DEVICES),
              help="Runtime device (default: local-task for CPU modules, vulkan for Vulkan modules).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Save each output as DIR/NAME.npy.")
def run(module: str, inputs: tuple[str, ...], device: str | None, out_dir: str | None) -> None:
    """Run MODULE (a .vmfb built by einc build): print what it prints, then summarize its outputs."""
    texts = split_input_options(inputs)
    with load(module, device) as program:
        outputs = program.run(input_values(program.signature, texts))
    for name, value in outputs.items():
        click.echo(summarize(name, value))
    if out_dir is not None:
        ensure_dir(out_dir)
        for name, value in outputs.items():
            save_npy(Path(out_dir) / f"{name}.npy", value)
