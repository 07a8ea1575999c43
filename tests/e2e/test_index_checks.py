"""Data-dependent indices are checked at run time (einc/passes/index_checks.py): an index outside
its axis is a one-line error naming the read, the index, the axis's range and the point, exit 1,
no outputs written; in-range programs give NumPy's values; --unchecked-indices clamps."""
import re
import subprocess
import sys

import numpy as np
import pytest

import einc
from einc.runtime import RunError
from tests.programs import built
from tests.tiers import VULKAN, VULKAN_FULL

TARGETS = ["llvm-cpu", VULKAN_FULL]

GATHER = """let table = [10.0, 11.0, 12.0, 13.0, 14.0];
let idx: [i32; ?];
let y[i] = table[idx[i]];
"""
TABLE = np.array([10, 11, 12, 13, 14], np.float32)


def einc_cli(*args):
    return subprocess.run([sys.executable, "-m", "einc", *map(str, args)], capture_output=True, text=True)


def run_source(source, target="llvm-cpu", unchecked=False, **inputs):
    """The outputs of `source` on `inputs`; a program run on good and on bad inputs is built once."""
    artifact = built(source, target, unchecked_indices=unchecked)
    with einc.load(artifact.vmfb) as program:
        return program(**inputs)


@pytest.mark.parametrize("target", TARGETS)
def test_an_out_of_range_gather_is_a_one_line_error_with_no_outputs(tmp_path, target):
    source = tmp_path / "gather.ein"
    source.write_text(GATHER)
    module = tmp_path / "gather.vmfb"
    assert einc_cli("build", source, "--target", target, "-o", module).returncode == 0
    np.save(tmp_path / "bad.npy", np.array([0, 3, 7, -2], np.int32))
    result = einc_cli("run", module, "--input", f"idx={tmp_path / 'bad.npy'}", "--out", tmp_path / "out")
    assert result.returncode == 1
    assert result.stderr.strip() == f"error: {source}:3:12: table[idx[i]]: index 7 out of range 0..5 at i = 2"
    assert result.stdout == "" and not (tmp_path / "out").exists()

    np.save(tmp_path / "good.npy", np.array([0, 3, 4, 1, 4], np.int32))
    result = einc_cli("run", module, "--input", f"idx={tmp_path / 'good.npy'}", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), TABLE[[0, 3, 4, 1, 4]])


EMBEDDING = """let E: [f32; V, D];
let ids: [i32; T];
let h[t, d] = E[ids[t], d];
let pooled[d] = sum[t](h[t, d]);
let loss = sum[d](pooled[d] * pooled[d]);
let gE = @loss / @E;
"""


@pytest.mark.parametrize("tokens", [[], [1, 4, 1]])
def test_an_embedding_lookup_of_zero_tokens_runs(tokens):
    """The check of `E[ids[t], d]` read ids at its first bad point even where there is none:
    with no tokens that read left an empty axis and every run was refused ("needs index 0 of its
    axis 0, which has size T = 0"). The lookup, its sum and gradient are those of NumPy."""
    E = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    ids = np.array(tokens, np.int32)
    out = run_source(EMBEDDING, E=E, ids=ids)
    pooled = E[ids].sum(axis=0)
    grad = np.zeros_like(E)
    np.add.at(grad, ids, 2 * pooled)
    assert out["h"].shape == (len(tokens), 3)
    np.testing.assert_allclose(out["pooled"], pooled, rtol=1e-6)
    np.testing.assert_allclose(out["gE"], grad, rtol=1e-6)
    with pytest.raises(RunError, match=r"E\[ids\[t\], d\]: index 7 out of range 0..5 along axis 0 at t = 1"):
        run_source(EMBEDDING, E=E, ids=np.array([1, 7, 9], np.int32))


