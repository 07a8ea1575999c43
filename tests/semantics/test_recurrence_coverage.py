"""A recurrence's read of a point no clause of the member defines is E005 at build time
(LANGUAGE.md sections 9 and 10, thesis 2.2.1; einc.semantics.forms.recurrence_coverage): it
read 0 there. Guarded reads, base clauses and reads the build cannot judge still build."""
import pytest

MISSING_BASE = [
    # one axis, no base clause; a constant and a run-time number of steps
    ("let u: [f32; 10];\nlet s[t in 1..10] = s[t - 1] + u[t];\n", "s[0]", "if t > 1"),
    ("let u: [f32; T];\nlet s[t in 1..T] = s[t - 1] + u[t];\n", "s[0]", "if t > 1"),
    # two lookbacks, one base clause: the step read two back is fine, the one before is not
    ("let f[0] = 0;\nlet f[n in 2..10] = f[n - 1] + f[n - 2];\n", "f[1]", None),
    # a grid whose first column is missing, then one whose first row is
    # (the missing column or row is named whole, and the hint's clause defines it)
    ("let D[0, j in 0..6] = j;\nlet D[i in 1..6, j in 1..6] = D[i - 1, j] + D[i, j - 1];\n",
     "D[1..6, 0]|D[i in 1..6, 0]", "if j > 1"),
    ("let D[i in 0..6, 0] = i;\nlet D[i in 1..6, j in 1..6] = D[i - 1, j] + D[i, j - 1];\n",
     "D[0, 1..6]|D[0, j in 1..6]", "if i > 1"),
    # two members: a has its base, b (read by a a step back) has none
    ("let u: [f32; T];\nlet a[0] = 1.0;\nlet a[t in 1..T] = b[t - 1] + u[t];\nlet b[t in 1..T] = a[t - 1] * 0.5;\n",
     "b[0]", "if t > 1"),
    # a tensor the step computes reads the previous step's row
    ("use std::math::tanh;\nlet x: [f32; T, 3];\n"
     "let r[t in 1..T, j in 0..3] = { let h[i in 0..3] = tanh(r[t - 1, i] + x[t, i]); h[j] };\n",
     "r[0, 0..3]|r[0, i in 0..3]", "if t > 1"),
    # a clause narrowed by one step (`1..T` for `0..T`) leaves the step its neighbour reads
    ("let x: [f32; T];\nlet s[0] = 0.0;\nlet s[t in 2..T] = s[t - 1] + x[t];\n", "s[1]", "if t > 2"),
    # other subscripts the box check cannot follow: the step read is still one no clause
    # defines at all (these read 0 there; a fuzzed program, reduced)
    ("let x: [f32; 4];\nlet r[0, k in 0..4] = x[k];\nlet r[t in 3..9, k in 0..4] = 0.5 * r[t - 1, 3 - k];\n",
     "r[2, 0..4]|r[2, k in 0..4]", None),
    ("let x: [f32; 4];\nlet r[0, j in 0..4, k in 0..4] = x[k];\n"
     "let r[t in 3..9, j in 0..4, k in 0..4] = 0.5 * r[t - 1, 3 - k, k / 2];\n",
     "r[2, 0..4, 0..4]|r[2, j in 0..4, k in 0..4]", None),
    # a read both branches of an `if` on data make: through a lambda's argument, or written twice
    # (a mutant of the hold-out program complementary_filter, seed 2024 mutant 311)
    ("let x: [f32; T];\nlet ok[t] = x[t] > 0.5;\nlet blend = |a: f32, b: f32, c: bool| if c { 0.5 * a + 0.5 * b } else { a };\n"
     "let s[0] = 0.0;\nlet s[t in 2..T] = blend(s[t - 1] + x[t], x[t], ok[t]);\n", "s[1]", "if t > 2"),
    ("let x: [f32; T];\nlet s[0] = 0.0;\nlet s[t in 2..T] = if x[t] > 0.5 { s[t - 1] * 2.0 } else { s[t - 1] };\n",
     "s[1]", "if t > 2"),
    # steps up to a length computed from data, which the data may make as large as any
    # (a mutant of the hold-out program km_nelson_aalen, seed 2024 mutant 40)
    ("let x: [f32; N];\nlet starts = [r | r in 0..N, x[r] > 0.0];\nlet K = len(starts);\n"
     "let S[0] = 1.0;\nlet S[k in 2..K] = S[k - 1] * 0.5;\n", "S[1]", "if k > 2"),
]


