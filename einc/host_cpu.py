"""The CPU this process runs on, as Linux describes it: what `--iree-llvmcpu-target-cpu=host`
tunes code for. The build cache keys llvm-cpu modules by it, and the lowering picks register
tiles that fit its vector registers (einc.mlir.cpu_matmuls)."""
from __future__ import annotations

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


def has_avx512() -> bool:
    """Whether the host has AVX-512's 32 registers of 16 f32 lanes (x86-64 `avx512f`)."""
    return "avx512f" in cpuinfo_fields().get("flags", "").split()