def test_unchecked_indices_clamp_and_say_so(tmp_path):
    source = tmp_path / "gather.ein"
    source.write_text(GATHER)
    np.save(tmp_path / "bad.npy", np.array([0, 3, 7, -2], np.int32))
    result = einc_cli("run", source, "--unchecked-indices", "--input", f"idx={tmp_path / 'bad.npy'}",
                      "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), TABLE[np.clip([0, 3, 7, -2], 0, 4)])
    explained = einc_cli("build", source, "--explain", "--unchecked-indices").stdout
    assert "data-dependent indices: not checked (--unchecked-indices)" in explained
    explained = einc_cli("build", source, "--explain").stdout
    assert "data-dependent indices: 1 checked at run time" in explained
    assert "table[idx[i]] axis 0" in explained
    bad = np.array([9, -1], np.int32)
    np.testing.assert_array_equal(run_source(GATHER, unchecked=True, idx=bad)["y"], TABLE[[4, 0]])


@pytest.mark.parametrize("target", TARGETS)
def test_a_read_of_a_matrix_names_the_axis_and_the_point_of_the_index(target):
    source = """let A: [f32; ?, ?];
let idx: [i32; ?];
let y[i, j] = A[i, idx[j]] * 2.0;
"""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    good = np.array([3, 0, 2], np.int32)
    np.testing.assert_allclose(run_source(source, target, A=a, idx=good)["y"], a[:, good] * 2, rtol=0)
    # the point names the indices the subscript depends on: the check runs over j only
    with pytest.raises(RunError, match=r":3:15: A\[i, idx\[j\]\]: index -1 out of range 0..4 along axis 1 "
                                       r"at j = 1$"):
        run_source(source, target, A=a, idx=np.array([3, -1, 5], np.int32))


def test_a_guarded_read_is_checked_only_where_it_happens():
    source = """let t: [f32; ?];
let idx: [i32; ?];
let y[i] = if idx[i] >= 0 && idx[i] < len(t) { t[idx[i]] } else { -1.0 };
let s = sum[i](t[idx[i]]) where idx[i] >= 0 && idx[i] < len(t);
let z[i] = idx[i] >= 0 && idx[i] < len(t) && t[idx[i]] > 0.5;
"""
    t = np.array([0.25, 0.75, 1.5], np.float32)
    idx = np.array([2, -4, 1, 3, 0], np.int32)
    out = run_source(source, t=t, idx=idx)
    inside = (idx >= 0) & (idx < 3)
    at = t[np.clip(idx, 0, 2)]
    np.testing.assert_array_equal(out["y"], np.where(inside, at, -1))
    np.testing.assert_allclose(out["s"], at[inside].sum(), rtol=1e-6)
    np.testing.assert_array_equal(out["z"], inside & (at > 0.5))
    with pytest.raises(RunError, match=r":4:16: t\[idx\[i\]\]: index -4 out of range 0..3 at i = 1$"):
        run_source(source.replace("where idx[i] >= 0 && idx[i] < len(t)", "where idx[i] < len(t)"), t=t, idx=idx)


def test_a_guarded_read_shared_below_a_chain_of_ifs_is_checked_where_any_path_reads_it():
    """The copies of a read reached under several conditions are one check under their `or`:
    still only where the guard lets it run (docs: einc/passes/index_checks.py `_merged`)."""
    source = """let x: [f64; 8];
let k: [i32; 3];
fn f(v, i: i32) -> f64 {
    let a = if i >= 0 && i < 8 { v[i] } else { 0.0 };
    let b = if a > 0.5 { a * 2.0 } else { a - 1.0 };
    let c = if b > 1.0 { b + a } else { b * a };
    c + b
}
let y[n in 0..3] = f(x, k[n]);
"""
    x = np.linspace(0.0, 1.4, 8)

    def f(i):
        a = x[i] if 0 <= i < 8 else 0.0
        b = a * 2 if a > 0.5 else a - 1
        return (b + a if b > 1 else b * a) + b
    k = np.array([6, 9, 2], np.int32)
    np.testing.assert_allclose(run_source(source, x=x, k=k)["y"], [f(i) for i in k], rtol=1e-15)
    with pytest.raises(RunError, match=r"v\[i\]: index 9 out of range 0..8 at n = 1"):
        run_source(source.replace("if i >= 0 && i < 8 { v[i] } else { 0.0 }", "v[i]"), x=x, k=k)


def test_a_guarded_row_read_is_checked_only_where_it_happens():
    # the row arithmetic `c[id[i]] - o` is a whole tensor the taken side reads at its point,
    # `dot(n, n)` reads it at fixed points, a split copy of the row reads each clause at its point:
    # the guard counts there too (a hit id of -1 meaning a miss)
    source = """let c: [f32; K, 3];
let id: [i32; N];
let o = [1.0, 1.0, 1.0];
fn dot(a, b) { a[0] * b[0] + a[1] * b[1] + a[2] * b[2] }
let v[i] = if id[i] >= 0 { c[id[i]] - o } else { o };
let w[i] = dot(n, n) where n = if id[i] >= 0 { c[id[i]] - o } else { o };
let u[i, k in 0..2] = if id[i] >= k { c[id[i]] - o } else { o };
fn split_min(row) { let p[k] = row[k] where k % 2 == 0; let p[k] = row[k] where k % 2 == 1; min[k](p[k]) }
let m = [if id[i] >= 0 { split_min(c[id[i]]) } else { 0.0 } | i in 0..N];
"""
    c = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = np.array([1, -1, 3, 0], np.int32)
    rows = np.where((idx >= 0)[:, None], c[np.clip(idx, 0, 3)] - 1, 1).astype(np.float32)
    k = np.arange(2)
    out = run_source(source, c=c, id=idx)
    np.testing.assert_array_equal(out["v"], rows)
    np.testing.assert_array_equal(out["w"], (rows * rows).sum(1))
    np.testing.assert_array_equal(out["u"], np.where((idx[:, None] >= k)[..., None], c[np.clip(idx, 0, 3)][:, None] - 1, 1))
    np.testing.assert_array_equal(out["m"], np.where(idx >= 0, c[np.clip(idx, 0, 3)].min(1), 0))
    with pytest.raises(RunError, match=r":5:29: c\[id\[i\]\] - o: index -1 out of range 0..4 along axis 0 at i = 1$"):
        run_source(source.replace("if id[i] >= 0 { c[id[i]] - o } else { o };\nlet w", "if id[i] >= -1 { c[id[i]] - o } else { o };\nlet w"), c=c, id=idx)


def test_a_step_tensor_read_in_a_branch_is_checked_only_at_the_steps_that_take_it():
    # a simplex pivot's ratio test: `e` is -1 once no column enters, and the tensor `w` the
    # taken side computes per step reads at e only where e >= 0 (the branch's test names the
    # group's step, the read the clause's steps)
    source = """let v: [f32; 4];
let k: [i32; 3];
let s[0, j in 0..4] = v[j];
let e[p in 0..3] = if s[p, 0] > 2.5 { -1 } else { k[p] };
let y[p in 0..3] = if e[p] < 0 { 0.0 } else { let q = e[p]; let w[r in 0..2] = s[p, q] * (r as f32); sum[r](w[r]) };
let s[p in 1..3, j in 0..4] = s[p - 1, j] + y[p - 1];
"""
    v = np.array([1, 2, 3, 4], np.float32)
    out = run_source(source, v=v, k=np.array([1, -1, 3], np.int32))
    np.testing.assert_array_equal(out["e"], [1, -1, -1])
    np.testing.assert_array_equal(out["y"], [2, 0, 0])
    with pytest.raises(RunError, match=r":5:80: s\[p, q\]: index 7 out of range 0..4 along axis 1 at p = 0$"):
        run_source(source, v=v, k=np.array([7, -1, 3], np.int32))


def test_a_scalar_tensor_read_in_a_branch_is_checked_only_at_the_steps_that_take_it():
    # a traceback's `argmin([D[i - 1, j - 1], ..])` on the side of an `if` that its walk takes
    # before the origin (the hold-out program dtw_band_guards): std's argmin computes the best
    # value as a tensor of rank 0 (`let best[..lead] = ..`), whose body was checked at every
    # step, the index -1 of the step at the origin failing the run
    source = """let x: [f32; N];
fn first_min(v) { let b[..l] = min[q](v[..l, q]); let i[..l] = min[k](if v[..l, k] == b[..l] { k } else { 9 }); i }
let p[0] = 2;
let r[s in 0..4] = if p[s] GUARD { 3 } else { first_min([x[p[s] - 1], x[p[s]]]) };
let p[s in 1..5] = if r[s - 1] == 3 { 0 } else { p[s - 1] - 1 };
"""
    x = np.array([3, 1, 2, 5], np.float32)
    np.testing.assert_array_equal(run_source(source.replace("GUARD", "== 0"), x=x)["r"], [0, 1, 3, 3])
    with pytest.raises(RunError, match=r":4:56: x\[p\[s\] - 1\]: index -1 out of range 0..4 at s = 2$"):
        run_source(source.replace("GUARD", "< 0"), x=x)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN])
