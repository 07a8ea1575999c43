"""Values made of untyped literals alone under a run-time condition (a select of literals, `match`
arms of literals) stay untyped until their context types them (LANGUAGE.md section 2): the other
clauses of their definition, a recurrence's later clauses, an annotation, a declared return type.
The literals used (0.1, 0.3, 0.7) differ between f32 and f64, so a tolerance of 1e-15 proves f64."""
import numpy as np
import pytest

import einc
from tests.programs import built

TIGHT = dict(rtol=1e-15, atol=0.0)


def test_a_recurrence_starting_at_an_identity_chosen_per_point_takes_f64(run):
    Q = np.array([[0.1, 0.3], [0.7, 0.1]])
    out = run("""
        let Q: [f64; 2, 2];
        let P[t in 0..1, i in 0..2, j in 0..2] = if i == j { 1.1 } else { 0.1 };
        let P[t in 1..5, i in 0..2, j in 0..2] = P[t - 1, i, j] * 0.3 + Q[i, j];
    """, Q=Q)
    P = [np.where(np.eye(2) == 1, 1.1, 0.1)]
    for _ in range(1, 5):
        P.append(P[-1] * 0.3 + Q)
    assert out["P"].dtype == np.float64
    np.testing.assert_allclose(out["P"], np.array(P), **TIGHT)


def test_a_later_recurrence_clause_may_come_first_in_the_source(run):
    Q = np.array([0.1, 0.7])
    out = run("""
        let Q: [f64; 2];
        let s[t in 1..4, i in 0..2] = s[t - 1, i] * 0.3 + Q[i];
        let s[t in 0..1, i in 0..2] = if i == 0 { 0.1 } else { 0.7 };
    """, Q=Q)
    s = [np.array([0.1, 0.7])]
    for _ in range(1, 4):
        s.append(s[-1] * 0.3 + Q)
    assert out["s"].dtype == np.float64
    np.testing.assert_allclose(out["s"], np.array(s), **TIGHT)


@pytest.mark.parametrize("literal_first", [True, False])
def test_a_piecewise_clause_of_chosen_literals_takes_the_type_of_the_others(run, literal_first):
    a = np.array([0.3, 0.7, 0.1, 0.3])
    chosen = "let y[i in 0..2] = if i == 0 { 0.1 } else { 0.7 };"
    typed = "let y[i in 2..4] = a[i] * 0.3;"
    out = run("let a: [f64; 4];\n" + "\n".join([chosen, typed] if literal_first else [typed, chosen]), a=a)
    assert out["y"].dtype == np.float64
    np.testing.assert_allclose(out["y"], np.array([0.1, 0.7, 0.1 * 0.3, 0.3 * 0.3]), **TIGHT)


def test_match_arms_of_literals_and_an_annotation_take_f64(run):
    a = np.array([0.3, -0.7, 0.0, 2.0])
    k = np.array([0, 1, 2, 5], dtype=np.int32)
    out = run("""
        let a: [f64; 4];
        let k: [i32; 4];
        let m[i in 0..4] = match k[i] { 0 => 0.1, 1 => 0.3, _ => 0.7 } * a[i];
        let s[i in 0..4] = { let w: f64 = if a[i] > 0.0 { 0.1 } else { 0.3 }; w };
        let b[i in 0..4] = if a[i] > 0.0 { 0.1 } else { -0.7 * 0.3 } + a[i];
    """, a=a, k=k)
    assert out["m"].dtype == out["s"].dtype == out["b"].dtype == np.float64
    np.testing.assert_allclose(out["m"], np.select([k == 0, k == 1], [0.1, 0.3], 0.7) * a, **TIGHT)
    np.testing.assert_allclose(out["s"], np.where(a > 0.0, 0.1, 0.3), **TIGHT)
    np.testing.assert_allclose(out["b"], np.where(a > 0.0, 0.1, -0.7 * 0.3) + a, **TIGHT)


def test_a_declared_return_type_types_chosen_literals(run):
    a = np.array([0.3, -0.7])
    out = run("""
        fn step(x: f64) -> f64 { if x > 0.0 { 0.1 } else { 0.3 } }
        let a: [f64; 2];
        let y[i in 0..2] = step(a[i]);
    """, a=a)
    assert out["y"].dtype == np.float64
    np.testing.assert_allclose(out["y"], np.where(a > 0.0, 0.1, 0.3), **TIGHT)


