"""Built-in functions: assert, len, shape, typeof, load_npy and the intrinsics (`__sqrt`, ..),
in this module's tables, which elaborate installs into the evaluator. `print` takes format
strings, not values, so the call rule of expressions handles it (printing)."""
from __future__ import annotations

import os

import numpy as np

from einc import diagnostics as d
from einc.ir import nodes as ir
from einc.ir.types import BOOL, Lin
from einc.semantics.core import builtins, folding, scalar_ops, sequences, tensors
from einc.semantics.forms import printing
from einc.semantics.forms.einsum import einsum
from einc.semantics.evaluator import rule_decorator
from einc.semantics.forms.pointwise import cast_to, elementwise
from einc.semantics.forms.stacking import append
from einc.semantics.core.values import ListVal, PartialRead, StrVal, TupleVal, Weak, describe

MATH_UNARY = set(builtins.UNARY_MATH) | {"abs", "isnan", "isinf"}
MATH_BINARY = {"min": "min", "max": "max", "pow": "pow", "atan2": "atan2", "fmod": "rem"}  # -> scalar op

BUILTIN_RULES: dict = {}     # name -> rule(el, args, span)
INTRINSIC_RULES: dict = {}   # (name without `__`, argument count) -> rule(el, args, span)
builtin_rule = rule_decorator(BUILTIN_RULES)
intrinsic_rule = rule_decorator(INTRINSIC_RULES)


def _pointwise(op: str):
    """The rule of an intrinsic that is the scalar operation `op`, point by point on arrays."""
    return lambda el, args, span: elementwise(el, op, args, span)


def _float_constant(value: float):
    return lambda el, args, span: Weak(np.asarray(value), "float", span)


INTRINSIC_RULES.update({(name, 1): _pointwise(name) for name in MATH_UNARY})
INTRINSIC_RULES.update({(name, 2): _pointwise(op) for name, op in MATH_BINARY.items()})
INTRINSIC_RULES.update({("select", 3): _pointwise("select"), ("inf", 0): _float_constant(np.inf),
                        ("nan", 0): _float_constant(np.nan)})


@intrinsic_rule(("cast_like", 2))
def _cast_like(el, args, span):
    """`x` converted to the element type of `like`: lets generic library code turn a count into
    the float type of its data (`sum / __cast_like(n, sum)`), which `as` cannot name."""
    x, like = args
    if not isinstance(like, PartialRead):       # a row of an enclosing definition has its dtype
        like = scalar_ops.materialize(tensors.whole(like, span), None, span)
    if not isinstance(like, (ir.Value, PartialRead)):
        raise d.error(d.TYPE, f"`__cast_like` needs a number or an array, found {describe(like)}", span)
    return cast_to(el, x, like.dtype, span)


@intrinsic_rule(("einsum", 2))
def _einsum(el, args, span):
    return einsum(el, *args, span)


@builtin_rule("len")
def _len(el, args, span):
    (x,) = _arity(args, 1, "len", span)
    if sequences.is_sequence(x):
        return ir.Const(np.asarray(sequences.length(x), dtype=np.int32), span=span)
    if sequences.is_picked(x):
        return sequences.noted(sequences.lengths(x, span), el.state)
    x = tensors.shape_only(x, span)
    if not isinstance(x, (ir.Value, PartialRead)) or x.rank == 0:
        raise d.error(d.TYPE, f"`len` needs an array, found {describe(x)}", span)
    return ir.size_value(x.shape[0], span)


@builtin_rule("sum")
def _sum(el, args, span):
    (x,) = _arity(args, 1, "sum", span)
    return _reduce_all(el, "sum", x, span)


def _extremum(kind: str):
    """`min(a, b)` / `max(a, b)` point by point; `min(x)` / `max(x)` over every element of x."""
    def rule(el, args, span):
        if len(args) == 2:
            return elementwise(el, kind, args, span)
        if len(args) != 1:
            raise d.error(d.TYPE, f"`{kind}` takes 1 argument (an array) or 2, got {len(args)}", span)
        return _reduce_all(el, kind, args[0], span)
    return rule


BUILTIN_RULES.update({"min": _extremum("min"), "max": _extremum("max")})


