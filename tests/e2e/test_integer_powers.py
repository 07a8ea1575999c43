"""Integer `**` wraps in its type, the same at build time (constants folded by einc) as on the
device (inputs): NumPy's integer power is the reference (docs/DECISIONS.md, "A constant must
fit its type" and "Integer powers")."""
import numpy as np
import pytest

import einc

SOURCE = """
let x: i32;
let y: i32;
let ux: u32;
let uy: u32;
let run_time = x ** y;
let run_time_unsigned = ux ** uy;
let folded = 3i32 ** 2147483647;
let folded_unsigned = 2u32 ** 2147483648u32;
let folded_odd_unsigned = 3u32 ** 4294967295u32;
let folded_wide = 2i32 ** 100;
"""
CASES = [(3, 2147483647, 2, 2147483648), (2, 100, 3, 4294967295), (-7, 31, 5, 0)]


@pytest.fixture(scope="module")
def program():
    return einc.load(einc.compile(SOURCE).vmfb)


@pytest.mark.parametrize("x, y, ux, uy", CASES)
def test_a_power_of_inputs_wraps_as_numpy_does(program, x, y, ux, uy):
    out = program(x=np.int32(x), y=np.int32(y), ux=np.uint32(ux), uy=np.uint32(uy))
    assert out["run_time"] == np.power(np.int32(x), np.int32(y))
    # an exponent with its top bit set (2^31 in u32) needs all 32 rounds of the square-and-multiply
    assert out["run_time_unsigned"] == np.power(np.uint32(ux), np.uint32(uy))


def test_a_power_of_typed_constants_folds_to_what_the_device_computes(program):
    out = program(x=np.int32(3), y=np.int32(2147483647), ux=np.uint32(2), uy=np.uint32(2147483648))
    assert out["folded"] == np.power(np.int32(3), np.int32(2147483647)) == out["run_time"]
    assert out["folded_unsigned"] == np.power(np.uint32(2), np.uint32(2147483648)) == out["run_time_unsigned"]
    assert out["folded_odd_unsigned"] == np.power(np.uint32(3), np.uint32(4294967295))
    assert out["folded_wide"] == np.power(np.int32(2), np.int32(100)) == 0
