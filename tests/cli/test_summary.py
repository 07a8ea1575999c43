"""The one-line output summaries of `einc run` show values as their own dtype prints them."""
import numpy as np

from einc.cli.summary import summarize


def test_f32_scalar_is_printed_at_f32_precision_not_widened():
    assert summarize("norm", np.asarray(np.float32(3.7749171))) == "norm: float32 = 3.7749171"


def test_small_arrays_show_every_value_and_large_ones_statistics():
    assert summarize("v", np.arange(3, dtype=np.int32)) == "v: int32[3] [0 1 2]"
    big = np.full(100, np.float32(0.1))
    assert summarize("b", big).endswith("min=0.1 max=0.1 mean=0.1")


def test_infinities_of_both_signs_give_a_nan_mean_without_a_warning(recwarn):
    # found by tools/fuzz_runner.py: numpy's RuntimeWarning reached stderr after a clean run
    values = np.array([np.inf, -np.inf, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], np.float32)
    assert summarize("v", values).endswith("min=-inf max=inf mean=nan")
    assert len(recwarn) == 0


def test_bools_are_written_as_the_language_spells_them():
    assert summarize("flag", np.asarray(True)) == "flag: bool = true"
    assert summarize("m", np.array([True, False])) == "m: bool[2] [true false]"
    assert summarize("big", np.array([True, False] * 6)) == "big: bool[12] [true false true false ...] true=6/12"