def test_chosen_literals_alone_default_to_f32(run):
    a = np.array([0.3, -0.7], dtype=np.float32)
    out = run("""
        let a: [f32; 2];
        let y[i in 0..2] = if a[i] > 0.0 { 0.1 } else { 0.3 };
    """, a=a)
    assert out["y"].dtype == np.float32
    np.testing.assert_array_equal(out["y"], np.where(a > 0, np.float32(0.1), np.float32(0.3)))


@pytest.mark.parametrize("source, message", [
    ("""
        let a: [f64; 4];
        let b: [f32; 4];
        let y[i in 0..2] = if a[i] > 0.0 { b[i] } else { 0.0 };
        let y[i in 2..4] = a[i];
     """, "clauses of `y` have types f32 and f64"),
    ("""
        let x: [f32; 2];
        let w: f64 = 0.1;
        let y[i in 0..2] = x[i] * if x[i] > 0.0 { w } else { 0.3 };
     """, "mismatched types f32 and f64"),   # an annotation fixes a literal's type for good
])
def test_typed_values_of_different_types_are_still_e002(source, message):
    with pytest.raises(einc.CompileError) as err:
        built(source, "llvm-cpu", None)
    assert "E002" in str(err.value) and message in str(err.value)


def test_an_int_choice_takes_the_integer_type_of_the_other_clauses(run):
    a = np.array([5, -3, 2 ** 40, -(2 ** 40)], dtype=np.int64)
    out = run("""
        let a: [i64; 4];
        let y[i in 0..2] = if a[i] > 0 { 7 } else { -9 };
        let y[i in 2..4] = a[i] + 1;
    """, a=a)
    assert out["y"].dtype == np.int64
    np.testing.assert_array_equal(out["y"], np.array([7, -9, 2 ** 40 + 1, 1 - 2 ** 40]))


def test_a_recurrence_starting_at_an_int_literal_takes_its_steps_float_type(run):
    x = np.array([0.5, -1.25, 2.0, 0.75, -0.5, 1.5], dtype=np.float32)
    xd = np.array([0.1, 0.7, -0.3, 0.3, 0.1, -0.7])
    out = run("""
        let x: [f32; T];
        let xd: [f64; 6];
        let a[0] = 0;
        let a[t in 1..T] = a[t - 1] * 0.5 + x[t];
        let b[0] = 1;
        let b[t in 1..6] = b[t - 1] * 0.3 + xd[t];
    """, x=x, xd=xd)
    a, b = [np.float32(0)], [1.0]
    for t in range(1, 6):
        a.append(np.float32(a[-1] * np.float32(0.5) + x[t]))
        b.append(b[-1] * 0.3 + xd[t])
    assert out["a"].dtype == np.float32 and out["b"].dtype == np.float64
    np.testing.assert_allclose(out["a"], np.array(a, dtype=np.float32), rtol=1e-6, atol=0.0)
    np.testing.assert_allclose(out["b"], np.array(b), **TIGHT)


def test_a_member_of_float_literals_read_through_a_cast_keeps_f32_beside_one_an_f64_step_types(run):
    """`a[0] = -3` takes the f64 of its step, which reads `r[t, 1] as f64`; r's literals meet nothing
    but the cast, so r stays f32 (it was moved to f64 with a: fuzz seed 27303 program 183)."""
    out = run("""
        use std::math::tanh;
        let r[t in 0..2, k in 0..3] = 0.01;
        let r[t in 2..6, k in 0..3] = tanh(0.25 + -0.3 * r[t - 1, k]);
        let a[0] = -3;
        let a[t in 1..6] = max(a[t - 1], t as f64 + r[t, 1] as f64);
    """)
    r = [np.full(3, np.float32(0.01))] * 2
    for _ in range(2, 6):
        r.append(np.tanh(np.float32(0.25) + np.float32(-0.3) * r[-1]).astype(np.float32))
    a = [-3.0]
    for t in range(1, 6):           # from einc's r: tanh in f32 may differ by an ulp
        a.append(max(a[-1], t + float(out["r"][t, 1])))
    assert out["r"].dtype == np.float32 and out["a"].dtype == np.float64
    np.testing.assert_allclose(out["r"], np.array(r), rtol=2e-7, atol=0.0)
    np.testing.assert_allclose(out["a"], a, **TIGHT)


