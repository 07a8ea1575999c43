"""The `RecValue` rule: a recurrence group's loop, emitted once, gives every member's storage.

Where the loop runs decides its speed (notes item 3), so the form is chosen per target: on the
CPU the whole group is one dispatch with native loops inside (recurrence_region); SPIR-V cannot
compile that form, so there a group of scalar states runs its loop inside a kernel
(recurrence_kernel) and any other group runs its step loop on the host with one kernel per
clause and step (recurrence_host). A group whose steps compute whole tensors
(einc.passes.step_work) runs as a host loop on every target, computing them once per step
(recurrence_tensor_steps).
"""
from __future__ import annotations

from iree.compiler import ir

from einc.ir.nodes import RecValue
from einc.mlir import (recurrence_host, recurrence_kernel, recurrence_region, recurrence_tensor_steps,
                       recurrence_workgroup)
from einc.mlir import recurrence_lanes  # noqa: F401  (adds the Reduce step rule every form uses)

HOST_LOOP_TARGETS = ("vulkan-spirv",)


def rec_value(lw, v: RecValue) -> ir.Value:
    group = v.group
    if id(group) not in lw.groups:
        form = recurrence_region
        if lw.target in HOST_LOOP_TARGETS:
            form = recurrence_kernel if recurrence_kernel.fits(group) else (
                recurrence_workgroup if recurrence_workgroup.fits(group) else recurrence_host)
        if group.step_work:
            form = recurrence_tensor_steps
        lw.groups[id(group)] = form.emit_group(lw, group)
    return lw.groups[id(group)][group.members.index(v.member)]
