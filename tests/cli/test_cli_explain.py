"""`einc build --explain` says, per recurrence group, the form einc emits for the build's target
and why: one program holds a group of each form vulkan-spirv has (a scalar state looping inside
a kernel, an RNN in chunks inside a workgroup, a literal array of points as a host loop, a
training loop whose steps compute tensors) and each is checked against the form the lowering
really emits."""
import pytest

from einc.driver import lower
from einc import host_cpu
from einc.host_cpu import has_avx512, vector_unit
from einc.mlir.recurrences import (dispatch_steps as recurrence_dispatch_steps, host as recurrence_host,
                                   kernel as recurrence_kernel,
                                   region as recurrence_region, tensor_steps as recurrence_tensor_steps,
                                   workgroup as recurrence_workgroup)
from tests.programs import source

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
FORMS = (recurrence_region, recurrence_kernel, recurrence_workgroup, recurrence_host, recurrence_tensor_steps,
         recurrence_dispatch_steps)
TRAINING_WORK = "each step computes 4 tensor(s) whole from 1 earlier-step state(s)"

EXPECTED = {
    # each with the work of a step (einc.passes.step_cost), where the sizes are known
    "llvm-cpu": [f"{recurrence_region.FORM}, because llvm-cpu runs loops inside a dispatch ({work})" for work in (
        "a step runs about 12 scalar operations", "a step's work depends on run-time sizes",
        "a step runs about 57 scalar operations")] + [
        f"{recurrence_dispatch_steps.FORM}, because {TRAINING_WORK}, which one dispatch holds, and llvm-cpu runs "
        "loops inside a dispatch (a step's work depends on run-time sizes)"],
    "vulkan-spirv": [
        f"{recurrence_kernel.FORM}, because every member is a scalar state kept in a window and a step "
        "runs no loop of its own",
        f"{recurrence_workgroup.FORM}, because `h` holds more than one scalar a step, and every read of a "
        "member is at t - c or a fixed step",
        f"{recurrence_host.FORM}, because `s` holds more than one scalar a step, and a step builds a "
        "literal array of points",
        f"{recurrence_tensor_steps.FORM}, because {TRAINING_WORK}, and vulkan-spirv runs no loops inside a dispatch"],
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


# The dense kernels part: each reduction the lowering emits as a named op (or leaves a loop nest
# for want of reads proven in bounds), with the run-time sizes that put it on a slower path.
DENSE_PROGRAM = """let X: [f32; B, C, H, W];
let K: [f32; F, C, 5, 5];
let A: [f32; M, N];
let V: [f32; N, P];
let Y[n, o, h in 0..H, w in 0..W] = sum[c, kh, kw](if ih >= 0 && ih < H && iw >= 0 && iw < W {
    X[n, c, ih, iw] * K[o, c, kh, kw] } else { 0.0 } where ih = h + kh - 2, iw = w + kw - 2);
let Q[n, c, h, w] = max[dh in 0..3, dw in 0..3](X[n, c, 2 * h + dh, 2 * w + dw]);
let G[i, j] = sum[k](A[i, k] * V[k, j]);
"""
SPECIALIZE = "(or einc run / einc.jit, which build for the sizes of the inputs they are given)"
BLOCKS_FIXED = "runs the op once over static shapes, with no blocks"


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "dense.ein"
    path.write_text(DENSE_PROGRAM)
    return path


def dense_lines(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("dense kernels"))
    return lines[start:next(k for k, line in enumerate(lines) if line.startswith("data-dependent"))]


@pytest.mark.parametrize("flags, columns", [("avx2 fma avx512f", "64, 32 and 16"), ("avx2 fma", "64, 32, 16 and 8")])
def test_explain_names_the_window_ops_run_time_sizes_slow_down(einc_cli, dense, monkeypatch, flags, columns):
    """The blocks of columns named are the host's (a row of 8 columns on AVX2 gets blocks of 8)."""
    monkeypatch.setattr(host_cpu, "cpuinfo_fields", lambda: {"flags": flags})
    status, stdout, stderr = einc_cli("build", dense, "--explain")
    assert (status, stderr) == (0, "")
    header, conv, pool, matmul = dense_lines(stdout)
    assert header == "dense kernels (named ops): 3, 2 of them on a slower path for run-time sizes"
    assert conv.startswith(f"  conv_2d_nchw_fchw at {dense}:5:37: run-time sizes B, F, H, W, C — a window op "
                           "with run-time sizes other than its batch, run on blocks of 8 output channels and "
                           f"{columns} columns of build-time size, a dispatch and a copy into place each: a "
                           "run-time width of one block's length (on AVX2 any whole count of 8-column rows up to "
                           "64) runs once, as fast as fixed, a wider one "
                           "measured 0.4-1.4x the time with the sizes fixed on AVX-512 and 1.0-1.8x on AVX2")
    assert conv.endswith(f"; --dim F=SIZE --dim H=SIZE --dim W=SIZE {SPECIALIZE} {BLOCKS_FIXED}")
    # the pool's reads `2 * h + dh` are proven inside H for h < (H - 1) / 2, so it is the named op
    assert pool.startswith(f"  pooling_nchw_max at {dense}:7:21: run-time sizes B, C, H, W — a pooling "
                           "with run-time sizes other than its batch: IREE's dynamic-shape code, measured 1.1-1.8x")
    assert matmul == (f"  matmul at {dense}:8:15: run-time sizes M, P, N — a contraction: IREE's data-tiled "
                      "code takes run-time sizes at about the speed of fixed ones")


def test_explain_tells_the_truth_about_the_module(einc_cli, dense):
    """The ops it names are in the MLIR of the same build."""
    mlir = einc_cli("build", dense, "--emit", "mlir")[1]
    assert "linalg.conv_2d_nchw_fchw" in mlir and "linalg.pooling_nchw_max" in mlir
    assert "linalg.matmul" in mlir or "linalg.mmt4d" in mlir         # (packed into tiles on AVX-512 hosts)
    fixed = ("--dim", "B=2", "--dim", "C=3", "--dim", "H=8", "--dim", "W=8")
    assert "linalg.pooling_nchw_max" in einc_cli("build", dense, "--emit", "mlir", *fixed)[1]
    status, stdout, _ = einc_cli("build", dense, "--explain", *fixed)
    header, conv, pool, _ = dense_lines(stdout)
    assert header == "dense kernels (named ops): 3, 1 of them on a slower path for run-time sizes"
    assert conv.startswith(f"  conv_2d_nchw_fchw at {dense}:5:37: run-time sizes F — a window op with run-time "
                           "sizes other than its batch, run on blocks of 8 output channels of build-time size")
    assert conv.endswith(f"; --dim F=SIZE {SPECIALIZE} {BLOCKS_FIXED}")
    assert pool == f"  pooling_nchw_max at {dense}:7:21: every size fixed at build time"


def test_a_run_time_batch_alone_is_no_slower_path(einc_cli, dense):
    fixed = ("--dim", "C=3", "--dim", "H=8", "--dim", "W=8", "--dim", "F=4", "--dim", "M=2", "--dim", "N=2",
             "--dim", "P=2")
    status, stdout, _ = einc_cli("build", dense, "--explain", *fixed)
    header, conv, pool, _ = dense_lines(stdout)
    assert header == "dense kernels (named ops): 3, 0 of them on a slower path for run-time sizes"
    batch = "run-time sizes B — a window op whose only run-time size is its batch: measured as fast as with the sizes fixed"
    assert conv == f"  conv_2d_nchw_fchw at {dense}:5:37: {batch}"
    assert pool == f"  pooling_nchw_max at {dense}:7:21: {batch}"


def test_a_pooling_written_out_is_no_slower_path(einc_cli, tmp_path):
    """llvm-cpu writes a 3x3 average pool out as shifted slices (einc/mlir/dense/cpu_poolings);
    vulkan-spirv keeps IREE's op, with its dynamic-shape code."""
    path = tmp_path / "avg.ein"
    path.write_text("let X: [f32; B, C, H, W];\n"
                    "let Y[n, c, h, w] = sum[a in 0..3, b in 0..3](X[n, c, h + a, w + b]) / 9.0;\n")
    status, stdout, _ = einc_cli("build", path, "--explain")
    assert dense_lines(stdout) == [
        "dense kernels (named ops): 1, 0 of them on a slower path for run-time sizes",
        f"  pooling_nchw_sum at {path}:2:21: run-time sizes B, C, H, W — a pooling written out as one pass over "
        "its window's shifted slices of the image: measured 1.0-1.3x the time with the sizes fixed; --dim B=SIZE "
        f"--dim C=SIZE --dim H=SIZE --dim W=SIZE {SPECIALIZE}: the same pass, or IREE's op where that measured "
        "faster at build-time sizes"]
    status, stdout, _ = einc_cli("build", path, "--explain", "--target", "vulkan-spirv")
    assert "IREE's dynamic-shape code, measured 1.1-1.8x" in dense_lines(stdout)[1]


def test_a_pooling_over_pairs_of_columns_is_no_slower_path(einc_cli, tmp_path):
    """llvm-cpu reads the rows of a 2x2 stride-2 max pool as pairs (einc/mlir/dense/pooling_pairs);
    vulkan-spirv keeps IREE's op, with its dynamic-shape code."""
    path = tmp_path / "pairs.ein"
    path.write_text("let X: [f32; B, C, H, W];\n"
                    "let Y[n, c, h, w] = max[a in 0..2, b in 0..2](X[n, c, 2 * h + a, 2 * w + b]);\n")
    status, stdout, _ = einc_cli("build", path, "--explain")
    assert dense_lines(stdout) == [
        "dense kernels (named ops): 1, 0 of them on a slower path for run-time sizes",
        f"  pooling_nchw_max over pairs of columns at {path}:2:21: run-time sizes B, C, H, W — a pooling over "
        "pairs of columns (its last window axis 2 points 2 apart), each pair one 64-bit read (128-bit in f64): "
        "measured 0.9-1.2x the time with the sizes fixed; an odd width runs as before (a 2-d one as IREE's op, "
        f"1.3-1.7x); --dim B=SIZE --dim C=SIZE --dim H=SIZE --dim W=SIZE {SPECIALIZE}: the same pass on IREE's "
        "tiles (an odd width: IREE's op)"]
    status, stdout, _ = einc_cli("build", path, "--explain", "--target", "vulkan-spirv")
    assert "IREE's dynamic-shape code, measured 1.1-1.8x" in dense_lines(stdout)[1]


def test_explain_words_every_form_a_dense_kernel_runs_in():
    """Each of the target's own forms of a named op (a DenseKernel's `form`) has its words."""
    from einc.ir import explain
    from einc.mlir.dense import named_ops
    assert set(explain.FORMS) == {"", *named_ops.FORMS}
    assert all(cost and fixed for form, (_, cost, fixed) in explain.FORMS.items() if form)


def test_run_time_input_channels_are_no_slower_path_on_llvm_cpu(einc_cli, dense):
    """A 2-d convolution's summed input channels at run time cost nothing on llvm-cpu (measured,
    docs/DECISIONS.md); on vulkan-spirv IREE's dynamic-shape code takes them, the slower path."""
    fixed = ("--dim", "H=8", "--dim", "W=8", "--dim", "F=4")
    status, stdout, _ = einc_cli("build", dense, "--explain", *fixed)
    conv = dense_lines(stdout)[1]
    assert conv == (f"  conv_2d_nchw_fchw at {dense}:5:37: run-time sizes B, C — a window op whose run-time "
                    "sizes other than its batch (C) are summed input channels, which this target's convolution "
                    "takes at run time: measured as fast as with the sizes fixed")
    status, stdout, _ = einc_cli("build", dense, "--explain", "--target", "vulkan-spirv", *fixed)
    conv = dense_lines(stdout)[1]
    assert "IREE's dynamic-shape code, the slower path" in conv and conv.endswith(
        f"; --dim C=SIZE {SPECIALIZE} gives IREE static shapes")


def test_vulkan_names_no_blocks(einc_cli, dense):
    """Blocks are llvm-cpu's: on vulkan-spirv the convolution keeps IREE's dynamic-shape code."""
    status, stdout, _ = einc_cli("build", dense, "--explain", "--target", "vulkan-spirv")
    conv = dense_lines(stdout)[1]
    assert conv.startswith(f"  conv_2d_nchw_fchw at {dense}:5:37: run-time sizes B, F, H, W, C — a window op "
                           "with run-time sizes other than its batch: IREE's dynamic-shape code, the slower path")


# The weights a step reads from a copy packed before the loop (einc.mlir.recurrences.packed_weights):
# the RNN's W, where the build has an x86-64 vector unit's sum layout (llvm-cpu tuned to an
# AVX-512 or AVX2 host).
def packed_lines(stdout: str) -> list[str]:
    return [line.split(" — ")[0] for line in stdout.splitlines() if line.startswith("  packed weights: ")]


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic", "vulkan-spirv"])
def test_explain_names_the_weights_a_step_reads_packed(einc_cli, program, target):
    argv = [a for name in OUTPUTS for a in ("--output", name)]
    status, stdout, stderr = einc_cli("build", program, "--explain", "--target", target, *argv)
    assert (status, stderr) == (0, "")
    packs = target == "llvm-cpu" and vector_unit() in ("avx512", "avx2")
    assert packed_lines(stdout) == (["  packed weights: W"] if packs else [])
    if packs:       # under the RNN's group, the only one with a sum along its lanes
        lines = stdout.splitlines()
        assert lines[lines.index("recurrence group 2: s") - 1].startswith("  packed weights: W")
    module = str(lower(str(program), target, OUTPUTS))
    assert ("linalg.transpose" in module) == packs


def test_explain_names_each_packed_weight_of_a_step_once(einc_cli, tmp_path):
    path = tmp_path / "gru.ein"
    path.write_text(source("gru"))
    status, stdout, _ = einc_cli("build", path, "--explain", "--target", "llvm-cpu")
    assert status == 0
    assert packed_lines(stdout) == (["  packed weights: Uz, Ur, Un"] if has_avx512() else [])


# A step whose tensor reads one member at the earlier step and another at the current step,
# once that member is written: the explanation counts each kind of state apart.
CURRENT_STEP_PROGRAM = """let X: [f64; N, 3];
let w[0, d in 0..3] = 0.5;
let g[0, d in 0..3] = 0.0;
let w[k in 1..10, d in 0..3] = w[k - 1, d] * 0.9 + 0.01;
let g[k in 1..10, d in 0..3] = {
    let r[n] = sum[j](X[n, j] * w[k, j]) + g[k - 1, 0];
    r[d] + g[k - 1, d]
};
"""


def test_explain_tells_earlier_step_states_from_current_step_ones(einc_cli, tmp_path):
    path = tmp_path / "current.ein"
    path.write_text(CURRENT_STEP_PROGRAM)
    status, stdout, stderr = einc_cli("build", path, "--explain", "--output", "g")
    assert (status, stderr) == (0, "")
    assert lowerings(stdout) == [f"{recurrence_dispatch_steps.FORM}, because each step computes 1 tensor(s) whole "
                                 "from 1 earlier-step state(s) and 1 state(s) of the current step, once written, "
                                 "which one dispatch holds, and llvm-cpu runs loops inside a dispatch (a step's "
                                 "work depends on run-time sizes)"]


def test_a_convolution_run_as_a_matmul_over_its_windows_says_so(einc_cli, tmp_path, monkeypatch):
    """A strided 1-d convolution over a run-time length runs as a matmul over its windows on
    llvm-cpu (einc/mlir/dense/window_matmuls.py): no slower path for that length; on
    vulkan-spirv it stays IREE's convolution, whose run-time length is the slower path."""
    from einc.mlir.dense import cpu_matmuls
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: "avx512")
    path = tmp_path / "frames.ein"
    path.write_text("let X: [f32; B, 32, T];\nlet K: [f32; 48, 32, 3];\n"
                    "let Y[n, f in 0..48, t in 0..T / 2] = sum[c, k in 0..3](if i >= 0 && i < T {\n"
                    "    X[n, c, i] * K[f, c, k] } else { 0.0 } where i = 2 * t + k - 1);\n")
    status, stdout, _ = einc_cli("build", path, "--explain")
    header, conv = dense_lines(stdout)[:2]
    assert header == "dense kernels (named ops): 1, 0 of them on a slower path for run-time sizes"
    assert conv == (f"  conv_1d_ncw_fcw as a matmul over its windows at {path}:3:39: run-time sizes B, T — a "
                    "convolution run as a matmul over its windows (llvm-cpu's register tiles), the windows copied "
                    "out as rows by a pass of scalar code, then packed: run-time sizes measured 1.0-1.5x the time "
                    f"with the sizes fixed (the copy is the slower part); --dim B=SIZE --dim T=SIZE {SPECIALIZE}: "
                    "the same form over static shapes")
    status, stdout, _ = einc_cli("build", path, "--explain", "--target", "vulkan-spirv")
    assert dense_lines(stdout)[0].endswith("1 of them on a slower path for run-time sizes")


