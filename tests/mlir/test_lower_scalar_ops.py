"""Every scalar op kind, lowered inside a kernel and compared with NumPy."""
import numpy as np
import pytest

from einc.ir.nodes import Generic
from lowering_harness import const, op, program, read, ref, run, tensor_input, var
from tests.tiers import VULKAN_FULL

FLOAT_REFERENCES = {
    "neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
    "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": lambda x: np.arccosh(x + 1), "atanh": np.arctanh,
    "erf": None, "floor": np.floor, "ceil": np.ceil, "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    "trunc": np.trunc,
}


def _elementwise(dtype: str, n: int, exprs: dict):
    """One kernel per entry of `exprs` (name -> fn(*reads) -> body) over inputs of shape [n]."""
    syms = {}
    count = max(fn.__code__.co_argcount for fn in exprs.values())
    inputs = [tensor_input(f"x{k}", k, dtype, [n], syms) for k in range(count)]
    outputs = []
    for name, fn in exprs.items():
        i = var("i", n)
        reads = [read(x, ref(i)) for x in inputs[:fn.__code__.co_argcount]]
        outputs.append((name, Generic((i,), fn(*reads))))
    return program(inputs, outputs, syms)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_unary_float_ops(target):
    x = np.array([0.1, 0.25, 0.5, 0.75, -0.3, -0.5], np.float32)
    names = [n for n in FLOAT_REFERENCES if n not in ("sqrt", "rsqrt", "log", "log1p", "log2", "log10", "acosh")]
    positive = ["sqrt", "rsqrt", "log", "log1p", "log2", "log10", "acosh"]
    exprs = {n: (lambda name: lambda a: op(name, a))(n) for n in names}
    exprs.update({n: (lambda name: lambda a: op(name, op("abs", a)))(n) for n in positive})
    exprs["acosh"] = lambda a: op("acosh", op("add", op("abs", a), const(1.0)))
    got = dict(zip(exprs, run(_elementwise("f32", 6, exprs), x, target=target)))
    for name, reference in FLOAT_REFERENCES.items():
        if reference is None:
            continue
        arg = np.abs(x) if name in positive else x
        np.testing.assert_allclose(got[name], reference(arg), rtol=2e-6, atol=1e-6, err_msg=name)
    from math import erf
    np.testing.assert_allclose(got["erf"], [erf(v) for v in x], rtol=1e-5, atol=1e-6)


def test_binary_and_integer_semantics():
    a = np.array([7, -7, 7, -7, 3, 0], np.int32)
    b = np.array([2, 2, -2, -2, 4, 5], np.int32)
    exprs = {
        "div": lambda p, q: op("div", p, q), "rem": lambda p, q: op("rem", p, q),
        "min": lambda p, q: op("min", p, q), "max": lambda p, q: op("max", p, q),
        "ipow": lambda p, q: op("pow", p, op("abs", q)),
        "lt": lambda p, q: op("lt", p, q, dtype="bool"), "ne": lambda p, q: op("ne", p, q, dtype="bool"),
        "select": lambda p, q: op("select", op("gt", p, q, dtype="bool"), p, q),
        "to_f32": lambda p: op("cast", p, dtype="f32"), "to_i64": lambda p: op("cast", p, dtype="i64"),
        "to_bool": lambda p: op("cast", p, dtype="bool"),
        "bool_to_i32": lambda p: op("cast", op("not", op("cast", p, dtype="bool")), dtype="i32"),
    }
    got = dict(zip(exprs, run(_elementwise("i32", 6, exprs), a, b)))
    np.testing.assert_array_equal(got["div"], np.trunc(a / b).astype(np.int32))   # toward zero
    np.testing.assert_array_equal(got["rem"], np.fmod(a, b))                      # dividend's sign
    np.testing.assert_array_equal(got["min"], np.minimum(a, b))
    np.testing.assert_array_equal(got["max"], np.maximum(a, b))
    np.testing.assert_array_equal(got["ipow"], a ** np.abs(b))
    np.testing.assert_array_equal(got["lt"], a < b)
    np.testing.assert_array_equal(got["ne"], a != b)
    np.testing.assert_array_equal(got["select"], np.where(a > b, a, b))
    np.testing.assert_array_equal(got["to_f32"], a.astype(np.float32))
    np.testing.assert_array_equal(got["to_i64"], a.astype(np.int64))
    np.testing.assert_array_equal(got["to_bool"], a != 0)
    np.testing.assert_array_equal(got["bool_to_i32"], (a == 0).astype(np.int32))


def test_float_binary_ops_and_nan():
    a = np.array([1.5, -2.5, 4.0, np.nan, 3.0], np.float32)
    b = np.array([2.0, 2.0, 0.5, 1.0, -1.0], np.float32)
    exprs = {
        "rem": lambda p, q: op("rem", p, q), "powf": lambda p, q: op("pow", op("abs", p), q),
        "fpowi": lambda p: op("pow", p, const(3, "i32")), "atan2": lambda p, q: op("atan2", p, q),
        "min": lambda p, q: op("min", p, q), "ne": lambda p, q: op("ne", p, p, dtype="bool"),
        "isnan": lambda p: op("isnan", p, dtype="bool"),
        "isinf": lambda p, q: op("isinf", op("div", p, op("sub", q, q)), dtype="bool"),
        "to_i32": lambda p: op("cast", op("select", op("isnan", p, dtype="bool"), const(0.0), p), dtype="i32"),
        "to_f64": lambda p: op("cast", p, dtype="f64"),
    }
    got = dict(zip(exprs, run(_elementwise("f32", 5, exprs), a, b)))
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got["rem"], np.fmod(a, b), rtol=1e-6)
        np.testing.assert_allclose(got["powf"], np.abs(a) ** b, rtol=1e-5)
        np.testing.assert_allclose(got["fpowi"], a ** 3, rtol=1e-6)
        np.testing.assert_allclose(got["atan2"], np.arctan2(a, b), rtol=1e-5)
        np.testing.assert_allclose(got["min"], np.minimum(a, b), rtol=1e-6)      # NaN propagates
        np.testing.assert_array_equal(got["ne"], a != a)                           # NaN != NaN
        np.testing.assert_array_equal(got["isnan"], np.isnan(a))
        np.testing.assert_array_equal(got["isinf"], np.isinf(a / (b - b)) & ~np.isnan(a))
        np.testing.assert_array_equal(got["to_i32"], np.nan_to_num(a, nan=0).astype(np.int32))
        np.testing.assert_allclose(got["to_f64"], a.astype(np.float64))
