"""The targets einc builds for, one record each: how IREE builds for it, what runs it, and what
the stages ask about it. The CLI and the API turn a name into its record (`get`); every stage
after that takes the record. Defect ids are the entries of docs/IREE_DEFECTS.md.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class Target:
    name: str
    flags: tuple[str, ...]          # iree-compile flags
    devices: tuple[str, ...]        # runtime drivers able to run it, the default first
    note: str                       # what its code runs on, for `--target`'s help
    # element types it cannot run, each with the type to use instead
    unsupported_dtypes: tuple[tuple[str, str], ...] = ()
    # a recurrence group runs as one dispatch with loops inside it (else: a kernel, a workgroup
    # or a host loop, einc.mlir.recurrences.forms)
    loops_in_dispatch: bool = True
    has_vector_lanes: bool = False        # recurrence steps computed in vector lanes
    fuses_step_sums: bool = False         # a step's sum adds each product with one FMA
    convolution_tiles: bool = False       # NCHW convolutions get einc's CPU tile sizes
    register_tiled_matmuls: bool = False  # f32 matmuls packed into einc's register tiles (AVX-512, AVX2)
    # (M, N, K): float matmuls of build-time sizes padded up to these multiples, which the
    # codegen's tiles need (einc.mlir.dense.gpu.matmuls); None: as written
    matmul_size_multiples: tuple[int, int, int] | None = None
    unrolled_poolings: bool = False       # poolings as one pass over their window's shifted slices
    row_gathers: bool = False             # rows at data-dependent positions copied by IREE's gather op
    # softmax attention as one IREE attention op (P never written) where a head's scores (queries x
    # keys) are this many or more, or of run-time size; None: always as written (einc.mlir.dense.attention)
    fused_attention_scores: int | None = None
    loop_budget: int = 1 << 30            # loop iterations one kernel invocation may run
    # bytes the kernels assume each input starts on: one starting elsewhere is copied before a
    # call (IREE-31, einc.runtime.host_memory); None: IREE's own (64 on the CPU)
    input_alignment: int | None = None
    defects: frozenset[str] = frozenset()  # IREE defects of this target a workaround asks about
    # flags replacing those of the same option on a host of a vector unit, as (unit, flags)
    # pairs; the unit as einc.host_cpu.vector_unit() names it
    host_flags: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # flags added for a second try when IREE's compiler crashes on a module (IREE-266): a module
    # whose kernels may be slower rather than none
    flags_after_a_crash: tuple[str, ...] = ()

    @property
    def tuned_to_host(self) -> bool:
        """Whether the code uses this CPU's features (and may not run on another CPU)."""
        return "--iree-llvmcpu-target-cpu=host" in self.flags

    def replacement_for(self, dtype: str) -> str | None:
        """The type to use instead of element type `dtype`, None where this target runs it."""
        return dict(self.unsupported_dtypes).get(dtype)

    def has_defect(self, defect: str) -> bool:
        return defect in self.defects

    def flags_on(self, vector_unit: str | None) -> tuple[str, ...]:
        """iree-compile's flags for this target on a host of `vector_unit`."""
        replacing = dict(self.host_flags).get(vector_unit, ())
        options = {flag.split("=", 1)[0] for flag in replacing}
        return tuple(flag for flag in self.flags if flag.split("=", 1)[0] not in options) + replacing

    def iree_compile_command(self, mlir_path: str, vmfb_path: str, vector_unit: str | None) -> str:
        """The `iree-compile` command line that builds `mlir_path` (as `einc build --emit mlir`
        wrote it) with the flags einc gives IREE for this target on a host of `vector_unit`
        (einc builds in process, with the same flags, then seals the module:
        einc.backend.iree_compile)."""
        return shlex.join(["iree-compile", *self.flags_on(vector_unit), mlir_path, "-o", vmfb_path])


# IREE-01: f64 is demoted to f32 by default. IREE-02: a multi-use producer fused into a partial
# reader computes only that part. IREE-03: a recurrence group reading no input, hoisted into a
# global initializer, fails to compile.
_COMMON = ("--iree-input-demote-f64-to-f32=false", "--iree-dispatch-creation-fuse-multi-use=false",
           "--iree-opt-const-expr-hoisting=false")
# Data tiling packs matmul operands into the CPU's register tiles (3-4x the default codegen,
# benchmarks/ matmul rows). The host target packs f32 matmuls into einc's own tiles
# (einc.mlir.dense.cpu_matmuls), which IREE's mmt4d microkernel has none of, so it builds without them.
# On an AVX2 host the packs and unpacks are IREE's microkernels: its vectorized ones mask every
# load and store there (VMASKMOVPS) and ran 2-3x slower (docs/DECISIONS.md, Dense kernels).
_DATA_TILING = "--iree-opt-data-tiling=true"
_HOST_MATMULS = (_DATA_TILING, "--iree-llvmcpu-enable-ukernels=none")
_AVX2_MATMULS = (("avx2", ("--iree-llvmcpu-enable-ukernels=pack,unpack",)),)
_GENERIC_MATMULS = (_DATA_TILING, "--iree-llvmcpu-enable-ukernels=all")
# IREE-52: IREE's host wait spins beside the local-task workers, so a CPU `main` queues its work
# and signals a fence, which einc's runtime polls without spinning (einc.runtime.fenced_calls).
_FENCED_MAIN = "--iree-execution-model=async-external"
_LOCAL_CPU = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", _FENCED_MAIN)
# IREE-04: the baseline profile emulates bool (i8) buffers in 32-bit words; 8-bit storage avoids it.
_VULKAN_FEATURES = ("--iree-vulkan-target-features=spirv:v1.3,cap:Shader,cap:Int8,"
                    "cap:StorageBuffer8BitAccess,ext:SPV_KHR_storage_buffer_storage_class,"
                    "ext:SPV_KHR_8bit_storage")
