import pytest

from mlir_samples import compiled

TARGETS = ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)]


@pytest.fixture(scope="session", params=TARGETS)
def target(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def matmul_vmfb(target) -> bytes:
    return compiled("matmul", target)


@pytest.fixture(scope="session")
def add_vmfb(target) -> bytes:
    return compiled("add", target)
