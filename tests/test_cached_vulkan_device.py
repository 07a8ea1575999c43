"""The suite rule of tests/conftest.py against IREE's cached Vulkan device: kept open until the
process ends, its two lavapipe polling threads slowed every later test of the process, and CI
ran past its time limit (docs/DECISIONS.md, Two test tiers). A test that leaves one fails; the
device is dropped, so the next test does not pay."""
import pytest

from tests.nested_runs import run_under_the_suite_rules

CASES = '''
import iree.runtime as rt
from iree.runtime import system_setup


def test_leaves_the_cached_device_open():
    rt.get_device("vulkan")


def test_finds_it_dropped():
    assert not any(uri.startswith("vulkan") for uri in system_setup._GLOBAL_DEVICES_BY_URI)


def test_opens_its_own_and_lets_it_go():
    rt.get_device("vulkan", cache=False)
'''


@pytest.mark.vulkan
def test_a_test_leaving_the_cached_vulkan_device_open_fails(tmp_path):
    out = run_under_the_suite_rules(tmp_path, CASES)
    assert "ERROR at teardown of test_leaves_the_cached_device_open" in out, out
    assert "left IREE's cached vulkan device open" in out, out
    assert "3 passed, 1 error" in out, out
