import pytest

from mlir_samples import compiled, skip_without_vulkan

TARGETS = ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)]


def pytest_runtest_setup(item):
    skip_without_vulkan(item)


@pytest.fixture(scope="session", params=TARGETS)
def target(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def matmul_vmfb(target) -> bytes:
    return compiled("matmul", target)


@pytest.fixture(scope="session")
def add_vmfb(target) -> bytes:
    return compiled("add", target)
