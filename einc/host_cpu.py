"""The CPU this process runs on, as Linux describes it: what `--iree-llvmcpu-target-cpu=host`
tunes code for. The build cache keys llvm-cpu modules by it, and the lowering picks register
tiles that fit its vector registers (einc.mlir.dense.cpu_matmuls)."""
from __future__ import annotations

import re
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
    return "avx512f" in cpuinfo_fields().get("flags", "").split()


def vector_bytes() -> int:
    """The width in bytes of the host's widest float vector registers: 64 with AVX-512, 32 with
    AVX, else 16 (SSE2, NEON): what IREE takes for its native vector size at `target-cpu=host`."""
    flags = cpuinfo_fields().get("flags", "").split()
    return 64 if "avx512f" in flags else 32 if "avx" in flags else 16
