"""Type annotations: checking a value against `: T`, and the types of run-time inputs."""
from __future__ import annotations

from einc import diagnostics as d
from einc.ir.nodes import Value, size_value
from einc.ir.types import BY_NAME, DType, Lin, closest_type, shape_str
from einc.semantics.core import scalar_ops
from einc.semantics.core.tensors import is_array, whole
from einc.semantics.core.values import ListVal, PartialRead, StrVal, TupleVal, Weak, describe
from einc.syntax import ast


def scalar_dtype(t: ast.ScalarType) -> DType:
    if t.name not in BY_NAME:
        raise d.error(d.TYPE, f"`{t.name}` is not a numeric type", t.span)
    return BY_NAME[t.name]


def input_type(t, name: str, rank: int | None = None) -> tuple[DType, list]:
    """dtype and dims of a run-time input declaration; `rank` is the rank of an any-rank input
    (`[f32; *]`) for this build, which then has that many `?` dims."""
    if isinstance(t, ast.ScalarType):
        return scalar_dtype(t), []
    if isinstance(t, ast.ArrayType) and isinstance(t.elem, ast.ScalarType):
        if t.dims is None and rank is None:
            raise d.error(d.UNSUPPORTED, f"input `{name}` needs a known rank", t.span,
                          hint="write its dims, e.g. `[f32; ?, ?]`; `einc run FILE.ein --input` and "
                          "`einc.jit` build an any-rank input for the rank of the array given")
        if t.dims is None:
            return scalar_dtype(t.elem), [ast.DimSpec(span=t.span) for _ in range(rank)]
        return scalar_dtype(t.elem), list(t.dims)
    elem = t.elem if isinstance(t, ast.ArrayType) else t
    if isinstance(elem, ast.NamedType):
        kind = "element type" if elem is not t else "type"
        raise d.error(d.TYPE, f"input `{name}` has the {kind} `{elem.name}`, which is not a number type",
                      elem.span, hint=_number_type_hint(elem.name))
    raise d.error(d.TYPE, f"input `{name}` must be a scalar or an array of numbers", t.span)


def _number_type_hint(name: str) -> str:
    close = closest_type(name)
    guess = f"did you mean `{close}`? " if close else ""
    return f"{guess}an input's type is one of {', '.join(BY_NAME)}"


def annotate(value, t, el, span=None):
    """`value` checked against the annotation `t` (None: unchanged); literals take its type."""
    if t is None or isinstance(t, ast.NamedType):
        return value
    if isinstance(t, ast.TupleType):
        if not isinstance(value, TupleVal) or len(value.items) != len(t.elems):
            raise d.error(d.TYPE, f"expected a tuple of {len(t.elems)}, found {describe(value)}", t.span)
        return TupleVal(tuple(annotate(v, e, el, span) for v, e in zip(value.items, t.elems)))
    if isinstance(t, ast.ScalarType) and t.name == "str":
        if not isinstance(value, StrVal):
            raise d.error(d.TYPE, f"expected str, found {describe(value)}", t.span)
        return value
    if isinstance(t, ast.ScalarType):
        if getattr(value, "rank", 0) or isinstance(value, ListVal):     # arrays, slices, literal arrays
            raise d.error(d.TYPE, f"expected {t.name}, found {describe(value)}", t.span)
        return scalar_ops.fixed(scalar_ops.materialize(value, scalar_dtype(t), span or t.span))
    return _annotate_array(value, t, el)


def bind_dims(value, t, scope, sizes: dict) -> None:
    """The named dims of a parameter's type that no input declares (`fn mean(p: [f32; M])`) are
    the argument's sizes in the body, as an input's are in the program; `sizes` holds those the
    call's earlier parameters bound, which a later one must agree with."""
    if not isinstance(t, ast.ArrayType) or not t.dims or getattr(value, "rank", 0) != len(t.dims):
        return
    for axis, dim in enumerate(t.dims):
        own = getattr(dim.def_id, "kind", None) == "dim" and (dim.def_id in sizes or not _is_bound(scope, dim.def_id))
        if not own:         # a fixed size, `?`, or an input's dim (checked by `annotate`)
            continue
        extent = value.shape[axis]
        if dim.def_id in sizes and sizes[dim.def_id] != extent:
            raise d.error(d.SHAPE, f"`{dim.name}` is {sizes[dim.def_id]!r} from an earlier parameter but "
                          f"{extent!r} here (value shape {shape_str(value.shape)})", dim.span)
        sizes[dim.def_id] = extent
        scope.bind(dim.def_id, size_value(extent, span=dim.span))


def _is_bound(scope, def_id) -> bool:
    try:
        scope.lookup(def_id)
    except KeyError:
        return False
    return True


def mapped_over(params: list, args: list) -> list[int]:
    """The positions where an array is given to a parameter typed as a number: the call maps
    the function over its elements (LANGUAGE.md, functions)."""
    return [k for k, (p, a) in enumerate(zip(params, args))
            if isinstance(p.type, ast.ScalarType) and p.type.name != "str" and is_array(a)]


def elements_for(value, param: ast.Param, fn_name: str, span):
    """The array `value` mapped over by a parameter typed as a number: a literal takes the
    parameter's type, a typed array must have it."""
    dtype = scalar_dtype(param.type)
    if isinstance(value, Weak):
        return scalar_ops.materialize(value, dtype, span)
    if value.dtype != dtype:
        raise d.error(d.TYPE, f"`{fn_name}` is applied to each element of an array of {value.dtype}, "
                      f"but its parameter `{param.name}` is {dtype}", span, hint=f"convert with `as {dtype}`")
    return value


def _annotate_array(value, t: ast.ArrayType, el):
    if isinstance(t.elem, ast.ScalarType) and t.elem.name == "str":
        if not isinstance(value, ListVal) or not all(isinstance(x, StrVal) for x in value.items):
            raise d.error(d.TYPE, f"expected an array of strings, found {describe(value)}", t.span)
        return value
    dtype = scalar_dtype(t.elem) if isinstance(t.elem, ast.ScalarType) else None
    if isinstance(value, Weak):
        literals = scalar_ops.materialize(value, dtype, t.span)
        value = scalar_ops.fixed(literals) if dtype is not None else literals
    if not isinstance(value, PartialRead):      # a row of an enclosing definition stays one (batched)
        value = whole(value, t.span)
    if not isinstance(value, (Value, PartialRead)) or value.rank == 0:
        raise d.error(d.TYPE, f"expected an array, found {describe(value)}", t.span)
    if dtype is not None and value.dtype != dtype:
        raise d.error(d.TYPE, f"expected elements of {dtype}, found {value.dtype}", t.span,
                      hint=f"convert with `as {dtype}`")
    if t.dims is not None:
        _check_dims(value, t, el)
    return value


def _check_dims(value, t: ast.ArrayType, el) -> None:
    if len(t.dims) != value.rank:
        raise d.error(d.SHAPE, f"expected rank {len(t.dims)}, found {describe(value)}", t.span)
    for axis, dim in enumerate(t.dims):
        want = _dim_lin(dim, el)
        if want is not None and want != value.shape[axis]:
            raise d.error(d.SHAPE, f"axis {axis} has size {value.shape[axis]!r} but the annotation "
                          f"says {want!r} (value shape {shape_str(value.shape)})", dim.span)


def _dim_lin(dim: ast.DimSpec, el):
    if dim.size is not None:
        return Lin(dim.size)
    if dim.name is not None and dim.name in el.named_dims:
        return el.named_dims[dim.name]
    return None
