"""`einc build --explain` says, per recurrence group, the form einc emits for the build's target
and why: one program holds a group of each form vulkan-spirv has (a scalar state looping inside
a kernel, an RNN in chunks inside a workgroup, a literal array of points as a host loop, a
training loop whose steps compute tensors) and each is checked against the form the lowering
really emits."""
import pytest

from einc.driver import lower
from einc.mlir import (recurrence_host, recurrence_kernel, recurrence_region, recurrence_tensor_steps,
                       recurrence_workgroup)

FORMS_PROGRAM = """
use std::math::tanh;
let x0: f32;
let W: [f32; H, H];
let u: [f32; T, H];
let v: [f32; S, 3];
let X: [f32; N, 3];
let y: [f32; N];
let x[0] = x0;
let x[t in 1..1000] = 3.7 * x[t - 1] * (1.0 - x[t - 1]);
let last = x[999];
let h[0, i in 0..H] = 0.0;
let h[t in 1..T, i in 0..H] = tanh(sum[j](W[i, j] * h[t - 1, j]) + u[t, i]);
let final[i] = h[T - 1, i];
let s[0, i in 0..3] = v[0, i];
let s[t in 1..S, i in 0..3] = [s[t - 1, 1], s[t - 1, 2], s[0, 0]][i] * 0.9 + v[t, i];
let w[0, d in 0..3] = 0.5;
let w[k in 1..30, d in 0..3] = w[k - 1, d] - 0.1 * {
    let c = w[k - 1];
    let r[n] = sum[j](X[n, j] * c[j]) - y[n];
    let L = sum[n](r[n] * r[n]) / 2.0;
    (@L / @c)[d]
};
"""
OUTPUTS = ["last", "final", "s", "w"]        # `x` only read at its end: kept in a window
FORMS = (recurrence_region, recurrence_kernel, recurrence_workgroup, recurrence_host, recurrence_tensor_steps)
TRAINING = (f"{recurrence_tensor_steps.FORM}, because each step computes 4 tensor(s) whole from 1 "
            "earlier-step state(s) (every target)")

EXPECTED = {
    "llvm-cpu": [f"{recurrence_region.FORM}, because llvm-cpu runs loops inside a dispatch"] * 3 + [TRAINING],
    "vulkan-spirv": [
        f"{recurrence_kernel.FORM}, because every member is a scalar state kept in a window and a step "
        "runs no loop of its own",
        f"{recurrence_workgroup.FORM}, because `h` holds more than one scalar a step, and every read of a "
        "member is at t - c or a fixed step",
        f"{recurrence_host.FORM}, because `s` holds more than one scalar a step, and a step builds a "
        "literal array of points",
        TRAINING],
}


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "forms.ein"
    path.write_text(FORMS_PROGRAM)
    return path


def lowerings(explained: str) -> list[str]:
    return [line.split("lowering: ", 1)[1] for line in explained.splitlines() if line.startswith("  lowering: ")]


@pytest.mark.parametrize("target", ["llvm-cpu", "vulkan-spirv"])
def test_explain_names_each_groups_form_for_the_target(einc_cli, program, target):
    argv = [a for name in OUTPUTS for a in ("--output", name)]
    status, stdout, stderr = einc_cli("build", program, "--explain", "--target", target, *argv)
    assert (status, stderr) == (0, "")
    assert stdout.splitlines()[0] == f"program {program}, built for {target}"
    assert [line for line in stdout.splitlines() if line.startswith("recurrence group")] == [
        "recurrence group 0: x", "recurrence group 1: h", "recurrence group 2: s", "recurrence group 3: w"]
    assert lowerings(stdout) == EXPECTED[target]


@pytest.mark.parametrize("target", ["llvm-cpu", "vulkan-spirv"])
def test_the_explained_form_is_the_one_the_lowering_emits(program, target, monkeypatch):
    emitted = {}         # a group's members -> the form whose emit_group ran it first

    def spy(form):
        original = form.emit_group

        def emit_group(lw, group, *args):
            emitted.setdefault(tuple(m.name for m in group.members), form.FORM)
            return original(lw, group, *args)
        return emit_group
    for form in FORMS:
        monkeypatch.setattr(form, "emit_group", spy(form))
    lower(str(program), target, OUTPUTS)
    assert [emitted[(name,)] for name in ("x", "h", "s", "w")] == [e.split(", because")[0] for e in EXPECTED[target]]
