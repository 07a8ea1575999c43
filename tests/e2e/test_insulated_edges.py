"""Clauses of a recurrence reading points other clauses write at the same step (LANGUAGE.md
section 4): insulated (Neumann) edges copying the interior just computed, run in dependency
order; a cycle among the clauses of one step is E007. Each result is checked against a NumPy
simulation written here."""
import numpy as np
import pytest

import einc
from einc import driver
from einc.diagnostics import CompileError
from einc.runtime import RunError
from tests.programs import built
from tests.tiers import VULKAN_FULL

rng = np.random.default_rng(13)
TARGETS = ["llvm-cpu", VULKAN_FULL]
TOL = dict(rtol=1e-5, atol=1e-5)        # f32 over tens of steps of a stable scheme

HEAT_1D = """
let u0: [f32; N];
let a: f32;
let u[0, i] = u0[i];
let u[t in 1..20, i in 1..N - 1] = u[t - 1, i] + a * (u[t - 1, i - 1] - 2.0 * u[t - 1, i] + u[t - 1, i + 1]);
let u[t in 1..20, 0] = u[t, 1];
let u[t in 1..20, i in N - 1..N] = u[t, N - 2];
"""

# the edges written first, the corners reading the edges: the step orders them after what they read
HEAT_2D = """
let u0: [f32; H, W];
let a: f32;
let u[0, i, j] = u0[i, j];
let u[t in 1..12, i in 0..H, 0] = u[t, i, 1];
let u[t in 1..12, i in 0..H, j in W - 1..W] = u[t, i, W - 2];
let u[t in 1..12, 0, j in 1..W - 1] = u[t, 1, j];
let u[t in 1..12, i in H - 1..H, j in 1..W - 1] = u[t, H - 2, j];
let u[t in 1..12, i in 1..H - 1, j in 1..W - 1] = u[t - 1, i, j] + a * (u[t - 1, i - 1, j] + u[t - 1, i + 1, j]
    + u[t - 1, i, j - 1] + u[t - 1, i, j + 1] - 4.0 * u[t - 1, i, j]);
"""

WAVE = """
let u0: [f32; N];
let c: f32;
let u[0, i] = u0[i];
let u[1, i] = u0[i];
let u[t in 2..30, i in 1..N - 1] = 2.0 * u[t - 1, i] - u[t - 2, i]
    + c * (u[t - 1, i - 1] - 2.0 * u[t - 1, i] + u[t - 1, i + 1]);
let u[t in 2..30, i in N - 1..N] = u[t, N - 2];
let u[t in 2..30, 0] = u[t, 1];
"""

# a clause reading a later point of its step, which the clause after it defines
LATER_POINT = """
let x: [f32; N];
let v[0, i] = x[i];
let v[t in 1..10, i in 0..N - 1] = 0.5 * v[t - 1, i] + 0.25 * v[t, N - 1];
let v[t in 1..10, i in N - 1..N] = v[t - 1, i] + 1.0;
"""

DIFFUSIVITY = """
let u0: [f64; N];
let k: f64;
let u[0, i] = u0[i];
let u[t in 1..16, i in 1..N - 1] = u[t - 1, i] + k * (u[t - 1, i - 1] - 2.0 * u[t - 1, i] + u[t - 1, i + 1]);
let u[t in 1..16, 0] = u[t, 1];
let u[t in 1..16, i in N - 1..N] = u[t, N - 2];
let loss = sum[i](u[15, i] * u[15, i] * (i as f64));
let g = @loss / @k;
"""


def heat_1d(u0, a, steps=20):
    u = np.zeros((steps, len(u0)))
    u[0] = u0
    for t in range(1, steps):
        p = u[t - 1]
        u[t, 1:-1] = p[1:-1] + a * (p[:-2] - 2 * p[1:-1] + p[2:])
        u[t, 0], u[t, -1] = u[t, 1], u[t, -2]
    return u


def heat_2d(u0, a, steps=12):
    u = np.zeros((steps,) + u0.shape)
    u[0] = u0
    for t in range(1, steps):
        p, q = u[t - 1], u[t]
        q[1:-1, 1:-1] = p[1:-1, 1:-1] + a * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
                                             - 4 * p[1:-1, 1:-1])
        q[0, 1:-1], q[-1, 1:-1] = q[1, 1:-1], q[-2, 1:-1]
        q[:, 0], q[:, -1] = q[:, 1], q[:, -2]
    return u


@pytest.mark.parametrize("target", TARGETS)
def test_heat_with_insulated_ends(run, target):
    u0 = rng.standard_normal(9).astype(np.float32)
    out = run(HEAT_1D, target=target, u0=u0, a=np.float32(0.2))
    np.testing.assert_allclose(out["u"], heat_1d(u0.astype(np.float64), 0.2), **TOL)


