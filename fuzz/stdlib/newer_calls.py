"""The drawers added since branch fuzz9: the functions of /work/shared/STDLIB_API.md that einc
implements and the campaign did not draw before (std::ml's arithmetic, its re-exports of
std::math, batch_matmul, the norms, identity-like calls, cast, is_nan and is_inf, the arrays
eye, range and constant_of_shape make, numel, size and shape, image_scaler, the factorizations
and solves, gcd, lcm and factorial, std::array's argmax_all and argmin_all). Each meaning is
written here from the ONNX operator or the math, in NumPy. fuzz.stdlib.generate draws these
from a random stream of their own, so that every earlier case of a seed stays as it was."""
from __future__ import annotations

import math

import numpy as np

from fuzz.stdlib import calls
from fuzz.stdlib import reference as ref
from fuzz.stdlib.draw import Draw, ints

FLOATS, INTS = calls.FLOATS, calls.INTS
ARITHMETIC = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide}
# std::ml's re-exports of std::math's functions of one float (ONNX Sqrt, Exp, .., Erf)
ML_UNARY = ("sqrt", "exp", "log", "log1p", "expm1", "abs", "sign", "floor", "ceil", "round", "square",
            "neg", "reciprocal", "rsqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "erf")


def arithmetic(d: Draw, name: str):
    """ONNX Add, Sub, Mul, Div of two arrays of one shape, or of an array and a scalar literal;
    integer division is left out (ONNX leaves its rounding to the implementation)."""
    if name == "divide" and not d.floating:
        name = "multiply"
    shape = d.shape(d.rng.randint(1, 3))
    a = d.input(shape, -3.0, 3.0) if d.floating else d.input(shape, -9, 9)
    A = d.wide(a)
    if d.rng.random() < 0.3:
        value = d.rng.choice([2, -3, 0.5, -1.25] if d.floating else [2, -3, 7])
        b, B = (d.literal(value) if d.floating else str(value)), np.float64(value)
    else:
        b = d.input(shape, 0.5, 3.0) if d.floating else d.input(shape, -9, 9)
        if name == "divide":                    # away from 0, either sign
            d.arrays[b[1:]] *= np.where(d.values.random(shape) < 0.5, -1, 1).astype(d.arrays[b[1:]].dtype)
        B = d.wide(b)
    value = ARITHMETIC[name](A, B)
    want = d.close(value) if d.floating else d.exact(np.asarray(value).astype(A.dtype))
    return d.program(f"std::ml::{name}", f"std::ml::{name}({a}, {b})", want)


def batch_matmul(d: Draw):
    batch = d.shape(d.rng.randint(1, 2), 1, 3)
    m, k, n = (d.rng.choice([1, d.rng.randint(2, 6)]) for _ in range(3))
    a, b = d.input(batch + [m, k]), d.input(batch + [k, n])
    A, B = d.wide(a), d.wide(b)
    call = f"std::ml::batch_matmul({a}, {b})"
    if not d.floating:
        return d.program("std::ml::batch_matmul", call, d.exact((A.astype(np.int64) @ B).astype(A.dtype)))
    return d.program("std::ml::batch_matmul", call, d.close(A @ B, np.abs(A) @ np.abs(B)))


def norm(d: Draw, name: str):
    """vec_norm_2 along the last axis; matrix_norm_frobenius and frobenius_norm of all elements."""
    rank = 2 if name == "matrix_norm_frobenius" else d.rng.randint(1, 3)
    x = d.input(d.shape(rank))
    X = d.wide(x)
    value = np.sqrt(np.sum(X * X, axis=-1)) if name == "vec_norm_2" else np.sqrt(np.sum(X * X))
    return d.program(f"std::ml::{name}", f"std::ml::{name}({x})", d.close(value))


def passthrough(d: Draw, name: str):
    """ONNX Identity, Dropout in inference mode (the identity, whatever the ratio) and Constant."""
    x = calls.data(d)
    args = {"identity": "", "constant": "", "dropout": f", {d.literal(d.rng.choice([0.0, 0.5, 0.9]))}, false"}[name]
    return d.program(f"std::ml::{name}", f"std::ml::{name}({x}{args})", d.exact(d.wide(x).astype(d.arrays[x[1:]].dtype)))


CAST_NAMES = {"float": "f32", "f32": "f32", "double": "f64", "float64": "f64", "int32": "i32", "i32": "i32",
              "int64": "i64", "i64": "i64", "bool": "bool"}


def cast(d: Draw):
    """ONNX Cast to a type named as ONNX or Einlang does: floats to integers toward zero, any
    number to bool by `!= 0` (a quarter of the elements are 0)."""
    shape = d.shape(d.rng.randint(1, 3))
    x = d.input(shape, -9.0, 9.0) if d.floating else d.input(shape, -9, 9)
    d.arrays[x[1:]][d.values.random(shape) < 0.25] = 0
    name = d.rng.choice(sorted(CAST_NAMES))
    to = CAST_NAMES[name]
    X = d.arrays[x[1:]]
    value = X != 0 if to == "bool" else (np.trunc(X) if X.dtype.kind == "f" and to[0] == "i" else X)
    return d.program("std::ml::cast", f'std::ml::cast({x}, "{name}")', d.exact(value.astype(_numpy(to)), to))


def nan_or_inf(d: Draw, name: str):
    """ONNX IsNaN and IsInf (both infinities) of floats with NaNs and infinities among them."""
    shape = d.shape(d.rng.randint(1, 3))
    x = d.input(shape)
    pick = d.values.random(shape)
    X = d.arrays[x[1:]]
    X[pick < 0.2] = np.nan
    X[(pick >= 0.2) & (pick < 0.3)] = np.inf
    X[(pick >= 0.3) & (pick < 0.4)] = -np.inf
    value = np.isnan(X) if name == "is_nan" else np.isinf(X)
    return d.program(f"std::ml::{name}", f"std::ml::{name}({x})", d.exact(value, "bool"))


def made(d: Draw, name: str):
    """Arrays from build-time numbers: eye(n) (f32), ONNX Range (ceil((limit - start) / delta)
    elements in start's type; float steps of quarters, exact) and ConstantOfShape."""
    if name == "eye":
        n = d.rng.randint(1, 6)
        return d.program("std::ml::eye", f"std::ml::eye({n})", d.exact(np.eye(n, dtype=np.float32), "f32"))
    if name == "range":
        start, delta = d.rng.randint(-4, 4), d.rng.choice([1, 2, 3, -1, -2])
        limit = start + delta * d.rng.randint(0, 6) + d.rng.choice([0, -1, 1]) * (abs(delta) > 1)
        if d.floating:
            start, delta, limit = start * 0.25, delta * 0.75, limit * 0.5
            text = ", ".join(d.literal(v) for v in (start, limit, delta))
        else:
            text = ", ".join(f"{v}{d.dtype}" for v in (start, limit, delta))
        count = max(math.ceil((limit - start) / delta), 0)
        value = np.asarray([start + i * delta for i in range(count)], _numpy(d.dtype))
        return d.program("std::ml::range", f"std::ml::range({text})", d.exact(value))
    shape = d.shape(d.rng.randint(1, 3))
    value = d.rng.choice([-1.5, 0.0, 2.25]) if d.floating else d.rng.choice([-3, 0, 7])
    text = d.literal(value) if d.floating else f"{value}{d.dtype}"
    return d.program("std::ml::constant_of_shape", f"std::ml::constant_of_shape({ints(shape)}, {text})",
                     d.exact(np.full(shape, value, _numpy(d.dtype))))


def sizes(d: Draw, name: str):
    """numel and size (the element count, i32) and shape (the sizes, i32) of an input."""
    x = calls.data(d)
    X = d.arrays[x[1:]]
    value = np.asarray(X.shape, np.int32) if name == "shape" else np.asarray(X.size, np.int32)
    return d.program(f"std::ml::{name}", f"std::ml::{name}({x})", d.exact(value, "i32"))


def image_scaler(d: Draw):
    """ONNX ImageScaler: scale * x + bias[c] on [N, C, spatial..]."""
    x = d.input([d.rng.randint(1, 2), d.rng.randint(1, 3)] + d.shape(d.rng.randint(1, 2)))
    b = d.input([d.arrays[x[1:]].shape[1]])
    scale = d.rng.choice([0.5, -2.0, 1.25])
    X, B = d.wide(x), d.wide(b)
    value = scale * X + B.reshape((1, -1) + (1,) * (X.ndim - 2))
    return d.program("std::ml::image_scaler", f"std::ml::image_scaler({x}, {d.literal(scale)}, {b})", d.close(value))


def linear_algebra(d: Draw, name: str):
    """cholesky of a symmetric positive definite A; the triangular solves (the unit one reads no
    diagonal), solve_cholesky, solve (partial pivoting) and Doolittle lu (a tuple L, U) of
    well-conditioned matrices; each checked against NumPy's, relative to the size of the answer."""
    n = d.rng.randint(1, 6)
    a, b = d.input([n, n], -1.0, 1.0), d.input([n], -2.0, 2.0)
    M = d.arrays[a[1:]]
    if name in ("cholesky", "solve_cholesky"):
        M[...] = (M @ M.T + n * np.eye(n)).astype(M.dtype)
    elif name == "solve":
        M[...] = (M + 2.0 * np.diag(np.sign(np.diag(M)) + (np.diag(M) == 0))).astype(M.dtype)
    elif name != "solve_triangular_lower_unit":
        M[...] = (M / n + np.diag(d.values.uniform(1.0, 2.0, n) * d.values.choice([-1, 1], n))).astype(M.dtype)
    A, B = d.wide(a), d.wide(b)
    tol = lambda value: 10 * n * (1.0 + np.max(np.abs(value)))     # noqa: E731
    if name == "cholesky":
        value = np.linalg.cholesky(A)
        return d.program("std::ml::cholesky", f"std::ml::cholesky({a})", d.close(value, tol(value)))
    if name == "lu":
        lower, upper = _doolittle(A)
        scale = tol(np.concatenate([lower, upper]))
        return d.program("std::ml::lu", f"std::ml::lu({a})", d.close(lower, scale), d.close(upper, scale), tuple_=True)
    system = {"solve_triangular_lower": np.tril(A), "solve_triangular_upper": np.triu(A),
              "solve_triangular_lower_unit": np.tril(A, -1) + np.eye(n), "solve_cholesky": A, "solve": A}[name]
    value = np.linalg.solve(system, B)
    return d.program(f"std::ml::{name}", f"std::ml::{name}({a}, {b})", d.close(value, tol(value)))


# Recurrences whose step reads an earlier point of the step it computes (`L[i, k]` for k < j in
# cholesky's row i), which vulkan-spirv refuses with E011 (each step there is one parallel
# kernel): run on the CPU only. The solves read only earlier steps and run there too.
CPU_ONLY = frozenset(f"std::ml::{name}" for name in ("cholesky", "solve_cholesky", "lu"))


def _doolittle(A: np.ndarray) -> tuple:
    """L unit lower triangular and U upper triangular with L U = A, without pivoting."""
    n = len(A)
    lower, upper = np.eye(n), np.zeros((n, n))
    for i in range(n):
        upper[i, i:] = A[i, i:] - lower[i, :i] @ upper[:i, i:]
        lower[i + 1:, i] = (A[i + 1:, i] - lower[i + 1:, :i] @ upper[:i, i]) / upper[i, i]
    return lower, upper


def integer_function(d: Draw, name: str):
    """std::math's gcd and lcm (non-negative, of |a| and |b|; gcd(0, 0) = 0) of scalars read
    from inputs, and factorial of a literal or of an input (wrapping past the type's range, 1
    for n <= 0)."""
    if name == "factorial" and d.rng.random() < 0.5:
        n = d.rng.randint(0, 12 if d.dtype == "i32" else 20)
        value = math.factorial(n)
        return d.program("std::math::factorial", f"std::math::factorial({n}{d.dtype})",
                         d.exact(np.asarray(value, _numpy(d.dtype))))
    if name == "factorial":
        x = d.input([1], -3, 40)
        n, bits = int(d.arrays[x[1:]][0]), 32 if d.dtype == "i32" else 64
        wrapped = math.factorial(max(n, 0)) % 2 ** bits
        value = wrapped - 2 ** bits if wrapped >= 2 ** (bits - 1) else wrapped
        return d.program("std::math::factorial", f"std::math::factorial({x}[0])",
                         d.exact(np.asarray(value, _numpy(d.dtype))))
    x, y = d.input([1], -30, 30), d.input([1], -30, 30)
    p, q = int(d.arrays[x[1:]][0]), int(d.arrays[y[1:]][0])
    g = math.gcd(p, q)
    value = g if name == "gcd" else (0 if g == 0 else abs(p * q) // g)
    return d.program(f"std::math::{name}", f"std::math::{name}({x}[0], {y}[0])", d.exact(np.asarray(value, _numpy(d.dtype))))


def arg_all(d: Draw, name: str):
    """std::array's argmax_all and argmin_all: the row-major index of the first extreme (i32);
    integers are drawn with ties."""
    x = d.input(d.shape(d.rng.randint(1, 3)), -1.0 if d.floating else -3, 1.0 if d.floating else 3)
    X = d.wide(x)
    value = (np.argmax if name == "argmax_all" else np.argmin)(X.reshape(-1))
    return d.program(f"std::array::{name}", f"std::array::{name}({x})", d.exact(np.asarray(value), "i32"))


def _numpy(dtype: str):
    return {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}[dtype]


NEWER_CALLS = {
    "ml_arithmetic": (lambda d: arithmetic(d, d.rng.choice(sorted(ARITHMETIC))), FLOATS + INTS, 2),
    "ml_unary": (lambda d: calls.math_1(d, d.rng.choice(ML_UNARY), "std::ml"), FLOATS, 2),
    "ml_binary": (lambda d: calls.math_2(d, d.rng.choice(["power", "fmod", "atan2", "max", "min"]), "std::ml"),
                  FLOATS, 1),
    "ml_clip": (lambda d: calls.clamp(d, "std::ml::clip"), FLOATS + INTS, 1),
    "batch_matmul": (batch_matmul, FLOATS + INTS, 1),
    "norm": (lambda d: norm(d, d.rng.choice(["vec_norm_2", "matrix_norm_frobenius", "frobenius_norm"])), FLOATS, 1),
    "passthrough": (lambda d: passthrough(d, d.rng.choice(["identity", "dropout", "constant"])), FLOATS + INTS, 1),
    "cast": (cast, FLOATS + INTS, 1),
    "nan_or_inf": (lambda d: nan_or_inf(d, d.rng.choice(["is_nan", "is_inf"])), FLOATS, 1),
    "made": (lambda d: made(d, d.rng.choice(["eye", "range", "constant_of_shape"])), FLOATS + INTS, 1),
    "sizes": (lambda d: sizes(d, d.rng.choice(["numel", "size", "shape"])), FLOATS + INTS, 1),
    "image_scaler": (image_scaler, FLOATS, 1),
    "linear_algebra": (lambda d: linear_algebra(d, d.rng.choice(
        ["cholesky", "solve_triangular_lower", "solve_triangular_lower_unit", "solve_triangular_upper",
         "solve_cholesky", "solve", "lu"])), FLOATS, 3),
    "integer_function": (lambda d: integer_function(d, d.rng.choice(["gcd", "lcm", "factorial"])), INTS, 1),
    "arg_all": (lambda d: arg_all(d, d.rng.choice(["argmax_all", "argmin_all"])), FLOATS + INTS, 1),
}
