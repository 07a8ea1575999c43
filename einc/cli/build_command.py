"""`einc build`: compile an .ein file to a .vmfb, or show an intermediate form."""
from __future__ import annotations

from pathlib import Path

import click

from einc.cli.diagnostics_output import diagnostics_shown
from einc.cli.errors import CliError
from einc.cli.files import save_archive, save_bytes
from einc.driver import DEFAULT_THRESHOLD
from einc.module_file import archive_beside
from einc.cli.options import (allow_python_option, dims_option, message_format_option, outputs_option,
                              parse_dims, target_option, unchecked_indices_option)

EMIT_CHOICES = ("ast", "ir", "mlir", "iree-flags")
WEIGHTS_WORDS = {"all": 0, "none": None}


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False),
              help="Where to write the .vmfb (default: FILE's name with .vmfb, in the current directory). "
                   "With --emit/--explain: where to write the text (default: stdout).")
@target_option
@outputs_option
@dims_option
@click.option("--fp-contract", type=click.Choice(["off", "on"]), default="off", show_default=True,
              help="on: llvm-cpu may fuse `a * b + c` into one FMA (faster, one rounding instead "
                   "of IEEE's two); off: every float operation is rounded, as NumPy does.")
@click.option("--external-weights", "external_weights", default=str(DEFAULT_THRESHOLD), show_default=True,
              metavar="BYTES|all|none",
              help="Constant arrays (load_npy) of at least BYTES go to a parameter archive FILE.irpa "
                   "written beside the .vmfb, which loads it when run; all: every constant array; "
                   "none: everything inside the .vmfb.")
@click.option("--emit", type=click.Choice(EMIT_CHOICES), help="Print an intermediate form instead of building; iree-flags: the iree-compile "
                   "command einc's build amounts to, for --emit mlir saved as STEM.mlir.")
@click.option("--explain", is_flag=True, help="Explain how the program will be compiled instead of building.")
@allow_python_option
@unchecked_indices_option
@message_format_option
def build(file: str, out_path: str | None, target: str, outputs: tuple[str, ...], dims: tuple[str, ...],
          fp_contract: str, external_weights: str, emit: str | None, explain: bool, allow_python: bool,
          unchecked_indices: bool,
          message_format: str) -> None:
    """Compile the Einlang program FILE. Its named dims stay run-time sizes, so the module takes
    every size, unless --dim fixes them (--explain says what run-time sizes cost; einc run and
    einc.jit build for the sizes of their inputs instead)."""
    if emit and explain:
        raise click.UsageError("--emit and --explain cannot be combined")
    fixed_dims = parse_dims(dims)
    threshold = _weights_threshold(external_weights)
    if not Path(file).is_file():
        raise CliError(f"cannot read {file}: no such file")
    from einc import driver  # lazy: the whole compiler

    wanted = list(outputs) or None
    what = "explain" if explain else emit
    with diagnostics_shown(message_format):
        if what is not None:
            text = driver.emit_program(file, what, wanted, target, fixed_dims, allow_python,
                                       fp_contract=fp_contract == "on", unchecked_indices=unchecked_indices)
        else:
            built = driver.build_program(file, target, wanted, fixed_dims, allow_python,
                                         fp_contract=fp_contract == "on", weights_threshold=threshold,
                                         unchecked_indices=unchecked_indices)
    if what is None:
        module_path = out_path or Path(file).with_suffix(".vmfb").name
        if built.archive is not None:
            save_archive(built.archive, archive_beside(str(module_path)))
        save_bytes(module_path, built.vmfb)
    elif out_path is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        save_bytes(out_path, text.encode())


def _weights_threshold(text: str) -> int | None:
    """--external-weights as a size threshold in bytes: 0 for all, None for none."""
    if text in WEIGHTS_WORDS:
        return WEIGHTS_WORDS[text]
    if not (text.isascii() and text.isdigit()):
        raise click.UsageError(f"--external-weights expects a number of bytes, all or none, got {text!r}")
    return int(text)
