"""Diffing a program's outputs and printed text against goldens, within stated tolerances."""
from __future__ import annotations

import re

import numpy as np

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")
TOKEN = re.compile(NUMBER.pattern + r"|\S")


def assert_outputs_match(got: dict[str, np.ndarray], golden: dict[str, np.ndarray], rtol: float, atol: float):
    assert sorted(got) == sorted(golden), f"outputs {sorted(got)}, golden has {sorted(golden)}"
    for name, want in golden.items():
        have = np.asarray(got[name])
        assert have.dtype == want.dtype, f"{name}: dtype {have.dtype}, golden {want.dtype}"
        assert have.shape == want.shape, f"{name}: shape {have.shape}, golden {want.shape}"
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(have, want, err_msg=name)
        else:
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=name)


def assert_text_matches(got: str, golden: str, rtol: float, atol: float):
    """Token by token, words must be equal and numbers equal within rtol/atol plus one unit of
    the golden's last printed digit (`.4f` of two close values may round apart). Whitespace is
    not compared, since NumPy wraps long arrays where their digits say."""
    have, want = TOKEN.findall(got), TOKEN.findall(golden)
    for k, (a, b) in enumerate(zip(have, want)):
        assert _token_matches(a, b, rtol, atol), \
            f"printed {a!r} where the golden has {b!r}, in\n{_context(got, k)}"
    assert len(have) == len(want), f"printed\n{got}\nbut the golden is\n{golden}"


def _context(text: str, k: int) -> str:
    """The printed line holding token k."""
    lines, seen = text.splitlines(), 0
    for line in lines:
        seen += len(TOKEN.findall(line))
        if seen > k:
            return line
    return text


def _token_matches(have: str, want: str, rtol: float, atol: float) -> bool:
    if not (NUMBER.fullmatch(have) and NUMBER.fullmatch(want)):
        return have == want
    x, y = float(have), float(want)
    if not (np.isfinite(x) and np.isfinite(y)):
        return have == want
    # the factor absorbs the binary rounding of decimal tokens (1.71e-03 - 1.70e-03 > 1e-05)
    return abs(x - y) <= (atol + rtol * abs(y) + _last_digit(want)) * (1 + 1e-9)


def _last_digit(token: str) -> float:
    """The value of one unit in the last printed digit of a float token (0 for integers)."""
    mantissa, _, exponent = token.lower().partition("e")
    if "." not in mantissa:
        return 0.0
    decimals = len(mantissa.split(".")[1])
    return 10.0 ** (int(exponent or 0) - decimals)
