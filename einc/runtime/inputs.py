"""Checking run-time inputs against the signature before anything reaches IREE.

IREE's own checks report `input0 element type mismatch` deep inside a traceback, and it does not
check dynamic dims at all, so every rule of the contract is enforced here with a one-line message.
"""
from __future__ import annotations

import difflib
import numbers
from typing import Any, Iterable, Mapping

import numpy as np
import iree.runtime as rt

from einc.runtime.errors import RunError
from einc.runtime.signature import InputSpec, Signature
from einc.runtime.sizes import check_sizes


def bind_inputs(signature: Signature, values: Mapping[str, Any]) -> list:
    """Return `main`'s arguments in declaration order, or raise RunError for the first problem."""
    check_input_names(signature, values)
    args = []
    named_dims: dict[str, tuple[int, str]] = {}  # dim name -> (size, input that fixed it)
    for spec in signature.inputs:
        value = values[spec.name]
        if spec.is_scalar:
            args.append(scalar_argument(spec, value))
        else:
            array = _checked_array(spec, as_array(spec, value), signature.fixed_dims)
            _note_named_dims(spec, array.shape, named_dims)
            args.append(array if isinstance(array, rt.DeviceArray) else signless(array))
    check_sizes(signature, {spec.name: getattr(arg, "shape", ()) for spec, arg in zip(signature.inputs, args)})
    return args


class CheckedInputs:
    """bind_inputs for repeated calls: every check of bind_inputs depends on the names given and
    each array's dtype and shape only, so a call whose arrays match those of a call already
    checked (each a C-contiguous NumPy array of its input's dtype) skips them. At n = 256 a
    matmul's checks took ~10 of the ~50 us einc spends around IREE's call (docs/DECISIONS.md,
    "Where a matmul's time goes on two cores"). At most KEPT size signatures are remembered."""

    KEPT = 64

    def __init__(self, signature: Signature):
        self._signature = signature
        # scalars (None) are checked at every call: their checks depend on their values
        self._dtypes = {spec.name: None if spec.is_scalar else np.dtype(spec.dtype) for spec in signature.inputs}
        self._checked: set[tuple] = set()

    def bind(self, values: Mapping[str, Any]) -> list:
        key = self._key(values)
        if key is not None and key in self._checked:
            return [signless(values[spec.name]) for spec in self._signature.inputs]
        args = bind_inputs(self._signature, values)
        if key is not None and len(self._checked) < self.KEPT:
            self._checked.add(key)
        return args

    def _key(self, values: Mapping[str, Any]) -> tuple | None:
        """The names and shapes of `values`, or None unless each is a C-contiguous NumPy array of
        its declared input's dtype (bind_inputs then passes each on as it is)."""
        shapes = []
        for name, value in values.items():
            if type(value) is not np.ndarray or value.dtype != self._dtypes.get(name) or not value.flags.c_contiguous:
                return None
            shapes.append((name, value.shape))
        return tuple(shapes)


def check_input_names(signature: Signature, names: Iterable[str]) -> None:
    """Every given name is declared and every declared input is given."""
    names = list(names)
    check_known_names(signature, names)
    for spec in signature.inputs:
        if spec.name not in names:
            raise RunError(f"missing input {spec.name!r} ({spec.describe()})")


def check_known_names(signature: Signature, names: Iterable[str]) -> None:
    """Every given name is declared."""
    declared = [spec.name for spec in signature.inputs]
    for name in names:
        if name not in declared:
            raise RunError(f"unknown input {name!r}{not_an_input(name, declared)}")


def not_an_input(name: str, declared: list[str]) -> str:
    """The end of a message about a name that is no input: the closest input (case aside: `X`
    for `x` is a likely slip), and all of them."""
    by_lower = {n.lower(): n for n in reversed(declared)}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1)
    guess = f" (did you mean {by_lower[close[0]]!r}?)" if close else ""
    return f"{guess}; the program's inputs are: {', '.join(declared) or 'none'}"


def scalar_argument(spec: InputSpec, value: Any) -> int | float | np.ndarray:
    """The Python number IREE needs for a scalar argument (numpy scalars are marshalled as buffers);
    an f16 or bf16 one as a 0-d array, the VM having no 16-bit floats (einc.mlir.signature)."""
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise RunError(f"input {spec.name}: expected a scalar ({spec.dtype}), got an array of shape {list(value.shape)}")
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype != np.dtype(spec.dtype):
            raise RunError(f"input {spec.name}: expected {spec.dtype}, got {value.dtype}")
        value = value.item()
    elif not _python_number_fits(spec.dtype, value):
        raise RunError(f"input {spec.name}: expected {spec.dtype}, got {type(value).__name__} {value!r}")
    if spec.dtype == "bool":
        return int(value)  # the VM rejects Python bool for an i1 argument
    if np.dtype(spec.dtype).kind in "iu":
        _check_int_range(spec, value)
        return int(signless(np.asarray(value, spec.dtype)))
    if spec.dtype in ("float16", "bfloat16"):
        return np.asarray(value, spec.dtype)
    return float(value)


