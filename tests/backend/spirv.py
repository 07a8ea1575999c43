"""spirv-val over the SPIR-V kernels of a vulkan-spirv build, as IREE dumps them
(`--iree-hal-dump-executable-binaries-to`): used by test_spirv_valid.py and by
tests/examples/test_goldens.py, which checks the kernels of the examples it builds for Vulkan
rather than having them built twice."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

# einc.backend.targets asks for spirv:v1.3; Vulkan 1.1 is the environment of SPIR-V 1.3
TARGET_ENV = "vulkan1.1"
SPIRV_VAL = shutil.which("spirv-val")
MISSING = "spirv-val not found; install Debian's spirv-tools (tools/setup_vulkan.sh does)"


def dump_flags(folder: Path) -> tuple[str, ...]:
    return (f"--iree-hal-dump-executable-binaries-to={folder}",)


def available() -> bool:
    """Whether spirv-val is here; under CI (CI=true) its absence fails the test instead."""
    if SPIRV_VAL is None and os.environ.get("CI") == "true":
        pytest.fail(f"CI must validate the SPIR-V kernels: {MISSING}")
    return SPIRV_VAL is not None


def invalid_kernels(name: str, folder: Path) -> tuple[int, list[str]]:
    """The number of kernels dumped into `folder` and one line per kernel spirv-val rejects."""
    kernels = sorted(Path(folder).glob("*.spv"))
    failures = []
    for kernel in kernels:
        check = subprocess.run([SPIRV_VAL, "--target-env", TARGET_ENV, str(kernel)], capture_output=True, text=True)
        if check.returncode != 0:
            failures.append(f"{name}: {kernel.name}: {(check.stdout + check.stderr).strip()}")
    return len(kernels), failures