def test_a_gather_of_a_thousand_points_from_a_table_of_run_time_size_builds(target):
    # IREE-272: on vulkan-spirv the clamp of each gathered index into [0, K - 1] (index type,
    # K a run-time size), vectorized by 4 once the kernel has 1024 points, left an i64
    # `vector.broadcast` that SPIR-V without Int64 cannot lower (the build failed; the hold-out
    # program rle_roundtrip decodes its stream that way); the clamp is now made in i32 there
    program = einc.load(einc.compile("let v: [i32; K];\nlet idx: [i32; 1024];\nlet d[i] = v[idx[i]];",
                                     target=target).vmfb, device="vulkan" if target == "vulkan-spirv" else None)
    v, idx = np.arange(7, dtype=np.int32) * 3, (np.arange(1024) * 5 % 7).astype(np.int32)
    np.testing.assert_array_equal(program(v=v, idx=idx)["d"], v[idx])


def test_a_scalar_input_as_an_index_is_checked():
    source = "let t: [f32; ?];\nlet k: i32;\nlet v = t[k] + 1.0;\n"
    t = np.array([1, 2, 3], np.float32)
    assert run_source(source, t=t, k=2)["v"] == 4.0
    with pytest.raises(RunError, match=r":3:9: t\[k\]: index 3 out of range 0..3$"):
        run_source(source, t=t, k=3)