def signless(array: np.ndarray) -> np.ndarray:
    """IREE's integers are signless and its runtime takes them as signed: a u8 array goes in as
    the i8 array of the same bits (the runner reads results back as the signature's dtype)."""
    if array.dtype.kind != "u":
        return array
    return array.view(np.dtype(array.dtype.str.replace("u", "i")))


def _python_number_fits(dtype: str, value: Any) -> bool:
    if dtype == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if np.dtype(dtype).kind in "iu":
        return isinstance(value, numbers.Integral)
    return isinstance(value, numbers.Real)


def _check_int_range(spec: InputSpec, value: int) -> None:
    info = np.iinfo(spec.dtype)
    if not info.min <= value <= info.max:
        raise RunError(f"input {spec.name}: {value} does not fit in {spec.dtype}")


def as_array(spec: InputSpec, value: Any):
    """`value` as a NumPy array, over the same memory where its producer allows: anything with
    `__dlpack__` (torch, JAX, CuPy on the host...), `__array__` or the buffer protocol. An IREE
    device array (a result kept on the device) stays as it is."""
    if isinstance(value, (np.ndarray, rt.DeviceArray)):
        return value
    try:
        if hasattr(value, "__dlpack__"):
            return np.from_dlpack(value)
        if hasattr(value, "__array__") or hasattr(value, "__array_interface__"):
            return np.asarray(value)
        buffer = _buffer_of(value)
    except (TypeError, ValueError, BufferError, RuntimeError) as err:
        raise RunError(f"input {spec.name}: cannot read the {type(value).__name__} as an array "
                       f"({str(err).strip() or type(err).__name__})") from None
    if buffer is None:
        raise RunError(f"input {spec.name}: expected a {spec.describe()} numpy array (or an object with "
                       f"__dlpack__, __array__ or the buffer protocol), got {type(value).__name__}")
    return np.asarray(buffer)


def _buffer_of(value: Any) -> memoryview | None:
    try:
        return memoryview(value)
    except TypeError:
        return None


def _checked_array(spec: InputSpec, value, fixed_dims: dict[str, int]):
    if spec.dtype == "bfloat16" and isinstance(value, np.ndarray) and value.dtype == _NPY_BFLOAT16:
        value = value.view("bfloat16")
    if value.dtype != _dtype_as_given(spec, value):
        raise RunError(f"input {spec.name}: expected {spec.dtype}, got {value.dtype}")
    if spec.dims is not None and len(value.shape) != len(spec.dims):
        raise RunError(f"input {spec.name}: expected rank {len(spec.dims)} ({spec.describe()}), "
                       f"got rank {len(value.shape)} (shape {list(value.shape)})")
    # checked first: np.ascontiguousarray makes a 0-d array 1-d, which a rank-1 input took
    value = value if isinstance(value, rt.DeviceArray) else np.ascontiguousarray(value)
    if spec.dims is None:
        return value
    for axis, (dim, size) in enumerate(zip(spec.dims, value.shape)):
        if isinstance(dim, int) and dim != size:
            raise RunError(f"input {spec.name}: dimension {axis} must be {dim}, got {size} "
                           f"(shape {list(value.shape)}, expected {spec.describe()})")
        if dim in fixed_dims and fixed_dims[dim] != size:
            raise RunError(f"input {spec.name}: dim {dim} was fixed to {fixed_dims[dim]} when the module "
                           f"was built (--dim {dim}={fixed_dims[dim]}), got {size} on axis {axis} "
                           f"(shape {list(value.shape)})")
    return value


# .npy headers cannot name bfloat16: np.save writes an ml_dtypes.bfloat16 array as 2-byte voids
_NPY_BFLOAT16 = np.dtype("V2")


def _dtype_as_given(spec: InputSpec, value) -> np.dtype:
    """The dtype `value` must have: the signature's, or its signless form for a device array
    (IREE keeps unsigned results as the signed integers of the same bits)."""
    wanted = np.dtype(spec.dtype)
    return signless(np.empty(0, wanted)).dtype if isinstance(value, rt.DeviceArray) else wanted


def named_dim_sizes(specs: Iterable[InputSpec], shapes: Mapping[str, tuple[int, ...]]) -> dict[str, int]:
    """Each named dim's size as the inputs' `shapes` (by input name, each of its input's
    declared rank) give it; RunError where two inputs disagree."""
    seen: dict[str, tuple[int, str]] = {}
    for spec in specs:
        _note_named_dims(spec, shapes[spec.name], seen)
    return {dim: size for dim, (size, _) in seen.items()}


def _note_named_dims(spec: InputSpec, shape: tuple[int, ...], seen: dict[str, tuple[int, str]]) -> None:
    """Add the sizes `spec`'s named dims have in `shape` to `seen` (dim -> (size, input));
    RunError where another input gave one of them another size."""
    for dim, size in zip(spec.dims or [], shape):
        if not isinstance(dim, str):
            continue
        if dim not in seen:
            seen[dim] = (size, spec.name)
            continue
        first_size, first_input = seen[dim]
        if first_size != size:
            raise RunError(f"named dim {dim} is {first_size} from {first_input} but {size} from {spec.name}")
