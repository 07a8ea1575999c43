"""IREE's compiler runs in a process of its own (einc.backend.compile_server), kept between builds:
a crash in it is an error for the build, not the end of the user's process, and on the CPU targets
the build is tried again without data tiling (IREE-266), with a BuildWarning."""
import dataclasses

import iree.runtime as rt
import pytest

from einc.backend import iree_compile
from einc.backend.iree_compile import IreeCompilerCrash, compile_mlir
from einc.diagnostics import BuildWarning
from einc.target import get
from tests.compiler_crashes import next_compiler_crashes  # noqa: F401 - a fixture

IDENTITY = "func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> { return %x : tensor<2xi32> }"


def _builds_main(vmfb: bytes) -> bool:
    return "main" in rt.VmModule.copy_buffer(rt.VmInstance(), vmfb).function_names


def test_a_crash_is_an_error_naming_the_signal_and_the_next_build_works(next_compiler_crashes):
    no_second_try = dataclasses.replace(get("llvm-cpu"), flags_after_a_crash=())
    with pytest.raises(IreeCompilerCrash, match=r"IREE's compiler crashed \(SIGSEGV\) building the module "
                                                r"for llvm-cpu"):
        compile_mlir(IDENTITY, no_second_try)
    assert _builds_main(compile_mlir(IDENTITY, no_second_try))


def test_after_a_crash_a_cpu_build_is_tried_again_without_data_tiling(next_compiler_crashes):
    cpu = get("llvm-cpu")
    assert cpu.flags_after_a_crash == ("--iree-opt-data-tiling=false",)
    with pytest.warns(BuildWarning, match=r"crashed \(SIGSEGV\).*built again with --iree-opt-data-tiling=false"):
        vmfb = compile_mlir(IDENTITY, cpu)
    assert _builds_main(vmfb)
    first, second = next_compiler_crashes
    assert second == first + ("--iree-opt-data-tiling=false",)


def test_vulkan_has_no_second_try():
    assert get("vulkan-spirv").flags_after_a_crash == ()


def test_one_compiler_process_serves_one_build_after_another():
    compile_mlir(IDENTITY, get("llvm-cpu"))
    kept = list(iree_compile._SERVERS.idle)
    compile_mlir(IDENTITY, get("llvm-cpu"))
    assert kept and iree_compile._SERVERS.idle == kept


def test_the_compiler_process_leaves_when_its_stdin_closes():
    server = iree_compile._Server()
    server.close()
    assert server.process.returncode == 0