@pytest.mark.parametrize("target", TARGETS)
def test_a_recurrence_following_pointers_is_checked_at_its_first_bad_step(target):
    source = """let nxt: [i32; ?];
let p[0] = 0;
let p[t in 1..6] = nxt[p[t - 1]];
"""
    good = np.array([2, 0, 3, 1], np.int32)
    ref, at = [0], 0
    for _ in range(5):
        at = int(good[at])
        ref.append(at)
    np.testing.assert_array_equal(run_source(source, target, nxt=good)["p"], ref)
    with pytest.raises(RunError, match=r"nxt\[p\[t - 1\]\]: index 9 out of range 0..4 at t = 4$"):
        run_source(source, target, nxt=np.array([2, 0, 3, 9], np.int32))


def test_a_random_walk_indexing_a_table_is_checked():
    source = """let table: [f32; ?];
let steps: [i32; ?];
let pos[0] = 0;
let pos[t in 1..len(steps) + 1] = pos[t - 1] + steps[t - 1];
let total[0] = 0.0;
let total[t in 1..len(steps) + 1] = total[t - 1] + table[pos[t]];
"""
    table = np.array([1, 2, 3, 4, 5], np.float32)
    steps = np.array([1, 1, 2, -1, -3], np.int32)
    pos = np.concatenate([[0], np.cumsum(steps)])
    out = run_source(source, table=table, steps=steps)
    np.testing.assert_allclose(out["total"], np.concatenate([[0], np.cumsum(table[pos[1:]])]), rtol=1e-6)
    with pytest.raises(RunError, match=r"table\[pos\[t\]\]: index 5 out of range 0..5 at t = 4$"):
        run_source(source, table=table, steps=np.array([1, 1, 2, 1, -1], np.int32))


@pytest.mark.parametrize("target", TARGETS)
def test_scatter_writes_are_checked_against_the_axis_they_write(target):
    source = """use std::ml::indexing_ops::scatter_elements;
let data: [f32; 2, 5];
let ix: [i32; 2, M];
let up: [f32; 2, M];
let s = scatter_elements(data, ix, up, 1);
"""
    data = np.zeros((2, 5), np.float32)
    ix = np.array([[4, 0], [1, 3]], np.int32)
    up = np.array([[1, 2], [3, 4]], np.float32)
    ref = data.copy()
    np.put_along_axis(ref, ix, up, axis=1)
    np.testing.assert_array_equal(run_source(source, target, data=data, ix=ix, up=up)["s"], ref)
    # the check is the library's (std::ml::indexing_ops::checked), at ix's point [1, 0], reported
    # at the user's call
    with pytest.raises(RunError, match=r"program.ein:5:9: in `scatter_elements\(data, ix, up, 1\)`, the library's "
                                       r"`positions\[indices\[\.\.l\]\]` at \S+indexing_ops.ein:\d+:\d+: index 5 "
                                       r"out of range 0..5 at l0 = 1, l1 = 0$"):
        run_source(source, target, data=data, ix=np.array([[4, 0], [5, 3]], np.int32), up=up)


