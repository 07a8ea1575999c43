"""IREE's lowering config for one CPU op: its tile sizes per level and the codegen pipeline that
reads them, as the `compilation_info` attribute set on the op."""
from __future__ import annotations

from iree.compiler import ir


def compilation_info(levels: dict, pipeline: str, peeled: bool = False) -> ir.Attribute:
    """`levels`: tile sizes by level name (distribution, vector_common_parallel, ...);
    `pipeline`: an #iree_cpu.pipeline name (DataTiling, ConvTileAndDecomposeExpert); `peeled`:
    a partial vector step runs as a loop of its own (else IREE may mask every step)."""
    fields = ", ".join(f"{name} = [{', '.join(map(str, sizes))}]" for name, sizes in levels.items())
    options = ", {enable_loop_peeling}" if peeled else ""
    # IREE's Python bindings have no builders for #iree_cpu attributes, so this one is parsed.
    return ir.Attribute.parse(
        f"#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<{fields}>, "
        f"translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<{pipeline}>{options}>>")