def _reduce_all(el, kind: str, x, span):
    """`kind` over every element of `x` (a scalar is its own sum, min and max)."""
    if isinstance(x, Weak):
        if x.kind == "bool" and kind == "sum":
            raise d.error(d.TYPE, "`sum` of booleans: convert them first (`x as i32`)", span)
        return x if x.rank == 0 else Weak(np.asarray(getattr(np, kind)(x.value)), x.kind, span)
    if not isinstance(x, PartialRead):     # a row of an enclosing definition is read through
        x = tensors.whole(x, span)
    if not isinstance(x, (ir.Value, PartialRead)) or (kind == "sum" and x.dtype == BOOL):
        raise d.error(d.TYPE, f"`{kind}` needs a number or an array of numbers, found {describe(x)}", span)
    if x.rank == 0:
        return x
    reduced = ir.reduced(kind, *_every_element(el, x, "k", span), span=span)
    if isinstance(x, PartialRead):    # one per row, computed once for all rows (not at every point)
        return tensors.batch_over_outer_indices(ir.Generic((), reduced, span=span), el.state.step_ranges)
    return reduced


def _every_element(el, x, prefix: str, span):
    """Fresh index vars over every axis of `x` and its element at them. A row (`x[i]`, or
    `x[i] * 2.0`, inside a definition over i) is read at the enclosing index too."""
    vars_ = ir.fresh_index_vars(x.shape, prefix)
    refs = [ir.IndexRef(v) for v in vars_]
    if isinstance(x, PartialRead):
        return vars_, tensors.read(x, refs, span, el.state, "")
    return vars_, ir.Read(x, tuple(refs), span=span, in_bounds=True)


@builtin_rule("save_npy")
def _save_npy(el, args, span):
    path, value = _arity(args, 2, "save_npy", span)
    return printing.save_npy(el, path, value, span)


@builtin_rule("shape")
def _shape(el, args, span):
    x = _shaped_argument(args, "shape", span)
    dims = [ir.size_value(s, span) for s in getattr(x, "shape", ())]
    if all(isinstance(v, ir.Const) for v in dims):
        return ir.Const(np.asarray([int(v.array) for v in dims], dtype=np.int32), span=span)
    return ir.Stack(tuple(dims), span=span)


@builtin_rule("__size")
def _numel(el, args, span):
    """The number of elements: 1 for a scalar, a literal included (NumPy's `np.size(42.0)`)."""
    x = _shaped_argument(args, "size", span)
    total = ir.size_value(Lin(1), span)
    for s in getattr(x, "shape", ()):
        total = scalar_ops.apply("mul", [total, ir.size_value(s, span)], span)
    return total


@builtin_rule("typeof")
def _typeof(el, args, span):
    """The type's name: an untyped literal has its default type (`typeof(7) == "i32"`)."""
    (x,) = _arity(args, 1, "typeof", span)
    if tensors.is_array(x):
        name = "rectangular"
    elif isinstance(x, Weak):
        name = scalar_ops.DEFAULT[x.kind].name
    elif isinstance(x, ir.Value):
        name = x.dtype.name
    elif isinstance(x, ListVal):
        name = "rectangular" if sequences.text_array(x) is not None else "jagged"
    else:
        name = {StrVal: "str", TupleVal: "tuple"}.get(type(x), "function")
    return StrVal(name, span)


@builtin_rule("assert")
def _assert(el, args, span):
    """Passes when the condition holds; an array condition when every element holds."""
    if not 1 <= len(args) <= 2:
        raise d.error(d.TYPE, "`assert` takes a condition and an optional message", span)
    cond = scalar_ops.materialize(args[0], BOOL, span)
    if isinstance(cond, (ir.Value, PartialRead)) and cond.rank and cond.dtype == BOOL:
        cond = _all_of(el, cond, span)
    if not isinstance(cond, ir.Value) or cond.rank or cond.dtype != BOOL:
        raise d.error(d.TYPE, f"`assert` needs a bool, found {describe(cond)}", span)
    if len(args) == 2 and not isinstance(args[1], (StrVal, printing.RunTimeText)):
        raise d.error(d.TYPE, f"an assert's message must be a string, found {describe(args[1])}", span,
                      hint='assert(cond, "what went wrong: {x}")')
    msg = args[1].text if len(args) == 2 else "condition is false"
    text = f"assertion failed at {_reported_at(el, span, msg)}"
    if isinstance(cond, ir.Const):
        if not bool(cond.array):
            raise d.error(d.VALUE, f"this assertion always fails: {msg}", span)
        return TupleVal(())
    values = args[1] if len(args) == 2 and isinstance(args[1], printing.RunTimeText) else None
    values = None if values is None else ir.Print(values.parts, tuple(values.args), span=span)
    el.ir.effects.append(ir.Assert(cond, text, span=span, values=values))
    return TupleVal(())


