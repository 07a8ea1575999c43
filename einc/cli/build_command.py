"""`einc build`: compile an .ein file to a .vmfb, or show an intermediate form."""
from __future__ import annotations

from pathlib import Path

import click

from einc.build import TARGETS
from einc.cli.files import save_bytes
from einc.cli.errors import CliError

EMIT_CHOICES = ("ast", "ir", "mlir")


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False),
              help="Where to write the .vmfb (default: FILE's name with .vmfb, in the current directory). "
                   "With --emit/--explain: where to write the text (default: stdout).")
@click.option("--target", type=click.Choice(list(TARGETS)), default="llvm-cpu", show_default=True,
              help="llvm-cpu: this CPU (fastest, not portable); llvm-cpu-generic: any CPU of this "
                   "architecture; vulkan-spirv: Vulkan (no f64, 16- or 64-bit integers).")
@click.option("--output", "outputs", multiple=True, metavar="NAME",
              help="Make NAME an output (repeatable; default: every top-level binding).")
@click.option("--emit", type=click.Choice(EMIT_CHOICES), help="Print an intermediate form instead of building.")
@click.option("--explain", is_flag=True, help="Explain how the program will be compiled instead of building.")
@click.option("--allow-python", is_flag=True,
              help="Let the program call Python functions during the build (python::mod::f(..)).")
def build(file: str, out_path: str | None, target: str, outputs: tuple[str, ...],
          emit: str | None, explain: bool, allow_python: bool) -> None:
    """Compile the Einlang program FILE."""
    if emit and explain:
        raise click.UsageError("--emit and --explain cannot be combined")
    if not Path(file).is_file():
        raise CliError(f"cannot read {file}: no such file")
    from einc import driver  # lazy: the whole compiler

    wanted = list(outputs) or None
    what = "explain" if explain else emit
    if what is not None:
        text = driver.emit_program(file, what, wanted, target, allow_python)
        if out_path is None:
            click.echo(text, nl=not text.endswith("\n"))
        else:
            save_bytes(out_path, text.encode())
        return
    vmfb = driver.compile_program(file, target, wanted, allow_python)
    save_bytes(out_path or Path(file).with_suffix(".vmfb").name, vmfb)