@pytest.mark.parametrize("source, point, guard", MISSING_BASE)
def test_a_read_of_a_point_no_clause_defines_is_E005_with_a_base_case_hint(diagnose, source, point, guard):
    diag, text = diagnose(source)
    point, head = (point + "|" + point).split("|")[:2]
    name = point.split("[")[0]
    assert diag.code == "E005" and f"`{point}` is read here, but no clause of `{name}` defines" in diag.message
    assert f"a base case `let {head} = ..;`" in diag.hint and "error[E005]" in text
    assert (guard in diag.hint) if guard else "start guard" not in diag.hint
    assert source.splitlines()[diag.span.line - 1][diag.span.col - 1:].startswith(name + "[")


COVERED = [
    "let u: [f32; T];\nlet s[0] = 0.0;\nlet s[t in 1..T] = s[t - 1] + u[t];\n",
    "let f[0] = 0;\nlet f[1] = 1;\nlet f[n in 2..10] = f[n - 1] + f[n - 2];\n",
    # a start guard: the first step reads nothing before it
    "let u: [f32; T];\nlet s[t in 1..T] = if t > 1 { s[t - 1] + u[t] } else { u[t] };\n",
    "let x: [f32; T];\nlet u[t in 0..T] = if t >= 2 { u[t - 2] + x[t] } else { x[t] };\n",
    # a one-if start whose guard is a conjunction on two indices
    "let D[i in 0..5, j in 0..5] = if i > 0 && j > 0 { D[i - 1, j] + D[i, j - 1] } else { 1 };\n",
    # a start guard on the left of `&&`, as in an `if`
    "let x: [f32; 6];\nlet s[0] = true;\nlet s[k in 2..6] = k > 2 && s[k - 1] || x[k] > 0.0;\n",
    # a read under a test of data in one branch only is not judged (it may never run there)
    "let x: [f32; T];\nlet s[0] = 0.0;\nlet s[t in 2..T] = if x[t] > 0.5 { s[t - 1] * 2.0 } else { x[t] };\n",
    # a read through data is not judged (its index is checked at run time)
    "let k: [i32; 6];\nlet s[0] = 1.0;\nlet s[t in 1..6] = s[t - 1] + s[k[t] % t];\n",
    # a step defined at some of its points is read through subscripts the check cannot follow
    "let x: [f32; 4];\nlet r[0, k in 0..4] = x[k];\nlet r[1, k in 0..2] = x[k];\n"
    "let r[t in 2..9, k in 0..4] = 0.5 * r[t - 1, (3 - k) / 2];\n",
]


@pytest.mark.parametrize("source", COVERED)
def test_reads_of_defined_points_and_guarded_reads_build(analyze, source):
    assert analyze(source).recurrences


def test_a_gap_a_guarded_clause_set_leaves_in_a_recurrence_is_E004_and_an_overlap_too(diagnose):
    # section 10's two sides for a recurrence: a point of no clause, a point of two
    gap = "let x: [f32; 6, 4];\nlet h[0, i in 0..4] = x[0, i];\nlet h[t in 1..6, i in 0..4] = h[t - 1, i] + 1.0 where i % 2 == 0;\n"
    diag, _ = diagnose(gap)
    assert diag.code == "E004" and "h[1, 1]" in diag.message
    both = gap.replace("where i % 2 == 0;", "where i % 2 == 0;\nlet h[t in 1..6, i in 0..4] = 0.5 where i < 2;")
    diag, _ = diagnose(both)
    assert diag.code == "E004" and "h[1, 0]" in diag.message
