"""Formatting print templates like NumPy and Python format specs."""
import numpy as np
import pytest

from einc.runtime import RunError
from einc.runtime.printing import format_print, format_value


def test_template_joins_text_and_formatted_args():
    parts = [{"text": "x = "}, {"arg": 0, "spec": ".4f"}, {"text": ", v = "}, {"arg": 1, "spec": ""}, {"text": "\n"}]
    assert format_print(parts, [np.array(np.pi, np.float32), np.array([1, 2], np.int32)]) == "x = 3.1416, v = [1 2]\n"


@pytest.mark.parametrize("value, expected", [
    (np.array(0.1, np.float32), "0.1"),          # like str(np.float32(0.1)), not the float64 expansion
    (np.array(1e-8, np.float64), "1e-08"),
    (np.array(True), "true"),                   # the language's spelling, as Rust prints it
    (np.array(False), "false"),
    (np.array(7, np.int64), "7"),
])
def test_scalars_without_spec_print_like_numpy_scalars(value, expected):
    assert format_value(value, "") == expected


def test_arrays_print_like_numpy_or_per_element_with_a_spec():
    matrix = np.arange(4, dtype=np.float32).reshape(2, 2) / 3
    assert format_value(matrix, "") == str(matrix)
    assert format_value(matrix, ".1f") == "[[0.0 0.3]\n [0.7 1.0]]"


def test_bool_arrays_print_true_and_false_and_a_spec_applies_to_the_word():
    assert format_value(np.array([[True, False], [False, True]]), "") == "[[true false]\n [false true]]"
    assert format_value(np.array(False), ">6") == " false"
    with pytest.raises(RunError, match="format spec '.2f'"):
        format_value(np.array(True), ".2f")


def test_bad_spec_is_a_run_error():
    with pytest.raises(RunError, match="format spec 'd'"):
        format_value(np.array(1.5, np.float32), "d")


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_integer_rows_print_as_numpy_prints_them(dtype):
    # einc writes a short 1-d integer array itself (NumPy's str took a fifth of a small call);
    # wide values, rows that wrap at NumPy's line width, empty and long rows all read as str()
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    for size in [0, 1, 2, 9, 10, 18, 19, 25, 37, 38, 63, 64, 200]:
        for low, high in [(0, 9), (max(info.min, -99), 99), (info.min, info.max)]:
            row = rng.integers(low, high, size=size, dtype=dtype, endpoint=True)
            assert format_value(row, "") == str(row)


def test_integer_rows_follow_the_callers_print_options():
    row = np.array([3, -12, 7], np.int32)
    with np.printoptions(sign="+"):
        assert format_value(row, "") == str(row) == "[ +3 -12  +7]"
    with np.printoptions(linewidth=8):
        assert format_value(row, "") == str(row)