STRIDED = """
let X: [f32; B, 8, H, W];
let K: [f32; 16, 8, 3, 3];
let Y[n, o, h, w] = sum[c, kh, kw](X[n, c, 2 * h + kh, 2 * w + kw] * K[o, c, kh, kw]);
"""


@pytest.mark.parametrize("unit, width, form", [
    ("avx2", None, "as a matmul by its packed windows"), ("avx2", 65, "as a matmul over its windows"),
    ("avx512", None, "as a matmul over its windows")])
def test_a_convolution_says_which_matmul_over_its_windows_it_runs_and_what_dim_gives(
        einc_cli, tmp_path, monkeypatch, unit, width, form):
    """On AVX2 (register tiles of 6 rows) a strided channels-first convolution over a run-time
    width copies its windows straight into the matmul's packed operand; `--explain` says so and
    that `--dim` gives the windows copied out as rows, which a fixed width (or AVX-512's 8-row
    tiles, where the copy joins the pack) runs."""
    from einc.mlir.dense import cpu_matmuls
    monkeypatch.setattr(cpu_matmuls, "vector_unit", lambda: unit)
    path = tmp_path / "strided.ein"
    path.write_text(STRIDED)
    status, stdout, _ = einc_cli("build", path, "--explain", *(("--dim", f"W={width}") if width else ()))
    header, conv = dense_lines(stdout)[:2]
    assert header == "dense kernels (named ops): 1, 0 of them on a slower path for run-time sizes"
    assert conv.startswith(f"  conv_2d_nchw_fchw {form} at {path}:4:21: run-time sizes B, H")
    if form.endswith("packed windows"):
        assert "copies straight into the matmul's packed operand" in conv and "0.7-1.3x" in conv
        assert conv.endswith(f"--dim W=SIZE {SPECIALIZE}: the windows copied out as rows instead (a matmul "
                             "over its windows)")
    else:
        assert "the windows copied out as rows by a pass of scalar code" in conv
        assert conv.endswith(f"{SPECIALIZE}: the same form over static shapes")
