"""IREE's compiler runs in a process of its own (einc.backend.compile_server), kept between builds:
a crash in it is an error for the build, not the end of the user's process, and on the CPU targets
the build is tried again without data tiling (IREE-266), with a BuildWarning."""
import dataclasses
from pathlib import Path
import os
import signal
import subprocess
import sys
import time

import iree.runtime as rt
import pytest

from einc.backend import iree_compile
from einc.backend.iree_compile import IreeCompilerCrash, compile_mlir
from einc.diagnostics import BuildWarning
from einc.target import get
from tests.compiler_crashes import next_compiler_crashes  # noqa: F401 - a fixture

# a build of several seconds: a product chain with two gradients a step over a run-time batch
LONG_BUILD = (Path(__file__).parents[1] / "programs" / "holdout" / "bce_mish_train.ein").read_text() \
    .replace("[f32; 16, 3]", "[f32; N, 3]").replace("[f32; 16]", "[f32; N]")
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


def _children(pid: int) -> list[str]:
    """The command lines of the live processes whose parent is `pid` (Linux's /proc)."""
    lines = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                if int(stat.read().rsplit(")", 1)[1].split()[1]) != pid:
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                lines.append(cmdline.read().replace(b"\0", b" ").decode())
        except (OSError, ValueError, IndexError):
            continue
    return lines


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_in_a_build_ends_it_and_its_compiler_process_without_a_traceback(tmp_path):
    source, out = tmp_path / "long.ein", tmp_path / "long.vmfb"
    source.write_text(LONG_BUILD)
    build = subprocess.Popen([sys.executable, "-m", "einc", "build", str(source), "-o", str(out)],
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not any("einc.backend.compile_server" in c for c in _children(build.pid)):
        assert time.monotonic() < deadline and build.poll() is None
        time.sleep(0.05)
    time.sleep(1.0)
    os.killpg(build.pid, signal.SIGINT)     # as a terminal's Ctrl-C: to the whole process group
    stderr = build.communicate(timeout=60)[1]
    assert (build.returncode, stderr.strip(), out.exists()) == (130, "error: interrupted", False)
    time.sleep(0.5)
    assert not _children(build.pid) and not any(str(build.pid) in c for c in _children(1))
