"""The `einc.signature` contract: what `main` takes, returns and prints.

The lowering stores it as JSON in `main`'s iree.reflection, beside the target and, where
known, the weights archive's digest and the build CPU's extensions (einc.module_file keys).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from einc.module_file import (CPU_FEATURES_KEY, INPUT_ALIGNMENT_KEY, IREE_INPUT_ALIGNMENT, PARAMETERS_KEY,
                              READ_ONCE_KEY, SIGNATURE_KEY, SIGNATURE_VERSION, TARGET_KEY)
from einc.runtime.errors import RunError

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool")

Dim = int | str | None  # fixed size, named dim, or `?`


@dataclass(frozen=True)
class InputSpec:
    name: str
    dtype: str
    dims: list[Dim] | None  # None: any rank (`[f32; *]`); [] for a scalar

    @property
    def is_scalar(self) -> bool:
        return self.dims == []

    def describe(self) -> str:
        if self.is_scalar:
            return f"{self.dtype} scalar"
        if self.dims is None:
            return f"{self.dtype}[*]"
        return f"{self.dtype}[{', '.join('?' if d is None else str(d) for d in self.dims)}]"


@dataclass(frozen=True)
class OutputSpec:
    name: str
    dtype: str


@dataclass(frozen=True)
class Signature:
    inputs: list[InputSpec]
    outputs: list[OutputSpec]
    prints: dict[int, list[dict]]
    source: str
    target: str | None  # the target's name; None when the .vmfb was not lowered by einc
    asserts: dict[str, int] = field(default_factory=dict)   # message -> prints before it
    assert_values: dict[str, int] = field(default_factory=dict)   # message -> the print of its values
    fixed_dims: dict[str, int] = field(default_factory=dict)   # named dims fixed at build time
    sizes: dict[str, tuple[str, int]] = field(default_factory=dict)  # run-time dim -> (input, axis)
    size_checks: list[dict] = field(default_factory=list)     # read by einc.runtime.sizes
    index_checks: list[dict] = field(default_factory=list)    # read by einc.runtime.index_checks
    parameters: str | None = None   # the digest of its weights archive; None: it needs none
    cpu_features: tuple[str, ...] | None = None   # what llvm-cpu code needs; None: any CPU
    # bytes an input must start on to be lent to the kernels in place; IREE's default where the
    # module does not say (built by an earlier einc)
    input_alignment: int = IREE_INPUT_ALIGNMENT
    # inputs every kernel reads once (lent off a cache line: einc.runtime.host_memory); none where
    # the module does not say
    read_once: frozenset[str] = frozenset()

    def input(self, name: str) -> InputSpec | None:
        return next((spec for spec in self.inputs if spec.name == name), None)


def signature_from_reflection(reflection: dict[str, str], module_name: str) -> Signature:
    """Parse `main`'s reflection dictionary; a module without a valid signature is not an einc module."""
    text = reflection.get(SIGNATURE_KEY)
    if text is None:
        raise RunError(f"{module_name} is not an einc module (its main function has no einc.signature)")
    try:
        doc = json.loads(text)
        if doc.get("version") != SIGNATURE_VERSION:
            raise RunError(f"{module_name} has signature version {doc.get('version')!r}; "
                           f"this runner reads version {SIGNATURE_VERSION}: rebuild it with this einc")
        return Signature(
            inputs=[_input_spec(entry) for entry in doc["inputs"]],
            outputs=[OutputSpec(entry["name"], _dtype(entry["dtype"])) for entry in doc["outputs"]],
            prints={int(key): parts for key, parts in doc.get("prints", {}).items()},
            source=doc.get("source", ""),
            target=reflection.get(TARGET_KEY),
            asserts={str(k): int(v) for k, v in doc.get("asserts", {}).items()},
            assert_values={str(k): int(v) for k, v in doc.get("assert_values", {}).items()},
            fixed_dims={str(name): int(size) for name, size in doc.get("fixed_dims", {}).items()},
            sizes={str(name): (str(at["input"]), int(at["axis"])) for name, at in doc.get("sizes", {}).items()},
            size_checks=list(doc.get("size_checks", [])),
            index_checks=list(doc.get("index_checks", [])),
            parameters=reflection.get(PARAMETERS_KEY),
            cpu_features=_cpu_features(reflection.get(CPU_FEATURES_KEY)),
            input_alignment=int(reflection.get(INPUT_ALIGNMENT_KEY, IREE_INPUT_ALIGNMENT)),
            read_once=frozenset(reflection.get(READ_ONCE_KEY, "").split()),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise RunError(f"{module_name} has a malformed einc.signature ({err})") from None


def _cpu_features(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(text.split())


def _input_spec(entry: dict) -> InputSpec:
    dims = entry["dims"]
    if dims == "*":
        return InputSpec(entry["name"], _dtype(entry["dtype"]), None)
    if not isinstance(dims, list) or not all(d is None or isinstance(d, (int, str)) for d in dims):
        raise ValueError(f"bad dims {dims!r} for input {entry['name']}")
    return InputSpec(entry["name"], _dtype(entry["dtype"]), list(dims))


def _dtype(name: str) -> str:
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {name!r}")
    return name
