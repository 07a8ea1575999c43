"""The catalog of examples checked against goldens: which program, which inputs and outputs,
how closely it must match, and whether it also runs in the Vulkan subset.

An example's reference (references.py) is an independent NumPy computation returning the
program's outputs and the exact text its prints produce; `make golden` (tools/golden.py)
saves both beside the example as `<stem>.golden.npz` and `<stem>.golden.txt`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = ROOT / "examples"

# Examples whose test lives elsewhere: the MNIST CNN reads ../shared/data/mnist in place
# (tests/e2e/test_examples.py), so its inputs cannot sit beside it.
# trained on real data against NumPy training loops in tests/e2e/test_training.py and test_digits.py
# the transformers' weights (tens of MB) are made at test time (tests/examples/test_transformers.py)
TESTED_ELSEWHERE = {"mnist/cnn.ein", "train/train_linreg.ein", "train/train_mlp.ein",
                    "digits/train_digits.ein", "transformer/deit_tiny.ein", "transformer/whisper_encoder.ein"}


@dataclass
class Reference:
    """What a program computes: its outputs by name and what its prints write, line by line."""
    outputs: dict[str, np.ndarray]
    printed: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(line + "\n" for line in self.printed)


@dataclass
class Example:
    path: str                           # relative to examples/
    reference: Callable[[dict], Reference]
    inputs: dict[str, str]              # input name -> .npy file beside the example
    outputs: tuple[str, ...] | None     # `einc build --output` selection (None: every binding)
    rtol: float
    atol: float
    vulkan: bool                        # in the Vulkan subset (f32/i32 only, short loops)
    saves: dict[str, str]               # file `save_npy` writes -> the output it must equal

    @property
    def source(self) -> Path:
        return EXAMPLES_DIR / self.path

    @property
    def golden_outputs(self) -> Path:
        return self.source.with_suffix(".golden.npz")

    @property
    def golden_text(self) -> Path:
        return self.source.with_suffix(".golden.txt")

    def input_arrays(self) -> dict[str, np.ndarray]:
        return {name: np.load(self.source.parent / file) for name, file in self.inputs.items()}

    def compute(self) -> Reference:
        return self.reference(self.input_arrays())


EXAMPLES: dict[str, Example] = {}
# Data files the examples read, relative to examples/, each made by a seeded generator.
INPUT_FILES: dict[str, Callable[[], np.ndarray]] = {}


def example(path: str, *, inputs: dict[str, str] | None = None, outputs: tuple[str, ...] | None = None,
            rtol: float = 1e-6, atol: float = 0.0, vulkan: bool = False, saves: dict[str, str] | None = None):
    """Register the decorated NumPy function as the reference of examples/`path`."""
    def register(fn):
        EXAMPLES[path] = Example(path, fn, inputs or {}, outputs, rtol, atol, vulkan, saves or {})
        return fn
    return register


def input_file(path: str):
    """Register the decorated function as the generator of the data file examples/`path`."""
    def register(fn):
        INPUT_FILES[path] = fn
        return fn
    return register


def fmt(value, spec: str = "") -> str:
    """A value as `print` shows it: scalars like NumPy scalars (or with the format spec),
    arrays like str(array), a spec applied to every element, bools as `true` and `false`."""
    value = np.asarray(value)
    if value.dtype == np.bool_:
        words = np.where(value, "true", "false")
        return str(words[()]) if value.ndim == 0 else np.array2string(words, separator=" ", formatter={"all": str})
    if value.ndim == 0:
        return format(value.item(), spec) if spec else str(value[()])
    if not spec:
        return str(value)
    return np.array2string(value, separator=" ", formatter={"all": lambda x: format(x.item(), spec)})


def load_golden_outputs(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {name: data[name] for name in data.files}


def identical(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Same names, dtypes, shapes and bits (NaN equal to NaN)."""
    return sorted(a) == sorted(b) and all(
        np.asarray(a[k]).dtype == np.asarray(b[k]).dtype and np.array_equal(a[k], b[k], equal_nan=True)
        for k in a)
