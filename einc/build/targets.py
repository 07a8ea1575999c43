"""The IREE targets einc builds for, their compiler flags and the runtime devices that run them."""
from __future__ import annotations

import shlex
from dataclasses import dataclass

# IREE 3.13 demotes f64 to f32 at the input by default; Einlang's f64 must stay f64.
_KEEP_F64 = "--iree-input-demote-f64-to-f32=false"
# IREE 3.13 fuses an elementwise producer that has several uses into a consumer that reads only
# part of it (`p[j in 0..2] = d[j + 1]`) and then computes only that part: the other uses (the
# output `d`, `sum[i](d[i])`) read elements never written. Found by the differential fuzzer;
# tests/fuzz/regressions/*_read_of_a_shared_value.ein. Such producers get their own dispatch.
_NO_MULTI_USE_FUSION = "--iree-dispatch-creation-fuse-multi-use=false"
# IREE 3.13 hoists a computation that reads no input into a global initializer, and a recurrence
# group (one dispatch region with results of different sizes, r3: 9x2 and r4: 9) hoisted that
# way fails to compile ("invalid Read access range ... of resource %__hoisted_tensor_9x2xf32 with
# size 36"). Found by the differential fuzzer; tests/fuzz/regressions/constant_recurrence_group.ein.
# Such values are computed on each call instead, like the rest of the program.
_NO_CONST_HOISTING = "--iree-opt-const-expr-hoisting=false"
_COMMON = (_KEEP_F64, _NO_MULTI_USE_FUSION, _NO_CONST_HOISTING)
# Data tiling packs matmul operands into the CPU's register tiles (linalg.mmt4d): 3-4x the GF/s
# of the default matmul codegen on einc's matmuls with named (dynamic) dims (benchmarks/, the
# matmul rows). CPU only: the Vulkan flags stay bare. On the host target, einc packs f32 matmuls
# into its own 14x32 tiles (einc.mlir.cpu_matmuls), which IREE's mmt4d microkernel runs 60x
# slower than IREE's code generator (and got wrong at 16x32), so that target builds without
# microkernels: IREE's own 16x16 tiles ran as fast without them (the matmul, MLP, CNN and conv rows).
_DATA_TILING = "--iree-opt-data-tiling=true"
_HOST_MATMULS = (_DATA_TILING, "--iree-llvmcpu-enable-ukernels=none")
_GENERIC_MATMULS = (_DATA_TILING, "--iree-llvmcpu-enable-ukernels=all")


@dataclass(frozen=True)
class Target:
    name: str
    flags: tuple[str, ...]
    devices: tuple[str, ...]   # runtime drivers able to run it, the default first
    note: str

    @property
    def tuned_to_host(self) -> bool:
        """Whether the code uses this CPU's features (and may not run on another CPU)."""
        return "--iree-llvmcpu-target-cpu=host" in self.flags


_LOCAL_CPU = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu")
# The baseline profile (spirv:v1.3,cap:Shader) has only 32-bit storage, so IREE emulates bool
# (i8) buffers with 32-bit words; a word that runs past the end of a buffer whose length is not
# a multiple of 4 is out of bounds, reads as 0 and drops its writes (checked on lavapipe:
# `x > -1.0` over 5 elements gave a false fifth element). 8-bit storage removes the emulation.
_VULKAN_FEATURES = ("--iree-vulkan-target-features=spirv:v1.3,cap:Shader,cap:Int8,"
                    "cap:StorageBuffer8BitAccess,ext:SPV_KHR_storage_buffer_storage_class,"
                    "ext:SPV_KHR_8bit_storage")

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("llvm-cpu", _LOCAL_CPU + ("--iree-llvmcpu-target-cpu=host",) + _COMMON + _HOST_MATMULS,
               ("local-task", "local-sync"),
               "this CPU's full feature set: fastest, but the module may not run on an older or other CPU"),
        Target("llvm-cpu-generic", _LOCAL_CPU + ("--iree-llvmcpu-target-cpu=generic",) + _COMMON + _GENERIC_MATMULS,
               ("local-task", "local-sync"),
               "baseline x86-64/arm64 code: portable across machines of the same architecture, slower"),
        Target("vulkan-spirv", ("--iree-hal-target-device=vulkan", _VULKAN_FEATURES) + _COMMON,
               ("vulkan",),
               "Vulkan compute (SPIR-V 1.3 baseline profile plus 8-bit storage: f32, 8- and 32-bit "
               "integers and bool; no f64, 16- or 64-bit integers)"),
    )
}


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; expected one of {', '.join(TARGETS)}") from None


def iree_compile_command(name: str, mlir_path: str, vmfb_path: str) -> str:
    """The `iree-compile` command line that builds `mlir_path` (as `einc build --emit mlir` wrote
    it) with the flags einc gives IREE for target `name` (einc builds in process, with the same
    flags, then stamps the target and seals the module: einc.build.iree_compile)."""
    return shlex.join(["iree-compile", *get_target(name).flags, mlir_path, "-o", vmfb_path])
