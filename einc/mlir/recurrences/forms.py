"""The `RecValue` rule: a recurrence group's loop, emitted once, gives every member's storage.

Where the loop runs decides its speed (docs/FEATURES.md), so the form is chosen per target
(`choose_form`, which `einc build --explain` reports): on the CPU the whole group is one
dispatch with native loops inside (recurrence_region). SPIR-V cannot compile that form, so on
vulkan-spirv a group of scalar states runs its loop inside a kernel (recurrence_kernel), a group
whose reads of its members the host can place runs chunks of steps inside one workgroup
(recurrence_workgroup), and any other group runs its step loop on the host with one kernel per
clause and step (recurrence_host). On the CPU a group of independent series along its last axis
runs each block of lanes through all its steps instead (recurrence_batch). A group whose steps
compute whole tensors (einc.passes.step_work) computes them once per step: on the CPU inside one
dispatch where it can hold them and the step is not heavy (recurrence_dispatch_steps), else in a
host loop of kernels (recurrence_tensor_steps).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from iree.compiler import ir

from einc.ir.nodes import RecurrenceGroup, RecValue
from einc.ir.state_slices import is_state_slice, reads_current_step
from einc.passes.step_cost import step_operations
from einc.mlir.recurrences import (batch as recurrence_batch, dispatch_steps as recurrence_dispatch_steps,
                                   host as recurrence_host,
                                   kernel as recurrence_kernel, region as recurrence_region,
                                   tensor_steps as recurrence_tensor_steps,
                                   workgroup as recurrence_workgroup)
from einc.target import Target


@dataclass(frozen=True)
class FormChoice:
    form: ModuleType      # the module whose emit_group runs the group
    why: str

    def explain(self) -> str:
        return f"{self.form.FORM}, because {self.why}"


def choose_form(group: RecurrenceGroup, target: Target) -> FormChoice:
    if group.step_work:
        slices = [v for v in group.step_work if is_state_slice(v)]
        loops = [v for v in group.step_work if isinstance(v, RecValue)]
        tensors = [v for v in group.step_work if v.rank > 0 and v not in slices and v not in loops]
        nested = f" and runs {len({id(v.group) for v in loops})} nested recurrence loop(s)" if loops else ""
        work = f"each step computes {len(tensors)} tensor(s) whole{nested} from {slice_sources(group, slices)}"
        not_dispatch = recurrence_dispatch_steps.misfit(group, target)
        if not_dispatch is None:
            return FormChoice(recurrence_dispatch_steps, f"{work}, which one dispatch holds, and {target.name} "
                              f"runs loops inside a dispatch ({_work(group)})")
        return FormChoice(recurrence_tensor_steps, f"{work}, and {not_dispatch}")
    if target.has_vector_lanes and recurrence_batch.misfit(group) is None:
        return FormChoice(recurrence_batch, "no step reads across the last (batch) axis, and its other "
                          "axes are small: the steps of a block of lanes need no loads")
    if target.loops_in_dispatch:
        held = [m.name for m in group.members if len(m.shape) > 1 and recurrence_region.in_registers(m)]
        return FormChoice(recurrence_region, f"{target.name} runs loops inside a dispatch ({_work(group)})" + (
            f"; small tensor states held in registers, one per point, never loaded back: {', '.join(held)}"
            if held else ""))
    not_kernel = recurrence_kernel.misfit(group)
    if not_kernel is None:
        return FormChoice(recurrence_kernel, "every member is a scalar state kept in a window and a step "
                          "runs no loop of its own")
    not_workgroup = recurrence_workgroup.misfit(group)
    if not_workgroup is None:
        return FormChoice(recurrence_workgroup, f"{not_kernel}, and every read of a member is at t - c or "
                          "a fixed step")
    return FormChoice(recurrence_host, f"{not_kernel}, and {not_workgroup}")


def _work(group: RecurrenceGroup) -> str:
    """The estimated work of a step (einc.passes.step_cost), which keeps the group in one dispatch
    at any size on the CPU: a host loop's kernels run the same scalar code a point, without its
    vector lanes (docs/DECISIONS.md, "heavy steps")."""
    work = step_operations(group)
    if work is None:
        return "a step's work depends on run-time sizes"
    return f"a step runs about {work:,} scalar operations"


def slice_sources(group: RecurrenceGroup, slices: list) -> str:
    """`N earlier-step state(s)`, and the states the step reads at its own step once written."""
    current = sum(reads_current_step(v, group) for v in slices)
    earlier = f"{len(slices) - current} earlier-step state(s)"
    return earlier + (f" and {current} state(s) of the current step, once written" if current else "")


def rec_value(lw, v: RecValue) -> ir.Value:
    group = v.group
    if id(group) not in lw.groups:
        lw.groups[id(group)] = choose_form(group, lw.target).form.emit_group(lw, group)
    return lw.groups[id(group)][group.members.index(v.member)]