@pytest.mark.parametrize("target", TARGETS)
def test_heat_2d_with_insulated_edges_and_corners(run, target):
    u0 = rng.standard_normal((6, 7)).astype(np.float32)
    out = run(HEAT_2D, target=target, u0=u0, a=np.float32(0.2))
    np.testing.assert_allclose(out["u"], heat_2d(u0.astype(np.float64), 0.2), **TOL)


@pytest.mark.parametrize("target", TARGETS)
def test_wave_with_two_time_levels_and_reflecting_ends(run, target):
    u0 = rng.standard_normal(11).astype(np.float32)
    u = np.zeros((30, 11))
    u[0] = u[1] = u0
    for t in range(2, 30):
        p = u[t - 1]
        u[t, 1:-1] = 2 * p[1:-1] - u[t - 2, 1:-1] + 0.3 * (p[:-2] - 2 * p[1:-1] + p[2:])
        u[t, -1], u[t, 0] = u[t, -2], u[t, 1]
    out = run(WAVE, target=target, u0=u0, c=np.float32(0.3))
    np.testing.assert_allclose(out["u"], u, rtol=1e-4, atol=1e-4)     # the wave grows: 30 steps of f32


@pytest.mark.parametrize("target", TARGETS)
def test_a_clause_reads_a_later_point_another_clause_defines(run, target):
    x = rng.standard_normal(5).astype(np.float32)
    v = np.zeros((10, 5))
    v[0] = x
    for t in range(1, 10):
        v[t, -1] = v[t - 1, -1] + 1.0
        v[t, :-1] = 0.5 * v[t - 1, :-1] + 0.25 * v[t, -1]
    np.testing.assert_allclose(run(LATER_POINT, target=target, x=x)["v"], v, **TOL)


def test_clauses_reading_each_other_at_one_step_are_e007_naming_the_cycle():
    with pytest.raises(CompileError) as info:
        einc.compile("""
            let x: [f32; N];
            let v[0, i] = x[i];
            let v[t in 1..10, i in 1..N] = v[t - 1, i] + v[t, 0];
            let v[t in 1..10, 0] = v[t, 1] * 0.5;
        """)
    diag = info.value.diagnostics[0]
    assert diag.code == "E007" and "line 4 -> line 5 -> line 4" in diag.message and diag.span.line == 4


def test_edges_that_meet_at_a_small_size_are_a_run_time_error():
    """At N = 2 the edges read each other (u[t, 0] = u[t, 1], u[t, 1] = u[t, 0]): a cycle only
    there, reported when the module runs."""
    program = einc.load(built(HEAT_1D, "llvm-cpu").vmfb)
    u0 = rng.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(program(u0=u0, a=np.float32(0.2))["u"], heat_1d(u0.astype(np.float64), 0.2), **TOL)
    with pytest.raises(RunError, match=r"read each other's points at the same step unless N - 3 >= 0"):
        program(u0=u0[:2], a=np.float32(0.2))


def test_derivative_of_a_loss_by_the_diffusivity_through_insulated_ends(run):
    u0 = rng.standard_normal(8)

    def loss(k):
        u = np.zeros((16, 8))
        u[0] = u0
        for t in range(1, 16):
            p = u[t - 1]
            u[t, 1:-1] = p[1:-1] + k * (p[:-2] - 2 * p[1:-1] + p[2:])
            u[t, 0], u[t, -1] = u[t, 1], u[t, -2]
        return (u[15] ** 2 * np.arange(8)).sum()
    out = run(DIFFUSIVITY, u0=u0, k=np.float64(0.15))
    central = (loss(0.15 + 1e-6) - loss(0.15 - 1e-6)) / 2e-6
    np.testing.assert_allclose(out["loss"], loss(0.15), rtol=1e-12)
    np.testing.assert_allclose(out["g"], central, rtol=1e-7)     # central difference good to ~1e-9


# the ends as one guarded clause over the whole row beside the interior (E011 before: a guarded
# rim ran first in each step, writing 0 where its guard failed); it runs after the interior now
GUARDED_ENDS = HEAT_1D.replace("""let u[t in 1..20, 0] = u[t, 1];
let u[t in 1..20, i in N - 1..N] = u[t, N - 2];""",
                               "let u[t in 1..20, i in 0..N] = if i == 0 { u[t, 1] } else { u[t, N - 2] } "
                               "where i == 0 || i == N - 1;")


@pytest.mark.parametrize("target", TARGETS)
def test_heat_with_insulated_ends_written_as_a_guarded_rim(run, target):
    assert "where i == 0" in GUARDED_ENDS
    u0 = rng.standard_normal(9).astype(np.float32)
    out = run(GUARDED_ENDS, target=target, u0=u0, a=np.float32(0.2))
    np.testing.assert_allclose(out["u"], heat_1d(u0.astype(np.float64), 0.2), **TOL)


