"""How printed text and outputs are diffed against goldens (compare.py)."""
import numpy as np
import pytest

from compare import assert_outputs_match, assert_text_matches


def test_numbers_may_differ_by_the_tolerance_or_one_unit_of_the_last_printed_digit():
    assert_text_matches("peak 0.4470 at day 38.25\n", "peak 0.4469 at day 38.25\n", rtol=0, atol=0)
    assert_text_matches("gap 1.71e-03\n", "gap 1.70e-03\n", rtol=0, atol=0)
    assert_text_matches("x 1.0000001\n", "x 1.0\n", rtol=1e-6, atol=0)
    with pytest.raises(AssertionError, match="'0.4471'"):
        assert_text_matches("peak 0.4471\n", "peak 0.4469\n", rtol=0, atol=0)


def test_integers_and_words_must_be_equal_but_wrapping_may_differ():
    assert_text_matches("periods: [1 1\n 2 4]\n", "periods: [1 1 2 4]\n", rtol=1e-3, atol=0)
    with pytest.raises(AssertionError):
        assert_text_matches("reached after 264 months\n", "reached after 263 months\n", rtol=0, atol=0)
    with pytest.raises(AssertionError):
        assert_text_matches("symmetric False\n", "symmetric True\n", rtol=0, atol=0)
    with pytest.raises(AssertionError):
        assert_text_matches("a 1\n", "a 1\nb 2\n", rtol=0, atol=0)


def test_outputs_must_agree_in_names_dtypes_and_values():
    golden = {"x": np.array([1.0, 2.0], np.float32), "n": np.int32(3)}
    assert_outputs_match({"x": np.array([1.0, 2.00001], np.float32), "n": np.int32(3)}, golden, 1e-5, 0)
    for wrong in ({"x": golden["x"].astype(np.float64), "n": np.int32(3)},
                  {"x": golden["x"], "n": np.int32(4)},
                  {"x": golden["x"]},
                  {"x": np.array([1.0, 2.1], np.float32), "n": np.int32(3)}):
        with pytest.raises(AssertionError):
            assert_outputs_match(wrong, golden, 1e-5, 0)