def test_gather_nd_checks_each_part_of_an_index_row():
    source = """use std::ml::indexing_ops::gather_nd;
let data: [f32; 3, 4];
let rows: [i32; ?, 2];
let g = gather_nd(data, rows);
"""
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = np.array([[2, 3], [0, 1]], np.int32)
    np.testing.assert_array_equal(run_source(source, data=data, rows=rows)["g"], data[rows[:, 0], rows[:, 1]])
    # [0, 5] is inside the 12 merged positions, but not inside axis 1 (4 columns)
    with pytest.raises(RunError, match=r"index 5 out of range 0..4"):
        run_source(source, data=data, rows=np.array([[2, 3], [0, 5]], np.int32))


def test_a_read_at_an_earlier_steps_token_inside_a_step_tensor_is_checked():
    """`E[tok[t - 1], j]` in a tensor a step computes (a decoder's embedding lookup): tokens
    count up, and the lookup of token 4 in a table of 4 rows fails at step 5."""
    source = """
        let E: [f32; 4, 2];
        let start: i32;
        let tok[t in 0..1] = start;
        let tok[t in 1..LEN] = { let h[j in 0..2] = E[tok[t - 1], j] * 2.0; (sum[j](h[j]) as i32) + tok[t - 1] + 1 };
    """
    E = np.zeros((4, 2), np.float32)
    ok = einc.load(einc.compile(source.replace("LEN", "5")).vmfb)(E=E, start=np.int32(0))
    np.testing.assert_array_equal(ok["tok"], [0, 1, 2, 3, 4])
    program = einc.load(einc.compile(source.replace("LEN", "6")).vmfb)
    with pytest.raises(RunError, match=r"E\[tok\[t - 1\], j\]: index 4 out of range 0..4 along axis 0 at t = 5"):
        program(E=E, start=np.int32(0))


TRANSITIONS = """use std::array::argmax;
let W: [f32; V, V];
let tab: [f32; ?];
let tok[0] = 0;
let s[0] = 0.0;
let tok[t in 1..6] = { let row[v in 0..V] = W[tok[t - 1], v]; argmax(row) as i32 };
let s[t in 1..6] = { let logits[v in 0..V] = W[tok[t - 1], v] * 2.0; let k = argmax(logits) as i32; s[t - 1] + tab[k] };
"""
NEXT = [2, 4, 1, 0, 3]                                   # token 0 -> 2 -> 1 -> 4 -> 3 -> 0


def transitions():
    rng = np.random.default_rng(3)
    w = rng.uniform(0, 0.5, (5, 5)).astype(np.float32)
    w[np.arange(5), NEXT] = 1.0
    return w


@pytest.mark.parametrize("target", TARGETS)
def test_a_subscript_a_step_computes_from_its_own_tensors_is_checked_at_its_first_bad_step(target):
    """`tab[k]` with k = argmax of a tensor the step computes (a decoder's next token): in range,
    NumPy's running sum; tab of 4 entries fails where the chain reaches token 4 (step 3)."""
    w, tokens = transitions(), [0]
    for _ in range(5):
        tokens.append(NEXT[tokens[-1]])
    tab = np.array([1, 10, 100, 1000, 10000], np.float32)
    out = run_source(TRANSITIONS, target, W=w, tab=tab)
    np.testing.assert_array_equal(out["tok"], tokens)
    np.testing.assert_allclose(out["s"], np.concatenate([[0], np.cumsum(tab[tokens[1:]])]), rtol=1e-6)
    with pytest.raises(RunError, match=r":7:112: tab\[k\]: index 4 out of range 0..4 at t = 3$"):
        run_source(TRANSITIONS, target, W=w, tab=tab[:4])


def test_unchecked_indices_clamp_a_subscript_a_step_computes():
    w, tokens = transitions(), [0]
    for _ in range(5):
        tokens.append(NEXT[tokens[-1]])
    tab = np.array([1, 10, 100, 1000], np.float32)
    out = run_source(TRANSITIONS, unchecked=True, W=w, tab=tab)
    np.testing.assert_allclose(out["s"], np.concatenate([[0], np.cumsum(tab[np.minimum(tokens[1:], 3)])]), rtol=1e-6)


NESTED_STEP_TENSORS = """let x: [f32; ?];
let step: [i32; 6];
let pos[0] = 0;
let v[0] = 0.0;
let pos[t in 1..6] = pos[t - 1] + step[t - 1];
let v[t in 1..6] = {
    let h[j in 0..3] = pos[t - 1] + step[t - 1] * j;
    let g[j in 0..3] = h[j] + h[(j + 1) % 3];
    v[t - 1] + sum[j in 0..3](x[g[j] / 2])
};
"""


