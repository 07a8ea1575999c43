"""Which subscripts get a run-time index check (einc/passes/index_checks.py), over which indices."""
import numpy as np
import pytest

from einc import driver


def checks_of(tmp_path, source, **options):
    path = tmp_path / "p.ein"
    path.write_text(source)
    return driver.front_end(str(path), **options)[1].index_checks


def described(checks):
    return [(c.text, c.axis, [v.name for v in c.vars]) for c in checks]


def test_only_subscripts_that_read_data_are_checked(tmp_path):
    source = """let x: [f32; N];
let idx: [i32; ?];
let k: i32;
let a[i] = x[idx[i]];
let b[i in 0..N] = x[(i + 1) % N] + x[N - 1 - i];
let c = x[k];
"""
    assert described(checks_of(tmp_path, source)) == [("x[idx[i]]", 0, ["i"]), ("x[k]", 0, [])]


def test_the_opt_out_adds_no_check(tmp_path):
    assert checks_of(tmp_path, "let t: [f32; ?];\nlet idx: [i32; ?];\nlet y[i] = t[idx[i]];\n",
                     unchecked_indices=True) == []


def test_a_check_runs_over_the_indices_its_subscript_and_guards_use(tmp_path):
    source = """let A: [f32; ?, ?];
let idx: [i32; ?];
let y[i, j] = A[i, idx[j]];
let z[i in 0..3, j] = if i > 0 { A[idx[j], 0] } else { 0.0 };
"""
    assert described(checks_of(tmp_path, source)) == [("A[i, idx[j]]", 1, ["j"]),
                                                      ("A[idx[j], 0]", 0, ["i", "j"])]


@pytest.mark.parametrize("body", ["x[pos[t - 1]]", "if pos[t - 1] < 4 { x[pos[t - 1]] } else { 0.0 }"])
def test_a_recurrence_subscript_of_its_own_state_is_checked_over_its_steps(tmp_path, body):
    source = f"""let x: [f32; 4];
let pos[0] = 0;
let v[0] = 0.0;
let pos[t in 1..8] = pos[t - 1] + 1;
let v[t in 1..8] = v[t - 1] + {body};
"""
    assert described(checks_of(tmp_path, source)) == [("x[pos[t - 1]]", 0, ["t"])]


@pytest.mark.parametrize("step", ["let h[j in 0..2] = pos[t - 1] + j * 3; let q = h[1]; pos[t - 1] + (x[q] as i32)",
                                  "let l[v in 0..4] = x[v] * (pos[t - 1] as f32); let q = argmax(l) as i32; "
                                  "q + (x[q] as i32)"])
def test_a_subscript_computed_from_a_tensor_of_the_step_is_checked_over_its_steps(tmp_path, step):
    # q exists only inside the step: the check computes the step's tensors again for every step
    source = f"""use std::array::argmax;
let x: [f32; 4];
let pos[0] = 0;
let pos[t in 1..8] = {{ {step} }};
"""
    assert described(checks_of(tmp_path, source)) == [("x[q]", 0, ["t"])]


def test_a_value_shared_under_many_branches_is_visited_once():
    """A chain of selects each reading the value before it on both sides (a derivative's shared,
    inlined stages): the finder keyed each value by the condition of its path, 2^depth visits."""
    from einc.ir.nodes import Const, Op
    from einc.ir.types import BOOL, F64
    from einc.passes.index_checks import _Finder
    v = Const(np.array(1.0))
    for k in range(16):
        test = Op("lt", (v, Const(np.array(float(k)))), BOOL)
        v = Op("select", (test, v, Op("mul", (v, v), F64)), F64)
    finder = _Finder()
    finder.visit(v, (), None)
    assert len(finder._seen) < 200


def test_a_read_shared_below_a_chain_of_ifs_is_checked_once(tmp_path):
    """`a = v[i]` read by every branch of three `if`s after it: the finder reaches the read once
    per path of branches, each a check of its own (27 here, 3^depth; a support vector machine's
    pair update built 140 checks' reductions and took minutes to compile); the copies are one
    check where any of their conditions holds (found writing the hold-out program svm_smo_rbf)."""
    source = """let x: [f64; 8];
let k: [i32; 3];
fn f(v, i: i32) -> f64 {
    let a = v[i];
    let b = if a > 0.0 { a * 2.0 } else { a - 1.0 };
    let c = if b > 1.0 { b + a } else { b * a };
    let d = if c > 0.5 { c - b } else { c + a };
    d + c + b
}
let y[n in 0..3] = f(x, k[n]);
"""
    assert described(checks_of(tmp_path, source)) == [("v[i]", 0, ["n"])]
