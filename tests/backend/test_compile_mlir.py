"""In-process IREE compilation: targets, the module's reflection kept, f64 kept, diagnostics on failure."""
import pathlib
import resource
import subprocess
import sys

import iree.runtime as rt
import numpy as np
import pytest

from einc.backend import IreeCompileError, compile_mlir
from einc.runtime.fenced_calls import main_invoker
from einc.target import get

DOUBLE = """
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> attributes {iree.reflection = {"einc.signature" = "{}"}} {
  %y = arith.mulf %x, %x : tensor<3xf64>
  return %y : tensor<3xf64>
}
"""
UNSIGNED = "func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> { return %x : tensor<2xi32> }"


def reflection_of(vmfb: bytes) -> dict:
    module = rt.VmModule.copy_buffer(rt.VmInstance(), vmfb)
    return dict(module.lookup_function("main").reflection)


@pytest.fixture(scope="module")
def double_cpu() -> bytes:
    return compile_mlir(DOUBLE, get("llvm-cpu"))


def test_the_reflection_is_the_modules_own(double_cpu):
    # the lowering stamps the target (tests/mlir/test_lower_program.py); the build adds nothing
    reflection = reflection_of(double_cpu)
    assert reflection["einc.signature"] == "{}" and "einc.target" not in reflection


def test_f64_is_not_demoted(double_cpu):
    # IREE 3.13 demotes f64 to f32 by default; the declaration shows what the module really takes.
    assert "tensor<3xf64>" in reflection_of(double_cpu)["iree.abi.declaration"]
    device = rt.get_first_device(["local-sync"])
    instance = rt.VmInstance()
    module = rt.VmModule.copy_buffer(instance, double_cpu)
    context = rt.VmContext(instance, modules=[rt.create_hal_module(instance, device), module])
    main = main_invoker(context, device, module.lookup_function("main"))  # the CPU main takes fences
    x = np.array([1.0 + 2**-40, 2.0, 3.0])
    np.testing.assert_array_equal(main(x).to_host(), x * x)
    del main, context, module, instance, device


@pytest.mark.parametrize("target", ["llvm-cpu-generic", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
def test_other_targets_compile(target):
    assert "main" in rt.VmModule.copy_buffer(rt.VmInstance(), compile_mlir(UNSIGNED, get(target))).function_names


def test_accepts_an_mlir_module_object():
    from iree.compiler import ir

    with ir.Context():
        module = ir.Module.parse(UNSIGNED)
        assert "main" in rt.VmModule.copy_buffer(rt.VmInstance(), compile_mlir(module, get("llvm-cpu"))).function_names


def test_iree_failure_carries_the_diagnostics():
    bad_for_vulkan = DOUBLE  # f64 needs a Vulkan profile with Float64; the baseline has none
    with pytest.raises(IreeCompileError) as failure:
        compile_mlir(bad_for_vulkan, get("vulkan-spirv"))
    assert "error:" in failure.value.diagnostics
    assert str(failure.value).startswith("IREE failed to compile the module for vulkan-spirv:\n")


def test_unparsable_text():
    with pytest.raises(IreeCompileError, match="use of undeclared SSA value|undefined|expected"):
        compile_mlir("func.func @main() -> i32 { return %nothing : i32 }", get("llvm-cpu"))


def test_unknown_target():
    with pytest.raises(ValueError, match="unknown target 'cuda'; expected one of llvm-cpu, llvm-cpu-generic, "
                                         "vulkan-spirv"):
        get("cuda")


def test_the_compiler_runs_on_a_stack_deep_enough_for_its_recursion(tmp_path):
    # IREE's passes recurse on the calling thread: this program's build needed 12-16 MiB and
    # killed the process (SIGSEGV, no message) on the 8 MiB main thread of a Linux default
    source = pathlib.Path(__file__).with_name("deep_compile.ein")
    out = tmp_path / "deep.vmfb"

    def eight_mib_stack():
        resource.setrlimit(resource.RLIMIT_STACK, (8 << 20, 8 << 20))
    done = subprocess.run([sys.executable, "-m", "einc", "build", str(source), "-o", str(out), "--dim", "M=32"],
                          capture_output=True, text=True, preexec_fn=eight_mib_stack, timeout=600)
    assert done.returncode == 0 and out.stat().st_size > 0, (done.returncode, done.stderr[-2000:])


def test_a_failure_on_the_compilers_thread_reaches_the_caller():
    from einc.backend.compile_server import on_a_deep_stack as _on_a_deep_stack

    def fails():
        raise IreeCompileError("llvm-cpu", "no")
    with pytest.raises(IreeCompileError):
        _on_a_deep_stack(fails)
    assert _on_a_deep_stack(lambda a, b: a + b, 2, 3) == 5
