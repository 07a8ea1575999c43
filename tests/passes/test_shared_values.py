"""Merging values computed the same way (einc.passes.shared_values) costs time linear in the
program: its keys are hash-consed, not trees. A chain of steps that each read their input twice
unfolds to a tree of 2**N reads, and keying that tree took x1.8 per step (13.9 s at N = 22)."""
import json
import os
import subprocess
import sys

import numpy as np

import einc

STEP = """
let x: [f32; 8];
fn step(v: [f32; 8]) -> [f32; 8] {
    let m = sum[i in 0..8](v[i]) * 0.125;
    let o[i in 0..8] = v[i] - m;
    o
}
"""


def chain(n: int) -> str:
    """`step` applied n times to x: y{k} = step(y{k-1})."""
    lines = [STEP, "let y0 = step(x);"]
    lines += [f"let y{k} = step(y{k - 1});" for k in range(1, n)]
    return "\n".join(lines + [f"let out = y{n - 1};"])


# Times the front end (elaboration and every pass, what `einc check` runs) on each program in a
# child process, after a warm-up that loads einc's modules; a time that grows with the depth
# of the chain shows as the child running past its timeout.
TIMER = """
import json, sys, time
from einc.driver import check_program
check_program(sys.argv[1], outputs=["out"])
times = []
for path in sys.argv[2:]:
    start = time.perf_counter()
    check_program(path, outputs=["out"])
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def test_check_time_grows_linearly_with_a_chain_of_double_reads(tmp_path):
    paths = []
    for n in (10, 50, 200):
        path = os.path.join(tmp_path, f"chain{n}.ein")
        with open(path, "w", encoding="utf-8") as f:
            f.write(chain(n))
        paths.append(path)
    done = subprocess.run([sys.executable, "-c", TIMER] + paths, capture_output=True, text=True,
                          timeout=120, check=True)
    at50, at200 = json.loads(done.stdout)
    # 4x the steps: linear is about 4x the time; allow 10x (and 1 s) for a loaded machine
    assert at200 < 10 * at50 + 1.0, (at50, at200)


def test_a_chain_of_200_double_reads_builds_and_matches_numpy():
    x = np.random.default_rng(3).standard_normal(8).astype(np.float32)
    artifact = einc.compile(chain(200), outputs=["out"])
    got = einc.load(artifact.vmfb)(x=x)["out"]
    want = x.astype(np.float64)
    for _ in range(200):
        want = want - want.sum() * 0.125
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


def test_values_equal_up_to_their_index_names_are_merged_and_others_kept(tmp_path):
    from einc.driver import front_end
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write("let x: [f32; 4];\n"
                "let a[i in 0..4] = sum[k in 0..4](x[k] * x[i]) * 2.0;\n"
                "let b[j in 0..4] = sum[l in 0..4](x[l] * x[j]) * 2.0;\n"
                "let c[i in 0..4] = sum[k in 0..4](x[i] * x[k]) * 2.0;\n"     # operands swapped
                "let d[i in 0..4] = sum[k in 0..4](x[k] * x[i]) * 3.0;\n")
    outputs = dict(front_end(path)[1].outputs)
    assert outputs["a"] is outputs["b"]
    assert len({id(outputs[name]) for name in "acd"}) == 3


HMM = os.path.join(os.path.dirname(__file__), "..", "programs", "holdout", "hmm_forward.ein")


def test_gradients_of_one_loss_by_two_parameters_run_one_reverse_loop():
    """`@loglik / @logA` and `@loglik / @logpi` through the HMM's forward recurrence each built
    the adjoint loop `alpha_bar` (two equal groups reading two copies of `alpha`): the MLIR for
    both was 1.9 times gA's alone (1.005 times now, docs/DECISIONS.md). Equal groups are now one
    loop, read by both gradients."""
    from einc.driver import emit_program
    ir = emit_program(HMM, "ir", ["gA", "gpi"])
    assert ir.count("recurrence over") == 2 and ir.count("  alpha_bar[") == 1, ir


def _groups(tmp_path, source: str, outputs: list) -> dict:
    """name -> the group of each output (a recurrence member read whole)."""
    from einc.driver import front_end
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    return {name: v.group for name, v in front_end(path, outputs)[1].outputs}


def test_recurrences_equal_up_to_their_names_are_one_loop_and_others_stay_apart(tmp_path):
    groups = _groups(tmp_path, "let x: [f32; T];\nlet c: f32;\n"
                     "let a[0] = x[0];\nlet a[t in 1..T] = 0.5 * a[t - 1] + x[t];\n"
                     "let b[0] = x[0];\nlet b[s in 1..T] = 0.5 * b[s - 1] + x[s];\n"
                     "let d[0] = x[0];\nlet d[t in 1..T] = 0.5 * d[t - 1] + c;\n"        # another drive
                     # two pairs reading each other
                     "let u[0] = x[0];\nlet u[t in 1..T] = 0.5 * v[t - 1] + x[t];\n"
                     "let v[0] = x[0];\nlet v[t in 1..T] = 0.5 * u[t - 1] + x[t];\n"
                     "let p[0] = x[0];\nlet p[t in 1..T] = 0.5 * q[t - 1] + x[t];\n"
                     "let q[0] = x[0];\nlet q[t in 1..T] = 0.5 * p[t - 1] + x[t];\n",
                     ["a", "b", "d", "u", "v", "p", "q"])
    assert groups["a"] is groups["b"] and groups["u"] is groups["v"] is groups["p"] is groups["q"]
    assert len({id(groups[name]) for name in "adu"}) == 3


TANGENTS_ASKED_TWICE = """use std::math::tanh;
let a: f64;
let x: [f64; T];
let u[0] = 1.0;
let v[0] = 0.5;
let u[t in 1..T] = tanh(v[t - 1] * a) + x[t];
let v[t in 1..T] = 0.5 * u[t] - a * v[t - 1];
let f1 = (@v / @a)[:];
let f2 = (@v / @a)[:] * 2.0;
"""


def test_tangent_members_of_one_value_asked_twice_are_one(tmp_path):
    """Forward mode adds tangent members to the primal's group per request: `u'`, `v'` and again
    `u'2`, `v'2`, equal up to which of them they read. Members are merged by classes refined to
    a fixed point, so the loop computes one tangent of each."""
    from einc.driver import front_end
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(TANGENTS_ASKED_TWICE)
    (group,) = front_end(path, ["f1", "f2"])[1].recurrences
    assert [m.name for m in group.members] == ["u", "u'", "v", "v'"]       # each tangent after its primal
