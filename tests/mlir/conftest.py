import pytest

import iree.runtime as rt


def _vulkan_missing() -> str | None:
    if "vulkan" not in rt.query_available_drivers():
        return "IREE runtime has no vulkan driver"
    try:
        rt.get_first_device(["vulkan"])
    except Exception as err:  # no ICD: lavapipe not installed
        return f"no Vulkan device ({err})"
    return None


def pytest_runtest_setup(item):
    if item.get_closest_marker("vulkan") and (reason := _vulkan_missing()):
        pytest.skip(reason)
