"""`einc build --explain`'s kernel list: which linalg ops each source definition became, read
from the lowered module itself (every op carries the position of the definition it computes,
einc.mlir.core.locations), so the list is what the lowering decided, not a second guess of it."""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

from iree.compiler import ir

# linalg op name -> the kind listed; ops not listed (fill, yield, index) are not kernels
NAMED_KINDS = {"matmul": "matmul", "mmt4d": "matmul", "batch_matmul": "batch_matmul", "matvec": "matvec",
               "vecmat": "vecmat", "dot": "dot", "transpose": "transpose"}
PACKING = ("pack", "unpack")
_LOCATION = re.compile(r'loc\("(?P<file>[^"]+)":(?P<line>\d+):(?P<col>\d+)\)')


def kernel_lines(module: ir.Module) -> list[str]:
    """One entry per source definition, in source order: its position, its line and the kernels."""
    kernels: dict[tuple, Counter] = defaultdict(Counter)

    def visit(op: ir.Operation) -> ir.WalkResult:
        kind = _kind(op)
        at = _LOCATION.fullmatch(str(op.location))
        if kind is not None and at is not None:
            kernels[(at["file"], int(at["line"]))][kind] += 1
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    lines = []
    for (file, line), kinds in sorted(kernels.items()):
        lines.append(f"  {Path(file).name}:{line}  {_source_line(file, line)}")
        lines.append("      " + ", ".join(_count(kind, n) for kind, n in kinds.items()))
    return lines


def _kind(op: ir.Operation):
    name = op.name
    if name == "iree_linalg_ext.attention":
        return "fused attention (online softmax, P never written)"
    if name == "iree_linalg_ext.gather":
        return "row gather (rows at data-dependent positions, copied whole)"
    if not name.startswith("linalg."):
        return None
    short = name.removeprefix("linalg.")
    if short in NAMED_KINDS:
        return NAMED_KINDS[short]
    if short in PACKING:
        return "packing (data-tiled matmul operand or result)"
    if short.startswith(("conv_", "depthwise_conv_")):
        return "conv"
    if short.startswith("pooling_"):
        return "pooling"
    if short == "generic":
        iterators = str(op.attributes["iterator_types"])
        return "generic reduction" if "reduction" in iterators else "generic elementwise"
    return None


def _count(kind: str, n: int) -> str:
    return kind if n == 1 else f"{n}x {kind}"


def _source_line(file: str, line: int) -> str:
    try:
        text = Path(file).read_text(encoding="utf-8").splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return ""
    return text if len(text) <= 90 else text[:87] + "..."