def test_a_count_that_indexes_a_recurrence_of_float_literals_stays_an_integer(run):
    """`n[t]` counts with int literals and indexes x, whose float literals meet f64 data: x is f64
    and the count i32, though no one sweep of the literals' types gives both."""
    c = np.array([0.1, 0.7, 0.3, 0.9])
    out = run("""
        let c: [f64; N];
        let x[0, j in 0..N] = 0.0;
        let n[t in 1..4, j in 0..N] = sum[k](if c[k] + x[t - 1, k] < 0.8 { 1 } else { 0 });
        let x[t in 1..4, j in 0..N] = x[t - 1, n[t, j] % N] + 0.1;
    """, c=c)
    x, ns = [np.zeros(4)], [np.zeros(4, np.int32)]
    for _ in range(1, 4):
        ns.append(np.full(4, ((c + x[-1]) < 0.8).sum(), np.int32))
        x.append(x[-1][ns[-1] % 4] + 0.1)
    assert out["x"].dtype == np.float64 and out["n"].dtype == np.int32
    np.testing.assert_allclose(out["x"], np.array(x), **TIGHT)
    np.testing.assert_array_equal(out["n"], np.array(ns))


def test_a_clamped_count_that_indexes_a_recurrence_of_float_literals_is_an_integer(run):
    """`n[t] = min(count, N - 1)` has no literal for the first guess to see: i32 beside x's f64."""
    c = np.array([0.1, 0.7, 0.3, 0.9])
    out = run("""
        let c: [f64; N];
        let x[0, j in 0..N] = 0.0;
        let n[t in 1..4, j in 0..N] = min(sum[k](if c[k] + x[t - 1, k] < 1.8 { 1 } else { 0 }), N - 1);
        let x[t in 1..4, j in 0..N] = x[t - 1, n[t, j]] + c[j];
    """, c=c)
    x, ns = [np.zeros(4)], [np.zeros(4, np.int32)]
    for _ in range(1, 4):
        ns.append(np.full(4, min(((c + x[-1]) < 1.8).sum(), 3), np.int32))
        x.append(x[-1][ns[-1]] + c)
    assert out["x"].dtype == np.float64 and out["n"].dtype == np.int32
    np.testing.assert_allclose(out["x"], np.array(x), **TIGHT)
    np.testing.assert_array_equal(out["n"], np.array(ns))