def test_a_derivative_through_a_guarded_rim_reading_the_interior(run):
    source = DIFFUSIVITY.replace("""let u[t in 1..16, 0] = u[t, 1];
let u[t in 1..16, i in N - 1..N] = u[t, N - 2];""", "let u[t in 1..16, i in 0..N] = if i == 0 { u[t, 1] } "
                                 "else { u[t, N - 2] } where i == 0 || i == N - 1;")
    assert "where i == 0" in source
    u0 = rng.standard_normal(8)

    def loss(k):
        u = heat_1d(u0, k, steps=16)
        return (u[15] ** 2 * np.arange(8)).sum()
    out = run(source, u0=u0, k=np.float64(0.15))
    np.testing.assert_allclose(out["loss"], loss(0.15), rtol=1e-12)
    np.testing.assert_allclose(out["g"], (loss(0.15 + 1e-6) - loss(0.15 - 1e-6)) / 2e-6, rtol=1e-7)


def test_a_guarded_rim_reading_another_rim_point_of_its_step_is_e007():
    with pytest.raises(CompileError) as info:
        einc.compile("""
            let u0: [f32; 7];
            let u[0, i in 0..7] = u0[i];
            let u[t in 1..6, i in 1..6] = u[t - 1, i] * 0.5;
            let u[t in 1..6, i in 0..7] = if i == 0 { u[t, 6] } else { u[t, 1] } where i == 0 || i == 6;
        """)
    diag = info.value.diagnostics[0]
    assert diag.code == "E007" and "reads a point of its own step that it also defines" in diag.message
    assert diag.span.line == 5


def test_a_guarded_rim_meeting_itself_at_a_small_size_is_a_run_time_error():
    """At N = 2 the interior is empty and the rim's ends read each other."""
    program = einc.load(built(GUARDED_ENDS, "llvm-cpu").vmfb)
    with pytest.raises(RunError, match=r"reads a point of its own step that it also defines"):
        program(u0=rng.standard_normal(2).astype(np.float32), a=np.float32(0.2))


def test_reverse_mode_through_insulated_ends_on_vulkan_is_e011_naming_the_recurrence():
    """The adjoint of the edges reads its own step, which vulkan-spirv's kernels per clause cannot
    run: the error named `u_bar`, a name not in the program, at the derivative."""
    with pytest.raises(CompileError) as info:
        einc.compile(DIFFUSIVITY.replace("f64", "f32"), target="vulkan-spirv")
    diag = info.value.diagnostics[0]
    assert diag.code == "E011" and diag.span.line == 9 and "_bar" not in diag.message
    assert diag.message.startswith("reverse-mode derivatives through `u`, whose clauses read points other clauses")
    assert [(n.span.line, n.note) for n in diag.notes] == [(4, "`u` is defined here")]
    assert diag.hint.startswith("build with --target llvm-cpu")


def test_explain_prints_the_order_of_the_clauses_inside_a_step(tmp_path):
    """The interior (line 9) first, then the rows' edges reading it, then the columns' reading
    both; the step-0 clause (line 4) where the source has it."""
    path = tmp_path / "heat.ein"
    path.write_text(HEAT_2D)
    text = driver.emit_program(path, "explain", ["u"], target="llvm-cpu")
    assert "clauses of u inside a step: line 4 -> line 9 -> line 7 -> line 8 -> line 5 -> line 6" in text


PREFIX_FIRST_POINT_LAST = """
let x: [f64; T, N];
let w: f64;
let s[t in 0..T, j in 1..N] = w * s[t, j - 1] + x[t, j];
let s[t in 0..T, 0] = x[t, 0] * w;
let loss = sum[t, j](s[t, j] * s[t, j]);
let g = @loss / @w;
let gx = @loss / @x;
"""


def test_a_scan_whose_first_point_is_written_below_it_reads_it(run, fd_jacobian):
    """The scan's clause reads s[t, 0], which the clause after it in the source writes: the step
    runs that clause first (before, it ran second and the scan read the slot's 0 on llvm-cpu)."""
    x = rng.standard_normal((3, 5))

    def loss(w, x):
        s = np.zeros_like(x)
        s[:, 0] = x[:, 0] * w
        for j in range(1, 5):
            s[:, j] = w * s[:, j - 1] + x[:, j]
        return s, (s * s).sum()
    out = run(PREFIX_FIRST_POINT_LAST, x=x, w=np.float64(0.7))
    s, total = loss(0.7, x)
    np.testing.assert_allclose(out["s"], s, rtol=1e-12)
    np.testing.assert_allclose(out["loss"], total, rtol=1e-12)
    np.testing.assert_allclose(out["g"], fd_jacobian(lambda w: loss(w, x)[1], np.float64(0.7)), rtol=1e-7)
    np.testing.assert_allclose(out["gx"], fd_jacobian(lambda y: loss(0.7, y)[1], x), rtol=1e-6, atol=1e-7)
