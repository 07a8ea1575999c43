"""Suite-wide rule: tests marked `vulkan` need a Vulkan device (Mesa's lavapipe is enough).

Without one they are skipped with the reason, except under CI (CI=true), whose .ci/run
installs lavapipe: there a missing device is a failure, so the Vulkan path cannot silently
go untested.
"""
from __future__ import annotations

import functools
import os

import pytest


@functools.lru_cache(maxsize=None)
def vulkan_unavailable_reason() -> str | None:
    import iree.runtime as rt

    if "vulkan" not in rt.query_available_drivers():
        return "IREE runtime has no vulkan driver"
    try:
        rt.get_first_device(["vulkan"])
    except (ValueError, RuntimeError) as err:
        return f"no Vulkan device ({err}); install mesa-vulkan-drivers and libvulkan1 for lavapipe"
    return None


def pytest_runtest_setup(item):
    reason = vulkan_unavailable_reason() if item.get_closest_marker("vulkan") else None
    if reason and os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the Vulkan tests: {reason}")
    if reason:
        pytest.skip(reason)