def nested_step_tensors_reference(x, step):
    """NumPy's loop: the values, or the first (t, j, index) outside x."""
    pos, v = [0], [0.0]
    for t in range(1, 6):
        h = pos[t - 1] + step[t - 1] * np.arange(3)
        g = h + h[[1, 2, 0]]
        for j in range(3):
            if not 0 <= g[j] // 2 < len(x):
                return (t, j, int(g[j] // 2))
        v.append(v[-1] + float(x[g // 2].sum()))
        pos.append(pos[-1] + int(step[t - 1]))
    return np.array(pos), np.array(v)


@pytest.mark.parametrize("target", TARGETS)
def test_a_subscript_reading_a_step_tensor_of_a_step_tensor_names_the_step_and_the_reduction_index(target):
    step = np.array([1, 2, 1, 3, 1, 0], np.int32)
    x = np.arange(1, 17, dtype=np.float32)
    pos, v = nested_step_tensors_reference(x, step)
    out = run_source(NESTED_STEP_TENSORS, target, x=x, step=step)
    np.testing.assert_array_equal(out["pos"], pos)
    np.testing.assert_allclose(out["v"], v, rtol=1e-6)
    t, j, index = nested_step_tensors_reference(x[:8], step)
    with pytest.raises(RunError, match=rf":9:31: x\[g\[j\] / 2\]: index {index} out of range 0..8 "
                                       rf"at t = {t}, j = {j}$"):
        run_source(NESTED_STEP_TENSORS, target, x=x[:8], step=step)


PER_POINT_STEP_TENSOR = """use std::array::argmax;
let tab: [f32; ?];
let w: [f32; 5];
let x: [f32; N];
fn acc(a) {
    let s[0] = 0.0;
    let s[t in 1..4] = { let v[j in 0..5] = w[j] * a + s[t - 1] * (j as f32); let q = argmax(v) as i32; s[t - 1] + tab[q] };
    s[3]
}
let y[i] = acc(x[i]);
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_subscript_from_a_step_tensor_of_a_recurrence_called_per_point_is_checked(target):
    """The recurrence runs for every point i (its step tensor v too): NumPy's loop where every
    q is inside tab, else the first (t, i) in row-major order where it is not."""
    w = np.array([0.5, -1, 2, 0.1, -3], np.float32)
    x = np.array([0.3, -0.2, -2.0, 1.0], np.float32)
    tab = np.array([1, 10, 100, 1000, 10000], np.float32)
    y, picks = [], {}
    for i, a in enumerate(x):
        s = np.float32(0)
        for t in range(1, 4):
            q = int(np.argmax(w * a + s * np.arange(5, dtype=np.float32)))
            picks[(t, i)] = q
            s = s + tab[q]
        y.append(s)
    np.testing.assert_allclose(run_source(PER_POINT_STEP_TENSOR, target, tab=tab, w=w, x=x)["y"], y, rtol=1e-6)
    t, i = min(k for k, q in picks.items() if q >= 3)
    with pytest.raises(RunError, match=rf":7:116: tab\[q\]: index {picks[(t, i)]} out of range 0..3 "
                                       rf"at t = {t}, i = {i}$"):
        run_source(PER_POINT_STEP_TENSOR, target, tab=tab[:3], w=w, x=x)


def test_an_index_out_of_range_in_the_standard_library_names_the_users_call():
    # std `gather` given an index past the axis said `indexing_ops.ein:12:46: x[..l, ix[..i]]: ..`,
    # a line of the library; the user's call comes first now, the library's read after it
    source = "use std::ml::indexing_ops::gather;\nlet data: [f32; 5];\nlet idx: [i32; 3];\nlet y = gather(data, idx, 0);\n"
    data = np.arange(5, dtype=np.float32) * 1.5
    np.testing.assert_array_equal(run_source(source, data=data, idx=np.array([4, -1, 0], np.int32))["y"],
                                  np.take(data, [4, -1, 0]))
    with pytest.raises(RunError) as info:
        run_source(source, data=data, idx=np.array([0, 7, 1], np.int32))
    message = str(info.value)
    assert message.startswith("/") and ":4:9: in `gather(data, idx, 0)`, the library's `x[..l, ix[..i]]` at " in message
    assert re.search(r"stdlib/ml/indexing_ops\.ein:\d+:\d+: index 7 out of range 0..5 at i0 = 1$", message)