def _reported_at(el, span, msg: str) -> str:
    """`FILE:LINE:COL: MESSAGE` of a failed assert: at its own line, or for one in the standard
    library at the user's call that reached it, naming the call and the library's line (a size
    check of std `solve` that fails at run time is the caller's mistake)."""
    library = {str(f) for path, f in el.program.files.items() if path[:1] == ("std",) and f is not None}
    if span is None or span.file not in library:
        return f"{span}: {msg}"
    for call, _ in reversed(el.state.calls):
        if call is not None and call.file not in library:
            return f"{call}: {msg} (in `{el.program.sources.text(call)}`; the library's assert is at {span})"
    return f"{span}: {msg}"


def _all_of(el, cond, span):
    known = folding.known(cond)
    if known is not None:
        return ir.Const(np.asarray(bool(np.all(known))), span=span)
    return ir.Reduce("all", *_every_element(el, cond, "a", span), span=span)


@builtin_rule("array_append")
def _array_append(el, args, span):
    """`arr` with `x` after its last element (`x` a row of `arr` for a table)."""
    arr, x = _arity(args, 2, "array_append", span)
    if sequences.is_sequence(arr):
        return ListVal(tuple(sequences.items(arr)) + (x,), span)
    if not tensors.is_array(arr):
        raise d.error(d.TYPE, f"`array_append` needs an array, found {describe(arr)}", span)
    return append(el, arr, x, span)


@builtin_rule("load_npy")
def _load_npy(el, args, span):
    (path,) = _arity(args, 1, "load_npy", span)
    if not isinstance(path, StrVal):
        raise d.error(d.TYPE, "`load_npy` needs a string path known at build time", span)
    full = os.path.join(os.path.dirname(os.path.abspath(span.file)), path.text)
    try:
        array = _mapped_npy(full)
    except OSError as exc:
        raise d.error(d.IO, f"cannot load `{path.text}`: {d.file_problem(exc)}", span) from None
    except (ValueError, EOFError) as exc:
        raise d.error(d.IO, f"cannot load `{path.text}`: not a valid .npy file ({d.first_line(exc)})", span) from None
    el.ir.data_files.append(full)
    return folding.constant(array, f"`{path.text}`", span)


_NPY_MAGIC = b"\x93NUMPY"


def _mapped_npy(path: str) -> np.ndarray:
    """The array of a .npy file, mapped, not read: a large one goes to the weights archive from
    its file (einc.ir.file_arrays), so the build never holds a copy of it. np.load alone would
    take a zip (.npz) or pickle for other files: anything without the .npy magic is refused."""
    with open(path, "rb") as npy_file:
        if npy_file.read(len(_NPY_MAGIC)) != _NPY_MAGIC:
            raise ValueError("it does not start with the .npy magic bytes")
    return np.load(path, mmap_mode="r", allow_pickle=False)


def _arity(args, n, name, span):
    if len(args) != n:
        raise d.error(d.TYPE, f"`{name}` takes {n} argument{'s' * (n != 1)}, got {len(args)}", span)
    return args


def _shaped_argument(args, name, span):
    """The one argument of `shape` or `size`: a number or an array, only its shape needed."""
    (x,) = _arity(args, 1, name, span)
    x = tensors.shape_only(x, span)
    if not isinstance(x, (ir.Value, Weak, PartialRead)):
        raise d.error(d.TYPE, f"`{name}` needs a number or an array, found {describe(x)}", span)
    return x