_CPU_DEVICES = ("local-task", "local-sync")
# IREE-07, IREE-09, IREE-43, IREE-45, IREE-51, IREE-53: data tiling; IREE-19: float ops marked `contract`;
# IREE-48: a host loop's start rows. IREE-50: their zeros, each of its own (IREE-78: also a
# window's; IREE-120: a chunk's fresh rows). IREE-76: tensors a host loop reads, fenced before
# it. IREE-98: a bool operand of a contraction's fused epilogue (IREE-99, llvm-cpu's only: a
# reduction over two loops beside it; IREE-145, its too: an elementwise producer fused into a
# 6-row pack, vectorized 6 x 1). IREE-105: gathers from a strided slice. IREE-150: a gather of
# rows read at a fixed column. IREE-195: the attention op masks every vector step of a partial
# key count. IREE-196: a kernel with no loops reads its 0-d operands by extract. IREE-212: a
# matvec's result broadcast along a run-time axis, fused with its unpack. IREE-220: the scalars a
# recurrence's dispatch region reads, packed past a few (a dispatch binds at most 32 buffers).
# IREE-251: a VM branch's repeated ref operands made values of their own (every target).
# IREE-260: a dispatch region in a host loop's step takes its reshaped captures through a device
# barrier, not a host one. IREE-261: a returned bool tensor's readers take it through a barrier
# (every target). IREE-267: a reduction a kernel reads along two loops, fenced before it.
# IREE-268: a matvec's or vecmat's result, fenced before a consumer reading a row of a matrix.
# IREE-269: a widening kernel's result, fenced before a strided slice of it.
_CPU_DEFECTS = frozenset({"IREE-07", "IREE-09", "IREE-19", "IREE-43", "IREE-45", "IREE-48", "IREE-50",
                          "IREE-51", "IREE-53", "IREE-76", "IREE-77", "IREE-78", "IREE-98", "IREE-102",
                          "IREE-105", "IREE-120", "IREE-150", "IREE-195", "IREE-196", "IREE-212",
                          "IREE-220", "IREE-251", "IREE-260", "IREE-261", "IREE-264", "IREE-267", "IREE-268",
                          "IREE-269"})
# IREE-31: NumPy's large arrays start 16 bytes past a page, so with IREE's 64 they were copied
# every call (the RNN H = 64 bench's 25 MB input: 15% of its time); 16 lends them in place.
_CPU = dict(has_vector_lanes=True, fuses_step_sums=True, convolution_tiles=True, unrolled_poolings=True,
            row_gathers=True,
            fused_attention_scores=1 << 21,
            defects=_CPU_DEFECTS, input_alignment=16,
            # IREE-266: the crashes seen are in CPU data tiling (MaterializeDeviceEncodingPass)
            flags_after_a_crash=("--iree-opt-data-tiling=false",))

_RECORDS = (
    Target("llvm-cpu", _LOCAL_CPU + ("--iree-llvmcpu-target-cpu=host",) + _COMMON + _HOST_MATMULS, _CPU_DEVICES,
           "this CPU (fastest, not portable)",
           register_tiled_matmuls=True, host_flags=_AVX2_MATMULS,
           **{**_CPU, "defects": _CPU_DEFECTS | {"IREE-99", "IREE-145"}}),
    Target("llvm-cpu-generic", _LOCAL_CPU + ("--iree-llvmcpu-target-cpu=generic",) + _COMMON + _GENERIC_MATMULS,
           _CPU_DEVICES, "any CPU of this architecture", **_CPU),
    Target("vulkan-spirv", ("--iree-hal-target-device=vulkan", _VULKAN_FEATURES) + _COMMON, ("vulkan",),
           "Vulkan (no f64, f16, bf16, 16- or 64-bit integers)",
           # no 64-bit types in the profile; IREE-05: 16-bit buffers packed into 32-bit words; the
           # features lack Float16 and 16-bit storage, and SPIR-V has no bf16 arithmetic
           unsupported_dtypes=(("f64", "f32"), ("i64", "i32"), ("u64", "u32"), ("i16", "i32"), ("u16", "i32"),
                               ("f16", "f32"), ("bf16", "f32")),
           # IREE-66: no fused attention (fused_attention_scores stays None).
           # SPIR-V cannot compile a dispatch region with loops; IREE-30: lavapipe stops an
           # invocation after ~65,535 loop iterations
           loops_in_dispatch=False, loop_budget=65_000,
           # IREE's SPIR-V matmul tiles: 64 output columns a workgroup, 8 rows, 4 of K an invocation
           matmul_size_multiples=(8, 64, 4),
           defects=frozenset({"IREE-06", "IREE-41", "IREE-42", "IREE-46", "IREE-49", "IREE-63", "IREE-89",
                              "IREE-90", "IREE-102",
                              "IREE-220",        # IREE-220: as on the CPU targets
                              "IREE-251",        # IREE-251: as on the CPU targets
                              "IREE-261",        # IREE-261: as on the CPU targets
                              "IREE-270",        # IREE-270: tables computed from u8/i8 ones fenced as bools
                              "IREE-272",        # IREE-272: gathers clamp their indices as i32
                              "IREE-274"})),   # IREE-274: bool constants built as bytes
)
TARGETS: Mapping[str, Target] = MappingProxyType({t.name: t for t in _RECORDS})
DEFAULT = TARGETS["llvm-cpu"]


def get(name: str | Target) -> Target:
    """The record of target `name` (a record is returned as it is); ValueError for an unknown name."""
    if isinstance(name, Target):
        return name
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; expected one of {', '.join(TARGETS)}") from None