def test_a_member_starting_at_int_literals_beside_a_count_in_one_group_takes_its_steps_float(run):
    """a starts at `-1`/`2` and its steps are f32; n counts with int literals and indexes b, which
    reads a: all one group, so a guess turns a to f32 while n keeps its i32 (fuzz seed 42002
    program 138: E002 "a subscript must be an integer" at `b[t - 1, n[t] % 4]`)."""
    x = np.float32(0.3)
    out = run("""
        use std::math::*;
        let x: f32;
        let a[0, j in 0..4] = if x > 0.0 { -1 } else { 2 };
        let n[0] = 0;
        let n[t in 1..3] = sum[k in 0..4](if b[t - 1, k] < 0.5 { 1 } else { 0 });
        let b[0, j in 0..4] = if j == 0 { 0.5 } else { 0.0 };
        let a[t in 1..3, j in 0..4] = tanh(a[t - 1, j] + 0.25 * b[t - 1, j]);
        let b[t in 1..3, j in 0..4] = tanh(a[t - 1, 0] + 0.5 * b[t - 1, j]) + 0.25 * b[t - 1, n[t] % 4];
    """, x=x)
    a, b, n = [np.full(4, -1.0, np.float32)], [np.array([0.5, 0, 0, 0], np.float32)], [0]
    for _ in range(1, 3):
        n.append(int((b[-1] < 0.5).sum()))
        a, b = a + [np.tanh(a[-1] + 0.25 * b[-1])], b + [np.tanh(a[-1][0] + 0.5 * b[-1]) + 0.25 * b[-1][n[-1] % 4]]
    assert out["a"].dtype == np.float32 and out["n"].dtype == np.int32
    np.testing.assert_allclose(out["a"], np.array(a), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out["b"], np.array(b), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(out["n"], np.array(n))


def test_a_count_read_by_value_in_a_recurrence_stays_an_integer(run):
    """As outside a recurrence, a count read by value through a cast stays i32 while its partner
    takes the f64 of the data its float literals meet."""
    c = np.array([0.1, 0.7, 0.3, 0.9])
    out = run("""
        let c: [f64; N];
        let x[0] = 0.0;
        let n[t in 1..4] = sum[k](if c[k] * x[t - 1] < 0.5 { 1 } else { 0 });
        let x[t in 1..4] = x[t - 1] + (n[t] as f64) * 0.25 + c[t];
    """, c=c)
    x, ns = [0.0], [0]
    for t in range(1, 4):
        ns.append(int((c * x[-1] < 0.5).sum()))
        x.append(x[-1] + ns[-1] * 0.25 + c[t])
    assert out["x"].dtype == np.float64 and out["n"].dtype == np.int32
    np.testing.assert_allclose(out["x"], np.array(x), **TIGHT)
    np.testing.assert_array_equal(out["n"], np.array(ns))


def test_members_without_a_start_read_through_a_typed_member_are_typed_in_turn(run):
    """err, best, alpha and u have no start clause and form one cycle through w, whose start
    types it f64: ordered by what they read apart from w they type as f64, i32, f64, f64, though
    no guess of one type for all four does (boosting rounds, found writing the hold-out program
    adaboost_stumps: E002 "a subscript must be an integer" at `err[t, best[t]]`)."""
    x = np.array([0.4, 0.1, 0.3, 0.2])
    out = run("""
        use std::array::argmin;
        let x: [f64; 4];
        let w[0, n in 0..4] = x[n];
        let err[t in 1..5, k in 0..4] = w[t - 1, k] * 0.5;
        let best[t in 1..5] = argmin(err[t]);
        let alpha[t in 1..5] = err[t, best[t]];
        let u[t in 1..5, n in 0..4] = w[t - 1, n] + alpha[t];
        let w[t in 1..5, n in 0..4] = u[t, n] / sum[j](u[t, j]);
    """, x=x)
    w, best = [x], [0]
    for _ in range(1, 5):
        b = int(np.argmin(w[-1] * 0.5)); u = w[-1] + w[-1][b] * 0.5
        w.append(u / u.sum()); best.append(b)
    assert out["best"].dtype == np.int32 and out["alpha"].dtype == np.float64
    np.testing.assert_allclose(out["w"], np.array(w), **TIGHT)
    np.testing.assert_array_equal(out["best"], best)


def test_members_without_a_start_beside_a_literal_start_meeting_f64_are_typed_in_turn(run):
    """a starts at `0.0` and meets f64 data; e and the index p = argmax(e[t]) have no start. No
    guess of the whole group types them (one type for both), and all three form one cycle: with
    a's start taken as f64, e and p are typed in turn (an SMO's partner, found writing the
    hold-out program svm_smo_rbf: E002)."""
    x = np.array([0.4, 0.1, 0.3, 0.2])
    out = run("""
        use std::array::argmax;
        let x: [f64; 4];
        let a[0, n in 0..4] = 0.0;
        let e[t in 1..5, n in 0..4] = a[t - 1, n] + x[n];
        let p[t in 1..5] = argmax(e[t]);
        let a[t in 1..5, n in 0..4] = if n == p[t] { e[t, n] * 0.5 } else { a[t - 1, n] };
    """, x=x)
    a, p = [np.zeros(4)], [0]
    for _ in range(1, 5):
        e = a[-1] + x; k = int(np.argmax(e)); nxt = a[-1].copy(); nxt[k] = e[k] * 0.5
        a.append(nxt); p.append(k)
    assert out["a"].dtype == np.float64 and out["p"].dtype == np.int32
    np.testing.assert_allclose(out["a"], np.array(a), **TIGHT)
    np.testing.assert_array_equal(out["p"], p)


def test_a_member_whose_value_is_a_cast_has_its_type_before_the_group_is_typed(run):
    """x's start is the `t == 0` branch of its one clause, so no member has a start clause, and
    the five form one cycle: guessed one type for all, the count c was f32 in the subscript that
    reads it before its own clause (`.. as i32`) could type it (fuzz seed 19603 program 10,
    E002). A value that is a cast has the cast's type from the start."""
    d = np.array([0.5, -0.25, 0.125])
    out = run("""
        let d: [f64; 3];
        let e[t in 1..4, k in 0..3] = x[t - 1, k] * 0.5;
        let c[t in 1..4] = sum[k in 0..3](if e[t, k] < 0.0 { 1.0 } else { 0.0 }) as i32;
        let a[t in 1..4] = e[t, c[t] % 3];
        let u[t in 1..4, j in 0..3] = a[t] + x[t - 1, j];
        let x[t in 0..4, j in 0..3] = if t == 0 { d[j] } else { x[t - 1, j] + 0.25 * u[t, j] };
    """, d=d)
    x, c = [d], []
    for _ in range(1, 4):
        e = x[-1] * 0.5
        c.append(int((e < 0).sum()))
        x.append(x[-1] + 0.25 * (e[c[-1] % 3] + x[-1]))
    assert out["c"].dtype == np.int32 and out["x"].dtype == np.float64
    np.testing.assert_array_equal(out["c"][1:], c)
    np.testing.assert_allclose(out["x"], np.array(x), **TIGHT)


def test_a_recurrence_starting_at_an_int_literal_stays_an_integer_when_its_steps_are(run):
    k = np.array([3, -2, 2 ** 40, 5, 7], dtype=np.int64)
    out = run("""
        let k: [i64; 5];
        let c[0] = 0;
        let c[t in 1..5] = c[t - 1] + k[t];
        let m[0] = 1;
        let m[t in 1..5] = (m[t - 1] * 3 + 1) % 7;
    """, k=k)
    assert out["c"].dtype == np.int64 and out["m"].dtype == np.int32
    np.testing.assert_array_equal(out["c"], np.concatenate([[0], np.cumsum(k[1:])]))
    m = [1]
    for _ in range(1, 5):
        m.append((m[-1] * 3 + 1) % 7)
    np.testing.assert_array_equal(out["m"], m)


def test_a_choice_of_int_literals_takes_a_float_context(run):
    x = np.array([0.5, -1.0, 2.0, 0.25], dtype=np.float32)
    k = np.array([0, 1, 2, 0], dtype=np.int32)
    c = np.array([True, False])
    out = run("""
        let x: [f32; 4];
        let k: [i32; 4];
        let c: [bool; 2];
        let u[i in 0..4] = if x[i] > 0.0 { 2 } else { -1 } * x[i];
        let m[i in 0..4] = match k[i] { 0 => 1, 1 => x[i], _ => 0.5 };
        let y[0] = if c[1] { 1 } else { -3 };
        let y[1] = 0.5;
        let y[i in 2..4] = x[i];
        let w = [1, 2, 3];
        let z[i in 0..4] = w[k[i]] * x[i];
    """, x=x, k=k, c=c)
    assert all(out[n].dtype == np.float32 for n in "umyz") and out["w"].dtype == np.int32
    np.testing.assert_array_equal(out["u"], np.where(x > 0, 2, -1) * x)
    np.testing.assert_array_equal(out["m"], np.select([k == 0, k == 1], [1.0, x], 0.5).astype(np.float32))
    np.testing.assert_array_equal(out["y"], np.array([-3.0, 0.5, 2.0, 0.25], dtype=np.float32))
    np.testing.assert_array_equal(out["z"], np.array([1, 2, 3])[k] * x)


def test_int_arithmetic_on_chosen_literals_is_not_made_a_float(diagnose):
    diag, _ = diagnose("""
        let x: [f32; 4];
        let u[i in 0..4] = (if x[i] > 0.0 { 7 } else { 5 } / 2) * x[i];
    """)
    assert diag.code == "E002" and "i32 and f32" in diag.message


def test_a_literal_an_index_condition_picks_is_typed_as_under_a_run_time_condition(run):
    """`if k > 0 { w[k] } else { 0.1 }` with k always 0 and `w` a literal array: the 0.1 stays
    untyped beside w's literals, as under a run-time condition, and takes x's f64."""
    x = np.array([0.3, -0.7, 0.1])
    out = run("""
        let w = [0.5, 0.25];
        let x: [f64; 3];
        let y[i in 0..3, k in 0..1] = (if k > 0 { w[k] } else { 0.1 }) * x[i];
        let u[i in 0..3, k in 0..2] = (if x[i] > 0.0 { w[k] } else { 0.1 }) * x[i];
    """, x=x)
    assert out["y"].dtype == out["u"].dtype == np.float64
    np.testing.assert_allclose(out["y"], (0.1 * x)[:, None], **TIGHT)
    np.testing.assert_allclose(out["u"], np.where(x[:, None] > 0, [[0.5, 0.25]], 0.1) * x[:, None], **TIGHT)


@pytest.mark.parametrize("flag", [True, False])
def test_array_literals_chosen_at_run_time_combine_and_take_the_type_they_meet(run, flag):
    """`if flag { [1, 2, 3] } else { [0.5, 0.5, 0.5] }` is a float array, as `if c { 1 } else
    { 0.5 }` is a float, and stays untyped: read beside f64 data it is f64."""
    x = np.array([0.3, -0.2, 0.7])
    out = run("""
        let flag: bool;
        let x: [f64; 3];
        let w = if flag { [1, 2, 3] } else { [0.5, 0.5, 0.5] };
        let z = [1, 2, 3] + [0.5, 0.5, 0.5];
        let wx[i in 0..3] = w[i] * x[i];
    """, flag=np.bool_(flag), x=x)
    w = np.array([1.0, 2.0, 3.0]) if flag else np.full(3, 0.5)
    assert out["w"].dtype == out["z"].dtype == np.float32 and out["wx"].dtype == np.float64
    np.testing.assert_array_equal(out["w"], w)
    np.testing.assert_array_equal(out["z"], [1.5, 2.5, 3.5])
    np.testing.assert_allclose(out["wx"], w * x, **TIGHT)


def test_a_definition_of_literals_alone_read_beside_f64_data_is_f64(run):
    """An identity written point by point (`if i == j { 1.0 } else { 0.0 }`) is read in f64 where
    it meets f64 data, as a literal array is; as an output of its own it stays f32."""
    P = np.array([[0.1, 0.3], [0.7, 0.9]])
    out = run("""
        let P: [f64; 2, 2];
        let I[i in 0..2, j in 0..2] = if i == j { 1.1 } else { 0.3 };
        let Q[i in 0..2, j in 0..2] = sum[k](I[i, k] * P[k, j]);
    """, P=P)
    I = np.where(np.eye(2) == 1, 1.1, 0.3)
    assert out["I"].dtype == np.float32 and out["Q"].dtype == np.float64
    np.testing.assert_allclose(out["Q"], I @ P, **TIGHT)


def test_a_literal_to_a_run_time_integer_power_takes_the_float_type_it_meets(run):
    """`0.1 ** n` with n an i32 is made of the literal alone as far as types go: beside f64
    data it is the f64 power of the f64 0.1 (found by the program fuzzer's `x ** (i % 4)`)."""
    x = np.array([0.3, -0.2, 0.7, 1.1])
    n = np.array([0, 1, 2, -3], dtype=np.int32)
    out = run("""
        let x: [f64; 4];
        let n: [i32; 4];
        let y[i in 0..4] = x[i] + 0.1 ** n[i];
        let z[j in 0..4] = j as f64 + 0.3 ** (j % 4);
    """, x=x, n=n)
    assert out["y"].dtype == out["z"].dtype == np.float64
    np.testing.assert_allclose(out["y"], x + 0.1 ** n.astype(np.float64), rtol=1e-14)
    np.testing.assert_allclose(out["z"], np.arange(4) + 0.3 ** (np.arange(4) % 4), rtol=1e-14)


def test_a_reduction_of_chosen_literals_takes_the_float_type_it_meets(run):
    # an accuracy, `sum[n](if .. { 1.0 } else { 0.0 }) / (N as f64)`, was E002 f32 / f64:
    # the sum of literals alone was typed before its context
    y = np.array([1.0, -2.0, 3.0, 0.5, -0.25])
    out = run("""
        let y: [f64; N];
        let hits = sum[n](if y[n] > 0.0 { 0.7 } else { 0.1 }) / (N as f64);
        let top = max[n](if y[n] > 1.0 { 0.3 } else { 0.1 }) * y[0];
    """, y=y)
    np.testing.assert_allclose(out["hits"], np.where(y > 0, 0.7, 0.1).sum() / 5, **TIGHT)
    np.testing.assert_allclose(out["top"], 0.3 * y[0], **TIGHT)


def test_a_literal_to_a_build_time_integer_power_takes_the_float_type_it_meets(run):
    # a line search's candidate steps `[0.5 ** k | k in 0..20, ..]` beside f64 data were E002
    # f32 / f64: with k an integer known at build time, the power folded to an f32 constant, where
    # a run-time k leaves it untyped; the kept elements of a run-time filter of such literals take
    # the type they meet too
    d = np.array([0.3, 1.7, -0.4])
    out = run("""
        let d: [f64; 3];
        let k: i32 = 3;
        let z = 0.1 ** k * d[0];
        let y = [0.1 ** j * d[j] | j in 0..3];
        let kept = sum([0.7 ** j | j in 0..3, d[j] > 0.0]) * d[1];
        let top = max([0.3 | j in 0..3, d[j] > 0.0]) * d[1];
    """, d=d)
    np.testing.assert_allclose(out["z"], 0.1 ** 3 * d[0], **TIGHT)
    np.testing.assert_allclose(out["y"], 0.1 ** np.arange(3) * d, **TIGHT)
    np.testing.assert_allclose(out["kept"], (0.7 ** 0 + 0.7 ** 1) * d[1], **TIGHT)
    np.testing.assert_allclose(out["top"], 0.3 * d[1], **TIGHT)
