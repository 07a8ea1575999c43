"""Names every program sees without an import.

`PUBLIC` are the built-ins of LANGUAGE.md section 6 (plus `load_npy`, which std::io re-exports).
`INTRINSICS` are the primitive operations the standard library is written on top of: the stdlib
wraps them (`pub fn sqrt(x) { __sqrt(x) }`), and user code normally calls the wrappers.
"""

PUBLIC = ("print", "assert", "len", "shape", "typeof", "load_npy", "save_npy", "array_append")
# the prelude: reductions of a whole array, and min/max of two values, shadowed by any definition
# or `use` of the same name
PRELUDE = ("sum", "min", "max")

# unary float functions, lowered to the math dialect
UNARY_MATH = ("sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos",
              "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
              "erf", "floor", "ceil", "round", "trunc")
# functions on any numeric type
NUMERIC = ("abs", "min", "max", "pow", "atan2", "fmod", "isnan", "isinf", "inf", "nan",
           "select", "argmax", "argmin", "cast_like")

# build-time expansions: an equation string becomes an indexed definition
EXPANSIONS = ("einsum",)

INTRINSICS = tuple("__" + n for n in UNARY_MATH + NUMERIC + EXPANSIONS)

ALL = PUBLIC + PRELUDE + INTRINSICS


def is_builtin(name: str) -> bool:
    return name in ALL
