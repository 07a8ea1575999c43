"""The `RecValue` rule: a recurrence group's loop, emitted once, gives every member's storage.

Where the loop runs decides its speed (notes item 3), so the form is chosen per target: on the
CPU the whole group is one dispatch with scalar loops inside (recurrence_region); SPIR-V cannot
compile that form, so there the step loop runs on the host with one kernel per clause and step
(recurrence_host). A group whose steps compute whole tensors (einc.passes.step_work) runs as
that host loop on every target, computing them once per step (recurrence_tensor_steps).
"""
from __future__ import annotations

from iree.compiler import ir

from einc.ir.nodes import RecValue
from einc.mlir import recurrence_host, recurrence_region, recurrence_tensor_steps

HOST_LOOP_TARGETS = ("vulkan-spirv",)


def rec_value(lw, v: RecValue) -> ir.Value:
    group = v.group
    if id(group) not in lw.groups:
        form = recurrence_host if lw.target in HOST_LOOP_TARGETS else recurrence_region
        if group.step_work:
            form = recurrence_tensor_steps
        lw.groups[id(group)] = form.emit_group(lw, group)
    return lw.groups[id(group)][group.members.index(v.member)]
