"""Every diagnostic has a location. The suite-wide rule in tests/conftest.py checks each one that
a test's program gets from the pipeline; here: that the rule fails a test whose diagnostic has
none, and keeps its one exception. (Mutants of real programs are held to the same check by the
mutant fuzzer itself, fuzz.mutants.check.diagnostic_problem, whose sample runs in
tests/fuzz/test_sample.py.)"""

from tests.nested_runs import run_under_the_suite_rules

CASES = '''
import pytest
from einc import diagnostics as d, driver


def raise_(err):
    raise err


def test_unlocated():
    with pytest.raises(d.CompileError):
        driver._stage(None, raise_, d.error(d.BOUNDS, "a read past the end"))


def test_located():
    span = d.Span("prog.ein", 1, 1, 1, 4)
    with pytest.raises(d.CompileError):
        driver._stage(None, raise_, d.error(d.BOUNDS, "a read past the end", span))


def test_a_missing_program_file_has_no_text_to_point_into(tmp_path):
    with pytest.raises(d.CompileError):
        driver.front_end(str(tmp_path / "absent.ein"))
'''


def test_the_suite_rule_fails_a_test_whose_diagnostic_has_no_location(tmp_path):
    out = run_under_the_suite_rules(tmp_path, CASES)
    assert "ERROR at teardown of test_unlocated" in out, out
    assert "E005 without a location: a read past the end" in out
    assert "3 passed, 1 error" in out, out

