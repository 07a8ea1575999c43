"""The CPU this process runs on, as Linux describes it: what `--iree-llvmcpu-target-cpu=host`
tunes code for. The build cache keys llvm-cpu modules by it, and the lowering picks register
tiles that fit its vector registers (einc.mlir.dense.cpu_matmuls, cpu_convolutions)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

IDENTIFYING_FIELDS = ("model name", "flags", "Features", "CPU implementer", "CPU part")


@lru_cache(maxsize=1)
def cpuinfo_fields() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo; empty where there is none (not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            lines = cpuinfo.read().split("\n\n", 1)[0].splitlines()
    except OSError:
        return {}
    pairs = (line.split(":", 1) for line in lines if ":" in line)
    return {name.strip(): value.strip() for name, value in pairs}


# The x86-64 flags of /proc/cpuinfo that name instruction set extensions LLVM may use; the rest
# (`hypervisor`, `constant_tsc`, ...) say nothing about what code runs. Every arm64 `Features`
# entry is an instruction set extension.
_X86_ISA_FLAGS = re.compile(r"(sse\w*|ssse3|avx\w*|amx\w*|fma4?|f16c|bmi[12]|abm|lzcnt|movbe|popcnt|aes|"
                            r"vaes|pclmulqdq|vpclmulqdq|gfni|sha_ni|adx|cx16|xsave\w*|rdrand|rdseed)")


def isa_features() -> list[str]:
    """The instruction set extensions of this CPU (x86-64 `flags`, arm64 `Features`), sorted;
    empty where /proc/cpuinfo does not say (not Linux)."""
    fields = cpuinfo_fields()
    if "flags" in fields:
        return sorted(f for f in fields["flags"].split() if _X86_ISA_FLAGS.fullmatch(f))
    return sorted(fields.get("Features", "").split())


def has_avx512() -> bool:
    """Whether the host has AVX-512's 32 registers of 16 f32 lanes (x86-64 `avx512f`)."""
    return vector_unit() == "avx512"


@dataclass(frozen=True)
class VectorRegisters:
    """The vector registers code built for a CPU may use: f32 lanes of one, how many, and
    whether a vector step of run-time length is cheap masked (AVX-512's mask registers); where
    not, its rest is better peeled (on a Zen 3, AVX2's masked loads and stores ran a 2x2 max
    pool's rows of 7 results 1.7x slower than steps peeled: docs/DECISIONS.md)."""
    lanes: int
    count: int
    masks: bool = False


# Each x86-64 vector unit einc tiles for, by the name vector_unit() gives it.
VECTOR_REGISTERS = {"avx512": VectorRegisters(16, 32, masks=True), "avx2": VectorRegisters(8, 16)}


def vector_unit() -> str | None:
    """The host's widest vector unit of VECTOR_REGISTERS: "avx512" (`avx512f`), "avx2" (`avx2`
    with `fma`), None elsewhere (arm64, x86-64 before AVX2)."""
    flags = set(cpuinfo_fields().get("flags", "").split())
    if "avx512f" in flags:
        return "avx512"
    return "avx2" if {"avx2", "fma"} <= flags else None


def vector_registers(tuned_to_host: bool) -> VectorRegisters:
    """The vector registers of code tuned to this CPU (`tuned_to_host`, IREE's target-cpu=host)
    or built for any CPU of its architecture: AVX-512 32 of 16 f32, AVX 16 of 8, arm64 (NEON)
    32 of 4, other x86-64 (SSE2, the generic baseline) 16 of 4."""
    unit = vector_unit() if tuned_to_host else None
    if unit is not None:
        return VECTOR_REGISTERS[unit]
    if tuned_to_host and "avx" in cpuinfo_fields().get("flags", "").split():
        return VectorRegisters(8, 16)
    return VectorRegisters(4, 32 if "Features" in cpuinfo_fields() else 16)


def vector_bytes() -> int:
    """The width in bytes of the host's widest float vector registers (64 with AVX-512, 32 with
    AVX, else 16: SSE2, NEON): what IREE takes for its native vector size at `target-cpu=host`."""
    return 4 * vector_registers(True).lanes
