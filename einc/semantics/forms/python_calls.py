"""Python functions called during the build: `python::mod::f(args)` (LANGUAGE.md, thesis 3.5).

`python::math` is std::math and `python::numpy::load` is `load_npy` (name resolution maps them).
Any other Python object runs only when the build allows it (`einc build --allow-python`,
`einc.compile(..., allow_python=True)`): it is imported (a module beside the program first, read
afresh on every build), called with its arguments converted to Python values, with the program's
folder as the working directory, and its result is embedded in the module as a constant, like
`load_npy`'s. Every argument must be known at build time. What goes wrong (no flag, an import
that fails, an exception in the function, a result that is not a number, an array or a string)
is a diagnostic at the call.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import math
import os
import sys
from pathlib import Path

import numpy as np

from einc import diagnostics as d
from einc.semantics.core.folding import constant, depends_on, differentiated, known
from einc.semantics.core.values import ListVal, StrVal, TupleVal, Weak, describe

ALLOW_HINT = "calling Python is opt-in: build with `einc build --allow-python` (Python: " \
             "`einc.compile(..., allow_python=True)`)"


def python_value(name: str, span):
    """The value of `python::math::pi` and the other constants of Python's math module."""
    module, _, attr = name.partition(".")
    value = getattr(math, attr, None) if module == "math" else None
    if not isinstance(value, float):
        raise d.error(d.TYPE, f"`python::{name.replace('.', '::')}` is a function; call it", span)
    return Weak(np.asarray(value), "float", span)


def call(name: str, args: list, span, allowed: bool, folder: str):
    """`name(*args)` in Python, its result as a build-time value."""
    shown = f"python::{name.replace('.', '::')}"
    if not allowed:
        raise d.error(d.UNSUPPORTED, f"`{shown}` would run Python code during the build", span,
                      hint=ALLOW_HINT)
    if "." not in name:
        raise d.error(d.TYPE, f"`{shown}` is a module; call one of its functions", span)
    values = [_to_python(a, shown, span) for a in args]
    fn = _find(name, shown, folder, span)
    with _working_directory(folder):
        try:
            result = fn(*values)
        except (Exception, SystemExit) as exc:   # noqa: BLE001 - the user's code, any failure
            raise d.error(d.VALUE, f"the Python function `{shown}` raised {type(exc).__name__}: {exc}",
                          span) from None
    return _from_python(result, shown, span)


def digest(name: str, value) -> str:
    """A fingerprint of what a call returned, so that a build cache keyed on it sees a change
    in a Python result even when no file it knows of changed."""
    h = hashlib.sha256(name.encode())
    stack = [value]
    while stack:
        v = stack.pop()
        h.update(type(v).__name__.encode())
        if isinstance(v, StrVal):
            h.update(v.text.encode())
        elif isinstance(v, TupleVal):
            stack.extend(v.items)
        else:
            array = v.value if isinstance(v, Weak) else v.array
            h.update(f"{array.dtype}{array.shape}".encode() + np.ascontiguousarray(array).tobytes())
    return h.hexdigest()


def _to_python(v, shown: str, span):
    if isinstance(v, StrVal):
        return v.text
    if isinstance(v, (TupleVal, ListVal)):
        items = [_to_python(x, shown, span) for x in v.items]
        return tuple(items) if isinstance(v, TupleVal) else items
    if differentiated(v):
        raise d.error(d.UNSUPPORTED, f"`{shown}` runs during the build, so its result has no "
                      f"derivative, but its argument {describe(v)} is differentiated by some `@`", span,
                      hint="write the function in Einlang, or differentiate with respect to "
                      "something the Python call does not use")
    array = known(v)
    if array is None:
        raise d.error(d.UNSUPPORTED, f"`{shown}` runs during the build, but its argument "
                      f"{describe(v)} depends on {depends_on(v)}", span,
                      hint="Python runs only during the build: call it beforehand on the data and pass "
                      "its result as a run-time input (`let y: [f32; N];`, `einc run --input y=y.npy`)")
    return array.item() if array.ndim == 0 else np.array(array)


def _from_python(result, shown: str, span):
    if isinstance(result, str):
        return StrVal(result, span)
    if isinstance(result, tuple):
        return TupleVal(tuple(_from_python(x, shown, span) for x in result), span)
    if isinstance(result, (bool, int, float, np.generic, list)):
        array = np.asarray(result)
        kind = {"b": "bool", "i": "int", "u": "int", "f": "float"}.get(array.dtype.kind)
        if kind is not None and (kind != "int" or np.all(np.abs(array) < 2 ** 63)):
            # numbers and lists of them are untyped, like literals
            return Weak(array.astype({"bool": bool, "int": np.int64, "float": np.float64}[kind]), kind, span)
    if isinstance(result, np.ndarray):
        return constant(result, f"the result of `{shown}`", span)
    raise d.error(d.TYPE, f"`{shown}` returned {type(result).__name__}; a Python function called "
                  "during the build must return a number, a NumPy array or a string", span)


def _find(name: str, shown: str, folder: str, span):
    """The object `name` (a dotted path): the longest prefix that imports, then attributes."""
    parts = name.split(".")
    module, failure = None, None
    for k in range(len(parts) - 1, 0, -1):
        try:
            module = _import(".".join(parts[:k]), folder)
        except ModuleNotFoundError as exc:
            failure = failure or exc
            continue
        except (Exception, SystemExit) as exc:   # noqa: BLE001 - errors in the module's own code
            raise d.error(d.IMPORT, f"importing Python module `{'.'.join(parts[:k])}` raised "
                          f"{type(exc).__name__}: {exc}", span) from None
        obj = module
        for attr in parts[k:]:
            if not hasattr(obj, attr):
                raise d.error(d.UNDEFINED, f"Python module `{'.'.join(parts[:k])}` has no `{'.'.join(parts[k:])}`",
                              span)
            obj = getattr(obj, attr)
        if not callable(obj):
            raise d.error(d.TYPE, f"`{shown}` is not a function", span)
        return obj
    raise d.error(d.IMPORT, f"cannot import Python module `{parts[0]}`: {failure}", span,
                  hint=f"put {parts[0]}.py beside the program, or install the package")


def _import(module: str, folder: str):
    """A module beside the program is read afresh, so a changed file is seen by the next build."""
    top = module.split(".")[0]
    local = Path(folder) / top
    cached = sys.modules.get(top)
    if cached is not None and _inside(getattr(cached, "__file__", None), folder):
        for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
            del sys.modules[key]
    if local.with_suffix(".py").is_file() or (local / "__init__.py").is_file():
        importlib.invalidate_caches()
        with _on_path(folder):
            return importlib.import_module(module)
    return importlib.import_module(module)


def _inside(file, folder: str) -> bool:
    return file is not None and Path(file).resolve().is_relative_to(Path(folder).resolve())


@contextlib.contextmanager
def _on_path(folder: str):
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path.remove(folder)


@contextlib.contextmanager
def _working_directory(folder: str):
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)
